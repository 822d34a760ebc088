# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""fluid_cuda_conv2d and its two gradients against the cpu kernels.

Each case runs the forward, the input gradient and the filter gradient in
three modes: f64 (tolerance 1e-10), f32 with TF32 off (rtol 1e-4, atol
1e-5 of the output's scale) and f32 with TF32 on (5e-3 of the output's
largest magnitude). Filters are scaled by 1/sqrt(fan-in), so outputs are
of order one. Asymmetric padding exercises the explicitly padded path
(CudnnConv.cpp), symmetric padding the direct one.

Channels last (channels_last = 1: NHWC activations, filter [O,KH,KW,C/g],
cuDNN's NHWC descriptors): the forward and both gradients on data
transposed to NHWC, transposed back, against the cuda channels-first
result on the original data and against the cpu's, in f32 with TF32 off
(the f32 tolerance above) and in f16 and bf16 (gpu-float16.py's: within
one unit in the last place of the cpu's result, two of the cuda
channels-first one), with groups, strides, symmetric and asymmetric
padding, dilation and bias. The cpu's channels-last results are checked
to be its channels-first ones transposed. The algorithm cache keys the
layout: a file written by channels-first convolutions alone loads without
a warning, the same problems channels last are searched once more and
saved as layout=nhwc lines beside the nchw ones, and a third context
searches nothing.

Depthwise channels last (groups = C = out channels: the hand-written
kernels of runtime/cuda/KernelsDepthwise.cu, not cuDNN): the forward and
both gradients against the cpu's channels-last result and against cuDNN's
channels-first one transposed, in f64 (1e-10), f32 (TF32 off) and f16
and bf16 (within one unit in the last place of the cpu's result, two of
cuDNN's): ConvNeXt's 7x7 pad 3 at channel counts with and without 16-byte
vectors, MobileNet's 3x3 stride 2, 5x5 with dilation 2, asymmetric
padding, 1x1, strides larger than the kernel, windows wider than the
input, with and without bias, batch 1 and more, odd sizes. The filter
gradient of [8, 64, 56, 56] (448 chunks of partial sums) is computed
twice and must be bitwise the same, in f32 and bf16, by a context that
searched no cuDNN algorithm (so the kernels ran); under a workspace limit
of three chunks' partial sums it still matches the cpu, and under a limit
of 0 it falls back to cuDNN (one search) and matches as well.
"""

import ctypes
import importlib
import os
import re
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
sys.path.insert(0, HERE)
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402

half = importlib.import_module("gpu-float16")

# (name, input [N,C,H,W], out channels, kernel [KH,KW], strides,
#  padding [top,left,bottom,right], dilation, groups, with bias)
CASES = [
    ("3x3 pad1", [2, 3, 8, 8], 4, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1,
     True),
    ("stride2 pad1", [2, 8, 9, 10], 16, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1],
     1, True),
    ("stem 7x7 stride2 pad3", [2, 3, 32, 32], 16, [7, 7], [2, 2],
     [3, 3, 3, 3], [1, 1], 1, False),
    ("1x1 stride2 downsample", [2, 16, 8, 8], 32, [1, 1], [2, 2],
     [0, 0, 0, 0], [1, 1], 1, False),
    ("resnet 3x3 64 channels", [4, 64, 14, 14], 64, [3, 3], [1, 1],
     [1, 1, 1, 1], [1, 1], 1, False),
    ("non-square kernel and strides", [1, 4, 13, 9], 5, [2, 5], [3, 1],
     [0, 2, 0, 2], [1, 1], 1, True),
    ("asymmetric padding", [2, 3, 8, 7], 4, [3, 3], [1, 1], [0, 1, 2, 0],
     [1, 1], 1, True),
    ("asymmetric padding stride2", [1, 6, 10, 9], 6, [3, 2], [2, 2],
     [2, 0, 1, 1], [1, 1], 1, False),
    ("asymmetric same_upper stride2 (ONNX)", [2, 8, 16, 16], 8, [3, 3],
     [2, 2], [0, 0, 1, 1], [1, 1], 1, True),
    ("asymmetric padding groups dilation", [2, 8, 11, 10], 8, [3, 3], [1, 2],
     [3, 0, 1, 2], [2, 1], 4, False),
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

# (mode, NumPy dtype, context with TF32)
MODES = [("f64", np.float64, False), ("f32", np.float32, False),
         ("tf32", np.float32, True)]


def output_size(extent, before, after, kernel, stride, dilation):
    return (extent + before + after - dilation * (kernel - 1) - 1) // stride + 1


def make_case(suite, contexts, mode, dtype, shape, out_channels, kernel,
              strides, padding, dilation, groups, with_bias):
    lib = suite.lib

    def body():
        ctx = contexts[mode == "tf32"]
        n, c, h, w = shape
        fan_in = (c // groups) * kernel[0] * kernel[1]
        x = suite.randn(*shape, dtype=dtype)
        f = suite.randn(out_channels, c // groups, *kernel, dtype=dtype,
                        scale=fan_in ** -0.5)
        b = suite.randn(out_channels, dtype=dtype) if with_bias else None
        oh = output_size(h, padding[0], padding[2], kernel[0], strides[0],
                         dilation[0])
        ow = output_size(w, padding[1], padding[3], kernel[1], strides[1],
                         dilation[1])
        out_shape = (n, out_channels, oh, ow)
        params = fluidcuda.Conv2dParams(strides, padding, dilation, groups)
        gy = suite.randn(*out_shape, dtype=dtype)

        want_y = np.full(out_shape, np.nan, dtype)
        fluidcuda.cpu(lib, "conv2d", x, f, b, want_y, params)
        want_gx = np.full(shape, np.nan, dtype)
        fluidcuda.cpu(lib, "conv2d_grad_input", gy, f, want_gx, params)
        want_gf = np.full(f.shape, np.nan, dtype)
        fluidcuda.cpu(lib, "conv2d_grad_filter", gy, x, want_gf, params)

        dx, df, dgy = ctx.upload(x), ctx.upload(f), ctx.upload(gy)
        db = ctx.upload(b) if with_bias else None
        y = ctx.empty(out_shape, dtype)
        gx = ctx.empty(shape, dtype)
        gf = ctx.empty(f.shape, dtype)
        ctx("conv2d", dx, df, db, y, params)
        ctx("conv2d_grad_input", dgy, df, gx, params)
        ctx("conv2d_grad_filter", dgy, dx, gf, params)
        ctx.synchronize()
        got = [(y.download(), want_y, "output"),
               (gx.download(), want_gx, "grad_input"),
               (gf.download(), want_gf, "grad_filter")]
        for t in [dx, df, dgy, db, y, gx, gf]:
            if t is not None:
                t.free()
        for value, want, what in got:
            fluidcuda.expect_close(value, want, mode, what)
        if mode == "tf32":
            worst = max(fluidcuda.max_relative_error(v, w) for v, w, _ in got)
            return f"max error / max |value| {worst:.1e}"
        return None
    return body


# Channels-last cases: (name, input [N,C,H,W], out channels, kernel
# [KH,KW], strides, padding [top,left,bottom,right], dilation, groups, with
# bias), each in f32, f16 and bf16.
CHANNELS_LAST_CASES = [
    ("1x1 stride2 downsample", [4, 32, 14, 14], 64, [1, 1], [2, 2],
     [0, 0, 0, 0], [1, 1], 1, True),
    ("3x3 pad1", [4, 16, 14, 14], 32, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1],
     1, True),
    ("3x3 pad1 stride2 odd sizes", [2, 16, 15, 13], 24, [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], 1, False),
    ("3x3 pad1 groups4", [2, 32, 9, 9], 32, [3, 3], [1, 1], [1, 1, 1, 1],
     [1, 1], 4, True),
    ("3x3 groups32 stride2 (ResNeXt)", [2, 128, 9, 9], 128, [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], 32, False),
    ("asymmetric padding stride2", [2, 8, 10, 9], 8, [3, 3], [2, 2],
     [0, 1, 1, 0], [1, 1], 1, True),
    ("dilation2 groups2", [2, 8, 12, 12], 8, [3, 3], [1, 1], [2, 2, 2, 2],
     [2, 2], 2, True),
    ("stem 7x7 stride2 pad3", [2, 3, 32, 32], 16, [7, 7], [2, 2],
     [3, 3, 3, 3], [1, 1], 1, False),
]
CHANNELS_LAST_MODES = [("f32", None), ("f16", half.F16), ("bf16", half.BF16)]


def to_channels_last(a):
    """[N,C,H,W] (or a filter [O,C/g,KH,KW]) as [N,H,W,C]."""
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def to_channels_first(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def conv_call(lib, ctx, op, inputs, out_shape, params, code):
    """fluid_cpu_<op> (ctx None) or fluid_cuda_<op> on host arrays
    `inputs` (None: no bias), described as dtype `code` (None: their NumPy
    dtype); returns the output."""
    dtype = inputs[0].dtype
    out = np.full(out_shape, np.nan if dtype.kind == "f" else 0x7E00, dtype)
    if ctx is None:
        args = [ctypes.byref(fluidrt.tensor(a, code)) if a is not None
                else None for a in inputs]
        fluidrt.check(lib, getattr(lib, "fluid_cpu_" + op)(
            *args, ctypes.byref(fluidrt.tensor(out, code)),
            ctypes.byref(params)))
        return out
    device = [ctx.upload(a, code) if a is not None else None for a in inputs]
    result = ctx.upload(out, code)
    ctx(op, *device, result, params)
    got = result.download()
    for t in device + [result]:
        if t is not None:
            t.free()
    return got


def expect_like(op, got, cpu, other, other_name, code, mode, notes):
    """`got` (a cuda result) against the cpu's and another cuda path's: in
    f32 or f64 within `mode`'s tolerance of both; in 16 bits (`code`)
    within one unit in the last place of the cpu's and two of the other's,
    the cpu's distance appended to `notes`."""
    if code is None:
        fluidcuda.expect_close(got, cpu, mode, f"{op} vs cpu")
        fluidcuda.expect_close(got, other, mode, f"{op} vs {other_name}")
        return
    narrow = half.Half(got, code)
    worst = half.expect_within_ulp(narrow, half.Half(cpu, code), code,
                                   f"{op} vs cpu")
    apart = half.ulps(narrow, half.Half(other, code), code)
    if apart > 2.0:
        raise AssertionError(f"{op}: {apart:.2f} units in the last place "
                             f"from {other_name} (at most 2)")
    notes.append(f"{op} {worst:.2f}")


def channels_last_case(suite, ctx, code, shape, out_channels, kernel,
                       strides, padding, dilation, groups, with_bias):
    lib = suite.lib

    def body():
        n, c, h, w = shape
        fan_in = (c // groups) * kernel[0] * kernel[1]
        oh = output_size(h, padding[0], padding[2], kernel[0], strides[0],
                         dilation[0])
        ow = output_size(w, padding[1], padding[3], kernel[1], strides[1],
                         dilation[1])
        out_shape = (n, out_channels, oh, ow)
        if code is None:
            def cast(v):
                return np.require(v.astype(np.float32), requirements="C")
        else:
            def cast(v):
                return half.to_half(lib, v, code).bits
        x = cast(suite.randn(*shape))
        f = cast(suite.randn(out_channels, c // groups, *kernel,
                             scale=fan_in ** -0.5))
        b = cast(suite.randn(out_channels)) if with_bias else None
        gy = cast(suite.randn(*out_shape))
        first = fluidcuda.Conv2dParams(strides, padding, dilation, groups)
        last = fluidcuda.Conv2dParams(strides, padding, dilation, groups,
                                      channels_last=1)
        notes = []
        for op, inputs, like in [("conv2d", [x, f, b], out_shape),
                                 ("conv2d_grad_input", [gy, f], shape),
                                 ("conv2d_grad_filter", [gy, x], f.shape)]:
            inputs_last = [to_channels_last(a) if a is not None and
                           a.ndim == 4 else a for a in inputs]
            like_last = tuple(like[i] for i in (0, 2, 3, 1))
            cpu_first = conv_call(lib, None, op, inputs, like, first, code)
            cpu_last = conv_call(lib, None, op, inputs_last, like_last, last,
                                 code)
            if cpu_last.tobytes() != to_channels_last(cpu_first).tobytes():
                raise AssertionError(f"{op}: the cpu's channels-last result "
                                     "is not its channels-first one")
            cuda_first = conv_call(lib, ctx, op, inputs, like, first, code)
            cuda_last = to_channels_first(conv_call(
                lib, ctx, op, inputs_last, like_last, last, code))
            expect_like(op, cuda_last, cpu_first, cuda_first,
                        "cuda channels first", code, "f32", notes)
        return "ulps vs cpu: " + ", ".join(notes) if notes else None
    return body


# Depthwise channels-last cases: (name, input [N,C,H,W], kernel [KH,KW],
# strides, padding [top,left,bottom,right], dilation, with bias); groups
# and out channels are C.
DEPTHWISE_CASES = [
    ("ConvNeXt 7x7 pad3 C=96", [2, 96, 14, 14], [7, 7], [1, 1],
     [3, 3, 3, 3], [1, 1], True),
    ("ConvNeXt 7x7 pad3 C=96 no bias N=1", [1, 96, 9, 9], [7, 7], [1, 1],
     [3, 3, 3, 3], [1, 1], False),
    ("7x7 pad3 C=6 (no vectors) odd sizes", [2, 6, 11, 13], [7, 7], [1, 1],
     [3, 3, 3, 3], [1, 1], True),
    ("7x7 pad3 C=20 (vectors of 4, not 8)", [3, 20, 7, 10], [7, 7], [1, 1],
     [3, 3, 3, 3], [1, 1], False),
    ("7x7 pad3 window wider than the input", [2, 8, 3, 4], [7, 7], [1, 1],
     [3, 3, 3, 3], [1, 1], True),
    ("MobileNet 3x3 stride2 pad1", [2, 32, 15, 15], [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], True),
    ("3x3 pad1 C=24", [3, 24, 10, 9], [3, 3], [1, 1], [1, 1, 1, 1], [1, 1],
     False),
    ("5x5 pad2 C=40", [1, 40, 11, 12], [5, 5], [1, 1], [2, 2, 2, 2], [1, 1],
     True),
    ("5x5 dilation2 pad4", [2, 16, 13, 12], [5, 5], [1, 1], [4, 4, 4, 4],
     [2, 2], True),
    ("asymmetric padding", [2, 12, 9, 10], [3, 3], [1, 1], [0, 2, 1, 0],
     [1, 1], True),
    ("asymmetric same_upper stride2 (ONNX)", [2, 8, 10, 9], [3, 3], [2, 2],
     [0, 0, 1, 1], [1, 1], False),
    ("non-square 3x5 strides (2,1) dilation (1,2)", [1, 8, 12, 14], [3, 5],
     [2, 1], [1, 2, 2, 3], [1, 2], True),
    ("1x1", [2, 16, 5, 6], [1, 1], [1, 1], [0, 0, 0, 0], [1, 1], True),
    ("2x2 stride3 larger than the kernel", [2, 8, 11, 11], [2, 2], [3, 3],
     [0, 0, 0, 0], [1, 1], False),
]
# (mode, NumPy dtype of the values, 16-bit code or None)
DEPTHWISE_MODES = [("f64", np.float64, None), ("f32", np.float32, None),
                   ("f16", np.float32, half.F16),
                   ("bf16", np.float32, half.BF16)]


def depthwise_operands(suite, code, dtype, shape, kernel, out_shape,
                       with_bias):
    """x, filter, bias (or None) and grad_output of a depthwise
    convolution, channels first, as `dtype` or 16-bit bits of `code`."""
    lib = suite.lib
    if code is None:
        def cast(v):
            return np.require(v.astype(dtype), requirements="C")
    else:
        def cast(v):
            return half.to_half(lib, v, code).bits
    c = shape[1]
    x = cast(suite.randn(*shape))
    f = cast(suite.randn(c, 1, *kernel,
                         scale=(kernel[0] * kernel[1]) ** -0.5))
    b = cast(suite.randn(c)) if with_bias else None
    gy = cast(suite.randn(*out_shape))
    return x, f, b, gy


def depthwise_case(suite, ctx, dtype, code, shape, kernel, strides, padding,
                   dilation, with_bias):
    lib = suite.lib
    mode = "f64" if dtype == np.float64 else "f32"

    def body():
        n, c, h, w = shape
        oh = output_size(h, padding[0], padding[2], kernel[0], strides[0],
                         dilation[0])
        ow = output_size(w, padding[1], padding[3], kernel[1], strides[1],
                         dilation[1])
        out_shape = (n, c, oh, ow)
        x, f, b, gy = depthwise_operands(suite, code, dtype, shape, kernel,
                                         out_shape, with_bias)
        first = fluidcuda.Conv2dParams(strides, padding, dilation, c)
        last = fluidcuda.Conv2dParams(strides, padding, dilation, c,
                                      channels_last=1)
        notes = []
        for op, inputs, like in [("conv2d", [x, f, b], out_shape),
                                 ("conv2d_grad_input", [gy, f], shape),
                                 ("conv2d_grad_filter", [gy, x], f.shape)]:
            inputs_last = [to_channels_last(a) if a is not None and
                           a.ndim == 4 else a for a in inputs]
            like_last = tuple(like[i] for i in (0, 2, 3, 1))
            cpu_last = conv_call(lib, None, op, inputs_last, like_last, last,
                                 code)
            cuda_last = conv_call(lib, ctx, op, inputs_last, like_last, last,
                                  code)
            cudnn_first = to_channels_last(
                conv_call(lib, ctx, op, inputs, like, first, code))
            expect_like(op, cuda_last, cpu_last, cudnn_first,
                        "cuDNN channels first", code, mode, notes)
        return "ulps vs cpu: " + ", ".join(notes) if notes else None
    return body


# Big enough for many chunks of partial sums: 8 * 56 rows of 56 pixels,
# a chunk each.
DETERMINISM_SHAPE = [8, 64, 56, 56]


def depthwise_grad_filter_operands(suite, code):
    """grad_output, input, the filter's shape and the params of a ConvNeXt
    7x7 depthwise convolution of DETERMINISM_SHAPE, channels last."""
    shape = DETERMINISM_SHAPE
    x, f, _, gy = depthwise_operands(suite, code, np.float32, shape, [7, 7],
                                     shape, False)
    params = fluidcuda.Conv2dParams([1, 1], [3, 3, 3, 3], [1, 1], shape[1],
                                    channels_last=1)
    return (to_channels_last(gy), to_channels_last(x),
            to_channels_last(f).shape, params)


def expect_grad_filter(got, want, code, what):
    if code is None:
        fluidcuda.expect_close(got, want, "f32", what)
        return None
    return half.expect_within_ulp(half.Half(got, code), half.Half(want, code),
                                  code, what)


def depthwise_determinism_case(suite, code):
    lib = suite.lib

    def body():
        gy, x, f_shape, params = depthwise_grad_filter_operands(suite, code)
        with fluidcuda.Context(lib) as ctx:
            once = conv_call(lib, ctx, "conv2d_grad_filter", [gy, x],
                             f_shape, params, code)
            twice = conv_call(lib, ctx, "conv2d_grad_filter", [gy, x],
                              f_shape, params, code)
            stats = ctx.stats()
        if once.tobytes() != twice.tobytes():
            raise AssertionError("the filter gradient differs between two "
                                 "runs on the same data")
        assert stats["algorithm_searches"] == 0, \
            f"cuDNN was searched: {stats}"
        want = conv_call(lib, None, "conv2d_grad_filter", [gy, x], f_shape,
                         params, code)
        worst = expect_grad_filter(once, want, code, "vs cpu")
        return (f"workspace {stats['workspace_bytes']} bytes" +
                (f", {worst:.2f} ulps vs cpu" if worst is not None else ""))
    return body


def depthwise_workspace_limit_case(suite):
    lib = suite.lib

    def body():
        gy, x, f_shape, params = depthwise_grad_filter_operands(suite, None)
        want = conv_call(lib, None, "conv2d_grad_filter", [gy, x], f_shape,
                         params, None)
        notes = []
        # Three chunks' f32 partial sums, then none.
        for limit in (3 * int(np.prod(f_shape)) * 4, 0):
            with fluidcuda.Context(lib) as ctx:
                ctx.check(lib.fluid_cuda_set_workspace_limit(ctx.handle,
                                                             limit))
                got = conv_call(lib, ctx, "conv2d_grad_filter", [gy, x],
                                f_shape, params, None)
                stats = ctx.stats()
            expect_grad_filter(got, want, None, f"limit {limit} vs cpu")
            assert stats["workspace_bytes"] <= limit, stats
            searches = 1 if limit == 0 else 0
            assert stats["algorithm_searches"] == searches, (limit, stats)
            notes.append(f"limit {limit}: {stats['algorithm_searches']} "
                         "searches")
        return ", ".join(notes)
    return body


def layout_cache_case(suite):
    """A cache file of channels-first choices (as a program from before
    channels last wrote it) serves the same problems channels first, and
    the channels-last ones are new keys, saved as layout=nhwc."""
    lib = suite.lib
    shape, out_channels = [2, 8, 9, 9], 16
    x = suite.randn(*shape, dtype=np.float32)
    f = suite.randn(out_channels, 8, 3, 3, dtype=np.float32, scale=72 ** -0.5)
    gy = suite.randn(2, out_channels, 9, 9, dtype=np.float32)
    first = fluidcuda.Conv2dParams([1, 1], [1, 1, 1, 1], [1, 1], 1)
    last = fluidcuda.Conv2dParams([1, 1], [1, 1, 1, 1], [1, 1], 1,
                                  channels_last=1)

    def run(ctx, channels_last):
        params = last if channels_last else first
        for op, inputs, like in [("conv2d", [x, f, None], gy.shape),
                                 ("conv2d_grad_input", [gy, f], x.shape),
                                 ("conv2d_grad_filter", [gy, x], f.shape)]:
            if channels_last:
                inputs = [to_channels_last(a) if a is not None else None
                          for a in inputs]
                like = tuple(like[i] for i in (0, 2, 3, 1))
            conv_call(lib, ctx, op, inputs, like, params, None)

    def keys(path):
        with open(path) as file:
            lines = file.read().splitlines()[1:]
        return sorted(line.split(" -> ")[0] for line in lines)

    def body():
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "conv-algorithms.txt")
            with fluidcuda.Context(lib, cache_path=path) as ctx:
                run(ctx, channels_last=False)
            old = keys(path)
            assert len(old) == 3 and all(" layout=nchw " in k for k in old), \
                old
            with fluidcuda.CapturedStderr() as captured:
                with fluidcuda.Context(lib, cache_path=path) as ctx:
                    run(ctx, channels_last=False)
                    run(ctx, channels_last=True)
                    stats = ctx.stats()
            assert "warning" not in captured.text, captured.text
            assert stats["algorithm_searches"] == 3, stats
            both = keys(path)
            new = [k for k in both if " layout=nhwc " in k]
            assert len(both) == 6 and len(new) == 3, both
            assert sorted(re.sub(" layout=nhwc ", " layout=nchw ", k)
                          for k in new) == old, (new, old)
            with fluidcuda.Context(lib, cache_path=path) as ctx:
                run(ctx, channels_last=True)
                again = ctx.stats()
            assert again["algorithm_searches"] == 0, again
        return f"{stats['algorithm_searches']} new searches; {new[0]}"
    return body


def main():
    suite = fluidcuda.Suite(sys.argv)
    half.set_signatures(suite.lib)  # fluid_cpu_cast, for the 16-bit inputs
    with fluidcuda.Context(suite.lib) as strict, \
            fluidcuda.Context(suite.lib, allow_tf32=True) as tf32:
        for mode, dtype, _ in MODES:
            for (name, shape, out_channels, kernel, strides, padding,
                 dilation, groups, with_bias) in CASES:
                label = (f"conv2d {mode} {name} input {shape} out "
                         f"{out_channels} kernel {kernel} strides {strides} "
                         f"padding {padding} dilation {dilation} groups "
                         f"{groups}{' bias' if with_bias else ''}")
                suite.case(label, make_case(
                    suite, (strict, tf32), mode, dtype, shape, out_channels,
                    kernel, strides, padding, dilation, groups, with_bias))
        for mode, code in CHANNELS_LAST_MODES:
            for (name, shape, out_channels, kernel, strides, padding,
                 dilation, groups, with_bias) in CHANNELS_LAST_CASES:
                label = (f"conv2d channels last {mode} {name} input {shape} "
                         f"out {out_channels} kernel {kernel} strides "
                         f"{strides} padding {padding} dilation {dilation} "
                         f"groups {groups}{' bias' if with_bias else ''}")
                suite.case(label, channels_last_case(
                    suite, strict, code, shape, out_channels, kernel,
                    strides, padding, dilation, groups, with_bias))
        for mode, dtype, code in DEPTHWISE_MODES:
            for (name, shape, kernel, strides, padding, dilation,
                 with_bias) in DEPTHWISE_CASES:
                label = (f"conv2d depthwise channels last {mode} {name} "
                         f"input {shape} kernel {kernel} strides {strides} "
                         f"padding {padding} dilation {dilation}"
                         f"{' bias' if with_bias else ''}")
                suite.case(label, depthwise_case(
                    suite, strict, dtype, code, shape, kernel, strides,
                    padding, dilation, with_bias))
        for mode, code in [("f32", None), ("bf16", half.BF16)]:
            suite.case(f"depthwise channels-last {mode} filter gradient of "
                       f"{DETERMINISM_SHAPE}: bitwise the same twice, no "
                       "cuDNN search", depthwise_determinism_case(suite,
                                                                  code))
        suite.case("depthwise channels-last filter gradient under workspace "
                   "limits: fewer chunks, then cuDNN at limit 0",
                   depthwise_workspace_limit_case(suite))
        suite.case("the algorithm cache keys the layout; channels-first "
                   "files load as they are", layout_cache_case(suite))
        for name, ctx in [("strict", strict), ("tf32", tf32)]:
            stats = ctx.stats()
            print(f"{name} context: {stats['algorithm_searches']} algorithm "
                  f"searches, {stats['algorithm_cache_hits']} cache hits, "
                  f"workspace {stats['workspace_bytes']} bytes")
    suite.finish()


if __name__ == "__main__":
    main()
