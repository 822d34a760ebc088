"""ctypes bindings of the cuda backend (CudaRuntime.h, CudaKernels.h) and
the harness of the gpu-*.py tests.

The tests compare each fluid_cuda_* kernel with its fluid_cpu_* oracle on
the same random inputs. Inputs are NumPy arrays; `Context.upload` copies
one to device memory of the context and returns a `DeviceTensor`, whose
descriptor the kernels take; `DeviceTensor.download` copies it back.
NumPy only (no torch), so that nothing but the runtime loads CUDA
libraries into the process.
"""

import ctypes
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fluidrt  # noqa: E402

I32, I64, F64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_double
VOID_P = ctypes.c_void_p
TENSOR = ctypes.POINTER(fluidrt.FluidTensor)

OK, INVALID_ARGUMENT, IO, UNSUPPORTED, OUT_OF_MEMORY, DEVICE = range(6)


class Params(ctypes.Structure):
    """A parameter struct whose array fields may be given as lists."""

    def __init__(self, *args, **kwargs):
        names = [name for name, _ in self._fields_]
        values = dict(zip(names, args), **kwargs)
        for name, ctype in self._fields_:
            if name in values and issubclass(ctype, ctypes.Array):
                values[name] = ctype(*values[name])
        super().__init__(**values)


class Conv2dParams(Params):
    _fields_ = [("strides", I64 * 2), ("padding", I64 * 4),
                ("dilation", I64 * 2), ("groups", I64),
                ("channels_last", I32)]


class BatchNormParams(Params):
    _fields_ = [("epsilon", F64), ("momentum", F64)]


class MatmulParams(Params):
    _fields_ = [("transpose_lhs", I32), ("transpose_rhs", I32)]


class ReduceParams(Params):
    """fluid_reduce_params: `axes` padded with zeros to FLUID_MAX_RANK."""
    _fields_ = [("axes", I64 * fluidrt.FLUID_MAX_RANK), ("num_axes", I32),
                ("keep_dims", I32)]


class Options(ctypes.Structure):
    _fields_ = [("device", I32), ("allow_tf32", I32),
                ("algorithm_cache_path", ctypes.c_char_p)]


class Stats(ctypes.Structure):
    _fields_ = [("peak_allocated_bytes", I64), ("workspace_bytes", I64),
                ("algorithm_searches", I64), ("algorithm_cache_hits", I64),
                ("allocated_bytes", I64)]

    def as_dict(self):
        return {name: getattr(self, name) for name, _ in self._fields_}


CONTEXT_SIGNATURES = {
    "fluid_cuda_context_create":
        (I32, [ctypes.POINTER(Options), ctypes.POINTER(VOID_P)]),
    "fluid_cuda_context_destroy": (None, [VOID_P]),
    "fluid_cuda_synchronize": (I32, [VOID_P]),
    "fluid_cuda_malloc": (I32, [VOID_P, I64, ctypes.POINTER(VOID_P)]),
    "fluid_cuda_free": (None, [VOID_P, VOID_P]),
    "fluid_cuda_copy_to_device": (I32, [VOID_P, VOID_P, VOID_P, I64]),
    "fluid_cuda_copy_to_host": (I32, [VOID_P, VOID_P, VOID_P, I64]),
    "fluid_cuda_memset_zero": (I32, [VOID_P, VOID_P, I64]),
    "fluid_cuda_get_stats": (I32, [VOID_P, ctypes.POINTER(Stats)]),
    "fluid_cuda_context_stream": (I32, [VOID_P, ctypes.POINTER(VOID_P)]),
    "fluid_cuda_allocate": (I32, [VOID_P, I64, ctypes.POINTER(VOID_P)]),
    "fluid_cuda_release": (I32, [VOID_P, VOID_P]),
    "fluid_cuda_set_workspace_limit": (I32, [VOID_P, I64]),
}

