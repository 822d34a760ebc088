# RUN: %python %s %fluid_runtime_lib
"""Determinism, stream independence and errors of fluid_init_tensor (Init.h).

The header documents the exact algorithm; a pure-Python Philox4x32-10 (checked
against the Random123 known-answer vectors) reproduces the uniform values bit
for bit and the normal values to 1e-13. Golden bit patterns pin the output
so a platform, compiler or optimization level that changed it would fail.
"""

import ctypes
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import cases  # noqa: E402
import fluidrt  # noqa: E402
import initapi  # noqa: E402
import philox  # noqa: E402
from cases import case  # noqa: E402
from fluidrt import INVALID_ARGUMENT, UNSUPPORTED  # noqa: E402
from initapi import (ZEROS, ONES, CONSTANT, NORMAL, UNIFORM,  # noqa: E402
                     KAIMING_NORMAL, KAIMING_UNIFORM, XAVIER_UNIFORM, FAN_IN)
from philox import MASK32, philox4x32_10  # noqa: E402

lib = initapi.load(sys.argv[1])


def init(shape, dtype=np.float64, seed=1, stream=0, **spec):
    return initapi.init(lib, shape, dtype, seed, stream, **spec)


def expect_error(expected_status, fragments, array_or_tensor, **spec):
    t = (array_or_tensor if isinstance(array_or_tensor, fluidrt.FluidTensor)
         else fluidrt.tensor(array_or_tensor))
    fluidrt.expect_status(lib, initapi.init_status(lib, t, 1, 0, **spec),
                          expected_status, fragments)


def reference_uniforms(seed, stream, index):
    """Init.h's two uniforms in [0, 1) of element `index`."""
    x = philox4x32_10((index & MASK32, index >> 32, stream & MASK32,
                       stream >> 32), (seed & MASK32, seed >> 32))
    return (((x[0] << 32 | x[1]) >> 11) * 2.0 ** -53,
            ((x[2] << 32 | x[3]) >> 11) * 2.0 ** -53)


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


@case
def python_philox_matches_random123_vectors():
    philox.check_random123_vectors()


@case
def uniform_is_bitwise_the_documented_algorithm():
    seed, stream, low, high = 0x123456789ABCDEF0, 0xFEDCBA9876543210, -2.0, 3.0
    x = init((300,), seed=seed, stream=stream, kind=UNIFORM, low=low,
             high=high)
    for index in list(range(300)):
        u1, _ = reference_uniforms(seed, stream, index)
        assert x[index] == low + (high - low) * u1, index


@case
def normal_follows_the_documented_box_muller():
    seed, stream = 99, 5
    x = init((300,), seed=seed, stream=stream, kind=NORMAL, mean=1.0, std=3.0)
    for index in range(300):
        u1, u2 = reference_uniforms(seed, stream, index)
        z = math.sqrt(-2 * math.log(1 - u1)) * math.cos(2 * math.pi * u2)
        expected = 1.0 + 3.0 * z
        if abs(x[index] - expected) > 1e-13 * max(1.0, abs(expected)):
            raise AssertionError(f"element {index}: {x[index]!r} vs"
                                 f" {expected!r}")


@case
def golden_bits_are_stable():
    x = init((4,), seed=42, stream=fnv1a64(b"fc.weight"), kind=NORMAL,
             mean=0.0, std=1.0)
    golden = ["0x1.6bbf749550696p-2", "0x1.55e9abe43f2efp-2",
              "0x1.21fd4c48ce0d5p+1", "0x1.0a5ee8a406a84p-2"]
    assert [float(v).hex() for v in x] == golden, [float(v).hex() for v in x]
    y = init((2, 3), np.float32, seed=7, stream=fnv1a64(b"conv1.weight"),
             kind=KAIMING_UNIFORM, fan_mode=FAN_IN, gain=1.0)
    golden = ["0x1.3da286p-5", "0x1.126e26p-3", "-0x1.a80312p-2",
              "0x1.7fc602p-1", "-0x1.8a11e8p-1", "-0x1.8d6e36p-2"]
    assert list(y.ravel()) == [np.float32(float.fromhex(g)) for g in golden], \
        [float(v).hex() for v in y.ravel()]


@case
def f32_is_f64_rounded_once():
    for spec in (dict(kind=NORMAL, mean=0.25, std=0.75),
                 dict(kind=UNIFORM, low=-1.0, high=1.0),
                 dict(kind=XAVIER_UNIFORM, gain=1.0)):
        x32 = init((64, 1024), np.float32, seed=3, stream=4, **spec)
        x64 = init((64, 1024), np.float64, seed=3, stream=4, **spec)
        assert np.array_equal(x32, x64.astype(np.float32)), spec


@case
def same_seed_and_stream_is_bitwise_identical():
    spec = dict(kind=KAIMING_NORMAL, fan_mode=FAN_IN, gain=math.sqrt(2))
    a = init((64, 32, 3, 3), np.float32, seed=11, stream=12, **spec)
    b = init((64, 32, 3, 3), np.float32, seed=11, stream=12, **spec)
    assert a.tobytes() == b.tobytes()


@case
def different_seed_or_stream_differs():
    base = init((100000,), seed=1, stream=2, kind=NORMAL, mean=0.0, std=1.0)
    for seed, stream in ((2, 2), (1, 3), (1 << 32 | 1, 2), (1, 2 | 1 << 32)):
        other = init((100000,), seed=seed, stream=stream, kind=NORMAL,
                     mean=0.0, std=1.0)
        same = np.mean(base == other)
        if same > 1e-4:
            raise AssertionError(f"seed {seed}, stream {stream}: {same:.2%}"
                                 " of elements equal")


