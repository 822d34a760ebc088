# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's pooling kernels against the cpu kernels: max_pool2d
and avg_pool2d and their gradients with overlapping and disjoint windows,
ceil_mode (with PyTorch's dropped last window), asymmetric padding,
dilation (max), count_include_pad on and off (avg), a 1x1 kernel, a
window as large as the padded input, NaN inputs and ties (the pick of
max pooling's gradient), and ResNet's stem and a large plane.

The forwards walk the cpu's taps in its order and the gradients gather,
adding in the cpu's order, so f64 and f32 results are expected bitwise
equal (the note of each case says); they are checked at f64 rtol 1e-12
and f32 rtol 1e-5. Errors get the cpu backend's messages.
"""

import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
harness = importlib.import_module("gpu-elementwise")
Out, run_both = harness.Out, harness.run_both
MaxPool2dParams = harness.MaxPool2dParams
AvgPool2dParams = harness.AvgPool2dParams

# (name, input shape, kernel, strides, padding [t,l,b,r], dilation, ceil).
WINDOWS = [
    ("3x3 s2 p1", [2, 3, 9, 9], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0),
    ("2x2 s2", [2, 3, 8, 8], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0),
    ("3x3 s1 overlapping", [1, 2, 7, 6], [3, 3], [1, 1], [0, 0, 0, 0],
     [1, 1], 0),
    ("ceil_mode", [2, 2, 10, 11], [3, 3], [2, 2], [0, 0, 0, 0], [1, 1], 1),
    ("ceil_mode dropped window", [1, 2, 5, 5], [2, 2], [2, 2], [1, 1, 1, 1],
     [1, 1], 1),
    ("asymmetric padding", [2, 3, 8, 7], [3, 2], [2, 1], [0, 1, 2, 0],
     [1, 1], 0),
    ("asymmetric ceil", [1, 3, 9, 8], [3, 3], [3, 2], [2, 0, 1, 1], [1, 1],
     1),
    ("stride > kernel", [2, 2, 11, 11], [2, 2], [3, 3], [0, 0, 0, 0],
     [1, 1], 0),
    ("1x1 s2", [2, 4, 7, 7], [1, 1], [2, 2], [0, 0, 0, 0], [1, 1], 0),
    ("whole padded input", [1, 2, 4, 5], [6, 7], [1, 1], [1, 1, 1, 1],
     [1, 1], 0),
    ("non-square", [3, 2, 6, 13], [2, 5], [1, 3], [1, 2, 1, 2], [1, 1], 0),
    ("resnet stem", [8, 64, 112, 112], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1],
     0),
    ("large plane", [1, 1, 1000, 1000], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 1),
]
# Max pooling only: dilation.
DILATED = [
    ("dilation 2", [2, 3, 11, 11], [3, 3], [1, 1], [2, 2, 2, 2], [2, 2], 0),
    ("dilation 2x3 ceil", [1, 2, 13, 14], [2, 3], [2, 2], [1, 0, 0, 2],
     [2, 3], 1),
]


def out_size(extent, before, after, kernel, stride, dilation, ceil):
    room = extent + before + after - dilation * (kernel - 1) - 1
    steps = -(-room // stride) if ceil else room // stride
    if ceil and steps > 0 and steps * stride >= extent + before:
        steps -= 1
    return steps + 1


def output_shape(shape, kernel, strides, padding, dilation, ceil):
    return [shape[0], shape[1],
            out_size(shape[2], padding[0], padding[2], kernel[0], strides[0],
                     dilation[0], ceil),
            out_size(shape[3], padding[1], padding[3], kernel[1], strides[1],
                     dilation[1], ceil)]


def pool_input(h, shape, dtype, ties):
    if ties:  # few distinct values: equal maxima in most windows
        return np.array(h.rng.integers(-2, 3, size=shape), dtype=dtype)
    x = h.randn(*shape, dtype=dtype)
    if ties is None and x.size > 20:  # NaNs
        x.reshape(-1)[::17] = np.nan
    return x


def max_case(h, window, dtype, ties=False):
    _, shape, kernel, strides, padding, dilation, ceil = window

    def body():
        params = MaxPool2dParams(kernel, strides, padding, dilation, ceil)
        out = output_shape(shape, kernel, strides, padding, dilation, ceil)
        x = pool_input(h, shape, dtype, ties)
        g = h.randn(*out, dtype=dtype)
        results = run_both(h, "max_pool2d", x, Out(out, dtype), params)
        results += run_both(h, "max_pool2d_grad", g, x, Out(shape, dtype),
                            params)
        return harness.compare(results)
    return body


def avg_case(h, window, dtype, count_include_pad):
    _, shape, kernel, strides, padding, _, ceil = window

    def body():
        params = AvgPool2dParams(kernel, strides, padding, ceil,
                                 int(count_include_pad))
        out = output_shape(shape, kernel, strides, padding, [1, 1], ceil)
        x = h.randn(*shape, dtype=dtype)
        g = h.randn(*out, dtype=dtype)
        results = run_both(h, "avg_pool2d", x, Out(out, dtype), params)
        results += run_both(h, "avg_pool2d_grad", g, Out(shape, dtype),
                            params)
        return harness.compare(results)
    return body


def error_cases(h):
    f64 = np.float64
    x = np.ones((1, 1, 4, 4), f64)
    good = MaxPool2dParams([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)
    cases = {
        "rank": ("max_pool2d", np.ones((4, 4)), Out((2, 2), f64), good),
        "output shape": ("max_pool2d", x, Out((1, 1, 3, 3), f64), good),
        "null params": ("max_pool2d", x, Out((1, 1, 2, 2), f64), None),
        "kernel 0": ("max_pool2d", x, Out((1, 1, 2, 2), f64),
                     MaxPool2dParams([0, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)),
        "negative padding": ("max_pool2d", x, Out((1, 1, 2, 2), f64),
                             MaxPool2dParams([2, 2], [2, 2], [0, -1, 0, 0],
                                             [1, 1], 0)),
        "window larger than input": (
            "max_pool2d", x, Out((1, 1, 1, 1), f64),
            MaxPool2dParams([5, 5], [1, 1], [0, 0, 0, 0], [1, 1], 0)),
        "window over padding only": (
            "max_pool2d", x, Out((1, 1, 4, 4), f64),
            MaxPool2dParams([1, 1], [2, 2], [2, 2, 2, 2], [1, 1], 0)),
        "avg window over padding only": (
            "avg_pool2d", x, Out((1, 1, 4, 4), f64),
            AvgPool2dParams([1, 1], [2, 2], [2, 2, 2, 2], 0, 0)),
        "integer input": ("avg_pool2d", np.ones((1, 1, 4, 4), np.int32),
                          Out((1, 1, 2, 2), np.int32),
                          AvgPool2dParams([2, 2], [2, 2], [0, 0, 0, 0], 0, 1)),
        "grad shape": ("max_pool2d_grad", np.ones((1, 1, 3, 3)), x,
                       Out((1, 1, 4, 4), f64), good),
        "grad_input shape": ("max_pool2d_grad", np.ones((1, 1, 2, 2)), x,
                             Out((1, 1, 4, 5), f64), good),
        "avg grad dtype": ("avg_pool2d_grad",
                           np.ones((1, 1, 2, 2), np.float32),
                           Out((1, 1, 4, 4), f64),
                           AvgPool2dParams([2, 2], [2, 2], [0, 0, 0, 0], 0,
                                           1)),
        "global_avg_pool dtype": ("global_avg_pool", x,
                                  Out((1, 1, 1, 1), np.float32)),
    }
    for name, (op, *args) in cases.items():
        h.case(f"error {op}: {name}",
               lambda op=op, args=args: harness.expect_same_error(h, op,
                                                                  *args))


def main():
    h = harness.Harness(sys.argv)
    for mode, dtype in harness.FLOATS:
        for window in WINDOWS + DILATED:
            h.case(f"max_pool2d {mode} {window[0]} {window[1]}",
                   max_case(h, window, dtype))
        for window in WINDOWS[:6]:
            h.case(f"max_pool2d {mode} {window[0]} ties",
                   max_case(h, window, dtype, ties=True))
            h.case(f"max_pool2d {mode} {window[0]} NaNs",
                   max_case(h, window, dtype, ties=None))
        for window in WINDOWS:
            for include in [False, True]:
                h.case(f"avg_pool2d {mode} {window[0]} {window[1]} "
                       f"count_include_pad={int(include)}",
                       avg_case(h, window, dtype, include))
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
