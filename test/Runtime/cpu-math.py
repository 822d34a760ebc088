# RUN: %python %s %fluid_runtime_lib
"""The math kernels of CpuOptimizerKernels.h (neg, exp, log, cos, sqrt,
floor, erf, pow, minimum, maximum, greater_equal, select, cast) against PyTorch
on random inputs, special values (NaN, infinities, zeros), NumPy
broadcasting and rank-0 operands."""

import importlib
import math
import os
import sys
from fractions import Fraction

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")
optimizer = importlib.import_module("cpu-optimizer")
elementwise = importlib.import_module("cpu-elementwise")

UNARY = {"neg": torch.neg, "exp": torch.exp, "log": torch.log,
         "cos": torch.cos, "sqrt": torch.sqrt, "floor": torch.floor,
         "erf": torch.erf}
BINARY = {"pow": torch.pow, "minimum": torch.minimum,
          "maximum": torch.maximum,
          "greater_equal": lambda a, b: torch.ge(a, b).to(a.dtype)}

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5,
           1e-30, 88.0, 1e6]

# (condition, on_true, on_false) shapes for select.
SELECT_SHAPES = [
    ([2, 3, 4], [2, 3, 4], [2, 3, 4]),
    ([2, 3, 4], [4], [3, 1]),
    ([], [2, 3], [2, 1]),
    ([2, 1, 4], [1, 3, 1], []),
    ([3, 1], [], [1, 5]),
    ([], [], []),
    ([0, 3], [3], [1]),
]

CAST_DTYPES = [torch.float32, torch.float64, torch.int32, torch.int64]
DTYPE_NAMES = {torch.float32: "f32", torch.float64: "f64",
               torch.int32: "i32", torch.int64: "i64"}


def unary_input(suite, name, shape, dtype):
    x = suite.randn(*shape, dtype=dtype) * 3
    if name in ("log", "sqrt"):  # keep most of the domain real
        x = x.abs() + 0.01
    return x


def unary_case(suite, dtype, name, shape):
    def body():
        x = unary_input(suite, name, shape, dtype)
        want = UNARY[name](x)
        got = api.empty(want.shape, dtype)
        suite.kernels(f"fluid_cpu_{name}", x, got)
        api.expect_close(got, want)
    return body


def unary_special_case(suite, dtype, name):
    def body():
        x = torch.tensor(SPECIAL, dtype=dtype)
        want = UNARY[name](x)
        got = api.empty(want.shape, dtype)
        suite.kernels(f"fluid_cpu_{name}", x, got)
        api.expect_close(got, want)
    return body


def binary_inputs(suite, name, lhs_shape, rhs_shape, dtype):
    lhs = suite.randn(*lhs_shape, dtype=dtype)
    rhs = suite.randn(*rhs_shape, dtype=dtype)
    if name == "pow":  # positive bases: real powers
        lhs = lhs.abs() + 0.1
        rhs = rhs * 2
    if name == "greater_equal" and lhs.shape == rhs.shape and lhs.numel():
        lhs.view(-1)[::3] = rhs.view(-1)[::3]  # ties
    return lhs, rhs


def binary_case(suite, dtype, name, lhs_shape, rhs_shape):
    def body():
        lhs, rhs = binary_inputs(suite, name, lhs_shape, rhs_shape, dtype)
        want = BINARY[name](lhs, rhs)
        got = api.empty(want.shape, dtype)
        suite.kernels(f"fluid_cpu_{name}", lhs, rhs, got)
        api.expect_close(got, want)
    return body


def binary_special_case(suite, dtype, name):
    """Every pair of special values, including NaN on either side and
    negative bases of pow with integer and fractional exponents."""
    def body():
        values = torch.tensor(SPECIAL + [2.0, 3.0, -3.0], dtype=dtype)
        lhs = values.reshape(-1, 1)
        rhs = values.reshape(1, -1)
        want = BINARY[name](lhs, rhs)
        got = api.empty(want.shape, dtype)
        suite.kernels(f"fluid_cpu_{name}", lhs, rhs, got)
        api.expect_close(got, want)
    return body


