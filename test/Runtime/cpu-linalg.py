# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_matmul and fluid_cpu_linear against PyTorch on random
inputs."""

import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

# (batch or None, M, K, N)
MATMUL_SIZES = [
    (None, 5, 7, 3),
    (None, 1, 64, 1),
    (None, 33, 17, 65),
    (None, 4, 1, 6),
    (3, 4, 6, 5),
    (1, 8, 3, 2),
    (None, 0, 4, 3),
    (None, 3, 0, 2),
]

# (batch, in features, out features)
LINEAR_SIZES = [(2, 512, 10), (1, 3, 1), (7, 64, 33), (4, 0, 5)]


def matmul_case(suite, dtype, batch, m, k, n, transpose_lhs, transpose_rhs):
    def body():
        lead = [] if batch is None else [batch]
        lhs = suite.randn(*lead, *([k, m] if transpose_lhs else [m, k]),
                          dtype=dtype)
        rhs = suite.randn(*lead, *([n, k] if transpose_rhs else [k, n]),
                          dtype=dtype)
        want = torch.matmul(lhs.transpose(-1, -2) if transpose_lhs else lhs,
                            rhs.transpose(-1, -2) if transpose_rhs else rhs)
        got = api.empty(want.shape, dtype)
        suite.kernels("fluid_cpu_matmul", lhs, rhs, got,
                      api.MatmulParams(int(transpose_lhs),
                                       int(transpose_rhs)))
        api.expect_close(got, want)
    return body


def linear_case(suite, dtype, batch, in_features, out_features, with_bias):
    def body():
        x = suite.randn(batch, in_features, dtype=dtype)
        w = suite.randn(out_features, in_features, dtype=dtype)
        b = suite.randn(out_features, dtype=dtype) if with_bias else None
        want = F.linear(x, w, b)
        got = api.empty(want.shape, dtype)
        suite.kernels("fluid_cpu_linear", x, w, b, got)
        api.expect_close(got, want)
    return body


def main():
    suite = api.Suite(sys.argv)
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for batch, m, k, n in MATMUL_SIZES:
            for transpose_lhs in (False, True):
                for transpose_rhs in (False, True):
                    shape = (f"[{m},{k}]x[{k},{n}]" if batch is None else
                             f"{batch}x[{m},{k}]x[{k},{n}]")
                    suite.case(f"matmul {dtype_name} {shape} "
                               f"transpose_lhs={int(transpose_lhs)} "
                               f"transpose_rhs={int(transpose_rhs)}",
                               matmul_case(suite, dtype, batch, m, k, n,
                                           transpose_lhs, transpose_rhs))
        for batch, in_features, out_features in LINEAR_SIZES:
            for with_bias in (True, False):
                suite.case(f"linear {dtype_name} [{batch},{in_features}] -> "
                           f"{out_features}{' bias' if with_bias else ''}",
                           linear_case(suite, dtype, batch, in_features,
                                       out_features, with_bias))
    suite.finish()


if __name__ == "__main__":
    main()
