# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""fluid_cuda_batch_norm, _inference and _grad (cuDNN, spatial mode) and
fluid_cuda_batch_norm_apply (own kernel) against the cpu kernels, 4-D
[N,C,H,W] and 2-D [N,C], f64 (tolerance 1e-10) and f32 (rtol 1e-4, atol
1e-5 of the output's scale).

batch_norm_apply must equal the cpu kernel bitwise (it rounds as the cpu
does), also in place (output over input); with cuDNN's own saved
statistics it must give cuDNN's training output to rounding (the same
tolerances).

Besides the oracle, the training case checks the two conventions where
libraries differ, with NumPy: saved_inv_std is 1/sqrt(biased variance +
epsilon), and the running variance is updated with the unbiased variance
(new = (1 - momentum) * old + momentum * batch). Running statistics are
also updated in place (new_running_* the same buffers as running_*).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "lib"))
import fluidcuda  # noqa: E402

SHAPES = [
    ("4-D", [4, 8, 5, 6]),
    ("4-D resnet-like", [8, 64, 7, 7]),
    ("4-D batch1", [1, 3, 7, 7]),
    ("2-D", [16, 10]),
    ("2-D batch2", [2, 5]),
]
# batch_norm_apply's vectorized path: H*W a multiple of the vector width
# (4 f32, 2 f64); SHAPES take the per-element path in f32.
APPLY_SHAPES = [("4-D vectorized", [2, 16, 8, 8])]
MODES = [("f64", np.float64), ("f32", np.float32)]
EPSILON = 1e-5
MOMENTUM = 0.1


def channel_axes(shape):
    return (0,) if len(shape) == 2 else (0, 2, 3)


def training_case(suite, ctx, mode, dtype, shape, in_place):
    lib = suite.lib

    def body():
        c = shape[1]
        x = suite.randn(*shape, dtype=dtype, scale=2.0, offset=0.5)
        scale = suite.randn(c, dtype=dtype)
        shift = suite.randn(c, dtype=dtype)
        running_mean = suite.randn(c, dtype=dtype)
        running_var = np.abs(suite.randn(c, dtype=dtype)) + 0.5
        params = fluidcuda.BatchNormParams(EPSILON, MOMENTUM)

        want = {name: np.full(shape if name == "output" else (c,), np.nan,
                              dtype)
                for name in ["output", "saved_mean", "saved_inv_std",
                             "new_running_mean", "new_running_var"]}
        fluidcuda.cpu(lib, "batch_norm", x, scale, shift, running_mean,
                      running_var, want["output"], want["saved_mean"],
                      want["saved_inv_std"], want["new_running_mean"],
                      want["new_running_var"], params)

        dx, dscale, dshift = (ctx.upload(a) for a in (x, scale, shift))
        drm, drv = ctx.upload(running_mean), ctx.upload(running_var)
        got = {"output": ctx.empty(shape, dtype),
               "saved_mean": ctx.empty((c,), dtype),
               "saved_inv_std": ctx.empty((c,), dtype)}
        if in_place:
            got["new_running_mean"], got["new_running_var"] = drm, drv
        else:
            got["new_running_mean"] = ctx.empty((c,), dtype)
            got["new_running_var"] = ctx.empty((c,), dtype)
        ctx("batch_norm", dx, dscale, dshift, drm, drv, got["output"],
            got["saved_mean"], got["saved_inv_std"], got["new_running_mean"],
            got["new_running_var"], params)
        values = {name: t.download() for name, t in got.items()}
        if not in_place:
            fluidcuda.expect_close(drm.download(), running_mean, "f64",
                                   "running_mean (must be left alone)")
            fluidcuda.expect_close(drv.download(), running_var, "f64",
                                   "running_var (must be left alone)")
        for t in {id(t): t for t in [dx, dscale, dshift, drm, drv,
                                     *got.values()]}.values():
            t.free()

        for name, value in values.items():
            fluidcuda.expect_close(value, want[name], mode, name)
        axes = channel_axes(shape)
        x64 = x.astype(np.float64)
        count = x64.size // c
        biased = x64.var(axis=axes)
        unbiased = biased * count / (count - 1)
        fluidcuda.expect_close(values["saved_inv_std"],
                               1 / np.sqrt(biased + EPSILON), mode,
                               "saved_inv_std = 1/sqrt(biased var + eps)")
        fluidcuda.expect_close(
            values["new_running_var"],
            (1 - MOMENTUM) * running_var.astype(np.float64) +
            MOMENTUM * unbiased, mode,
            "new_running_var from the unbiased variance")
        return None
    return body


