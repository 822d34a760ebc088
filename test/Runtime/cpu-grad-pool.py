# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_max_pool2d_grad and fluid_cpu_avg_pool2d_grad against PyTorch
autograd, and against central finite differences of fluid_cpu_max_pool2d
and fluid_cpu_avg_pool2d, on the window geometries of cpu-pool.py and a few
more.

The oracle is PyTorch's autograd where PyTorch expresses the pooling
(symmetric padding, or asymmetric padding through F.pad without ceil_mode),
otherwise autograd through cpu-pool.py's `spec_pool`, which cpu-pool.py
checks against PyTorch. Max pooling is also checked on inputs with ties
(PyTorch's cpu rule: the first maximum in row-major window order) and with
NaNs (a NaN wins, the last one of a window if several), against PyTorch
only: the spec reference's amax splits the gradient of a tie.
"""

import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
grad_api = importlib.import_module("cpu-grad-api")
pool = importlib.import_module("cpu-pool")
api = grad_api.api

# (name, input shape, kernel, strides, padding [t,l,b,r], dilation, ceil)
MAX_CASES = pool.MAX_CASES + [
    ("3x3 stride1 overlapping windows", [2, 3, 7, 8], [3, 3], [1, 1],
     [1, 1, 1, 1], [1, 1], False),
    ("stride3 skips cells", [1, 2, 11, 10], [2, 2], [3, 3], [0, 0, 0, 0],
     [1, 1], False),
]

# (name, input shape, kernel, strides, padding [t,l,b,r], ceil)
AVG_CASES = pool.AVG_CASES + [
    ("3x3 stride1 overlapping windows", [2, 2, 6, 7], [3, 3], [1, 1],
     [1, 1, 1, 1], False),
    ("2x2 stride3 skips cells batch1", [1, 3, 10, 8], [2, 2], [3, 3],
     [0, 0, 0, 0], False),
]


def torch_expresses(padding, ceil):
    return pool.is_symmetric(padding) or not ceil


def max_input(suite, kind, shape, dtype):
    if kind == "ties":
        return suite.randint(3, *shape).to(dtype)
    x = suite.randn(*shape, dtype=dtype)
    if kind == "nan":
        # Two NaNs next to each other: mostly in one window.
        x.view(-1)[5] = float("nan")
        x.view(-1)[6] = float("nan")
    return x


def distinct_input(suite, shape):
    """Values at least 0.01 apart, so that a finite-difference step never
    changes which cell of a window is the maximum."""
    numel = torch.Size(shape).numel()
    order = torch.randperm(numel, generator=suite.generator)
    return (order.to(torch.float64) * 0.01).reshape(shape)


def out_shape(shape, kernel, strides, padding, dilation, ceil):
    n, c, h, w = shape
    return [n, c,
            pool.spec_out_size(h, padding[0], padding[2], kernel[0],
                               strides[0], dilation[0], ceil),
            pool.spec_out_size(w, padding[1], padding[3], kernel[1],
                               strides[1], dilation[1], ceil)]


def max_forward(suite, x, params, shape):
    out = api.empty(shape, x.dtype)
    suite.kernels("fluid_cpu_max_pool2d", x, out, params)
    return out


def max_grad(suite, r, x, params):
    got = api.empty(x.shape, x.dtype)
    suite.kernels("fluid_cpu_max_pool2d_grad", r, x, got, params)
    return got


def max_torch_case(suite, dtype, kind, shape, kernel, strides, padding,
                   dilation, ceil):
    def body():
        x = max_input(suite, kind, shape, dtype)
        if torch_expresses(padding, ceil):
            def reference(x):
                return pool.torch_max_pool(x, kernel, strides, padding,
                                           dilation, ceil)
        else:
            def reference(x):
                return pool.spec_pool(x, "max", kernel, strides, padding,
                                      dilation, ceil)
        r = suite.randn(*reference(x).shape, dtype=dtype)
        (want,) = grad_api.torch_grads(reference, [x], r)
        params = api.MaxPool2dParams(kernel, strides, padding, dilation,
                                     int(ceil))
        # A gradient sent to another cell of the window would differ by
        # O(1), far above the tolerance.
        api.expect_close(max_grad(suite, r, x, params), want)
    return body


def max_fd_case(suite, shape, kernel, strides, padding, dilation, ceil):
    def body():
        params = api.MaxPool2dParams(kernel, strides, padding, dilation,
                                     int(ceil))
        pooled = out_shape(shape, kernel, strides, padding, dilation, ceil)
        x = distinct_input(suite, shape)
        r = suite.randn(*pooled)
        grad_api.finite_difference_check(
            suite, lambda x: grad_api.projection(
                max_forward(suite, x, params, pooled), r),
            x, max_grad(suite, r, x, params))
    return body


def avg_forward(suite, x, params, shape):
    out = api.empty(shape, x.dtype)
    suite.kernels("fluid_cpu_avg_pool2d", x, out, params)
    return out


def avg_grad(suite, r, shape, params):
    got = api.empty(shape, r.dtype)
    suite.kernels("fluid_cpu_avg_pool2d_grad", r, got, params)
    return got


def avg_torch_case(suite, dtype, shape, kernel, strides, padding, ceil,
                   include):
    def body():
        x = suite.randn(*shape, dtype=dtype)
        if pool.is_symmetric(padding) or (not ceil and include):
            def reference(x):
                return pool.torch_avg_pool(x, kernel, strides, padding, ceil,
                                           include)
        else:
            def reference(x):
                return pool.spec_pool(x, "avg", kernel, strides, padding,
                                      [1, 1], ceil, include)
        r = suite.randn(*reference(x).shape, dtype=dtype)
        (want,) = grad_api.torch_grads(reference, [x], r)
        params = api.AvgPool2dParams(kernel, strides, padding, int(ceil),
                                     int(include))
        api.expect_close(avg_grad(suite, r, shape, params), want)
    return body


def avg_fd_case(suite, shape, kernel, strides, padding, ceil, include):
    def body():
        pooled = out_shape(shape, kernel, strides, padding, [1, 1], ceil)
        params = api.AvgPool2dParams(kernel, strides, padding, int(ceil),
                                     int(include))
        x = suite.randn(*shape)
        r = suite.randn(*pooled)
        grad_api.finite_difference_check(
            suite, lambda x: grad_api.projection(
                avg_forward(suite, x, params, pooled), r),
            x, avg_grad(suite, r, shape, params))
    return body


def main():
    suite = grad_api.Suite(sys.argv)
    for name, shape, kernel, strides, padding, dilation, ceil in MAX_CASES:
        geometry = (shape, kernel, strides, padding, dilation, ceil)
        kinds = ["random"]
        if torch_expresses(padding, ceil):
            kinds += ["ties", "nan"]
        for dtype, dtype_name in api.FLOAT_DTYPES:
            for kind in kinds:
                suite.case(f"max_pool2d_grad {dtype_name} {name} input "
                           f"{shape} {kind} values vs torch",
                           max_torch_case(suite, dtype, kind, *geometry))
        suite.case(f"max_pool2d_grad f64 {name} input {shape} vs finite "
                   f"differences", max_fd_case(suite, *geometry))
    for name, shape, kernel, strides, padding, ceil in AVG_CASES:
        for include in (True, False):
            geometry = (shape, kernel, strides, padding, ceil, include)
            label = (f"{name} input {shape} "
                     f"count_include_pad={int(include)}")
            for dtype, dtype_name in api.FLOAT_DTYPES:
                suite.case(f"avg_pool2d_grad {dtype_name} {label} vs torch",
                           avg_torch_case(suite, dtype, *geometry))
            suite.case(f"avg_pool2d_grad f64 {label} vs finite differences",
                       avg_fd_case(suite, *geometry))
    suite.finish()


if __name__ == "__main__":
    main()
