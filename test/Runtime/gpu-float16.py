# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""f16 and bf16 on the cuda backend against the cpu backend (issue 14).

cast: fluid_cuda_cast between f16, bf16, f32 and f64 must give the cpu's
bits exactly (both round to nearest even from the exact value; NaN only
as NaN, its payload free): halfway cases, subnormals, overflow to
infinity, signed zeros, infinities and NaN among normal values; from
aligned buffers (16-byte vectors, an odd count: a tail) and from buffers
one element past an aligned address (the scalar path). A cast
between a 16-bit type and an integer type is an unsupported error on cuda.

conv2d (with and without bias), conv2d_grad_input, conv2d_grad_filter,
matmul (each transposition, batched) and linear (with bias) in f16 and
bf16: cuDNN and cuBLAS sum in f32 on the tensor cores and round the result
once, as the cpu backend does (f32 on the widened inputs, rounded once), so
the two differ only by the order of the f32 sums; each element must be
within one unit in the last place of the 16-bit type at the cpu's value's
magnitude (2^-10 relative for f16, 2^-7 for bf16), plus 2^-16 of the
output's largest magnitude for the f32 sums' different order (K terms of
at most 2^-24 relative error each: far below that for the sizes here). The
note of each case gives the largest difference in such units.

The elementwise kernels (unary and broadcasting binary arithmetic,
activations and their gradients) in f16 and bf16: both backends widen each
operand to f32, compute in f32 and round once, so the bits must be equal
(NaN only as NaN); sigmoid and tanh and their gradients call the math
library's exp and tanh, whose f32 results may differ by an f32 ulp, so
they must be within one unit in the last place of the 16-bit type. Shapes:
one of 16-byte vectors, a per-channel operand, a scalar, and an odd count
(a scalar tail).

Reductions (mean, reduce_sum, sum_to) of 16-bit inputs, to the input's
type or to f32 (a widening sum): both backends sum the widened values in
double, in different orders, and round once (16-bit outputs through f32),
so an f32 result must be within 1e-6 of the largest |value| of the cpu's
and a 16-bit one within one unit in the last place; the vector column
path (a channels-last mean over H and W), the scalar columns and rows.
An output dtype other than the input's or f32 is the cpu's error.

Max pooling (max_pool2d and max_pool2d_with_indices, NCHW and
channels-last, on the vector path and off it) of f16 and bf16 inputs: a
maximum is exact in any type, so the outputs and the picks must equal the
cpu's bitwise (NaN only as NaN), with ties, NaNs and windows of -inf; its
gradients (max_pool2d_grad and max_pool2d_grad_indices) of 16-bit
grad_output sum the picked terms in double and round once through f32, as
the cpu's f32 kernel and its narrowing do, so they must be bitwise equal
too; average pooling of a 16-bit input stays unsupported on cuda.

Operands of mixed 16-bit and f32 dtypes are errors.

  usage: gpu-float16.py path/to/libfluid_runtime.so