def inference_case(suite, ctx, mode, dtype, shape):
    lib = suite.lib

    def body():
        c = shape[1]
        x = suite.randn(*shape, dtype=dtype, scale=2.0, offset=0.5)
        scale, shift, mean = (suite.randn(c, dtype=dtype) for _ in range(3))
        var = np.abs(suite.randn(c, dtype=dtype)) + 0.1
        want = np.full(shape, np.nan, dtype)
        fluidcuda.cpu(lib, "batch_norm_inference", x, scale, shift, mean, var,
                      want, EPSILON)
        inputs = [ctx.upload(a) for a in (x, scale, shift, mean, var)]
        out = ctx.empty(shape, dtype)
        ctx("batch_norm_inference", *inputs, out, EPSILON)
        got = out.download()
        for t in inputs + [out]:
            t.free()
        fluidcuda.expect_close(got, want, mode)
        return None
    return body


def apply_case(suite, ctx, mode, dtype, shape):
    """batch_norm_apply from the cpu batch_norm's saved statistics against
    fluid_cpu_batch_norm_apply, into a separate output and in place; then
    from cuDNN's statistics against cuDNN's training output."""
    lib = suite.lib

    def body():
        c = shape[1]
        x = suite.randn(*shape, dtype=dtype, scale=2.0, offset=0.5)
        scale, shift = suite.randn(c, dtype=dtype), suite.randn(c, dtype=dtype)
        running = [np.zeros(c, dtype), np.ones(c, dtype)]
        params = fluidcuda.BatchNormParams(EPSILON, MOMENTUM)
        y = np.empty(shape, dtype)
        mean, inv_std = np.empty(c, dtype), np.empty(c, dtype)
        new_stats = [np.empty(c, dtype), np.empty(c, dtype)]
        fluidcuda.cpu(lib, "batch_norm", x, scale, shift, *running, y, mean,
                      inv_std, *new_stats, params)
        want = np.full(shape, np.nan, dtype)
        fluidcuda.cpu(lib, "batch_norm_apply", x, scale, shift, mean, inv_std,
                      want)

        dx, dscale, dshift = (ctx.upload(a) for a in (x, scale, shift))
        dmean, dinv = ctx.upload(mean), ctx.upload(inv_std)
        out = ctx.empty(shape, dtype)
        ctx("batch_norm_apply", dx, dscale, dshift, dmean, dinv, out)
        got = out.download()
        over = ctx.upload(x)
        ctx("batch_norm_apply", over, dscale, dshift, dmean, dinv, over)
        got_in_place = over.download()

        drunning = [ctx.upload(r) for r in running]
        dy = ctx.empty(shape, dtype)
        gpu_mean, gpu_inv = ctx.empty((c,), dtype), ctx.empty((c,), dtype)
        dnew = [ctx.empty((c,), dtype), ctx.empty((c,), dtype)]
        ctx("batch_norm", dx, dscale, dshift, *drunning, dy, gpu_mean,
            gpu_inv, *dnew, params)
        ctx("batch_norm_apply", dx, dscale, dshift, gpu_mean, gpu_inv, out)
        cudnn_output, from_cudnn_stats = dy.download(), out.download()
        for t in [dx, dscale, dshift, dmean, dinv, out, over, *drunning, dy,
                  gpu_mean, gpu_inv, *dnew]:
            t.free()

        fluidcuda.expect_close(got, want, mode, "output from cpu statistics")
        # Stricter than the tolerance: KernelsNorm.cu rounds each operation
        # as the cpu kernel does.
        if not np.array_equal(got, want):
            raise AssertionError("output from cpu statistics is not bitwise "
                                 "fluid_cpu_batch_norm_apply's")
        if not np.array_equal(got_in_place, got):
            raise AssertionError("in place over the input differs from the "
                                 "separate output")
        fluidcuda.expect_close(from_cudnn_stats, cudnn_output, mode,
                               "output from cuDNN's statistics vs cuDNN's")
        vs_cudnn = fluidcuda.max_relative_error(from_cudnn_stats,
                                                cudnn_output)
        return f"max rel err {vs_cudnn:.1e} vs cuDNN's training output"
    return body


