# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_conv2d against torch.nn.functional.conv2d on random inputs.

Asymmetric padding is compared with an explicit F.pad followed by an
unpadded torch convolution.

Channels last (channels_last = 1: input [N,H,W,C], filter [O,KH,KW,C/g],
output [N,OH,OW,O]): every case, in f32 and f64, and a few in f16 and bf16,
must give bit for bit the channels-first kernel's output on the same data,
transposed.
"""

import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

# (name, input [N,C,H,W], out channels, kernel [KH,KW], strides,
#  padding [top,left,bottom,right], dilation, groups, with bias)
CASES = [
    ("3x3 pad1", [2, 3, 8, 8], 4, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1,
     True),
    ("non-square image 1x1 kernel", [2, 5, 7, 11], 6, [1, 1], [1, 1],
     [0, 0, 0, 0], [1, 1], 1, False),
    ("stride2 pad1", [2, 8, 9, 10], 16, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1],
     1, True),
    ("stem 7x7 stride2 pad3", [2, 3, 32, 32], 16, [7, 7], [2, 2],
     [3, 3, 3, 3], [1, 1], 1, False),
    ("non-square kernel and strides", [1, 4, 13, 9], 5, [2, 5], [3, 1],
     [0, 2, 0, 2], [1, 1], 1, True),
    ("asymmetric padding", [2, 3, 8, 7], 4, [3, 3], [1, 1], [0, 1, 2, 0],
     [1, 1], 1, True),
    ("asymmetric padding stride2", [1, 6, 10, 9], 6, [3, 2], [2, 2],
     [2, 0, 1, 1], [1, 1], 1, False),
    ("dilation2", [2, 4, 12, 12], 4, [3, 3], [1, 1], [2, 2, 2, 2], [2, 2], 1,
     True),
    ("dilation 3x2 stride2", [1, 3, 15, 11], 5, [3, 3], [2, 1], [1, 0, 1, 0],
     [3, 2], 1, False),
    ("groups2", [2, 8, 6, 6], 12, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 2,
     True),
    ("groups32 C=O=64", [2, 64, 8, 8], 64, [3, 3], [1, 1], [1, 1, 1, 1],
     [1, 1], 32, True),
    ("groups32 stride2 (ResNeXt)", [1, 64, 9, 9], 128, [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], 32, False),
    ("depthwise", [2, 16, 10, 10], 16, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1],
     16, True),
    ("depthwise multiplier2 stride2", [1, 8, 9, 9], 16, [5, 5], [2, 2],
     [2, 2, 2, 2], [1, 1], 8, False),
    ("batch1 kernel covers input", [1, 3, 5, 5], 2, [5, 5], [1, 1],
     [0, 0, 0, 0], [1, 1], 1, True),
    ("padding wider than kernel", [1, 2, 3, 4], 3, [2, 2], [1, 1],
     [3, 3, 3, 3], [1, 1], 1, True),
    ("stride larger than kernel", [2, 3, 11, 11], 4, [2, 2], [4, 3],
     [0, 0, 0, 0], [1, 1], 1, False),
    ("empty batch", [0, 3, 5, 5], 4, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1,
     True),
]


def reference(x, w, b, strides, padding, dilation, groups):
    top, left, bottom, right = padding
    x = F.pad(x, (left, right, top, bottom))
    return F.conv2d(x, w, b, stride=strides, dilation=dilation, groups=groups)


def make_case(suite, dtype, shape, out_channels, kernel, strides, padding,
              dilation, groups, with_bias):
    def body():
        n, c, _, _ = shape
        x = suite.randn(*shape, dtype=dtype)
        w = suite.randn(out_channels, c // groups, *kernel, dtype=dtype)
        b = suite.randn(out_channels, dtype=dtype) if with_bias else None
        want = reference(x, w, b, strides, padding, dilation, groups)
        got = api.empty(want.shape, dtype)
        params = api.Conv2dParams(strides, padding, dilation, groups)
        suite.kernels("fluid_cpu_conv2d", x, w, b, got, params)
        api.expect_close(got, want)
    return body


# Cases also run channels last in f16 and bf16.
HALF_CASES = ["3x3 pad1", "stride2 pad1", "asymmetric padding stride2",
              "dilation 3x2 stride2", "groups2", "empty batch"]
HALF_DTYPES = [(torch.float16, "f16"), (torch.bfloat16, "bf16")]


def to_channels_last(t):
    """An [N,C,H,W] tensor (or [O,C/g,KH,KW] filter) as [N,H,W,C]."""
    return t.permute(0, 2, 3, 1).contiguous()


def bits(t):
    """The bit patterns of a float tensor, for exact comparisons."""
    return t.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[
        t.element_size()])


def channels_last_case(suite, dtype, shape, out_channels, kernel, strides,
                       padding, dilation, groups, with_bias):
    def body():
        n, c, _, _ = shape
        x = suite.randn(*shape).to(dtype)
        w = suite.randn(out_channels, c // groups, *kernel).to(dtype)
        b = suite.randn(out_channels).to(dtype) if with_bias else None
        out_shape = reference(x.double(), w.double(), None, strides, padding,
                              dilation, groups).shape
        want = api.empty(out_shape, dtype)
        suite.kernels("fluid_cpu_conv2d", x, w, b, want,
                      api.Conv2dParams(strides, padding, dilation, groups))
        got = api.empty(to_channels_last(want).shape, dtype)
        suite.kernels("fluid_cpu_conv2d", to_channels_last(x),
                      to_channels_last(w), b, got,
                      api.Conv2dParams(strides, padding, dilation, groups,
                                       channels_last=1))
        assert torch.equal(bits(got), bits(to_channels_last(want))), \
            "not the channels-first output transposed"
    return body


def main():
    suite = api.Suite(sys.argv)
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for (name, shape, out_channels, kernel, strides, padding, dilation,
             groups, with_bias) in CASES:
            label = (f"conv2d {dtype_name} {name} input {shape} "
                     f"out {out_channels} groups {groups}"
                     f"{' bias' if with_bias else ''}")
            suite.case(label, make_case(suite, dtype, shape, out_channels,
                                        kernel, strides, padding, dilation,
                                        groups, with_bias))
    for (name, shape, out_channels, kernel, strides, padding, dilation,
         groups, with_bias) in CASES:
        dtypes = api.FLOAT_DTYPES + (HALF_DTYPES if name in HALF_CASES
                                     else [])
        for dtype, dtype_name in dtypes:
            label = (f"conv2d channels last {dtype_name} {name} input "
                     f"{shape} out {out_channels} groups {groups}"
                     f"{' bias' if with_bias else ''} vs channels first")
            suite.case(label, channels_last_case(
                suite, dtype, shape, out_channels, kernel, strides, padding,
                dilation, groups, with_bias))
    suite.finish()


if __name__ == "__main__":
    main()
