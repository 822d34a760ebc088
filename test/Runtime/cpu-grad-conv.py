# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_conv2d_grad_input and fluid_cpu_conv2d_grad_filter against
PyTorch autograd (asymmetric padding through an explicit F.pad), and
against central finite differences of fluid_cpu_conv2d.

Several cases have input rows or columns that no window reads (the stride
does not divide the padded extent minus the window): their input gradient
must be zero.

Channels last (channels_last = 1: input and grad_input [N,H,W,C],
grad_output [N,OH,OW,O], filter and grad_filter [O,KH,KW,C/g]): both
gradients of every case, in f32 and f64, and of a few in f16 and bf16,
must be bit for bit the channels-first kernels' on the same data,
transposed.
"""

import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
grad_api = importlib.import_module("cpu-grad-api")
api = grad_api.api

# (name, input [N,C,H,W], out channels, kernel [KH,KW], strides,
#  padding [top,left,bottom,right], dilation, groups)
CASES = [
    ("3x3 pad1", [2, 3, 8, 8], 4, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ("stride2 drops the last row and column", [2, 4, 8, 10], 6, [3, 3],
     [2, 2], [0, 0, 0, 0], [1, 1], 1),
    ("stride3 drops two rows", [1, 2, 10, 11], 3, [2, 2], [3, 3],
     [0, 0, 0, 0], [1, 1], 1),
    ("non-square image and kernel", [1, 4, 7, 12], 5, [2, 5], [1, 2],
     [0, 2, 0, 2], [1, 1], 1),
    ("1x1 stride2 (ResNet downsample)", [2, 8, 7, 7], 16, [1, 1], [2, 2],
     [0, 0, 0, 0], [1, 1], 1),
    ("stem 7x7 stride2 pad3", [1, 3, 20, 18], 8, [7, 7], [2, 2],
     [3, 3, 3, 3], [1, 1], 1),
    ("asymmetric padding", [2, 3, 8, 7], 4, [3, 3], [1, 1], [0, 1, 2, 0],
     [1, 1], 1),
    ("asymmetric padding stride2", [1, 6, 10, 9], 6, [3, 2], [2, 2],
     [2, 0, 1, 1], [1, 1], 1),
    ("dilation2", [2, 4, 12, 12], 4, [3, 3], [1, 1], [2, 2, 2, 2], [2, 2],
     1),
    ("dilation 3x2 stride 2x1 asymmetric padding", [1, 3, 15, 11], 5,
     [3, 3], [2, 1], [1, 0, 2, 0], [3, 2], 1),
    ("groups2", [2, 8, 6, 6], 12, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 2),
    ("groups32 stride2 (ResNeXt)", [1, 64, 9, 9], 128, [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], 32),
    ("depthwise", [2, 16, 10, 10], 16, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1],
     16),
    ("depthwise multiplier2 stride2", [1, 8, 9, 9], 16, [5, 5], [2, 2],
     [2, 2, 2, 2], [1, 1], 8),
    ("batch1 kernel covers input", [1, 3, 5, 5], 2, [5, 5], [1, 1],
     [0, 0, 0, 0], [1, 1], 1),
    ("padding wider than kernel", [1, 2, 3, 4], 3, [2, 2], [1, 1],
     [3, 3, 3, 3], [1, 1], 1),
    ("stride larger than kernel skips cells", [2, 3, 11, 11], 4, [2, 2],
     [4, 3], [0, 0, 0, 0], [1, 1], 1),
    ("empty batch", [0, 3, 5, 5], 4, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1],
     1),
]


def reference(x, w, strides, padding, dilation, groups):
    top, left, bottom, right = padding
    x = F.pad(x, (left, right, top, bottom))
    return F.conv2d(x, w, stride=strides, dilation=dilation, groups=groups)


class Conv:
    """One convolution case: random input, filter and incoming gradient."""

    def __init__(self, suite, dtype, shape, out_channels, kernel, strides,
                 padding, dilation, groups):
        self.suite = suite
        self.geometry = (strides, padding, dilation, groups)
        self.params = api.Conv2dParams(strides, padding, dilation, groups)
        self.x = suite.randn(*shape, dtype=dtype)
        self.w = suite.randn(out_channels, shape[1] // groups, *kernel,
                             dtype=dtype)
        self.out_shape = reference(self.x, self.w, *self.geometry).shape
        self.r = suite.randn(*self.out_shape, dtype=dtype)

    def grad_input(self):
        got = api.empty(self.x.shape, self.x.dtype)
        self.suite.kernels("fluid_cpu_conv2d_grad_input", self.r, self.w, got,
                           self.params)
        return got

    def grad_filter(self):
        got = api.empty(self.w.shape, self.w.dtype)
        self.suite.kernels("fluid_cpu_conv2d_grad_filter", self.r, self.x,
                           got, self.params)
        return got

    def forward(self, x, w):
        out = api.empty(self.out_shape, x.dtype)
        self.suite.kernels("fluid_cpu_conv2d", x, w, None, out, self.params)
        return out

    def torch_grads(self):
        return grad_api.torch_grads(
            lambda x, w: reference(x, w, *self.geometry), [self.x, self.w],
            self.r)


def torch_case(suite, dtype, wrt, case):
    def body():
        conv = Conv(suite, dtype, *case)
        want_input, want_filter = conv.torch_grads()
        if wrt == "input":
            api.expect_close(conv.grad_input(), want_input, "grad_input")
        else:
            api.expect_close(conv.grad_filter(), want_filter, "grad_filter")
    return body


def finite_difference_case(suite, wrt, case):
    def body():
        conv = Conv(suite, torch.float64, *case)
        if wrt == "input":
            grad_api.finite_difference_check(
                suite, lambda x: grad_api.projection(conv.forward(x, conv.w),
                                                     conv.r),
                conv.x, conv.grad_input(), "grad_input")
        else:
            grad_api.finite_difference_check(
                suite, lambda w: grad_api.projection(conv.forward(conv.x, w),
                                                     conv.r),
                conv.w, conv.grad_filter(), "grad_filter")
    return body


# Cases also run channels last in f16 and bf16.
HALF_CASES = ["3x3 pad1", "1x1 stride2 (ResNet downsample)",
              "asymmetric padding stride2",
              "dilation 3x2 stride 2x1 asymmetric padding", "groups2",
              "empty batch"]
HALF_DTYPES = [(torch.float16, "f16"), (torch.bfloat16, "bf16")]


def to_channels_last(t):
    """An [N,C,H,W] tensor (or [O,C/g,KH,KW] filter) as [N,H,W,C]."""
    return t.permute(0, 2, 3, 1).contiguous()


def bits(t):
    """The bit patterns of a float tensor, for exact comparisons."""
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[
        t.element_size()])


def channels_last_case(suite, dtype, wrt, case):
    def body():
        conv = Conv(suite, torch.float64, *case)
        x, w, r = conv.x.to(dtype), conv.w.to(dtype), conv.r.to(dtype)
        strides, padding, dilation, groups = conv.geometry
        last = api.Conv2dParams(strides, padding, dilation, groups,
                                channels_last=1)
        if wrt == "input":
            name, operand, like = "fluid_cpu_conv2d_grad_input", w, x
        else:
            name, operand, like = "fluid_cpu_conv2d_grad_filter", x, w
        want = api.empty(like.shape, dtype)
        suite.kernels(name, r, operand, want, conv.params)
        got = api.empty(to_channels_last(like).shape, dtype)
        suite.kernels(name, to_channels_last(r), to_channels_last(operand),
                      got, last)
        assert torch.equal(bits(got), bits(to_channels_last(want))), \
            f"grad_{wrt} is not the channels-first one transposed"
    return body


def main():
    suite = grad_api.Suite(sys.argv)
    for name, *case in CASES:
        shape, groups = case[0], case[-1]
        for wrt in ("input", "filter"):
            for dtype, dtype_name in api.FLOAT_DTYPES:
                suite.case(f"conv2d_grad_{wrt} {dtype_name} {name} input "
                           f"{shape} groups {groups} vs torch",
                           torch_case(suite, dtype, wrt, case))
            suite.case(f"conv2d_grad_{wrt} f64 {name} input {shape} groups "
                       f"{groups} vs finite differences",
                       finite_difference_case(suite, wrt, case))
    for name, *case in CASES:
        shape, groups = case[0], case[-1]
        dtypes = api.FLOAT_DTYPES + (HALF_DTYPES if name in HALF_CASES
                                     else [])
        for wrt in ("input", "filter"):
            for dtype, dtype_name in dtypes:
                suite.case(f"conv2d_grad_{wrt} channels last {dtype_name} "
                           f"{name} input {shape} groups {groups} vs "
                           f"channels first",
                           channels_last_case(suite, dtype, wrt, case))
    suite.finish()


if __name__ == "__main__":
    main()