@case
def streams_and_neighbours_are_uncorrelated():
    # |r| of independent samples has standard error 1/sqrt(n) = 0.001.
    def normal(stream, seed=1):
        return init((1000000,), seed=seed, stream=stream, kind=NORMAL,
                    mean=0.0, std=1.0)
    a = normal(fnv1a64(b"layer1.0.conv1.weight"))
    b = normal(fnv1a64(b"layer1.0.conv2.weight"))
    c = normal(fnv1a64(b"layer1.0.conv1.weight"), seed=2)
    for name, x, y in (("streams", a, b), ("seeds", a, c),
                       ("neighbours", a[:-1], a[1:])):
        r = np.corrcoef(x, y)[0, 1]
        if abs(r) > 0.005:
            raise AssertionError(f"{name}: correlation {r:.5f}")


@case
def value_depends_only_on_the_element_index():
    spec = dict(kind=UNIFORM, low=0.0, high=1.0)
    big = init((1000, 1000), seed=5, stream=6, **spec)
    small = init((10,), seed=5, stream=6, **spec)
    reshaped = init((10, 10, 10), seed=5, stream=6, **spec)
    assert np.array_equal(small, big.ravel()[:10])
    assert np.array_equal(reshaped.ravel(), big.ravel()[:1000])


@case
def hash_name_is_fnv1a_64():
    known = {b"": 0xcbf29ce484222325, b"a": 0xaf63dc4c8601ec8c,
             b"foobar": 0x85944171f73967e8}
    for name, value in known.items():
        assert lib.fluid_hash_name(name) == value, name
    for name in (b"conv1.weight", b"layer4.2.bn3.running_var", "\u00e9".encode()):
        assert lib.fluid_hash_name(name) == fnv1a64(name), name


@case
def fan_kinds_need_rank_two():
    for shape in ((10,), ()):
        for kind in (KAIMING_NORMAL, KAIMING_UNIFORM, XAVIER_UNIFORM):
            expect_error(INVALID_ARGUMENT, ["rank >= 2", str(list(shape))],
                         np.zeros(shape), kind=kind, gain=1.0)
    fan_in, fan_out = ctypes.c_int64(), ctypes.c_int64()
    dims = (ctypes.c_int64 * 1)(10)
    assert lib.fluid_init_fans(1, dims, ctypes.byref(fan_in),
                               ctypes.byref(fan_out)) == INVALID_ARGUMENT
    assert "rank >= 2" in lib.fluid_last_error().decode()


@case
def invalid_specs_are_rejected():
    x = np.zeros((4, 4))
    expect_error(UNSUPPORTED, ["F32 or F64", "dtype 2"],
                 np.zeros((4, 4), np.int32), kind=ZEROS)
    expect_error(INVALID_ARGUMENT, ["unknown initializer kind 99"], x,
                 kind=99)
    expect_error(INVALID_ARGUMENT, ["NORMAL", "std must be >= 0"], x,
                 kind=NORMAL, std=-1.0)
    expect_error(INVALID_ARGUMENT, ["NORMAL", "mean must be finite"], x,
                 kind=NORMAL, mean=math.nan, std=1.0)
    expect_error(INVALID_ARGUMENT, ["UNIFORM", "low must be <= high"], x,
                 kind=UNIFORM, low=1.0, high=0.0)
    expect_error(INVALID_ARGUMENT, ["UNIFORM", "high must be finite"], x,
                 kind=UNIFORM, low=0.0, high=math.inf)
    expect_error(INVALID_ARGUMENT, ["KAIMING_UNIFORM", "fan_mode"], x,
                 kind=KAIMING_UNIFORM, fan_mode=7, gain=1.0)
    expect_error(INVALID_ARGUMENT, ["XAVIER_UNIFORM", "gain must be >= 0"], x,
                 kind=XAVIER_UNIFORM, gain=-1.0)
    expect_error(INVALID_ARGUMENT, ["CONSTANT", "value must be finite"], x,
                 kind=CONSTANT, value=math.nan)
    expect_error(INVALID_ARGUMENT, ["beyond the range of F32"],
                 np.zeros(3, np.float32), kind=CONSTANT, value=1e300)


@case
def invalid_tensors_are_rejected():
    t = fluidrt.FluidTensor()
    t.dtype, t.rank, t.shape[0] = 0, 1, 8
    expect_error(INVALID_ARGUMENT, ["data is null", "[8]"], t, kind=ONES)
    t.rank = 9
    expect_error(INVALID_ARGUMENT, ["rank 9"], t, kind=ONES)
    t.rank, t.shape[0] = 1, -3
    expect_error(INVALID_ARGUMENT, ["negative dimension", "[-3]"], t,
                 kind=ONES)


@case
def empty_tensors_are_left_alone():
    t = fluidrt.FluidTensor()  # data NULL, shape (0, 5)
    t.dtype, t.rank, t.shape[0], t.shape[1] = 1, 2, 0, 5
    for kind in (ONES, NORMAL, KAIMING_NORMAL, XAVIER_UNIFORM):
        fluidrt.check(lib, initapi.init_status(lib, t, 1, 0, kind=kind,
                                               std=1.0, gain=1.0))


if __name__ == "__main__":
    sys.exit(cases.main())