def grad_case(suite, ctx, mode, dtype, shape):
    """The gradient from the cpu forward's saved statistics, then the
    whole chain on the device (its forward's statistics) against the
    chain on the cpu."""
    lib = suite.lib

    def body():
        c = shape[1]
        x = suite.randn(*shape, dtype=dtype, scale=2.0, offset=0.5)
        gy = suite.randn(*shape, dtype=dtype)
        scale, shift = suite.randn(c, dtype=dtype), suite.randn(c, dtype=dtype)
        running = [np.zeros(c, dtype), np.ones(c, dtype)]
        params = fluidcuda.BatchNormParams(EPSILON, MOMENTUM)
        y = np.empty(shape, dtype)
        mean, inv_std = np.empty(c, dtype), np.empty(c, dtype)
        new_stats = [np.empty(c, dtype), np.empty(c, dtype)]
        fluidcuda.cpu(lib, "batch_norm", x, scale, shift, *running, y, mean,
                      inv_std, *new_stats, params)
        want = [np.full(shape, np.nan, dtype), np.full(c, np.nan, dtype),
                np.full(c, np.nan, dtype)]
        fluidcuda.cpu(lib, "batch_norm_grad", gy, x, scale, mean, inv_std,
                      *want)

        dx, dgy, dscale, dshift = (ctx.upload(a) for a in (x, gy, scale,
                                                          shift))
        dmean, dinv = ctx.upload(mean), ctx.upload(inv_std)
        grads = [ctx.empty(shape, dtype), ctx.empty((c,), dtype),
                 ctx.empty((c,), dtype)]
        ctx("batch_norm_grad", dgy, dx, dscale, dmean, dinv, *grads)
        from_cpu_stats = [g.download() for g in grads]

        drunning = [ctx.upload(r) for r in running]
        dy = ctx.empty(shape, dtype)
        gpu_mean, gpu_inv = ctx.empty((c,), dtype), ctx.empty((c,), dtype)
        dnew = [ctx.empty((c,), dtype), ctx.empty((c,), dtype)]
        ctx("batch_norm", dx, dscale, dshift, *drunning, dy, gpu_mean,
            gpu_inv, *dnew, params)
        ctx("batch_norm_grad", dgy, dx, dscale, gpu_mean, gpu_inv, *grads)
        from_gpu_stats = [g.download() for g in grads]
        for t in [dx, dgy, dscale, dshift, dmean, dinv, *grads, *drunning, dy,
                  gpu_mean, gpu_inv, *dnew]:
            t.free()

        for source, got in [("cpu", from_cpu_stats),
                            ("gpu", from_gpu_stats)]:
            for name, value, expected in zip(
                    ["grad_input", "grad_scale", "grad_shift"], got, want):
                fluidcuda.expect_close(value, expected, mode,
                                       f"{name} from {source} statistics")
        return None
    return body


