# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_batch_norm_grad (training mode) against PyTorch autograd of
F.batch_norm(training=True), and against central finite differences of
fluid_cpu_batch_norm, whose batch statistics move with the input.

The saved statistics passed to the gradient kernel are the ones our forward
kernel returns, as in a compiled training step.
"""

import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
grad_api = importlib.import_module("cpu-grad-api")
api = grad_api.api

# (name, input shape, epsilon, offset of the input values)
CASES = [
    ("NCHW", [4, 3, 5, 5], 1e-5, 0.0),
    ("NCHW non-square image", [2, 8, 3, 7], 1e-5, 0.0),
    ("NCHW batch1", [1, 4, 6, 6], 1e-5, 0.0),
    ("NCHW 1x1 planes", [5, 3, 1, 1], 1e-5, 0.0),
    ("NCHW large mean", [3, 2, 4, 4], 1e-5, 20.0),
    ("NCHW large epsilon", [2, 3, 4, 3], 0.5, 0.0),
    ("NC", [16, 10], 1e-5, 0.0),
    ("NC two rows", [2, 5], 1e-3, 0.0),
]

WRT = ("input", "scale", "shift")


class BatchNorm:
    """One batch-norm case: input, scale, shift and incoming gradient."""

    def __init__(self, suite, dtype, shape, epsilon, offset):
        self.suite = suite
        self.epsilon = epsilon
        channels = shape[1]
        self.x = suite.randn(*shape, dtype=dtype) * 2 + offset
        self.scale = suite.randn(channels, dtype=dtype)
        self.shift = suite.randn(channels, dtype=dtype)
        self.r = suite.randn(*shape, dtype=dtype)

    def forward(self, x, scale, shift):
        """Our forward: (output, saved_mean, saved_inv_std)."""
        channels = x.shape[1]
        out = api.empty(x.shape, x.dtype)
        stats = [api.empty([channels], x.dtype) for _ in range(4)]
        running = [torch.zeros(channels, dtype=x.dtype),
                   torch.ones(channels, dtype=x.dtype)]
        self.suite.kernels("fluid_cpu_batch_norm", x, scale, shift, *running,
                           out, *stats,
                           api.BatchNormParams(self.epsilon, 0.1))
        return out, stats[0], stats[1]

    def grads(self):
        """Our gradients: (grad_input, grad_scale, grad_shift)."""
        _, mean, inv_std = self.forward(self.x, self.scale, self.shift)
        grad_input = api.empty(self.x.shape, self.x.dtype)
        grad_scale = api.empty(self.scale.shape, self.x.dtype)
        grad_shift = api.empty(self.shift.shape, self.x.dtype)
        self.suite.kernels("fluid_cpu_batch_norm_grad", self.r, self.x,
                           self.scale, mean, inv_std, grad_input, grad_scale,
                           grad_shift)
        return grad_input, grad_scale, grad_shift

    def torch_grads(self):
        return grad_api.torch_grads(
            lambda x, scale, shift: F.batch_norm(
                x, None, None, scale, shift, training=True,
                eps=self.epsilon),
            [self.x, self.scale, self.shift], self.r)


def torch_case(suite, dtype, case):
    def body():
        bn = BatchNorm(suite, dtype, *case)
        for name, got, want in zip(WRT, bn.grads(), bn.torch_grads()):
            api.expect_close(got, want, f"grad_{name}")
    return body


def finite_difference_case(suite, wrt, case):
    def body():
        bn = BatchNorm(suite, torch.float64, *case)
        arguments = [bn.x, bn.scale, bn.shift]
        k = WRT.index(wrt)

        def f(value):
            moved = list(arguments)
            moved[k] = value
            return grad_api.projection(bn.forward(*moved)[0], bn.r)

        grad_api.finite_difference_check(suite, f, arguments[k],
                                         bn.grads()[k], f"grad_{wrt}")
    return body


def main():
    suite = grad_api.Suite(sys.argv)
    for name, *case in CASES:
        label = f"{name} input {case[0]} epsilon {case[1]}"
        for dtype, dtype_name in api.FLOAT_DTYPES:
            suite.case(f"batch_norm_grad {dtype_name} {label} vs torch",
                       torch_case(suite, dtype, case))
        for wrt in WRT:
            suite.case(f"batch_norm_grad f64 {label} grad_{wrt} vs finite "
                       f"differences", finite_difference_case(suite, wrt,
                                                              case))
    suite.finish()


if __name__ == "__main__":
    main()