# The oracle's entry points and their argument types; each fluid_cuda_<op>
# takes the context first, then the same.
KERNEL_SIGNATURES = {
    "conv2d": [TENSOR] * 4 + [ctypes.POINTER(Conv2dParams)],
    "conv2d_grad_input": [TENSOR] * 3 + [ctypes.POINTER(Conv2dParams)],
    "conv2d_grad_filter": [TENSOR] * 3 + [ctypes.POINTER(Conv2dParams)],
    "matmul": [TENSOR] * 3 + [ctypes.POINTER(MatmulParams)],
    "linear": [TENSOR] * 4,
    "batch_norm": [TENSOR] * 10 + [ctypes.POINTER(BatchNormParams)],
    "batch_norm_inference": [TENSOR] * 6 + [F64],
    "batch_norm_apply": [TENSOR] * 6,
    "batch_norm_grad": [TENSOR] * 8,
}


def load(path):
    lib = fluidrt.load(path)
    for name, (restype, argtypes) in CONTEXT_SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    for op, argtypes in KERNEL_SIGNATURES.items():
        cpu = getattr(lib, "fluid_cpu_" + op)
        cpu.restype = I32
        cpu.argtypes = argtypes
        cuda = getattr(lib, "fluid_cuda_" + op)
        cuda.restype = I32
        cuda.argtypes = [VOID_P] + argtypes
    return lib


def last_error(lib):
    return lib.fluid_last_error().decode()


class DeviceTensor:
    """Device memory of a context holding one dense tensor."""

    def __init__(self, context, shape, dtype, code=None):
        """`code`, a fluid dtype code, overrides the one of the NumPy
        dtype (fluidrt.BF16, whose bits a uint16 array holds)."""
        self.context = context
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * \
            self.dtype.itemsize
        self.pointer = context.malloc(self.nbytes)
        self.desc = fluidrt.FluidTensor()
        self.desc.data = self.pointer
        self.desc.dtype = fluidrt.DTYPES[self.dtype] if code is None else code
        self.desc.rank = len(self.shape)
        for i, d in enumerate(self.shape):
            self.desc.shape[i] = d

    def download(self):
        out = np.empty(self.shape, self.dtype)
        self.context.check(self.context.lib.fluid_cuda_copy_to_host(
            self.context.handle, out.ctypes.data, self.pointer, self.nbytes))
        return out

    def free(self):
        if self.pointer:
            self.context.lib.fluid_cuda_free(self.context.handle, self.pointer)
            self.pointer = None


class Context:
    """A fluid_cuda_context, destroyed by close() or at the end of a with."""

    def __init__(self, lib, allow_tf32=False, cache_path=None, device=0):
        self.lib = lib
        options = Options(device, int(allow_tf32),
                          cache_path.encode() if cache_path else None)
        handle = VOID_P()
        self.check(lib.fluid_cuda_context_create(ctypes.byref(options),
                                                 ctypes.byref(handle)))
        self.handle = handle

    def close(self):
        if self.handle:
            self.lib.fluid_cuda_context_destroy(self.handle)
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def check(self, status):
        if status != OK:
            raise fluidrt.RuntimeError_(status, last_error(self.lib))

    def malloc(self, nbytes):
        pointer = VOID_P()
        self.check(self.lib.fluid_cuda_malloc(self.handle, nbytes,
                                              ctypes.byref(pointer)))
        return pointer.value

    def allocate(self, nbytes):
        """fluid_cuda_allocate: stream-ordered memory (None for 0 bytes)."""
        pointer = VOID_P()
        self.check(self.lib.fluid_cuda_allocate(self.handle, nbytes,
                                                ctypes.byref(pointer)))
        return pointer.value

    def release(self, pointer):
        self.check(self.lib.fluid_cuda_release(self.handle, pointer))

    def stream(self):
        stream = VOID_P()
        self.check(self.lib.fluid_cuda_context_stream(self.handle,
                                                      ctypes.byref(stream)))
        return stream.value

    def empty(self, shape, dtype):
        """A device tensor filled with NaN, so that unwritten elements
        show."""
        return self.upload(np.full(shape, np.nan, dtype))

    def upload(self, array, code=None):
        """A device copy of `array`; `code` as DeviceTensor's."""
        array = np.require(array, requirements="C")  # keeps rank 0
        t = DeviceTensor(self, array.shape, array.dtype, code)
        self.check(self.lib.fluid_cuda_copy_to_device(
            self.handle, t.pointer, array.ctypes.data, t.nbytes))
        return t

    def synchronize(self):
        self.check(self.lib.fluid_cuda_synchronize(self.handle))

    def stats(self):
        stats = Stats()
        self.check(self.lib.fluid_cuda_get_stats(self.handle,
                                                 ctypes.byref(stats)))
        return stats.as_dict()

    def status(self, op, *args):
        """Calls fluid_cuda_<op>; returns (status, last error message).
        DeviceTensors and NumPy arrays (host memory!) become descriptors."""
        converted = []
        for arg in args:
            if isinstance(arg, DeviceTensor):
                arg = ctypes.byref(arg.desc)
            elif isinstance(arg, np.ndarray):
                arg = ctypes.byref(fluidrt.tensor(arg))
            converted.append(arg)
        status = getattr(self.lib, "fluid_cuda_" + op)(self.handle, *converted)
        return status, last_error(self.lib)

    def __call__(self, op, *args):
        status, message = self.status(op, *args)
        if status != OK:
            raise fluidrt.RuntimeError_(status, message)


