# RUN: %python %s %fluid_runtime_lib
"""Unary (relu, sigmoid, tanh) and broadcasting binary (add, sub, mul, div)
cpu kernels against PyTorch on random inputs."""

import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

UNARY = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh}
BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
          "div": torch.div}

UNARY_SHAPES = [[], [7], [2, 3, 5, 4], [0, 3]]

# (lhs shape, rhs shape): broadcasting along every axis, from either side,
# rank-0 operands, size-0 dimensions.
BROADCAST_SHAPES = [
    ([2, 3, 4, 5], [2, 3, 4, 5]),
    ([2, 3, 4, 5], [5]),
    ([2, 3, 4, 5], [4, 1]),
    ([2, 3, 4, 5], [3, 1, 1]),
    ([2, 3, 4, 5], [2, 1, 1, 1]),
    ([1, 3, 1, 5], [2, 1, 4, 1]),
    ([4, 1], [2, 3, 4, 5]),
    ([2, 3, 4, 5], [1, 1, 1, 1]),
    ([2, 3, 4, 5], []),
    ([], [6, 2]),
    ([], []),
    ([1], [3, 1, 1]),
    ([3, 1], [1, 4]),
    ([0, 3], [1, 3]),
    ([2, 1, 6], [2, 5, 1]),
]


def unary_case(suite, dtype, name, shape):
    def body():
        # Spread wide enough to reach sigmoid's and tanh's saturation.
        x = suite.randn(*shape, dtype=dtype) * 10
        if x.numel() > 2:
            x.view(-1)[1] = float("nan")
        want = UNARY[name](x)
        got = api.empty(want.shape, dtype)
        suite.kernels(f"fluid_cpu_{name}", x, got)
        api.expect_close(got, want)
    return body


def binary_case(suite, dtype, name, lhs_shape, rhs_shape):
    def body():
        lhs = suite.randn(*lhs_shape, dtype=dtype)
        rhs = suite.randn(*rhs_shape, dtype=dtype)
        if name == "div":  # keep quotients well conditioned
            rhs = rhs.sign() * (rhs.abs() + 0.5)
        want = BINARY[name](lhs, rhs)
        got = api.empty(want.shape, dtype)
        suite.kernels(f"fluid_cpu_{name}", lhs, rhs, got)
        api.expect_close(got, want)
    return body


def in_place_case(suite, dtype, name):
    """The output may be the buffer of an input of its shape."""
    def body():
        lhs = suite.randn(3, 4, 5, dtype=dtype)
        rhs = suite.randn(4, 1, dtype=dtype)
        want = BINARY[name](lhs, rhs)
        suite.kernels(f"fluid_cpu_{name}", lhs, rhs, lhs)
        api.expect_close(lhs, want)
        x = suite.randn(6, 7, dtype=dtype)
        want = torch.tanh(x)
        suite.kernels("fluid_cpu_tanh", x, x)
        api.expect_close(x, want)
    return body


def main():
    suite = api.Suite(sys.argv)
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for name in UNARY:
            for shape in UNARY_SHAPES:
                suite.case(f"{name} {dtype_name} shape {shape}",
                           unary_case(suite, dtype, name, shape))
        for name in BINARY:
            for lhs_shape, rhs_shape in BROADCAST_SHAPES:
                suite.case(f"{name} {dtype_name} {lhs_shape} with "
                           f"{rhs_shape}",
                           binary_case(suite, dtype, name, lhs_shape,
                                       rhs_shape))
            suite.case(f"{name} {dtype_name} in place",
                       in_place_case(suite, dtype, name))
    suite.finish()


if __name__ == "__main__":
    main()
