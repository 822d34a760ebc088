# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_reshape and fluid_cpu_concat against PyTorch, for float and
integer dtypes (both only move data)."""

import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

DTYPES = api.FLOAT_DTYPES + [(torch.int32, "i32"), (torch.int64, "i64")]

# (input shape, output shape)
RESHAPES = [
    ([2, 3, 4, 5], [2, 60]),   # flatten
    ([2, 60], [2, 3, 4, 5]),
    ([6], [1, 6, 1]),
    ([1], []),
    ([], [1, 1]),
    ([0, 3], [3, 0, 5]),
]

# (input shapes, axis)
CONCATS = [
    ([[2, 3, 4, 5], [2, 1, 4, 5], [2, 2, 4, 5]], 1),
    ([[1, 3, 2, 2], [2, 3, 2, 2]], 0),
    ([[2, 3, 4, 1], [2, 3, 4, 3]], 3),
    ([[2, 3, 2, 5], [2, 3, 0, 5], [2, 3, 3, 5]], 2),
    ([[4, 5]], 1),
    ([[3], [4], [5]], 0),
]


def random(suite, shape, dtype):
    if dtype.is_floating_point:
        return suite.randn(*shape, dtype=dtype)
    return suite.randint(1000, *shape, dtype=dtype)


def exact(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (
        f"{got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)}")
    assert torch.equal(got, want), "values differ"


def reshape_case(suite, dtype, in_shape, out_shape, in_place):
    def body():
        x = random(suite, in_shape, dtype)
        want = x.reshape(out_shape)
        got = x.view(out_shape) if in_place else torch.zeros(out_shape,
                                                              dtype=dtype)
        suite.kernels("fluid_cpu_reshape", x, got)
        exact(got, want)
    return body


def concat_case(suite, dtype, shapes, axis):
    def body():
        inputs = [random(suite, shape, dtype) for shape in shapes]
        want = torch.cat(inputs, axis)
        got = torch.zeros(want.shape, dtype=dtype)
        descriptors = (api.fluidrt.FluidTensor * len(inputs))(
            *[api.fluidrt.tensor(x.numpy()) for x in inputs])
        suite.kernels("fluid_cpu_concat", descriptors, len(inputs), got, axis)
        exact(got, want)
    return body


def main():
    suite = api.Suite(sys.argv)
    for dtype, dtype_name in DTYPES:
        for in_shape, out_shape in RESHAPES:
            suite.case(f"reshape {dtype_name} {in_shape} -> {out_shape}",
                       reshape_case(suite, dtype, in_shape, out_shape, False))
        suite.case(f"reshape {dtype_name} in place",
                   reshape_case(suite, dtype, [3, 4], [12], True))
        for shapes, axis in CONCATS:
            suite.case(f"concat {dtype_name} {shapes} axis {axis}",
                       concat_case(suite, dtype, shapes, axis))
    suite.finish()


if __name__ == "__main__":
    main()
