# RUN: %python %s %fluid_runtime_lib
"""ctypes declarations of the cpu kernels (CpuKernels.h) and the harness
shared by the cpu-*.py tests, which load this file with
importlib.import_module("cpu-api").

Run on its own, it checks that the header, these declarations and the
library agree: every fluid_cpu_* entry point declared in the header is
declared here and exported by the library, and nothing else is.
"""

import ctypes
import os
import re
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import fluidrt  # noqa: E402

HEADER = os.path.join(HERE, "..", "..", "runtime", "include", "fluid",
                      "runtime", "CpuKernels.h")

I32, I64, F64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_double
TENSOR = ctypes.POINTER(fluidrt.FluidTensor)


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


class MaxPool2dParams(Params):
    _fields_ = [("kernel", I64 * 2), ("strides", I64 * 2),
                ("padding", I64 * 4), ("dilation", I64 * 2),
                ("ceil_mode", I32)]


class AvgPool2dParams(Params):
    _fields_ = [("kernel", I64 * 2), ("strides", I64 * 2),
                ("padding", I64 * 4), ("ceil_mode", I32),
                ("count_include_pad", I32)]


class BatchNormParams(Params):
    _fields_ = [("epsilon", F64), ("momentum", F64)]


class MatmulParams(Params):
    _fields_ = [("transpose_lhs", I32), ("transpose_rhs", I32)]


class ReduceParams(Params):
    _fields_ = [("axes", I64 * fluidrt.FLUID_MAX_RANK), ("num_axes", I32),
                ("keep_dims", I32)]


class TransposeParams(Params):
    _fields_ = [("perm", I64 * fluidrt.FLUID_MAX_RANK), ("rank", I32)]

    @classmethod
    def of(cls, perm):
        """The params of the permutation `perm` (a sequence)."""
        perm = list(perm)
        return cls(perm + [0] * (fluidrt.FLUID_MAX_RANK - len(perm)),
                   len(perm))


REDUCTION = {"mean": 0, "sum": 1, "none": 2}

UNARY = [TENSOR, TENSOR]
BINARY = [TENSOR, TENSOR, TENSOR]
SIGNATURES = {
    "fluid_cpu_conv2d": [TENSOR] * 4 + [ctypes.POINTER(Conv2dParams)],
    "fluid_cpu_batch_norm": [TENSOR] * 10 + [ctypes.POINTER(BatchNormParams)],
    "fluid_cpu_batch_norm_inference": [TENSOR] * 6 + [F64],
    "fluid_cpu_batch_norm_apply": [TENSOR] * 6,
    "fluid_cpu_relu": UNARY,
    "fluid_cpu_sigmoid": UNARY,
    "fluid_cpu_tanh": UNARY,
    "fluid_cpu_add": BINARY,
    "fluid_cpu_sub": BINARY,
    "fluid_cpu_mul": BINARY,
    "fluid_cpu_div": BINARY,
    "fluid_cpu_max_pool2d": [TENSOR, TENSOR, ctypes.POINTER(MaxPool2dParams)],
    "fluid_cpu_max_pool2d_with_indices":
        [TENSOR] * 3 + [ctypes.POINTER(MaxPool2dParams)],
    "fluid_cpu_avg_pool2d": [TENSOR, TENSOR, ctypes.POINTER(AvgPool2dParams)],
    "fluid_cpu_global_avg_pool": UNARY,
    "fluid_cpu_matmul": BINARY + [ctypes.POINTER(MatmulParams)],
    "fluid_cpu_linear": [TENSOR] * 4,
    "fluid_cpu_reshape": UNARY,
    "fluid_cpu_concat": [TENSOR, I64, TENSOR, I64],
    "fluid_cpu_gather": [TENSOR, TENSOR, TENSOR, I64],
    "fluid_cpu_softmax": [TENSOR, TENSOR, I64],
    "fluid_cpu_log_softmax": [TENSOR, TENSOR, I64],
    "fluid_cpu_softmax_cross_entropy": [TENSOR, TENSOR, TENSOR, I32],
    "fluid_cpu_mean": [TENSOR, TENSOR, ctypes.POINTER(ReduceParams)],
    "fluid_cpu_reduce_sum": [TENSOR, TENSOR, ctypes.POINTER(ReduceParams)],
}