def select_case(suite, dtype, cond_shape, true_shape, false_shape):
    def body():
        condition = suite.randn(*cond_shape, dtype=dtype)
        if condition.numel() > 2:
            condition.view(-1)[::2] = 0.0  # false, alternating with true
            condition.view(-1)[1] = math.nan  # NaN is nonzero: true
        on_true = suite.randn(*true_shape, dtype=dtype)
        on_false = suite.randn(*false_shape, dtype=dtype)
        want = torch.where(condition != 0, on_true, on_false)
        got = api.empty(want.shape, dtype)
        suite.kernels("fluid_cpu_select", condition, on_true, on_false, got)
        api.expect_close(got, want)
    return body


def cast_input(suite, source, target):
    """Values of dtype `source` that `target` can represent: fractions of
    both signs (truncated toward zero by a float-to-int cast), large
    magnitudes and the integer range's ends."""
    if source.is_floating_point:
        values = [0.5, -0.5, 0.999, -0.999, -0.0, 2.5]
        if target == torch.int32:
            # The ends of i32's range, exact in f32, and just inside it.
            values += [2147483520.0, -2147483648.0]
            if source == torch.float64:
                values += [2147483647.9, -2147483648.9]
        elif target == torch.int64:
            values += [2.0**62, -2.0**63]
        elif target == torch.float32:
            values += [math.nan, math.inf, 1e300]  # 1e300: overflows to inf
        x = suite.randn(40, dtype=torch.float64) * 1000
        x[:len(values)] = torch.tensor(values, dtype=torch.float64)
        return x.to(source)
    bound = 2**31 if source == torch.int32 or target == torch.int32 else 2**63
    x = suite.randint(2000, 40, dtype=source) - 1000
    x[:2] = torch.tensor([bound - 1, -bound])
    if source == torch.int64 and target.is_floating_point:
        x[2] = 2**53 + 1  # rounds to nearest
    return x


def cast_case(suite, source, target):
    def body():
        x = cast_input(suite, source, target)
        want = x.to(target)
        got = torch.full(x.shape, 7, dtype=target)
        suite.kernels("fluid_cpu_cast", x, got)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    return body


# 16-bit floats: (mantissa bits, least normal exponent, greatest exponent).
FLOAT16_FORMATS = {torch.float16: (10, -14, 15), torch.bfloat16: (7, -126, 127)}
FLOAT16_NAMES = {torch.float16: "f16", torch.bfloat16: "bf16"}


def rounded16(x, dtype):
    """`x` (a Python float or int) rounded to nearest even in a 16-bit
    format, exactly (with Fraction arithmetic, no intermediate rounding):
    the oracle for every conversion to f16 and bf16."""
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return x
    mantissa, emin, emax = FLOAT16_FORMATS[dtype]
    value = Fraction(x)
    sign = -1.0 if value < 0 or (value == 0 and math.copysign(1, x) < 0) \
        else 1.0
    magnitude = abs(value)
    if magnitude == 0:
        return sign * 0.0
    e = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    while Fraction(2) ** e > magnitude:
        e -= 1
    while Fraction(2) ** (e + 1) <= magnitude:
        e += 1
    spacing = Fraction(2) ** (max(e, emin) - mantissa)
    result = round(magnitude / spacing) * spacing  # ties to even
    if result >= Fraction(2) ** (emax + 1):
        return sign * math.inf
    return sign * float(result)


def cast16_values(source, target):
    """Values of `source` for a cast to the 16-bit `target`: ties (which
    go to even), values just off them in f64 (where rounding through f32
    first would tie, then go the wrong way), the largest finite value and
    the overflow threshold, subnormals, zeros, NaN and infinities, random
    values over many magnitudes."""
    mantissa, emin, emax = FLOAT16_FORMATS[target]
    ulp = 2.0 ** -mantissa
    largest = (2 - ulp) * 2.0 ** emax
    values = [1 + ulp / 2, 1 + 1.5 * ulp, -(1 + ulp / 2), 2 + ulp,
              largest, -largest, largest * (1 + ulp / 8),
              (2 - ulp / 2) * 2.0 ** emax, 2.0 ** (emin - mantissa),
              2.0 ** (emin - mantissa - 1), 3 * 2.0 ** (emin - mantissa - 1),
              2.0 ** emin, 0.0, -0.0, 1.0, -2.5, 1e-30, 3e38]
    if source == torch.float64:
        values += [1 + ulp / 2 + 2.0 ** -40, 1 + 1.5 * ulp - 2.0 ** -40,
                   math.nan, math.inf, -math.inf, 1e300, -1e300, 1e-300]
    elif source == torch.float32:
        values += [math.nan, math.inf, -math.inf]
    random = [float(v) * 10.0 ** e for e in range(-9, 9)
              for v in torch.randn(4, dtype=torch.float64,
                                   generator=torch.Generator().manual_seed(e + 20))]
    if source.is_floating_point:
        x = torch.tensor(values + random, dtype=torch.float64).to(source)
        return x, [float(v) for v in x.to(torch.float64)]
    ints = [0, 1, -1, 2049, -2049, 65504, 65519, 65520, 2**24 + 1,
            2**31 - 1, -2**31]
    if source == torch.int64:
        ints += [2**53 + 1, 2**62 + 2**40 + 1, -2**63]
    return torch.tensor(ints, dtype=source), ints


