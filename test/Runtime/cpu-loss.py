# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_softmax, fluid_cpu_log_softmax and
fluid_cpu_softmax_cross_entropy against PyTorch on random inputs, including
logits large enough to overflow a naive exponential."""

import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

# (input shape, axis, scale of the values)
SOFTMAX_CASES = [
    ([4, 10], 1, 1.0),
    ([4, 10], 0, 1.0),
    ([2, 3, 4, 5], 1, 3.0),
    ([2, 3, 4, 5], 3, 3.0),
    ([2, 3, 4, 5], 0, 3.0),
    ([7], 0, 1.0),
    ([3, 1, 2], 1, 1.0),
    ([3, 6], 1, 1000.0),
]

# (rows, classes, scale of the logits)
LOSS_SIZES = [(8, 10, 1.0), (1, 5, 1.0), (5, 1, 1.0), (16, 1000, 2.0),
              (4, 7, 500.0)]


def softmax_case(suite, dtype, log, shape, axis, scale):
    def body():
        x = suite.randn(*shape, dtype=dtype) * scale
        want = (F.log_softmax if log else F.softmax)(x, axis)
        got = api.empty(shape, dtype)
        name = "fluid_cpu_log_softmax" if log else "fluid_cpu_softmax"
        suite.kernels(name, x, got, axis)
        api.expect_close(got, want)
    return body


def loss_case(suite, dtype, rows, classes, scale, label_dtype, reduction):
    def body():
        logits = suite.randn(rows, classes, dtype=dtype) * scale
        labels = suite.randint(classes, rows, dtype=label_dtype)
        want = F.cross_entropy(logits, labels.long(), reduction=reduction)
        got = api.empty(want.shape, dtype)
        suite.kernels("fluid_cpu_softmax_cross_entropy", logits, labels, got,
                      api.REDUCTION[reduction])
        api.expect_close(got, want)
    return body


def main():
    suite = api.Suite(sys.argv)
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for log in (False, True):
            for shape, axis, scale in SOFTMAX_CASES:
                name = "log_softmax" if log else "softmax"
                suite.case(f"{name} {dtype_name} {shape} axis {axis} "
                           f"scale {scale:g}",
                           softmax_case(suite, dtype, log, shape, axis, scale))
        for rows, classes, scale in LOSS_SIZES:
            for label_dtype, label_name in ((torch.int64, "i64"),
                                            (torch.int32, "i32")):
                for reduction in api.REDUCTION:
                    suite.case(f"softmax_cross_entropy {dtype_name} "
                               f"[{rows},{classes}] labels {label_name} "
                               f"reduction {reduction} scale {scale:g}",
                               loss_case(suite, dtype, rows, classes, scale,
                                         label_dtype, reduction))
    suite.finish()


if __name__ == "__main__":
    main()