def cpu(lib, op, *args):
    """Calls the oracle fluid_cpu_<op> on NumPy arrays (None for NULL)."""
    converted = [ctypes.byref(fluidrt.tensor(a)) if isinstance(a, np.ndarray)
                 else a for a in args]
    status = getattr(lib, "fluid_cpu_" + op)(*converted)
    if status != OK:
        raise fluidrt.RuntimeError_(status, last_error(lib))


# Tolerances, as (rtol, atol relative to max(1, max |expected|)):
# f64 against the cpu's double sums; f32 without TF32 (IEEE fp32 products,
# any summation order); f32 with TF32 tensor cores (inputs rounded to a
# 10-bit mantissa), for which only the error relative to the output's
# largest magnitude is meaningful.
TOLERANCES = {
    "f64": (1e-10, 1e-10),
    "f32": (1e-4, 1e-5),
    "tf32": (0.0, 5e-3),
}


def expect_close(got, want, mode, what="output"):
    rtol, atol = TOLERANCES[mode]
    if got.shape != want.shape:
        raise AssertionError(f"{what} shape {got.shape} != {want.shape}")
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale,
                               err_msg=f"{what} ({mode})")


def max_relative_error(got, want):
    """max |got - want| / max |want|, for reports."""
    if want.size == 0:
        return 0.0
    scale = max(float(np.max(np.abs(want))), 1e-300)
    return float(np.max(np.abs(got.astype(np.float64) - want))) / scale


def expect_status(lib, status, expected, fragments=()):
    """Asserts that a call returned `expected` and that the last error
    message holds every one of `fragments`."""
    message = last_error(lib)
    if status != expected:
        raise AssertionError(f"status {status} != {expected}: {message!r}")
    for fragment in fragments:
        if fragment not in message:
            raise AssertionError(f"{fragment!r} not in {message!r}")


class CapturedStderr:
    """Captures what C code writes to file descriptor 2 inside a with."""

    def __enter__(self):
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.saved = os.dup(2)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        os.dup2(self.saved, 2)
        os.close(self.saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()


class Suite:
    """Runs named cases, prints PASS/FAIL per case, exits non-zero on any
    failure."""

    def __init__(self, argv):
        if len(argv) != 2:
            sys.exit(f"usage: {argv[0]} path/to/libfluid_runtime.so")
        self.lib = load(argv[1])
        self.rng = np.random.default_rng(1234)
        self.passed = 0
        self.failed = 0
        self.started = time.monotonic()

    def randn(self, *shape, dtype=np.float64, scale=1.0, offset=0.0):
        values = self.rng.standard_normal(shape) * scale + offset
        return np.require(values.astype(dtype), requirements="C")

    def case(self, name, body):
        started = time.monotonic()
        try:
            note = body()
        except Exception as error:  # a failed case must not stop the others
            print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
            self.failed += 1
        else:
            seconds = time.monotonic() - started
            extra = f" ({note})" if note else ""
            print(f"PASS {name}{extra} [{seconds:.2f} s]", flush=True)
            self.passed += 1

    def finish(self):
        seconds = time.monotonic() - self.started
        print(f"{self.passed} passed, {self.failed} failed in {seconds:.2f} s")
        sys.exit(1 if self.failed else 0)
