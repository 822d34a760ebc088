# RUN: %python %s %fluid_runtime_lib
"""Statistical tests of fluid_init_tensor (Init.h) against the distributions
and PyTorch's torch.nn.init formulas, on tensors of about 1e6 elements.

Tolerances are stated per check; each is at least 5 standard errors of the
estimate it bounds, and the seeds are fixed, so the outcome never varies.
"""

import ctypes
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import cases  # noqa: E402
import fluidrt  # noqa: E402
import initapi  # noqa: E402
from cases import case  # noqa: E402
from initapi import (ZEROS, ONES, CONSTANT, NORMAL, UNIFORM,  # noqa: E402
                     KAIMING_NORMAL, KAIMING_UNIFORM, XAVIER_UNIFORM, FAN_IN,
                     FAN_OUT)

SEED = 20261130

lib = initapi.load(sys.argv[1])


def init(shape, dtype=np.float64, stream=b"weight", seed=SEED, **spec):
    return initapi.init(lib, shape, dtype, seed, lib.fluid_hash_name(stream),
                        **spec)


def fans(shape):
    dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    fan_in, fan_out = ctypes.c_int64(), ctypes.c_int64()
    fluidrt.check(lib, lib.fluid_init_fans(len(shape), dims,
                                           ctypes.byref(fan_in),
                                           ctypes.byref(fan_out)))
    return fan_in.value, fan_out.value


def close(actual, expected, tolerance, what):
    if abs(actual - expected) > tolerance:
        raise AssertionError(f"{what} = {actual:.6g}, expected {expected:.6g}"
                             f" +- {tolerance:.3g}")


def check_normal(x, mean, std):
    """Moments, tail masses and the Kolmogorov-Smirnov distance to N(mean, std^2)."""
    x = x.astype(np.float64).ravel()
    n = x.size
    close(x.mean(), mean, 5 * std / math.sqrt(n), "mean")
    close(x.std() / std, 1.0, 0.01, "std / target")           # 1%
    z = (x - mean) / std
    for k, mass in ((1, 0.682689), (2, 0.954500), (3, 0.997300)):
        close(np.mean(np.abs(z) < k), mass, 0.003, f"P(|z| < {k})")
    close(np.mean(z ** 3), 0.0, 0.015, "skewness")            # ~6 s.e.
    close(np.mean(z ** 4) - 3, 0.0, 0.04, "excess kurtosis")  # ~8 s.e.
    cdf = torch.special.ndtr(torch.from_numpy(np.sort(z))).numpy()
    ks = np.max(np.abs(cdf - np.arange(1, n + 1) / n))
    if ks > 1.95 / math.sqrt(n):  # the 0.1% critical value
        raise AssertionError(f"Kolmogorov-Smirnov distance {ks:.5f} too large")


def check_uniform(x, low, high):
    """Closed bounds reached at both ends, moments and a 20-bin histogram."""
    x = x.astype(np.float64).ravel()
    n, width = x.size, high - low
    if x.min() < low or x.max() > high:
        raise AssertionError(f"values [{x.min()}, {x.max()}] outside"
                             f" [{low}, {high}]")
    close(x.min(), low, 1e-4 * width, "min")
    close(x.max(), high, 1e-4 * width, "max")
    close(x.mean(), (low + high) / 2, 5 * width / math.sqrt(12 * n), "mean")
    close(x.std() / (width / math.sqrt(12)), 1.0, 0.01, "std / target")
    counts, _ = np.histogram(x, bins=20, range=(low, high))
    close(counts.min() / n, 0.05, 0.0015, "smallest bin share")  # ~7 s.e.
    close(counts.max() / n, 0.05, 0.0015, "largest bin share")


@case
def constants_are_exact():
    for dtype in (np.float32, np.float64):
        assert np.all(init((3, 5), dtype, kind=ZEROS) == 0)
        assert np.all(init((3, 5), dtype, kind=ONES) == 1)
        x = init((7,), dtype, kind=CONSTANT, value=0.1)
        assert np.all(x == dtype(0.1)), x
    assert init((), kind=CONSTANT, value=-2.5) == -2.5


@case
def normal_f64_matches_distribution():
    check_normal(init((1000, 1000), kind=NORMAL, mean=0.5, std=2.0), 0.5, 2.0)