"""

import ctypes
import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "lib"))
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
gpu_pool = importlib.import_module("gpu-pool")

TENSOR = fluidcuda.TENSOR
F16, BF16 = 4, fluidrt.BF16
F32, F64 = 0, 1
CODES = {np.dtype(np.float32): F32, np.dtype(np.float64): F64}
NAMES = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64"}
# Mantissa bits after the point.
MANTISSA = {F16: 10, BF16: 7}


class Half:
    """A host tensor of a 16-bit dtype: its bits as uint16 and its code."""

    def __init__(self, bits, code):
        self.bits = np.require(bits, np.uint16, "C")
        self.code = code

    @property
    def shape(self):
        return self.bits.shape


def desc(array, code=None):
    return ctypes.byref(fluidrt.tensor(array, code))


def cpu_cast(lib, x, out_code, out_dtype):
    """fluid_cpu_cast of `x` (an ndarray or a Half) to `out_code`."""
    src = x.bits if isinstance(x, Half) else x
    src_code = x.code if isinstance(x, Half) else CODES[x.dtype]
    out = np.zeros(src.shape, out_dtype)
    fluidrt.check(lib, lib.fluid_cpu_cast(desc(src, src_code),
                                          desc(out, out_code)))
    return Half(out, out_code) if out_code in (F16, BF16) else out


def to_half(lib, values, code):
    return cpu_cast(lib, np.require(values, np.float32, "C"), code,
                    np.uint16)


def upload(ctx, x):
    if isinstance(x, Half):
        return ctx.upload(x.bits, x.code)
    return ctx.upload(x)


def download(t, code):
    out = t.download()
    return Half(out, code) if code in (F16, BF16) else out


# Elementwise kernels: name -> number of tensor operands (the output
# last), and whether they must match the cpu bitwise.
ELEMENTWISE = {"add": (3, True), "sub": (3, True), "mul": (3, True),
               "div": (3, True), "relu": (2, True), "neg": (2, True),
               "relu_grad": (3, True), "sigmoid": (2, False),
               "tanh": (2, False), "sigmoid_grad": (3, False),
               "tanh_grad": (3, False)}


def set_signatures(lib):
    """cast's and the elementwise kernels' (fluidcuda.load sets the other
    kernels')."""
    for name, tensors in [("cast", 2)] + [
            (op, n) for op, (n, _) in ELEMENTWISE.items()]:
        getattr(lib, "fluid_cpu_" + name).argtypes = [TENSOR] * tensors
        getattr(lib, "fluid_cpu_" + name).restype = ctypes.c_int32
        getattr(lib, "fluid_cuda_" + name).argtypes = \
            [ctypes.c_void_p] + [TENSOR] * tensors
        getattr(lib, "fluid_cuda_" + name).restype = ctypes.c_int32


def special_values(code):
    """Values that test rounding into `code`: halfway cases both ways,
    subnormals, overflow, signed zeros, infinities, NaN."""
    m = MANTISSA.get(code, 10)
    ulp = 2.0 ** -m
    values = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan,
              1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + 2.0 ** -30,
              -(1 + ulp / 2), 65504.0, 65520.0, 65519.0, 1e6, -1e6,
              2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -14 * 0.75,
              1e-30, -1e-30, 3.0e38, 1e-40, 2.0 ** -133, 2.0 ** -134]
    return np.array(values)


def bitwise_equal(got, want):
    """Equal bits, except that a NaN may be any NaN."""
    g = widen_bits(got) if isinstance(got, Half) else got
    w = widen_bits(want) if isinstance(want, Half) else want
    nan = np.isnan(w)
    if not np.array_equal(np.isnan(g), nan):
        return False
    gb = got.bits if isinstance(got, Half) else got.view(
        np.uint32 if got.dtype == np.float32 else np.uint64)
    wb = want.bits if isinstance(want, Half) else want.view(
        np.uint32 if want.dtype == np.float32 else np.uint64)
    return np.array_equal(gb[~nan], wb[~nan])


def widen_bits(h):
    """The float32 values of a Half, in NumPy (f16 natively; bf16 as the
    high half of an f32)."""
    if h.code == F16:
        return h.bits.view(np.float16).astype(np.float32)
    return (h.bits.astype(np.uint32) << 16).view(np.float32)


def cast_case(suite, ctx, source, target):
    lib = suite.lib

    def body():
        values = np.concatenate([special_values(target if target in MANTISSA
                                                else source),
                                 suite.randn(4000) * 30])
        if source in (F16, BF16):
            x = to_half(lib, values.astype(np.float32), source)
        else:
            dtype = np.float32 if source == F32 else np.float64
            with np.errstate(over="ignore"):
                x = values.astype(dtype)
        out_dtype = (np.uint16 if target in (F16, BF16) else
                     np.float32 if target == F32 else np.float64)
        want = cpu_cast(lib, x, target, out_dtype)
        dx = upload(ctx, x)
        out = ctx.upload(np.full(x.shape, 0x7E7E if out_dtype == np.uint16
                                 else 7, out_dtype), target)
        ctx("cast", dx, out)
        got = download(out, target)
        if not bitwise_equal(got, want):
            g = widen_bits(got) if isinstance(got, Half) else got
            w = widen_bits(want) if isinstance(want, Half) else want
            bad = np.flatnonzero(~((g == w) | (np.isnan(g) & np.isnan(w))))
            i = bad[0]
            xi = widen_bits(x)[i] if isinstance(x, Half) else x[i]
            raise AssertionError(f"{len(bad)} elements differ; first at "
                                 f"{i}: input {xi!r}, cuda {g[i]!r}, cpu "
                                 f"{w[i]!r}")
        dx.free()
        out.free()
        return f"{x.shape[0]} values bitwise equal"
    return body


