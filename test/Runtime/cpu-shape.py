# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_reshape, fluid_cpu_concat and fluid_cpu_gather against
PyTorch (gather: torch.index_select), for float and integer dtypes (all
three only move data), gather also bit for bit on f16 and bf16 bit
patterns and with i32 indices."""

import ctypes
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


# (input shape, axis, indices): repeated and unused indices, along the
# first, a middle and the last axis; one index; no index (an empty result);
# swin's relative position bias (a [169, 3] table at 2401 indices).
GATHERS = [
    ([5, 3], 0, [4, 0, 4, 2]),
    ([2, 6, 3], 1, [5, 5, 1]),
    ([2, 3, 4], 2, [3, 0, 1, 2, 0]),
    ([7], 0, [6]),
    ([3, 4], 1, []),
    ([169, 3], 0, [(i * 37) % 169 for i in range(2401)]),
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


def gather_case(suite, dtype, shape, axis, picks, index_dtype):
    def body():
        x = random(suite, shape, dtype)
        indices = torch.tensor(picks, dtype=index_dtype)
        want = x.index_select(axis, indices.long())
        got = torch.zeros(want.shape, dtype=dtype)
        suite.kernels("fluid_cpu_gather", x, indices, got, axis)
        exact(got, want)
    return body


def gather_bits_case(suite, code):
    def body():
        bits = torch.randint(0, 1 << 16, (4, 5), generator=suite.generator,
                             dtype=torch.int32).to(torch.int16)
        indices = torch.tensor([3, 0, 3], dtype=torch.int64)
        got = torch.zeros(4, 3, dtype=torch.int16)
        suite.kernels(
            "fluid_cpu_gather",
            ctypes.byref(api.fluidrt.tensor(bits.numpy(), code)), indices,
            ctypes.byref(api.fluidrt.tensor(got.numpy(), code)), 1)
        exact(got, bits.index_select(1, indices))
    return body


def main():
    suite = api.Suite(sys.argv)
    for shape, axis, picks in GATHERS:
        for dtype, dtype_name in DTYPES:
            suite.case(f"gather {dtype_name} {shape} axis {axis} "
                       f"{len(picks)} indices",
                       gather_case(suite, dtype, shape, axis, picks,
                                   torch.int64))
        suite.case(f"gather f32 {shape} axis {axis} i32 indices",
                   gather_case(suite, torch.float32, shape, axis, picks,
                               torch.int32))
    for code, name in [(4, "f16"), (api.fluidrt.BF16, "bf16")]:
        suite.case(f"gather {name} bit patterns", gather_bits_case(suite, code))
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
