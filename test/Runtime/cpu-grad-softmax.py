# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_softmax_grad, fluid_cpu_log_softmax_grad (along every axis)
and fluid_cpu_softmax_cross_entropy_grad (every reduction, i64 and i32
labels) against PyTorch autograd, and against central finite differences
of fluid_cpu_softmax, fluid_cpu_log_softmax and
fluid_cpu_softmax_cross_entropy.
"""

import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
grad_api = importlib.import_module("cpu-grad-api")
api = grad_api.api

# (input shape, axis, scale of the values). Finite differences skip the
# scales above FD_MAX_SCALE: there softmax saturates, its derivative is of
# the order of exp(-scale), below the rounding error of a difference
# quotient of the forward.
FD_MAX_SCALE = 3.0
SOFTMAX_CASES = [([2, 3, 4, 5], axis, 2.0) for axis in range(4)] + [
    ([4, 10], 0, 1.0),
    ([4, 10], 1, 1.0),
    ([7], 0, 1.0),
    ([3, 1, 2], 1, 1.0),
    ([3, 6], 1, 30.0),
]

# (rows, classes, scale of the logits)
LOSS_SIZES = [(8, 10, 1.0), (1, 5, 1.0), (5, 1, 1.0), (16, 100, 2.0),
              (4, 7, 30.0)]

LABEL_DTYPES = [(torch.int64, "i64"), (torch.int32, "i32")]


def softmax_name(log):
    return "log_softmax" if log else "softmax"


def softmax_forward(suite, log, x, axis):
    out = api.empty(x.shape, x.dtype)
    suite.kernels(f"fluid_cpu_{softmax_name(log)}", x, out, axis)
    return out


def softmax_grad(suite, log, r, y, axis):
    got = api.empty(y.shape, y.dtype)
    suite.kernels(f"fluid_cpu_{softmax_name(log)}_grad", r, y, got, axis)
    return got


def softmax_torch_case(suite, dtype, log, shape, axis, scale):
    def body():
        x = suite.randn(*shape, dtype=dtype) * scale
        r = suite.randn(*shape, dtype=dtype)
        fn = F.log_softmax if log else F.softmax
        (want,) = grad_api.torch_grads(lambda x: fn(x, axis), [x], r)
        y = softmax_forward(suite, log, x, axis)
        api.expect_close(softmax_grad(suite, log, r, y, axis), want)
    return body


def softmax_fd_case(suite, log, shape, axis, scale):
    def body():
        x = suite.randn(*shape) * scale
        r = suite.randn(*shape)
        y = softmax_forward(suite, log, x, axis)
        grad_api.finite_difference_check(
            suite, lambda x: grad_api.projection(
                softmax_forward(suite, log, x, axis), r),
            x, softmax_grad(suite, log, r, y, axis))
    return body


def softmax_in_place_case(suite, log, shared):
    def body():
        x = suite.randn(3, 4, 5)
        r = suite.randn(3, 4, 5)
        fn = F.log_softmax if log else F.softmax
        (want,) = grad_api.torch_grads(lambda x: fn(x, 1), [x], r)
        y = softmax_forward(suite, log, x, 1)
        buffer = r if shared == "grad_output" else y
        suite.kernels(f"fluid_cpu_{softmax_name(log)}_grad", r, y, buffer, 1)
        api.expect_close(buffer, want)
    return body


class Loss:
    """One cross-entropy case: logits, labels and the incoming gradient of
    the loss (rank 0, or [N] without reduction)."""

    def __init__(self, suite, dtype, rows, classes, scale, label_dtype,
                 reduction):
        self.suite = suite
        self.reduction = reduction
        self.logits = suite.randn(rows, classes, dtype=dtype) * scale
        self.labels = suite.randint(classes, rows, dtype=label_dtype)
        loss_shape = [rows] if reduction == "none" else []
        self.g = suite.randn(*loss_shape, dtype=dtype)

    def forward(self, logits):
        out = api.empty(self.g.shape, logits.dtype)
        self.suite.kernels("fluid_cpu_softmax_cross_entropy", logits,
                           self.labels, out, api.REDUCTION[self.reduction])
        return out

    def grad(self):
        got = api.empty(self.logits.shape, self.logits.dtype)
        self.suite.kernels("fluid_cpu_softmax_cross_entropy_grad", self.g,
                           self.logits, self.labels, got,
                           api.REDUCTION[self.reduction])
        return got


def loss_torch_case(suite, dtype, *case):
    def body():
        loss = Loss(suite, dtype, *case)
        (want,) = grad_api.torch_grads(
            lambda logits: F.cross_entropy(logits, loss.labels.long(),
                                           reduction=loss.reduction),
            [loss.logits], loss.g)
        api.expect_close(loss.grad(), want)
    return body


def loss_fd_case(suite, *case):
    def body():
        loss = Loss(suite, torch.float64, *case)
        grad_api.finite_difference_check(
            suite, lambda logits: grad_api.projection(loss.forward(logits),
                                                      loss.g),
            loss.logits, loss.grad())
    return body


def main():
    suite = grad_api.Suite(sys.argv)
    for log in (False, True):
        op = f"{softmax_name(log)}_grad"
        for shape, axis, scale in SOFTMAX_CASES:
            label = f"shape {shape} axis {axis} scale {scale}"
            for dtype, dtype_name in api.FLOAT_DTYPES:
                suite.case(f"{op} {dtype_name} {label} vs torch",
                           softmax_torch_case(suite, dtype, log, shape, axis,
                                              scale))
            if scale <= FD_MAX_SCALE:
                suite.case(f"{op} f64 {label} vs finite differences",
                           softmax_fd_case(suite, log, shape, axis, scale))
        for shared in ("grad_output", "output"):
            suite.case(f"{op} f64 grad_input is the {shared} buffer",
                       softmax_in_place_case(suite, log, shared))
    for rows, classes, scale in LOSS_SIZES:
        for label_dtype, label_name in LABEL_DTYPES:
            for reduction in api.REDUCTION:
                case = (rows, classes, scale, label_dtype, reduction)
                label = (f"[{rows},{classes}] scale {scale} {label_name} "
                         f"labels reduction {reduction}")
                for dtype, dtype_name in api.FLOAT_DTYPES:
                    suite.case(f"softmax_cross_entropy_grad {dtype_name} "
                               f"{label} vs torch",
                               loss_torch_case(suite, dtype, *case))
                suite.case(f"softmax_cross_entropy_grad f64 {label} vs "
                           f"finite differences", loss_fd_case(suite, *case))
    suite.finish()


if __name__ == "__main__":
    main()