class View:
    """Elements [1:] of a rank-1 device tensor: a pointer one element past
    an aligned one, so that the cast takes its unaligned path."""

    def __init__(self, tensor):
        self.desc = fluidrt.FluidTensor()
        ctypes.pointer(self.desc)[0] = tensor.desc
        self.desc.data = tensor.pointer + tensor.dtype.itemsize
        self.desc.shape[0] = tensor.shape[0] - 1


def unaligned_cast_case(suite, ctx, source, target):
    lib = suite.lib

    def body():
        x = to_half(lib, suite.randn(1001) * 30, source) if source in MANTISSA \
            else suite.randn(1001, dtype=np.float32) * 30
        tail = Half(x.bits[1:], source) if isinstance(x, Half) else \
            np.require(x[1:], requirements="C")
        out_dtype = np.uint16 if target in MANTISSA else np.float32
        want = cpu_cast(lib, tail, target, out_dtype)
        dx = upload(ctx, x)
        out = ctx.upload(np.zeros(1001, out_dtype), target)
        src_view, out_view = View(dx), View(out)
        ctx("cast", ctypes.byref(src_view.desc), ctypes.byref(out_view.desc))
        got = download(out, target)
        got_tail = Half(got.bits[1:], target) if isinstance(got, Half) \
            else got[1:]
        if not bitwise_equal(got_tail, want):
            raise AssertionError("the unaligned cast differs from the cpu's")
        dx.free()
        out.free()
        return "1000 values bitwise equal"
    return body


def integer_cast_case(suite, ctx, code):
    def body():
        x = np.arange(10, dtype=np.int32)
        dx = ctx.upload(x)
        out = ctx.upload(np.zeros(10, np.uint16), code)
        status, message = ctx.status("cast", dx, out)
        fluidcuda.expect_status(suite.lib, status, fluidcuda.UNSUPPORTED,
                                ["cast between i32 and " + NAMES[code],
                                 "not supported on cuda"])
        dx.free()
        out.free()
    return body


def ulps(got, want, code):
    """The largest |got - want| in units of the 16-bit type's last place at
    |want| (at least the smallest normal's), less the f32 order allowance."""
    g, w = widen_bits(got), widen_bits(want)
    if not (np.isfinite(g).all() and np.isfinite(w).all()):
        raise AssertionError("non-finite results")
    scale = np.float64(np.abs(w).max()) if w.size else 1.0
    m = MANTISSA[code]
    smallest = 2.0 ** -14 if code == F16 else 2.0 ** -126
    unit = np.maximum(np.abs(w.astype(np.float64)), smallest) * 2.0 ** -m
    excess = np.abs(g.astype(np.float64) - w) - scale * 2.0 ** -16
    return float(np.max(np.maximum(excess, 0) / unit)) if w.size else 0.0


def expect_within_ulp(got, want, code, what):
    worst = ulps(got, want, code)
    if worst > 1.0:
        raise AssertionError(f"{what}: {worst:.2f} units in the last place "
                             "from the cpu's (at most 1)")
    return worst


CONVS = [
    # (name, input shape, out channels, kernel, strides, padding, groups,
    #  bias)
    ("3x3 p1", [4, 16, 14, 14], 32, [3, 3], [1, 1], [1, 1, 1, 1], 1, True),
    ("1x1 s2", [4, 32, 14, 14], 64, [1, 1], [2, 2], [0, 0, 0, 0], 1, False),
    ("7x7 s2 p3 stem", [2, 3, 32, 32], 16, [7, 7], [2, 2], [3, 3, 3, 3], 1,
     False),
    ("grouped 3x3", [2, 32, 9, 9], 32, [3, 3], [1, 1], [1, 1, 1, 1], 8, True),
    ("asymmetric padding", [2, 8, 10, 9], 8, [3, 3], [2, 2], [0, 1, 1, 0], 1,
     False),
]