@case
def normal_f32_matches_distribution():
    x = init((1000, 1000), np.float32, kind=NORMAL, mean=0.0, std=0.02)
    check_normal(x, 0.0, 0.02)


@case
def uniform_f64_matches_distribution():
    check_uniform(init((1000, 1000), kind=UNIFORM, low=-3.0, high=5.0), -3, 5)


@case
def uniform_f32_stays_in_closed_bounds():
    x = init((1000, 1000), np.float32, kind=UNIFORM, low=-0.125, high=0.25)
    check_uniform(x, np.float32(-0.125), np.float32(0.25))


@case
def kaiming_normal_conv_fan_in_matches_pytorch():
    shape = (256, 128, 5, 6)  # 983,040 elements
    gain = torch.nn.init.calculate_gain("relu")
    fan = torch.nn.init._calculate_correct_fan(torch.empty(shape), "fan_in")
    x = init(shape, np.float32, kind=KAIMING_NORMAL, fan_mode=FAN_IN,
             gain=gain)
    check_normal(x, 0.0, gain / math.sqrt(fan))
    reference = torch.nn.init.kaiming_normal_(torch.empty(shape),
                                              mode="fan_in",
                                              nonlinearity="relu")
    close(x.std() / reference.std().item(), 1.0, 0.01, "std / torch's std")


@case
def kaiming_normal_linear_fan_out_matches_pytorch():
    shape = (500, 2000)
    fan = torch.nn.init._calculate_correct_fan(torch.empty(shape), "fan_out")
    x = init(shape, kind=KAIMING_NORMAL, fan_mode=FAN_OUT, gain=1.0)
    check_normal(x, 0.0, 1.0 / math.sqrt(fan))
    assert fan == 500


@case
def kaiming_uniform_linear_default_matches_pytorch():
    # nn.Linear's default: kaiming_uniform_(a=sqrt(5)), fan_in.
    shape = (500, 2000)
    gain = torch.nn.init.calculate_gain("leaky_relu", math.sqrt(5))
    fan = torch.nn.init._calculate_correct_fan(torch.empty(shape), "fan_in")
    bound = gain * math.sqrt(3.0 / fan)
    x = init(shape, kind=KAIMING_UNIFORM, fan_mode=FAN_IN, gain=gain)
    check_uniform(x, -bound, bound)
    reference = torch.nn.init.kaiming_uniform_(torch.empty(shape),
                                               a=math.sqrt(5))
    close(reference.abs().max().item() / bound, 1.0, 1e-3, "torch's max/bound")


@case
def kaiming_uniform_conv_fan_out():
    shape = (128, 64, 11, 11)  # 991,232 elements
    fan = torch.nn.init._calculate_correct_fan(torch.empty(shape), "fan_out")
    bound = math.sqrt(2) * math.sqrt(3.0 / fan)
    x = init(shape, np.float32, kind=KAIMING_UNIFORM, fan_mode=FAN_OUT,
             gain=math.sqrt(2))
    check_uniform(x, np.float32(-bound), np.float32(bound))


@case
def xavier_uniform_matches_pytorch():
    shape = (300, 200, 4, 4)  # 960,000 elements
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(
        torch.empty(shape))
    gain = 0.5
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    x = init(shape, kind=XAVIER_UNIFORM, gain=gain)
    check_uniform(x, -bound, bound)
    reference = torch.nn.init.xavier_uniform_(torch.empty(shape), gain=gain)
    close(reference.abs().max().item() / bound, 1.0, 1e-3, "torch's max/bound")


@case
def fans_match_pytorch():
    for shape in [(3, 4), (1, 1), (10, 20, 1), (64, 3, 7, 7), (8, 4, 2, 3, 3),
                  (0, 5), (6, 0, 3)]:
        expected = torch.nn.init._calculate_fan_in_and_fan_out(
            torch.empty(shape))
        if fans(shape) != tuple(expected):
            raise AssertionError(f"{shape}: {fans(shape)} != {expected}")


@case
def kaiming_with_zero_gain_is_zero():
    x = init((4, 5), kind=KAIMING_NORMAL, fan_mode=FAN_IN, gain=0.0)
    assert np.all(x == 0), x


if __name__ == "__main__":
    sys.exit(cases.main())
