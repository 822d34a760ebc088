"""ctypes bindings of the parameter initialization API (Init.h)."""

import ctypes

import numpy as np

import fluidrt

# fluid_init_kind and fluid_fan_mode.
ZEROS, ONES, CONSTANT, NORMAL, UNIFORM = 0, 1, 2, 3, 4
KAIMING_NORMAL, KAIMING_UNIFORM, XAVIER_UNIFORM = 5, 6, 7
FAN_IN, FAN_OUT = 0, 1


class InitSpec(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int32), ("fan_mode", ctypes.c_int32),
                ("value", ctypes.c_double), ("mean", ctypes.c_double),
                ("std", ctypes.c_double), ("low", ctypes.c_double),
                ("high", ctypes.c_double), ("gain", ctypes.c_double)]


def load(path):
    """fluidrt.load, with the signatures of Init.h's entry points."""
    lib = fluidrt.load(path)
    lib.fluid_init_tensor.argtypes = [ctypes.POINTER(fluidrt.FluidTensor),
                                      ctypes.POINTER(InitSpec),
                                      ctypes.c_uint64, ctypes.c_uint64]
    lib.fluid_init_fans.argtypes = [ctypes.c_int32,
                                    ctypes.POINTER(ctypes.c_int64),
                                    ctypes.POINTER(ctypes.c_int64),
                                    ctypes.POINTER(ctypes.c_int64)]
    lib.fluid_hash_name.restype = ctypes.c_uint64
    lib.fluid_hash_name.argtypes = [ctypes.c_char_p]
    return lib


def init_status(lib, t, seed, stream, **spec):
    """fluid_init_tensor's status on descriptor `t`, spec fields by name."""
    return lib.fluid_init_tensor(ctypes.byref(t),
                                 ctypes.byref(InitSpec(**spec)), seed, stream)


def init(lib, shape, dtype, seed, stream, **spec):
    """A new array of `shape` and `dtype` that fluid_init_tensor filled (it
    starts as NaN, so an element left alone shows)."""
    array = np.full(shape, np.nan, dtype=dtype)
    fluidrt.check(lib, init_status(lib, fluidrt.tensor(array), seed, stream,
                                   **spec))
    return array
