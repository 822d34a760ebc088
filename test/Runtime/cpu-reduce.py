# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_mean and fluid_cpu_reduce_sum against PyTorch over every
combination of axes of a rank-4 tensor, with and without keep_dims, plus
lower ranks and empty reductions."""

import importlib
import itertools
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

OPS = {"mean": torch.mean, "reduce_sum": torch.sum}

# (input shape, axes): an empty axes list reduces every axis.
CASES = [([2, 3, 4, 5], list(axes))
         for count in range(5)
         for axes in itertools.combinations(range(4), count)]
CASES += [
    ([6], []), ([6], [0]), ([3, 7], [1]), ([3, 7], [0]), ([], []),
    ([2, 0, 3], [1]), ([2, 0, 3], [0, 2]), ([1, 1, 4], [0, 1]),
]


def reduce_case(suite, dtype, op, shape, axes, keep_dims):
    def body():
        x = suite.randn(*shape, dtype=dtype)
        dims = axes if axes else list(range(len(shape)))
        want = OPS[op](x, dim=dims, keepdim=keep_dims) if dims else x.clone()
        got = api.empty(want.shape, dtype)
        params = api.ReduceParams(axes + [0] * (8 - len(axes)), len(axes),
                                  int(keep_dims))
        suite.kernels(f"fluid_cpu_{op}", x, got, params)
        api.expect_close(got, want)
    return body


def main():
    suite = api.Suite(sys.argv)
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for op in OPS:
            for shape, axes in CASES:
                for keep_dims in (False, True):
                    suite.case(f"{op} {dtype_name} {shape} axes {axes} "
                               f"keep_dims={int(keep_dims)}",
                               reduce_case(suite, dtype, op, shape, axes,
                                           keep_dims))
    suite.finish()


if __name__ == "__main__":
    main()
