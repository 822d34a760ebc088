# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""fluid_cuda_conv2d and its two gradients against the cpu kernels.

Each case runs the forward, the input gradient and the filter gradient in
three modes: f64 (tolerance 1e-10), f32 with TF32 off (rtol 1e-4, atol
1e-5 of the output's scale) and f32 with TF32 on (5e-3 of the output's
largest magnitude). Filters are scaled by 1/sqrt(fan-in), so outputs are
of order one. Asymmetric padding exercises the explicitly padded path
(CudnnConv.cpp), symmetric padding the direct one.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "lib"))
import fluidcuda  # noqa: E402

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


def main():
    suite = fluidcuda.Suite(sys.argv)
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
        for name, ctx in [("strict", strict), ("tf32", tf32)]:
            stats = ctx.stats()
            print(f"{name} context: {stats['algorithm_searches']} algorithm "
                  f"searches, {stats['algorithm_cache_hits']} cache hits, "
                  f"workspace {stats['workspace_bytes']} bytes")
    suite.finish()


if __name__ == "__main__":
    main()
