"""ctypes bindings to libfluid_runtime.so for the runtime's tests.

The runtime's public interface is a C ABI (runtime/include/fluid/runtime);
these helpers turn NumPy arrays into `fluid_tensor` descriptors and raise
on a non-OK status with the runtime's own error message.
"""

import ctypes

import numpy as np

FLUID_MAX_RANK = 8

# fluid_status (Tensor.h).
OK, INVALID_ARGUMENT, IO, UNSUPPORTED, OUT_OF_MEMORY, DEVICE = range(6)

DTYPES = {
    np.dtype(np.float32): 0,
    np.dtype(np.float64): 1,
    np.dtype(np.int32): 2,
    np.dtype(np.int64): 3,
    np.dtype(np.float16): 4,
    np.dtype(np.uint8): 6,
}
# bfloat16 has no NumPy dtype: its bits travel as int16 or uint16 arrays.
BF16 = 5


class FluidTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int32),
        ("rank", ctypes.c_int32),
        ("shape", ctypes.c_int64 * FLUID_MAX_RANK),
    ]


class RuntimeError_(Exception):
    """A runtime entry point returned an error status."""

    def __init__(self, status, message):
        super().__init__(f"status {status}: {message}")
        self.status = status
        self.message = message


def load(path):
    lib = ctypes.CDLL(path)
    lib.fluid_last_error.restype = ctypes.c_char_p
    lib.fluid_dtype_size.restype = ctypes.c_int64
    lib.fluid_tensor_numel.restype = ctypes.c_int64
    return lib


def tensor(array, dtype=None):
    """A descriptor viewing `array`, which must be C-contiguous and stay alive.

    `dtype`, a fluid dtype code, overrides the one of the array's NumPy dtype
    (BF16, say, whose bits a uint16 array holds).
    """
    if not array.flags["C_CONTIGUOUS"]:
        raise ValueError("array must be C-contiguous")
    t = FluidTensor()
    t.data = array.ctypes.data
    t.dtype = DTYPES[array.dtype] if dtype is None else dtype
    t.rank = array.ndim
    for i, d in enumerate(array.shape):
        t.shape[i] = d
    return t


def check(lib, status):
    if status != 0:
        raise RuntimeError_(status, lib.fluid_last_error().decode())


def expect_status(lib, status, expected, fragments=()):
    """Assert that a call returned `expected` and that the runtime's last
    error message contains every one of `fragments`."""
    message = lib.fluid_last_error().decode()
    if expected != OK and status == OK:
        raise AssertionError(f"expected status {expected}, got FLUID_OK")
    if status != expected:
        raise AssertionError(f"status {status} != {expected}: {message!r}")
    for fragment in fragments:
        if fragment not in message:
            raise AssertionError(f"{fragment!r} not in {message!r}")


def random_array(rng, shape, dtype):
    """Integers over the dtype's whole range, or standard normal floats."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.asarray(rng.integers(info.min, info.max, size=shape,
                                       dtype=dtype, endpoint=True))
    return np.asarray(rng.standard_normal(shape).astype(dtype))
