# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_relu_grad, fluid_cpu_sigmoid_grad and fluid_cpu_tanh_grad
(rules written in terms of the forward output) against PyTorch autograd,
and against central finite differences of the forward kernels; also the
documented in-place use (grad_input sharing a buffer with grad_output or
output) and relu's NaN rule (a NaN output passes its gradient, as in
PyTorch's threshold_backward).
"""

import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
grad_api = importlib.import_module("cpu-grad-api")
api = grad_api.api

OPS = {"relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh}
SHAPES = [[2, 3, 4, 5], [7], [], [0, 3]]


def random_input(suite, shape, dtype):
    """Values away from relu's kink at 0 (so that finite differences of
    relu are exact), some of them large enough to saturate sigmoid and
    tanh."""
    x = suite.randn(*shape, dtype=dtype) * 3
    return torch.where(x.abs() < 0.05, torch.full_like(x, 0.5), x)


def forward(suite, op, x):
    out = api.empty(x.shape, x.dtype)
    suite.kernels(f"fluid_cpu_{op}", x, out)
    return out


def grad(suite, op, r, y):
    got = api.empty(y.shape, y.dtype)
    suite.kernels(f"fluid_cpu_{op}_grad", r, y, got)
    return got


def torch_case(suite, dtype, op, shape):
    def body():
        x = random_input(suite, shape, dtype)
        r = suite.randn(*shape, dtype=dtype)
        (want,) = grad_api.torch_grads(OPS[op], [x], r)
        api.expect_close(grad(suite, op, r, forward(suite, op, x)), want)
    return body


def finite_difference_case(suite, op, shape):
    def body():
        x = random_input(suite, shape, torch.float64)
        r = suite.randn(*shape)
        grad_api.finite_difference_check(
            suite, lambda x: grad_api.projection(forward(suite, op, x), r), x,
            grad(suite, op, r, forward(suite, op, x)))
    return body


def in_place_case(suite, op, shared):
    def body():
        x = random_input(suite, [3, 8], torch.float64)
        r = suite.randn(3, 8)
        (want,) = grad_api.torch_grads(OPS[op], [x], r)
        y = forward(suite, op, x)
        buffer = r if shared == "grad_output" else y
        suite.kernels(f"fluid_cpu_{op}_grad", r, y, buffer)
        api.expect_close(buffer, want)
    return body


def relu_nan_case(suite, dtype):
    def body():
        x = torch.tensor([float("nan"), -1.0, 0.0, 2.0, float("-inf"),
                          float("inf")], dtype=dtype)
        r = suite.randn(6, dtype=dtype)
        (want,) = grad_api.torch_grads(torch.relu, [x], r)
        got = grad(suite, "relu", r, forward(suite, "relu", x))
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    return body


def main():
    suite = grad_api.Suite(sys.argv)
    for op in OPS:
        for shape in SHAPES:
            for dtype, dtype_name in api.FLOAT_DTYPES:
                suite.case(f"{op}_grad {dtype_name} shape {shape} vs torch",
                           torch_case(suite, dtype, op, shape))
            suite.case(f"{op}_grad f64 shape {shape} vs finite differences",
                       finite_difference_case(suite, op, shape))
        for shared in ("grad_output", "output"):
            suite.case(f"{op}_grad f64 grad_input is the {shared} buffer",
                       in_place_case(suite, op, shared))
    for dtype, dtype_name in api.FLOAT_DTYPES:
        suite.case(f"relu_grad {dtype_name} NaN, zero and infinite outputs as "
                   f"torch", relu_nan_case(suite, dtype))
    suite.finish()


if __name__ == "__main__":
    main()