# fp32 kernels are compared with PyTorch fp32, fp64 kernels with PyTorch
# fp64: (rtol, atol).
TOLERANCE = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-10, 1e-10)}
FLOAT_DTYPES = [(torch.float32, "f32"), (torch.float64, "f64")]


class Kernels:
    """The library's cpu entry points, called with NumPy arrays or torch
    tensors (viewed, not copied) for tensors and None for NULL."""

    def __init__(self, path):
        self.lib = fluidrt.load(path)
        for name, argtypes in SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int

    def status(self, name, *args):
        """Calls `name` and returns (status, last error message)."""
        converted = []
        for arg in args:
            if isinstance(arg, torch.Tensor) and arg.dtype == torch.bfloat16:
                # Its bits, described as FLUID_BF16 (the view shares them).
                arg = ctypes.byref(fluidrt.tensor(arg.view(torch.int16).numpy(),
                                                  dtype=fluidrt.BF16))
            if isinstance(arg, torch.Tensor):
                arg = arg.numpy()
            if isinstance(arg, np.ndarray):
                arg = ctypes.byref(fluidrt.tensor(arg))
            converted.append(arg)
        status = getattr(self.lib, name)(*converted)
        return status, self.lib.fluid_last_error().decode()

    def __call__(self, name, *args):
        """Calls `name`, raising fluidrt.RuntimeError_ on a non-OK status."""
        status, message = self.status(name, *args)
        if status != 0:
            raise fluidrt.RuntimeError_(status, message)


def empty(shape, dtype):
    """An output buffer, filled with NaN so that unwritten elements show."""
    return torch.full(tuple(shape), float("nan"), dtype=dtype)


def expect_close(got, want, what="output"):
    rtol, atol = TOLERANCE[want.dtype]
    if tuple(got.shape) != tuple(want.shape):
        raise AssertionError(f"{what} shape {tuple(got.shape)} != "
                             f"{tuple(want.shape)}")
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=rtol,
                               atol=atol, err_msg=what)


class Suite:
    """Runs named cases, prints PASS/FAIL per case, exits non-zero on any
    failure."""

    def __init__(self, argv):
        if len(argv) != 2:
            sys.exit(f"usage: {argv[0]} path/to/libfluid_runtime.so")
        self.kernels = Kernels(argv[1])
        self.generator = torch.Generator().manual_seed(1234)
        self.passed = 0
        self.failed = 0
        self.started = time.monotonic()

    def randn(self, *shape, dtype=torch.float64):
        return torch.randn(shape, generator=self.generator, dtype=dtype)

    def randint(self, high, *shape, dtype=torch.int64):
        return torch.randint(0, high, shape, generator=self.generator,
                             dtype=dtype)

    def case(self, name, body):
        try:
            body()
        except Exception as error:  # a failed case must not stop the others
            print(f"FAIL {name}: {type(error).__name__}: {error}")
            self.failed += 1
        else:
            print(f"PASS {name}")
            self.passed += 1

    def finish(self):
        seconds = time.monotonic() - self.started
        print(f"{self.passed} passed, {self.failed} failed in {seconds:.2f} s")
        sys.exit(1 if self.failed else 0)


def main():
    suite = Suite(sys.argv)
    with open(HEADER) as header:
        declared = set(re.findall(r"\b(fluid_cpu_\w+)\s*\(", header.read()))

    def header_matches_declarations():
        missing = sorted(declared - set(SIGNATURES))
        extra = sorted(set(SIGNATURES) - declared)
        assert not missing and not extra, (
            f"not declared here: {missing}; not in the header: {extra}")

    def library_exports_entry_points():
        for name in sorted(declared):
            assert hasattr(suite.kernels.lib, name), f"{name} not exported"

    suite.case("api header matches ctypes declarations",
               header_matches_declarations)
    suite.case("api library exports every entry point",
               library_exports_entry_points)
    suite.finish()


if __name__ == "__main__":
    main()
