# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's reductions against the cpu kernels: mean and
reduce_sum over every subset of axes (with and without keep_dims) of
ranks 0 to 4, sum_to (the gradient of broadcasting: per-channel bias,
leading axes, scalars), global_avg_pool, and the paths of the reduction
engine: a warp per row, a block per row, columns, and the reduced range
split across blocks (more than 2^24 elements, reduced to one value, to
rows and to columns), and columns read as 16-byte vectors (a channels-last
mean over H and W). Empty reductions give 0 (sum) and NaN (mean).

Sums are taken in double by fixed trees, without atomics, so they match
the cpu's sequential double sums to rounding: f64 rtol 1e-12 (atol 1e-12
of the output's scale), f32 rtol 1e-5 (atol 1e-6). Each case also runs
twice on the device and must give the same bits (determinism).
"""

import importlib
import itertools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
harness = importlib.import_module("gpu-elementwise")
Out, run_both = harness.Out, harness.run_both
ReduceParams = harness.ReduceParams
expect_same_error = harness.expect_same_error

SHAPES = [[], [7], [3, 5], [2, 3, 4], [2, 3, 4, 5], [1, 4, 1, 6]]


def reduced_shape(shape, axes, keep_dims):
    axes = set(axes) if axes else set(range(len(shape)))
    return [1 if d in axes else size for d, size in enumerate(shape)
            if keep_dims or d not in axes]


def run_twice(h, op, x, out_shape, *extra):
    """run_both, plus a second device run that must give the same bits."""
    results = run_both(h, op, x, Out(out_shape, x.dtype), *extra)
    again = run_both(h, op, x, Out(out_shape, x.dtype), *extra)
    if not harness.bitwise_equal(again[0][1], results[0][1]):
        raise AssertionError("two device runs differ")
    return results


def reduce_case(h, op, shape, axes, keep_dims, dtype, offset=0.0):
    def body():
        x = h.randn(*shape, dtype=dtype, offset=offset)
        params = ReduceParams(list(axes) + [0] * (8 - len(axes)), len(axes),
                              int(keep_dims))
        out = reduced_shape(shape, axes, keep_dims)
        return harness.compare(run_twice(h, op, x, out, params))
    return body


def sum_to_case(h, shape, out_shape, dtype):
    def body():
        x = h.randn(*shape, dtype=dtype)
        return harness.compare(run_twice(h, "sum_to", x, out_shape))
    return body


def global_avg_pool_case(h, shape, dtype):
    def body():
        x = h.randn(*shape, dtype=dtype)
        return harness.compare(run_twice(h, "global_avg_pool", x,
                                         shape[:2] + [1, 1]))
    return body


# Engine paths: (shape, axes) with the path each takes.
ENGINE_CASES = [
    ("warp rows", [1000, 37], [1]),
    ("warp rows of 2048", [64, 2048], [1]),
    ("block rows, split", [3, 100003], [1]),
    ("block rows", [300, 5000], [1]),
    ("columns", [1000, 37], [0]),
    ("columns, split", [100003, 5], [0]),
    ("middle axis", [16, 1000, 9], [1]),
    ("outer and inner axes", [64, 3, 50], [0, 2]),
    ("bias gradient [N,C,H,W] -> C", [32, 64, 14, 14], [0, 2, 3]),
    ("all of [N,C,H,W]", [8, 16, 9, 9], []),
    # Column vectors (the innermost kept group a multiple of 16 bytes): a
    # channels-last mean over H and W, rows in whole unrolled steps and with
    # a remainder, over the batch, and split across blocks.
    ("column vectors, [N,H,W,C] -> [N,C]", [4, 7, 7, 64], [1, 2]),
    ("column vectors, 13 rows", [3, 13, 12], [1]),
    ("column vectors over the batch", [300, 32], [0]),
    ("column vectors, split", [2, 40000, 8], [1]),
]

SUM_TO_CASES = [
    ([8, 16, 7, 7], [16, 1, 1]),
    ([8, 16, 7, 7], [1, 16, 1, 1]),
    ([64, 32], [32]),
    ([6, 10], [1, 10]),
    ([5, 6], [5, 1]),
    ([2, 3, 4, 5], [3, 1, 5]),
    ([2, 3, 4, 5], []),
    ([2, 3, 4, 5], [1]),
    ([2, 3, 4, 5], [2, 3, 4, 5]),
    ([3, 4], [4]),
    ([], []),
    ([0, 4], [4]),
    ([4, 0], [1, 0]),
]


def large_case(h, name, shape, axes, dtype):
    """More than 2^24 elements."""
    def body():
        x = h.randn(*shape, dtype=dtype, offset=0.5)
        params = ReduceParams(list(axes) + [0] * (8 - len(axes)), len(axes),
                              0)
        out = reduced_shape(shape, axes, False)
        return harness.compare(run_twice(h, "reduce_sum", x, out, params))
    return body


def error_cases(h):
    f64 = np.float64
    a = np.ones((2, 3, 4), f64)
    cases = {
        "axis out of range": ("reduce_sum", a, Out((2, 3), f64),
                              ReduceParams([3] + [0] * 7, 1, 0)),
        "axis twice": ("mean", a, Out((2,), f64),
                       ReduceParams([1, 1] + [0] * 6, 2, 0)),
        "num_axes": ("mean", a, Out((2,), f64),
                     ReduceParams([0] * 8, 4, 0)),
        "output shape": ("reduce_sum", a, Out((2, 3), f64),
                         ReduceParams([1] + [0] * 7, 1, 0)),
        "keep_dims shape": ("mean", a, Out((2, 4), f64),
                            ReduceParams([1] + [0] * 7, 1, 1)),
        "null params": ("mean", a, Out((2, 4), f64), None),
        "integer input": ("reduce_sum", np.ones(3, np.int32),
                          Out((), np.int32), ReduceParams([0] * 8, 0, 0)),
        "dtype": ("mean", a, Out((), np.float32),
                  ReduceParams([0] * 8, 0, 0)),
        "sum_to conflict": ("sum_to", a, Out((3, 3), f64)),
        "sum_to more dimensions": ("sum_to", np.ones((3, 4)),
                                   Out((1, 3, 4), f64)),
        "global_avg_pool rank": ("global_avg_pool", a, Out((2, 3, 1), f64)),
        "global_avg_pool shape": ("global_avg_pool", np.ones((2, 3, 4, 4)),
                                  Out((2, 3, 1), f64)),
    }
    for name, (op, *args) in cases.items():
        h.case(f"error {op}: {name}",
               lambda op=op, args=args: expect_same_error(h, op, *args))


def main():
    h = harness.Harness(sys.argv)
    for mode, dtype in harness.FLOATS:
        for op in ["reduce_sum", "mean"]:
            for shape in SHAPES:
                subsets = [()] + [c for r in range(1, len(shape) + 1)
                                  for c in itertools.combinations(
                                      range(len(shape)), r)]
                for axes in subsets:
                    for keep_dims in ([False, True] if axes else [False]):
                        keep = " keep_dims" if keep_dims else ""
                        h.case(f"{op} {mode} {shape} axes {list(axes)}{keep}",
                               reduce_case(h, op, shape, axes, keep_dims,
                                           dtype))
            for name, shape, axes in ENGINE_CASES:
                h.case(f"{op} {mode} {name} {shape} axes {axes}",
                       reduce_case(h, op, shape, axes, False, dtype,
                                   offset=0.25))
            for shape, axes in [([0, 3], [0]), ([0, 3], [1]), ([4, 0], [1]),
                                ([0], [])]:
                h.case(f"{op} {mode} empty {shape} axes {axes}",
                       reduce_case(h, op, shape, axes, False, dtype))
        for shape, out_shape in SUM_TO_CASES:
            h.case(f"sum_to {mode} {shape} -> {out_shape}",
                   sum_to_case(h, shape, out_shape, dtype))
        for shape in [[2, 3, 7, 7], [4, 64, 1, 1], [1, 3, 224, 224],
                      [2, 2048, 7, 7], [0, 3, 2, 2], [2, 3, 0, 2]]:
            h.case(f"global_avg_pool {mode} {shape}",
                   global_avg_pool_case(h, shape, dtype))
    for name, shape, axes in [("to one value", [(1 << 24) + 7], []),
                              ("rows", [4, (1 << 22) + 3], [1]),
                              ("columns", [(1 << 22) + 3, 5], [0])]:
        h.case(f"reduce_sum f32 {name} {shape}",
               large_case(h, name, shape, axes, np.float32))
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