def cast_to16_case(suite, source, target):
    """Any dtype to f16 or bf16 against the exact oracle, bitwise (signed
    zeros and NaN included)."""
    def body():
        x, exact = cast16_values(source, target)
        got = torch.zeros(x.shape, dtype=target)
        suite.kernels("fluid_cpu_cast", x, got)
        want = [rounded16(v, target) for v in exact]
        values = got.to(torch.float64).tolist()
        for i, (g, w) in enumerate(zip(values, want)):
            same = (math.isnan(g) and math.isnan(w)) or (
                g == w and math.copysign(1, g) == math.copysign(1, w))
            assert same, (f"element {i}: {exact[i]!r} became {g!r}, "
                          f"want {w!r}")
        if source.is_floating_point:
            # NaN stays NaN, and quiet.
            bits = got.view(torch.int16).to(torch.int32) & 0xFFFF
            quiet = 0x7E00 if target == torch.float16 else 0x7FC0
            for i, v in enumerate(exact):
                if math.isnan(v):
                    assert bits[i].item() & quiet == quiet, hex(bits[i].item())
    return body


def cast_from16_case(suite, source, target):
    """f16 or bf16 to every dtype: exact widening, truncation toward zero,
    and for a narrower float the oracle's rounding, against PyTorch."""
    def body():
        x = (suite.randn(64, dtype=torch.float64) * 300).to(source)
        x[:6] = torch.tensor([0.5, -0.999, -0.0, 2.5, 65504.0, -1.0])
        if target.is_floating_point:
            x[6:9] = torch.tensor([math.nan, math.inf, -math.inf])
        got = torch.zeros(x.shape, dtype=target)
        suite.kernels("fluid_cpu_cast", x, got)
        if target in FLOAT16_FORMATS:
            want = torch.tensor([rounded16(float(v), target) for v in
                                 x.to(torch.float64)], dtype=target)
        else:
            want = x.to(target)
        np.testing.assert_array_equal(got.to(torch.float64).numpy(),
                                      want.to(torch.float64).numpy())
    return body


def cast16_errors_case(suite):
    """A NaN or an out-of-range 16-bit value cast to an integer is an error
    naming the element; an integer cast to 16 bits is never one."""
    def body():
        x = torch.tensor([1.0, math.nan], dtype=torch.float16)
        status, message = suite.kernels.status(
            "fluid_cpu_cast", x, torch.zeros(2, dtype=torch.int32))
        assert status != 0 and "element 1 is NaN" in message, message
        x = torch.tensor([1.0, 2.0, 3e10], dtype=torch.bfloat16)
        status, message = suite.kernels.status(
            "fluid_cpu_cast", x, torch.zeros(3, dtype=torch.int32))
        assert status != 0 and "element 2" in message and \
            "outside the range of i32" in message, message
    return body


def cast_rank0_case(suite):
    """A step counter to a float learning-rate factor, as a schedule does."""
    def body():
        step = torch.tensor(1234567, dtype=torch.int64)
        got = torch.full((), math.nan, dtype=torch.float32)
        suite.kernels("fluid_cpu_cast", step, got)
        assert got.item() == 1234567.0, got.item()
    return body