def out_size(extent, before, after, kernel, stride):
    return (extent + before + after - kernel) // stride + 1


def conv_case(suite, ctx, code, shape, out_channels, kernel, strides,
              padding, groups, with_bias):
    lib = suite.lib

    def body():
        n, c, h, w = shape
        fan_in = (c // groups) * kernel[0] * kernel[1]
        x = to_half(lib, suite.randn(*shape), code)
        f = to_half(lib, suite.randn(out_channels, c // groups, *kernel,
                                     scale=fan_in ** -0.5), code)
        b = to_half(lib, suite.randn(out_channels), code) if with_bias \
            else None
        out_shape = (n, out_channels,
                     out_size(h, padding[0], padding[2], kernel[0],
                              strides[0]),
                     out_size(w, padding[1], padding[3], kernel[1],
                              strides[1]))
        gy = to_half(lib, suite.randn(*out_shape), code)
        params = fluidcuda.Conv2dParams(strides, padding, [1, 1], groups)
        notes = []
        for op, ins, out_like in [
                ("conv2d", [x, f, b], out_shape),
                ("conv2d_grad_input", [gy, f], shape),
                ("conv2d_grad_filter", [gy, x], f.shape)]:
            want = np.zeros(out_like, np.uint16)
            args = [desc(a.bits, a.code) if a is not None else None
                    for a in ins]
            fluidrt.check(lib, getattr(lib, "fluid_cpu_" + op)(
                *args, desc(want, code), ctypes.byref(params)))
            dins = [upload(ctx, a) if a is not None else None for a in ins]
            out = ctx.upload(np.full(out_like, 0x7E00, np.uint16), code)
            ctx(op, *dins, out, ctypes.byref(params))
            got = download(out, code)
            notes.append(f"{op} {expect_within_ulp(got, Half(want, code), code, op):.2f}")
            for t in dins + [out]:
                if t is not None:
                    t.free()
        return "ulps: " + ", ".join(notes)
    return body


MATMULS = [
    # (name, lhs shape, rhs shape, transpose_lhs, transpose_rhs)
    ("plain", [64, 96], [96, 80], False, False),
    ("transpose lhs", [96, 64], [96, 80], True, False),
    ("transpose rhs", [64, 96], [80, 96], False, True),
    ("batched", [3, 17, 40], [3, 40, 9], False, False),
]


def matmul_case(suite, ctx, code, lhs_shape, rhs_shape, t_lhs, t_rhs):
    lib = suite.lib

    def body():
        a = to_half(lib, suite.randn(*lhs_shape), code)
        b = to_half(lib, suite.randn(*rhs_shape), code)
        m = lhs_shape[-1] if t_lhs else lhs_shape[-2]
        n = rhs_shape[-2] if t_rhs else rhs_shape[-1]
        out_shape = tuple(lhs_shape[:-2]) + (m, n)
        params = fluidcuda.MatmulParams(int(t_lhs), int(t_rhs))
        want = np.zeros(out_shape, np.uint16)
        fluidrt.check(lib, lib.fluid_cpu_matmul(
            desc(a.bits, code), desc(b.bits, code), desc(want, code),
            ctypes.byref(params)))
        da, db = upload(ctx, a), upload(ctx, b)
        out = ctx.upload(np.full(out_shape, 0x7E00, np.uint16), code)
        ctx("matmul", da, db, out, ctypes.byref(params))
        worst = expect_within_ulp(download(out, code), Half(want, code),
                                  code, "matmul")
        for t in (da, db, out):
            t.free()
        return f"ulps: {worst:.2f}"
    return body


def linear_case(suite, ctx, code):
    lib = suite.lib

    def body():
        x = to_half(lib, suite.randn(32, 128), code)
        w = to_half(lib, suite.randn(10, 128, scale=128 ** -0.5), code)
        b = to_half(lib, suite.randn(10), code)
        want = np.zeros((32, 10), np.uint16)
        fluidrt.check(lib, lib.fluid_cpu_linear(
            desc(x.bits, code), desc(w.bits, code), desc(b.bits, code),
            desc(want, code)))
        dx, dw, dbias = upload(ctx, x), upload(ctx, w), upload(ctx, b)
        out = ctx.upload(np.full((32, 10), 0x7E00, np.uint16), code)
        ctx("linear", dx, dw, dbias, out)
        worst = expect_within_ulp(download(out, code), Half(want, code),
                                  code, "linear")
        for t in (dx, dw, dbias, out):
            t.free()
        return f"ulps: {worst:.2f}"
    return body


def elementwise_case(suite, ctx, code, op, shapes):
    """fluid_cuda_<op> against fluid_cpu_<op> on 16-bit operands of
    `shapes` (the output's is their broadcast)."""
    lib = suite.lib
    tensors, exact = ELEMENTWISE[op]

    def body():
        out_shape = np.broadcast_shapes(*shapes)
        operands = []
        for k, shape in enumerate(shapes):
            values = suite.randn(*shape) * 3
            if op == "div" and k == 1:
                values = np.where(np.abs(values) < 0.1, 0.5, values)
            if op in ("sigmoid_grad", "tanh_grad") and k == 1:
                values = np.tanh(values)  # an output of the activation
            operands.append(to_half(lib, values, code))
        want = np.zeros(out_shape, np.uint16)
        fluidrt.check(lib, getattr(lib, "fluid_cpu_" + op)(
            *[desc(x.bits, code) for x in operands], desc(want, code)))
        device = [upload(ctx, x) for x in operands]
        out = ctx.upload(np.full(out_shape, 0x7E7E, np.uint16), code)
        ctx(op, *device, out)
        got, want = download(out, code), Half(want, code)
        for t in device + [out]:
            t.free()
        if exact:
            if not bitwise_equal(got, want):
                g, w = widen_bits(got), widen_bits(want)
                bad = np.flatnonzero(~((g == w) | (np.isnan(g) & np.isnan(w))))
                raise AssertionError(f"{len(bad)} of {g.size} elements differ;"
                                     f" first at {bad[0]}: cuda "
                                     f"{g.flat[bad[0]]!r}, cpu "
                                     f"{w.flat[bad[0]]!r}")
            return f"{got.bits.size} elements bitwise equal"
        return f"ulps: {expect_within_ulp(got, want, code, op):.2f}"
    return body


ELEMENTWISE_SHAPES = [
    ("same shape", lambda n: [[2, 64, 8, 8]] * n),
    ("per-channel", lambda n: [[2, 64, 8, 8], [64, 1, 1]] + [[2, 64, 8, 8]]
     * (n - 2)),
    ("scalar", lambda n: [[2, 64, 8, 8], []]),
    ("odd count", lambda n: [[1001]] * n),
]


# (name, op, input shape, the reduced axes or sum_to's output shape)
REDUCTIONS = [
    ("[N,H,W,C] over H, W (vector columns)", "mean", [4, 7, 7, 64], [1, 2]),
    ("over the batch, 7 columns (scalar columns)", "reduce_sum", [30, 7],
     [0]),
    ("rows", "mean", [6, 300], [1]),
    ("to [N,1,1,C]", "sum_to", [4, 7, 7, 64], [4, 1, 1, 64]),
]


def set_reduce_signatures(lib):
    for backend, context in (("cpu", []), ("cuda", [ctypes.c_void_p])):
        for op in ("mean", "reduce_sum"):
            f = getattr(lib, f"fluid_{backend}_{op}")
            f.argtypes = context + [TENSOR, TENSOR,
                                    ctypes.POINTER(fluidcuda.ReduceParams)]
            f.restype = ctypes.c_int32
        f = getattr(lib, f"fluid_{backend}_sum_to")
        f.argtypes = context + [TENSOR, TENSOR]
        f.restype = ctypes.c_int32


def reduce_call(op, shape, arg):
    """The output shape and the extra arguments of a reduction."""
    if op == "sum_to":
        return list(arg), []
    axes = list(arg) + [0] * (fluidrt.FLUID_MAX_RANK - len(arg))
    params = fluidcuda.ReduceParams(axes, len(arg), 0)
    return [d for i, d in enumerate(shape) if i not in arg], \
        [ctypes.byref(params)]


def reduce_case(suite, ctx, code, op, shape, arg, out_code):
    """fluid_cuda_<op> against fluid_cpu_<op> on a 16-bit input of
    `shape`, the output of `out_code` (the input's, or F32)."""
    lib = suite.lib

    def body():
        x = to_half(lib, suite.randn(*shape) * 3 + 0.5, code)
        out_shape, extra = reduce_call(op, shape, arg)
        out_dtype = np.float32 if out_code == F32 else np.uint16
        want = np.zeros(out_shape, out_dtype)
        fluidrt.check(lib, getattr(lib, "fluid_cpu_" + op)(
            desc(x.bits, code), desc(want, out_code), *extra))
        dx = upload(ctx, x)
        out = ctx.upload(np.zeros(out_shape, out_dtype),
                         None if out_code == F32 else out_code)
        ctx(op, dx, out, *extra)
        got = out.download()
        for t in (dx, out):
            t.free()
        if out_code == F32:
            worst = float(np.abs(got.astype(np.float64) - want).max() /
                          np.abs(want).max())
            if worst > 1e-6:
                raise AssertionError(f"{worst:.3g} of the largest |value| "
                                     "from the cpu's (at most 1e-6)")
            return f"{worst:.3g} of the largest |value|"
        return "ulps: %.2f" % expect_within_ulp(
            Half(got, code), Half(want, code), code, op)
    return body


def reduce_dtype_error_case(suite, ctx):
    """A bf16 mean into f64: the cpu's error on both backends."""
    lib = suite.lib

    def body():
        x = to_half(lib, suite.randn(2, 3, 4), BF16)
        out_shape, extra = reduce_call("mean", [2, 3, 4], [1])
        want = np.zeros(out_shape, np.float64)
        cpu_status = lib.fluid_cpu_mean(desc(x.bits, BF16), desc(want, F64),
                                        *extra)
        dx = upload(ctx, x)
        out = ctx.upload(np.zeros(out_shape, np.float64))
        status, message = ctx.status("mean", dx, out, *extra)
        for t in (dx, out):
            t.free()
        if cpu_status == fluidcuda.OK or status != cpu_status:
            raise AssertionError(f"cuda status {status} ({message!r}), cpu "
                                 f"{cpu_status}: expected the same error")
        return message
    return body


def set_pool_signatures(lib):
    for op in ("max_pool2d", "max_pool2d_with_indices", "max_pool2d_grad",
               "max_pool2d_grad_indices", "avg_pool2d"):
        argtypes = gpu_pool.harness.SIGNATURES[op]
        getattr(lib, "fluid_cpu_" + op).argtypes = argtypes
        getattr(lib, "fluid_cpu_" + op).restype = ctypes.c_int32
        getattr(lib, "fluid_cuda_" + op).argtypes = [ctypes.c_void_p] + \
            argtypes
        getattr(lib, "fluid_cuda_" + op).restype = ctypes.c_int32


# (name, NCHW input shape, kernel, strides, padding, dilation, ceil): the
# stem's windows (the channels-last vector path: C a multiple of 8), odd
# channels (one a thread), dilation and ceil mode.
POOLS = [
    ("3x3 s2 p1 C=16", [2, 16, 13, 12], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 0),
    ("stem 3x3 s2 p1 C=64", [2, 64, 16, 16], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 0),
    ("2x2 s2 C=8", [2, 8, 10, 9], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0),
    ("3x3 s2 p1 C=5", [2, 5, 9, 9], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0),
    ("2x3 dilation 2x3 ceil C=8", [1, 8, 13, 14], [2, 3], [2, 2],
     [1, 0, 0, 2], [2, 3], 1),
]


def max_pool_case(suite, ctx, code, window, channels_last, values):
    """fluid_cuda_max_pool2d and _with_indices against the cpu's on a
    16-bit input, outputs and picks bitwise; then the gradients of a 16-bit
    grad_output, max_pool2d_grad (from the input) and
    max_pool2d_grad_indices (from the cuda picks), bitwise the cpu's."""
    lib = suite.lib
    _, shape, kernel, strides, padding, dilation, ceil = window

    def body():
        params = gpu_pool.nhwc_params(kernel, strides, padding, dilation,
                                      ceil, int(channels_last))
        out = gpu_pool.output_shape(shape, kernel, strides, padding,
                                    dilation, ceil)
        in_shape = shape
        if channels_last:
            in_shape, out = gpu_pool.nhwc_shape(shape), \
                gpu_pool.nhwc_shape(out)
        x = to_half(lib, gpu_pool.pool_input(suite, in_shape, np.float32,
                                             values) * 3, code)
        want = np.zeros(out, np.uint16)
        want_picks = np.zeros(out, np.uint8)
        fluidrt.check(lib, lib.fluid_cpu_max_pool2d_with_indices(
            desc(x.bits, code), desc(want, code), desc(want_picks), params))
        dx = upload(ctx, x)
        got = ctx.upload(np.full(out, 0x7E7E, np.uint16), code)
        picks = ctx.upload(np.full(out, 77, np.uint8))
        plain = ctx.upload(np.full(out, 0x7E7E, np.uint16), code)
        ctx("max_pool2d_with_indices", dx, got, picks, params)
        ctx("max_pool2d", dx, plain, params)
        # Gradients: several windows pick one cell where windows overlap,
        # so sums of up to four terms, rounded once.
        g = to_half(lib, suite.randn(*out) * 3, code)
        want_grad = np.zeros(in_shape, np.uint16)
        fluidrt.check(lib, lib.fluid_cpu_max_pool2d_grad(
            desc(g.bits, code), desc(x.bits, code), desc(want_grad, code),
            params))
        want_from_picks = np.zeros(in_shape, np.uint16)
        fluidrt.check(lib, lib.fluid_cpu_max_pool2d_grad_indices(
            desc(g.bits, code), desc(want_picks), desc(want_from_picks, code),
            params))
        dg = upload(ctx, g)
        grad = ctx.upload(np.full(in_shape, 0x7E7E, np.uint16), code)
        from_picks = ctx.upload(np.full(in_shape, 0x7E7E, np.uint16), code)
        ctx("max_pool2d_grad", dg, dx, grad, params)
        ctx("max_pool2d_grad_indices", dg, picks, from_picks, params)
        results = [download(got, code), picks.download(),
                   download(plain, code), download(grad, code),
                   download(from_picks, code)]
        for t in (dx, got, picks, plain, dg, grad, from_picks):
            t.free()
        want = Half(want, code)
        for name, result, expected in (
                ("output", results[0], want),
                ("max_pool2d's output", results[2], want),
                ("max_pool2d_grad", results[3], Half(want_grad, code)),
                ("max_pool2d_grad_indices", results[4],
                 Half(want_from_picks, code))):
            if not bitwise_equal(result, expected):
                g_, w_ = widen_bits(result), widen_bits(expected)
                bad = np.flatnonzero(~((g_ == w_) |
                                       (np.isnan(g_) & np.isnan(w_))))
                raise AssertionError(
                    f"{name}: {len(bad)} of {g_.size} differ from the cpu's; "
                    f"first at {bad[0]}: cuda {g_.flat[bad[0]]!r}, cpu "
                    f"{w_.flat[bad[0]]!r}")
        if not np.array_equal(results[1], want_picks):
            bad = np.flatnonzero(results[1] != want_picks)
            raise AssertionError(f"{len(bad)} picks differ from the cpu's")
        return f"{want.bits.size} maxima and picks, " \
            f"{results[3].bits.size} gradients bitwise equal"
    return body


def avg_pool_unsupported_case(suite, ctx, code):
    def body():
        x = upload(ctx, to_half(suite.lib, suite.randn(1, 1, 4, 4), code))
        out = ctx.upload(np.zeros((1, 1, 2, 2), np.uint16), code)
        params = gpu_pool.harness.AvgPool2dParams([2, 2], [2, 2],
                                                  [0, 0, 0, 0], 0, 1)
        status, message = ctx.status("avg_pool2d", x, out,
                                     ctypes.byref(params))
        try:
            fluidcuda.expect_status(suite.lib, status, fluidcuda.UNSUPPORTED,
                                    ["input", NAMES[code]])
        finally:
            for t in (x, out):
                t.free()
        return message
    return body


def mixed_dtype_case(suite, ctx):
    def body():
        x = to_half(suite.lib, suite.randn(1, 2, 5, 5), BF16)
        f = suite.randn(2, 2, 3, 3, dtype=np.float32)
        dx, df = upload(ctx, x), ctx.upload(f)
        out = ctx.upload(np.zeros((1, 2, 3, 3), np.uint16), BF16)
        params = fluidcuda.Conv2dParams([1, 1], [0, 0, 0, 0], [1, 1], 1)
        status, _ = ctx.status("conv2d", dx, df, None, out,
                               ctypes.byref(params))
        fluidcuda.expect_status(suite.lib, status,
                                fluidcuda.INVALID_ARGUMENT, ["filter"])
        for t in (dx, df, out):
            t.free()
    return body


def main():
    suite = fluidcuda.Suite(sys.argv)
    set_signatures(suite.lib)
    set_reduce_signatures(suite.lib)
    set_pool_signatures(suite.lib)
    with fluidcuda.Context(suite.lib) as ctx:
        for source in (F32, F64, F16, BF16):
            for target in (F16, BF16, F32, F64):
                if source == target or (source in (F32, F64) and
                                        target in (F32, F64)):
                    continue
                suite.case(f"cast {NAMES[source]} -> {NAMES[target]}",
                           cast_case(suite, ctx, source, target))
        for source, target in ((F32, BF16), (F16, F32), (BF16, F16)):
            suite.case(f"cast {NAMES[source]} -> {NAMES[target]} unaligned",
                       unaligned_cast_case(suite, ctx, source, target))
        for code in (F16, BF16):
            suite.case(f"cast i32 -> {NAMES[code]} unsupported",
                       integer_cast_case(suite, ctx, code))
        for code in (F16, BF16):
            for name, *conv in CONVS:
                suite.case(f"conv2d {NAMES[code]} {name}",
                           conv_case(suite, ctx, code, *conv))
            for name, *mm in MATMULS:
                suite.case(f"matmul {NAMES[code]} {name}",
                           matmul_case(suite, ctx, code, *mm))
            suite.case(f"linear {NAMES[code]} with bias",
                       linear_case(suite, ctx, code))
            for op, (tensors, _) in ELEMENTWISE.items():
                binary = op in ("add", "sub", "mul", "div")
                for name, shapes in ELEMENTWISE_SHAPES:
                    if not binary and name in ("per-channel", "scalar"):
                        continue
                    suite.case(f"{op} {NAMES[code]} {name}", elementwise_case(
                        suite, ctx, code, op, shapes(tensors - 1)))
            for window in POOLS:
                for layout in (False, True):
                    for values in (False, True, None, "infinities"):
                        kind = {False: "random", True: "ties", None: "NaNs",
                                "infinities": "infinities"}[values]
                        suite.case(
                            f"max pooling {NAMES[code]} "
                            f"{'NHWC' if layout else 'NCHW'} {window[0]} "
                            f"{kind}", max_pool_case(suite, ctx, code, window,
                                                     layout, values))
            suite.case(f"avg_pool2d {NAMES[code]} unsupported",
                       avg_pool_unsupported_case(suite, ctx, code))
            for name, op, shape, arg in REDUCTIONS:
                for out_code in (code, F32):
                    suite.case(f"{op} {NAMES[code]} -> {NAMES[out_code]} "
                               f"{name}", reduce_case(suite, ctx, code, op,
                                                      shape, arg, out_code))
        suite.case("mean bf16 -> f64 is an error",
                   reduce_dtype_error_case(suite, ctx))
        suite.case("conv2d bf16 input with f32 filter",
                   mixed_dtype_case(suite, ctx))
    suite.finish()


if __name__ == "__main__":
    main()
