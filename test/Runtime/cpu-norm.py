# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_batch_norm (training) and fluid_cpu_batch_norm_inference
against torch.nn.functional.batch_norm on random inputs, and
fluid_cpu_batch_norm_apply: with batch_norm's own saved statistics it must
reproduce batch_norm's output bitwise (into a separate output and in
place over the input), and with any statistics match the NumPy formula
(x - mean) * inv_std * scale + shift."""

import importlib
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

# (name, input shape, epsilon, momentum, offset added to the input)
CASES = [
    ("NCHW", [2, 8, 5, 7], 1e-5, 0.1, 0.0),
    ("NCHW batch1", [1, 3, 4, 4], 1e-5, 0.1, 0.0),
    ("NCHW 64 channels", [2, 64, 8, 8], 1e-5, 0.1, 0.0),
    ("NCHW 1x1 spatial", [4, 6, 1, 1], 1e-3, 0.3, 0.0),
    ("NC", [16, 10], 1e-5, 0.1, 0.0),
    ("NC two rows", [2, 5], 1e-2, 1.0, 0.0),
    ("NCHW large mean", [2, 4, 6, 6], 1e-5, 0.1, 100.0),
]


def channel_params(suite, channels, dtype):
    scale = suite.randn(channels, dtype=dtype)
    shift = suite.randn(channels, dtype=dtype)
    mean = suite.randn(channels, dtype=dtype)
    var = suite.randn(channels, dtype=dtype).abs() + 0.5
    return scale, shift, mean, var


def training_case(suite, dtype, shape, epsilon, momentum, offset,
                  in_place):
    def body():
        channels = shape[1]
        x = suite.randn(*shape, dtype=dtype) * 2 + offset
        scale, shift, running_mean, running_var = channel_params(
            suite, channels, dtype)
        want_mean, want_var = running_mean.clone(), running_var.clone()
        want = F.batch_norm(x, want_mean, want_var, scale, shift,
                            training=True, momentum=momentum, eps=epsilon)
        dims = [d for d in range(len(shape)) if d != 1]
        want_saved_mean = x.mean(dims)
        want_inv_std = 1 / torch.sqrt(x.var(dims, unbiased=False) + epsilon)

        got = api.empty(shape, dtype)
        saved_mean = api.empty([channels], dtype)
        saved_inv_std = api.empty([channels], dtype)
        if in_place:
            new_mean, new_var = running_mean, running_var
        else:
            new_mean = api.empty([channels], dtype)
            new_var = api.empty([channels], dtype)
        suite.kernels("fluid_cpu_batch_norm", x, scale, shift, running_mean,
                      running_var, got, saved_mean, saved_inv_std, new_mean,
                      new_var, api.BatchNormParams(epsilon, momentum))
        api.expect_close(got, want)
        api.expect_close(saved_mean, want_saved_mean, "saved_mean")
        api.expect_close(saved_inv_std, want_inv_std, "saved_inv_std")
        api.expect_close(new_mean, want_mean, "new_running_mean")
        api.expect_close(new_var, want_var, "new_running_var")
    return body


def inference_case(suite, dtype, shape, epsilon, offset):
    def body():
        x = suite.randn(*shape, dtype=dtype) * 2 + offset
        scale, shift, mean, var = channel_params(suite, shape[1], dtype)
        want = F.batch_norm(x, mean + offset, var, scale, shift,
                            training=False, eps=epsilon)
        got = api.empty(shape, dtype)
        suite.kernels("fluid_cpu_batch_norm_inference", x, scale, shift,
                      mean + offset, var, got, epsilon)
        api.expect_close(got, want)
    return body


def bits(t):
    """The tensor's bytes as unsigned integers, for bitwise comparison."""
    a = t.numpy()
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def expect_bitwise(got, want, what):
    differ = int(np.count_nonzero(bits(got) != bits(want)))
    if differ:
        worst = float((got - want).abs().max())
        raise AssertionError(f"{what}: {differ} of {want.numel()} elements "
                             f"differ, by up to {worst:g}")


def apply_formula(x, scale, shift, mean, inv_std):
    """(x - mean) * inv_std * scale + shift in float64 NumPy, per channel
    (axis 1)."""
    at = (1, -1) + (1,) * (x.dim() - 2)
    c = [v.numpy().astype(np.float64).reshape(at)
         for v in (scale, shift, mean, inv_std)]
    out = (x.numpy().astype(np.float64) - c[2]) * c[3] * c[0] + c[1]
    return torch.from_numpy(out).to(x.dtype)


def apply_matches_batch_norm_case(suite, dtype, shape, epsilon, momentum,
                                  offset):
    def body():
        channels = shape[1]
        x = suite.randn(*shape, dtype=dtype) * 2 + offset
        scale, shift, running_mean, running_var = channel_params(
            suite, channels, dtype)
        y = api.empty(shape, dtype)
        saved = [api.empty([channels], dtype) for _ in range(4)]
        suite.kernels("fluid_cpu_batch_norm", x, scale, shift, running_mean,
                      running_var, y, *saved,
                      api.BatchNormParams(epsilon, momentum))
        mean, inv_std = saved[0], saved[1]

        got = api.empty(shape, dtype)
        suite.kernels("fluid_cpu_batch_norm_apply", x, scale, shift, mean,
                      inv_std, got)
        expect_bitwise(got, y, "batch_norm_apply vs batch_norm output")
        api.expect_close(got, apply_formula(x, scale, shift, mean, inv_std),
                         "batch_norm_apply vs the NumPy formula")

        over = x.clone()
        suite.kernels("fluid_cpu_batch_norm_apply", over, scale, shift, mean,
                      inv_std, over)
        expect_bitwise(over, y, "batch_norm_apply in place over its input")
    return body


def apply_formula_case(suite, dtype, shape):
    """Statistics that no batch_norm returned: the formula alone."""
    def body():
        channels = shape[1]
        x = suite.randn(*shape, dtype=dtype) * 3 - 1
        scale, shift, mean = (suite.randn(channels, dtype=dtype)
                              for _ in range(3))
        inv_std = suite.randn(channels, dtype=dtype).abs() + 0.1
        got = api.empty(shape, dtype)
        suite.kernels("fluid_cpu_batch_norm_apply", x, scale, shift, mean,
                      inv_std, got)
        api.expect_close(got, apply_formula(x, scale, shift, mean, inv_std))
    return body


def main():
    suite = api.Suite(sys.argv)
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for name, shape, epsilon, momentum, offset in CASES:
            label = (f"{dtype_name} {name} input {shape} eps {epsilon} "
                     f"momentum {momentum}")
            suite.case(f"batch_norm {label}",
                       training_case(suite, dtype, shape, epsilon, momentum,
                                     offset, in_place=False))
            suite.case(f"batch_norm {label} running stats in place",
                       training_case(suite, dtype, shape, epsilon, momentum,
                                     offset, in_place=True))
            suite.case(f"batch_norm_inference {dtype_name} {name} input "
                       f"{shape} eps {epsilon}",
                       inference_case(suite, dtype, shape, epsilon, offset))
            suite.case(f"batch_norm_apply {label} equals batch_norm",
                       apply_matches_batch_norm_case(
                           suite, dtype, shape, epsilon, momentum, offset))
            suite.case(f"batch_norm_apply {dtype_name} {name} input {shape} "
                       f"given statistics",
                       apply_formula_case(suite, dtype, shape))
    suite.finish()


if __name__ == "__main__":
    main()