def in_place_case(suite, dtype):
    """The output may be the buffer of an input of its shape."""
    def body():
        x = suite.randn(4, 5, dtype=dtype)
        want = torch.exp(x)
        suite.kernels("fluid_cpu_exp", x, x)
        api.expect_close(x, want)
        lhs = suite.randn(3, 4, dtype=dtype).abs() + 0.1
        rhs = suite.randn(4, dtype=dtype)
        want = torch.pow(lhs, rhs)
        suite.kernels("fluid_cpu_pow", lhs, rhs, lhs)
        api.expect_close(lhs, want)
        condition = suite.randn(3, 1, dtype=dtype).sign()
        on_true = suite.randn(3, 4, dtype=dtype)
        on_false = suite.randn(4, dtype=dtype)
        want = torch.where(condition != 0, on_true, on_false)
        suite.kernels("fluid_cpu_select", condition, on_true, on_false,
                      on_true)
        api.expect_close(on_true, want)
        x = suite.randn(6, dtype=dtype)
        want = x.clone()
        suite.kernels("fluid_cpu_cast", x, x)
        api.expect_close(x, want)
    return body


def schedule_case(suite, dtype):
    """Cosine annealing with linear warm-up, as a program computes it from
    the step counter with these kernels, against the closed form."""
    def body():
        base, warmup, total = 0.1, 5.0, 50.0
        steps = torch.arange(0, 60, dtype=torch.int64)

        def k(name, *args, shape=(60,)):
            out = api.empty(shape, dtype)
            suite.kernels(f"fluid_cpu_{name}", *args, out)
            return out

        def c(value):
            return torch.tensor(value, dtype=dtype)

        t = k("cast", steps)
        warm = k("mul", k("div", t, c(warmup)), c(base))
        progress = k("minimum", k("div", k("sub", t, c(warmup)),
                                  c(total - warmup)), c(1.0))
        cosine = k("mul", k("add", k("cos", k("mul", progress, c(math.pi))),
                            c(1.0)), c(base / 2))
        lr = k("select", k("greater_equal", t, c(warmup)), cosine, warm)
        want = torch.tensor(
            [base * s / warmup if s < warmup else
             base / 2 * (1 + math.cos(math.pi * min(
                 (s - warmup) / (total - warmup), 1.0)))
             for s in range(60)], dtype=dtype)
        api.expect_close(lr, want)
    return body


def main():
    suite = optimizer.make_suite(sys.argv)
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for name in UNARY:
            for shape in elementwise.UNARY_SHAPES:
                suite.case(f"{name} {dtype_name} shape {shape}",
                           unary_case(suite, dtype, name, shape))
            suite.case(f"{name} {dtype_name} special values",
                       unary_special_case(suite, dtype, name))
        for name in BINARY:
            for lhs_shape, rhs_shape in elementwise.BROADCAST_SHAPES:
                suite.case(f"{name} {dtype_name} {lhs_shape} with "
                           f"{rhs_shape}",
                           binary_case(suite, dtype, name, lhs_shape,
                                       rhs_shape))
            suite.case(f"{name} {dtype_name} special values",
                       binary_special_case(suite, dtype, name))
        for shapes in SELECT_SHAPES:
            suite.case(f"select {dtype_name} condition {shapes[0]}, on_true "
                       f"{shapes[1]}, on_false {shapes[2]}",
                       select_case(suite, dtype, *shapes))
        suite.case(f"math {dtype_name} in place", in_place_case(suite, dtype))
        suite.case(f"warm-up cosine schedule {dtype_name}",
                   schedule_case(suite, dtype))
    for source in CAST_DTYPES:
        for target in CAST_DTYPES:
            suite.case(f"cast {DTYPE_NAMES[source]} to "
                       f"{DTYPE_NAMES[target]}",
                       cast_case(suite, source, target))
    suite.case("cast i64 rank 0 to f32", cast_rank0_case(suite))
    sources16 = CAST_DTYPES + list(FLOAT16_FORMATS)
    for target in FLOAT16_FORMATS:
        for source in sources16:
            name = DTYPE_NAMES.get(source) or FLOAT16_NAMES[source]
            suite.case(f"cast {name} to {FLOAT16_NAMES[target]}",
                       cast_to16_case(suite, source, target))
    for source in FLOAT16_FORMATS:
        for target in CAST_DTYPES:
            suite.case(f"cast {FLOAT16_NAMES[source]} to "
                       f"{DTYPE_NAMES[target]}",
                       cast_from16_case(suite, source, target))
    suite.case("cast f16 and bf16 to integers: errors",
               cast16_errors_case(suite))
    suite.finish()


if __name__ == "__main__":
    main()