def main():
    suite = fluidcuda.Suite(sys.argv)
    lib = suite.lib
    with fluidcuda.Context(lib) as ctx:
        for mode, dtype in MODES:
            for name, shape in SHAPES:
                suite.case(f"batch_norm {mode} {name} {shape}",
                           training_case(suite, ctx, mode, dtype, shape,
                                         in_place=False))
            for name, shape in SHAPES[:1] + SHAPES[3:4]:
                suite.case(f"batch_norm {mode} {name} {shape} running stats "
                           f"in place",
                           training_case(suite, ctx, mode, dtype, shape,
                                         in_place=True))
            for name, shape in SHAPES:
                suite.case(f"batch_norm_inference {mode} {name} {shape}",
                           inference_case(suite, ctx, mode, dtype, shape))
            for name, shape in SHAPES:
                suite.case(f"batch_norm_grad {mode} {name} {shape}",
                           grad_case(suite, ctx, mode, dtype, shape))
            for name, shape in SHAPES + APPLY_SHAPES:
                suite.case(f"batch_norm_apply {mode} {name} {shape}",
                           apply_case(suite, ctx, mode, dtype, shape))

        def inference_of_empty_batch():
            shape = (0, 3, 4, 4)
            channel = [ctx.upload(np.ones(3)) for _ in range(4)]
            x, out = ctx.upload(np.zeros(shape)), ctx.empty(shape, np.float64)
            ctx("batch_norm_inference", x, *channel, out, EPSILON)
            ctx.synchronize()
        suite.case("batch_norm_inference empty batch", inference_of_empty_batch)

        def apply_of_empty_batch():
            shape = (0, 3, 4, 4)
            channel = [ctx.upload(np.ones(3)) for _ in range(4)]
            x, out = ctx.upload(np.zeros(shape)), ctx.empty(shape, np.float64)
            ctx("batch_norm_apply", x, *channel, out)
            ctx.synchronize()
            for t in [x, out, *channel]:
                t.free()
        suite.case("batch_norm_apply empty batch", apply_of_empty_batch)

        def apply_reports_operand_errors():
            x = ctx.upload(np.ones((2, 3, 4, 4)))
            good = [ctx.upload(np.ones(3)) for _ in range(3)]
            bad = ctx.upload(np.ones(4))
            out = ctx.empty((2, 3, 4, 4), np.float64)
            status, _ = ctx.status("batch_norm_apply", x, *good, bad, out)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["fluid_cuda_batch_norm_apply",
                                     "inv_std shape [4] does not match"])
            x3 = ctx.upload(np.ones((2, 3, 4)))
            out3 = ctx.empty((2, 3, 4), np.float64)
            status, _ = ctx.status("batch_norm_apply", x3, *good, good[0],
                                   out3)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["input must have rank 2 or 4"])
            host = np.ones(3)
            status, _ = ctx.status("batch_norm_apply", x, *good, host, out)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["inv_std data", "not device memory"])
            for t in [x, *good, bad, out, x3, out3]:
                t.free()
        suite.case("batch_norm_apply reports operand errors",
                   apply_reports_operand_errors)

        def one_value_per_channel_is_an_error():
            shape = (1, 3, 1, 1)
            x = ctx.upload(np.ones(shape))
            channel = [ctx.upload(np.ones(3)) for _ in range(8)]
            out = ctx.empty(shape, np.float64)
            status, _ = ctx.status(
                "batch_norm", x, *channel[:4], out, *channel[4:],
                fluidcuda.BatchNormParams(EPSILON, MOMENTUM))
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["fluid_cuda_batch_norm",
                                     "more than one value per channel"])
        suite.case("batch_norm with one value per channel is an error",
                   one_value_per_channel_is_an_error)

        def wrong_channel_shape_is_an_error():
            x = ctx.upload(np.ones((2, 3, 4, 4)))
            good = [ctx.upload(np.ones(3)) for _ in range(3)]
            bad = ctx.upload(np.ones(4))
            out = ctx.empty((2, 3, 4, 4), np.float64)
            status, _ = ctx.status("batch_norm_inference", x, good[0],
                                   good[1], good[2], bad, out, EPSILON)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["var shape [4] does not match"])
            status, _ = ctx.status("batch_norm_inference", x, good[0],
                                   good[1], good[2], good[0], out, -1.0)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["epsilon must be >= 0"])
        suite.case("batch_norm reports shape and epsilon errors",
                   wrong_channel_shape_is_an_error)
        ctx.synchronize()
    suite.finish()


if __name__ == "__main__":
    main()
