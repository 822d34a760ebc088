# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's pooling kernels against the cpu kernels: max_pool2d
and avg_pool2d and their gradients with overlapping and disjoint windows,
ceil_mode (with PyTorch's dropped last window), asymmetric padding,
dilation (max), count_include_pad on and off (avg), a 1x1 kernel, a
window as large as the padded input, NaN inputs and ties (the pick of
max pooling's gradient), and ResNet's stem and a large plane.

Max pooling's row-tile kernels (a tile of rows of a plane per block)
get planes of several tiles whose boundaries fall on odd rows, with
padding at both ends, ceil mode, rows no window reads, kernels covered
by one, two or more windows per axis, plane offsets not 16-byte aligned,
and a tensor of more than 2^31 elements (small planes: plane offsets
need 64 bits, offsets inside a plane do not), whose first and last
planes are checked.

The fixed-window kernels (3x3 stride 2 and 2x2 stride 2, dilation 1: a
thread per window, the gradient's cells owned by window) get odd and even
extents, padding 0, 1 and 2 and asymmetric, ceil mode, cells no window
covers at the end of an axis (their gradient must be written as 0), one
window along an axis, planes of several row tiles and of several column
tiles (rows of more than 64 windows), odd plane sizes (2-element stores
not aligned), and inputs of mostly -inf (windows whose every tap is -inf
pick their first tap inside the input) besides ties and NaNs.

max_pool2d_with_indices and max_pool2d_grad_indices (the picks saved as
u8 offsets in the window; the gradient gathers from them) get the same
geometries, inputs and checks, plus a kernel of 256 cells (the most u8
offsets name): the cuda output and indices bitwise the cpu's, the output
bitwise fluid_cpu_max_pool2d's, and the cuda gradient from the cuda
indices bitwise the cpu's from them and fluid_cpu_max_pool2d_grad's from
the input. The gradient's fixed-window gather (3x3 and 2x2 stride 2, 2 x
4 cells a thread) gets FIXED's odd widths (16-byte stores not aligned,
rows ending inside a thread's cells), odd heights and uncovered cells.

Channels last (channels_last = 1: [N,H,W,C] tensors and indices): the
four max pooling kernels on the geometries above (ResNet's stem
included) and on channel counts that take the 16-byte vector path (a
multiple of 4 f32 or 2 f64) or one channel a thread (odd counts, 6 in
f32), ties, NaNs and windows of -inf; max_pool2d_grad with a kernel of
more than 256 cells (its picks as int64 in the workspace); a gradient of
more than 2^31 elements (64-bit indices), whose first and last channels
are checked. Each is bitwise the cpu's channels-last kernel, and the
cuda gradient from the cuda indices bitwise the cpu's from the input.

The forwards walk the cpu's taps in its order and the gradients gather,
adding in the cpu's order, so f64 and f32 results are expected bitwise
equal: max pooling's must be, average pooling's are checked at f64 rtol
1e-12 and f32 rtol 1e-5 (the note of each case says whether they were).
Errors get the cpu backend's messages.
"""

import ctypes
import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
harness = importlib.import_module("gpu-elementwise")
fluidcuda = harness.fluidcuda
Out, run_both = harness.Out, harness.run_both
MaxPool2dParams = harness.MaxPool2dParams
AvgPool2dParams = harness.AvgPool2dParams

# (name, input shape, kernel, strides, padding [t,l,b,r], dilation, ceil).
WINDOWS = [
    ("3x3 s2 p1", [2, 3, 9, 9], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0),
    ("2x2 s2", [2, 3, 8, 8], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0),
    ("3x3 s1 overlapping", [1, 2, 7, 6], [3, 3], [1, 1], [0, 0, 0, 0],
     [1, 1], 0),
    ("ceil_mode", [2, 2, 10, 11], [3, 3], [2, 2], [0, 0, 0, 0], [1, 1], 1),
    ("ceil_mode dropped window", [1, 2, 5, 5], [2, 2], [2, 2], [1, 1, 1, 1],
     [1, 1], 1),
    ("asymmetric padding", [2, 3, 8, 7], [3, 2], [2, 1], [0, 1, 2, 0],
     [1, 1], 0),
    ("asymmetric ceil", [1, 3, 9, 8], [3, 3], [3, 2], [2, 0, 1, 1], [1, 1],
     1),
    ("stride > kernel", [2, 2, 11, 11], [2, 2], [3, 3], [0, 0, 0, 0],
     [1, 1], 0),
    ("1x1 s2", [2, 4, 7, 7], [1, 1], [2, 2], [0, 0, 0, 0], [1, 1], 0),
    ("whole padded input", [1, 2, 4, 5], [6, 7], [1, 1], [1, 1, 1, 1],
     [1, 1], 0),
    ("non-square", [3, 2, 6, 13], [2, 5], [1, 3], [1, 2, 1, 2], [1, 1], 0),
    ("resnet stem", [8, 64, 112, 112], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1],
     0),
    ("large plane", [1, 1, 1000, 1000], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 1),
]
# Max pooling only: dilation.
DILATED = [
    ("dilation 2", [2, 3, 11, 11], [3, 3], [1, 1], [2, 2, 2, 2], [2, 2], 0),
    ("dilation 2x3 ceil", [1, 2, 13, 14], [2, 3], [2, 2], [1, 0, 0, 2],
     [2, 3], 1),
]
# Max pooling only: planes of several row tiles (about 4096 input cells
# per gradient tile, 1024 outputs per forward tile), tile boundaries on
# odd rows, plane sizes odd (plane offsets not 16-byte aligned).
TILED = [
    ("tiles 3x3 s2 ceil", [2, 3, 301, 33], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 1),
    ("tiles asymmetric padding", [1, 2, 257, 100], [3, 3], [2, 2],
     [0, 1, 2, 0], [1, 1], 0),
    ("tiles 3x3 s1", [1, 3, 150, 64], [3, 3], [1, 1], [1, 1, 1, 1],
     [1, 1], 0),
    ("tiles 2x2 s2", [2, 2, 130, 64], [2, 2], [2, 2], [0, 0, 0, 0], [1, 1],
     0),
    ("tiles stride > kernel", [1, 2, 200, 51], [2, 2], [3, 3],
     [1, 0, 0, 1], [1, 1], 1),
    ("tiles 5x4 s2x3", [1, 2, 203, 41], [5, 4], [2, 3], [2, 1, 2, 3],
     [1, 1], 1),
    ("tiles dilation 2", [1, 2, 203, 41], [3, 3], [2, 2], [2, 2, 2, 2],
     [2, 2], 1),
    ("tiles wide rows", [1, 2, 40, 3001], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 0),
]


# Max pooling only: the fixed-window kernels' edges (KernelsPool.cu).
FIXED = [
    ("fixed 3x3 s2 p1 odd", [2, 3, 113, 111], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 0),
    ("fixed 3x3 s2 p0 uncovered", [1, 3, 112, 130], [3, 3], [2, 2],
     [0, 0, 0, 0], [1, 1], 0),
    ("fixed 3x3 s2 ceil column tiles", [1, 2, 31, 131], [3, 3], [2, 2],
     [0, 0, 0, 0], [1, 1], 1),
    ("fixed 3x3 s2 p1 ceil", [2, 2, 20, 21], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 1),
    ("fixed 3x3 s2 asymmetric", [1, 2, 17, 16], [3, 3], [2, 2],
     [2, 0, 1, 1], [1, 1], 0),
    ("fixed 3x3 s2 one column", [2, 2, 9, 1], [3, 3], [2, 2], [1, 1, 1, 1],
     [1, 1], 0),
    ("fixed 3x3 s2 row tiles", [1, 1, 1201, 3], [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], 1),
    ("fixed 2x2 s2 p1 odd", [2, 2, 9, 7], [2, 2], [2, 2], [1, 1, 1, 1],
     [1, 1], 0),
    ("fixed 2x2 s2 ceil odd", [1, 2, 7, 9], [2, 2], [2, 2], [0, 0, 0, 0],
     [1, 1], 1),
    ("fixed 2x2 s2 floor odd", [1, 2, 7, 9], [2, 2], [2, 2], [0, 0, 0, 0],
     [1, 1], 0),
    ("fixed 2x2 s2 column tiles", [1, 2, 20, 260], [2, 2], [2, 2],
     [0, 1, 0, 1], [1, 1], 0),
]


def out_size(extent, before, after, kernel, stride, dilation, ceil):
    room = extent + before + after - dilation * (kernel - 1) - 1
    steps = -(-room // stride) if ceil else room // stride
    if ceil and steps > 0 and steps * stride >= extent + before:
        steps -= 1
    return steps + 1


def output_shape(shape, kernel, strides, padding, dilation, ceil):
    return [shape[0], shape[1],
            out_size(shape[2], padding[0], padding[2], kernel[0], strides[0],
                     dilation[0], ceil),
            out_size(shape[3], padding[1], padding[3], kernel[1], strides[1],
                     dilation[1], ceil)]


def pool_input(h, shape, dtype, ties):
    if ties == "infinities":  # mostly -inf: windows of -inf only
        values = np.array([-np.inf] * 5 + [1.0, np.nan], dtype=dtype)
        return h.rng.choice(values, size=shape)
    if ties:  # few distinct values: equal maxima in most windows
        return np.array(h.rng.integers(-2, 3, size=shape), dtype=dtype)
    x = h.randn(*shape, dtype=dtype)
    if ties is None and x.size > 20:  # NaNs
        x.reshape(-1)[::17] = np.nan
    return x


def max_case(h, window, dtype, ties=False):
    _, shape, kernel, strides, padding, dilation, ceil = window

    def body():
        params = MaxPool2dParams(kernel, strides, padding, dilation, ceil)
        out = output_shape(shape, kernel, strides, padding, dilation, ceil)
        x = pool_input(h, shape, dtype, ties)
        g = h.randn(*out, dtype=dtype)
        results = run_both(h, "max_pool2d", x, Out(out, dtype), params)
        results += run_both(h, "max_pool2d_grad", g, x, Out(shape, dtype),
                            params)
        note = harness.compare(results)
        if note != "bitwise equal":
            raise AssertionError(f"max pooling {note}, not bitwise equal")
        return note
    return body


# Indices only: the largest kernel whose offsets fit in u8, and wide
# rows of the fixed-window gather.
INDEXED = [
    ("kernel of 256 cells", [1, 2, 20, 21], [16, 16], [1, 2], [1, 0, 0, 1],
     [1, 1], 0),
    ("gather 3x3 s2 p1 wide odd rows", [1, 2, 9, 1001], [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], 1),
]


def indices_case(h, window, dtype, ties=False):
    _, shape, kernel, strides, padding, dilation, ceil = window

    def body():
        params = MaxPool2dParams(kernel, strides, padding, dilation, ceil)
        out = output_shape(shape, kernel, strides, padding, dilation, ceil)
        x = pool_input(h, shape, dtype, ties)
        g = h.randn(*out, dtype=dtype)
        forward = run_both(h, "max_pool2d_with_indices", x, Out(out, dtype),
                           Out(out, np.uint8), params)
        plain = np.empty(out, dtype)
        fluidcuda.cpu(h.lib, "max_pool2d", x, plain, params)
        if not harness.bitwise_equal(forward[0][0], plain):
            raise AssertionError("cpu output differs from max_pool2d's")
        cuda_indices = forward[1][1]
        backward = run_both(h, "max_pool2d_grad_indices", g, cuda_indices,
                            Out(shape, dtype), params)
        from_input = np.empty(shape, dtype)
        fluidcuda.cpu(h.lib, "max_pool2d_grad", g, x, from_input, params)
        if not harness.bitwise_equal(backward[0][1], from_input):
            raise AssertionError("cuda gradient from the indices differs "
                                 "from the cpu's from the input")
        note = harness.compare(forward + backward)
        if note != "bitwise equal":
            raise AssertionError(f"max pooling with indices {note}, not "
                                 "bitwise equal")
        return note
    return body


# More elements than 32-bit offsets reach.
LARGE_ELEMENTS = 1 << 31


def large_tensor_case(h):
    """3x3 s2 p1 over 9x9 planes, 2^31 + 1 elements or more in all:
    zeros but the first and last planes, which are compared with the
    cpu's (bitwise, f32). Needs 23 GB of device memory."""
    dtype, side, edge = np.float32, 9, 3

    def body():
        channels = -(-LARGE_ELEMENTS // (2 * side * side)) + 1
        shape = [2, channels, side, side]
        planes = 2 * channels
        params = MaxPool2dParams([3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0)
        out = output_shape(shape, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0)
        ctx, lib = h.ctx, h.lib
        x = fluidcuda.DeviceTensor(ctx, shape, dtype)
        g = fluidcuda.DeviceTensor(ctx, out, dtype)
        y = fluidcuda.DeviceTensor(ctx, out, dtype)
        gx = fluidcuda.DeviceTensor(ctx, shape, dtype)
        try:
            xs = pool_input(h, [2 * edge, side, side], dtype, None)
            gs = h.randn(2 * edge, out[2], out[3], dtype=dtype)

            def edges(t, array=None):
                """Writes `array` into, or reads, the first and last
                `edge` planes of t."""
                plane = t.nbytes // planes
                host = np.empty((2 * edge,) + t.shape[2:], dtype) \
                    if array is None else np.ascontiguousarray(array)
                for k, first in enumerate([0, planes - edge]):
                    device = t.pointer + first * plane
                    piece = host[k * edge:(k + 1) * edge]
                    if array is None:
                        ctx.check(lib.fluid_cuda_copy_to_host(
                            ctx.handle, piece.ctypes.data, device,
                            edge * plane))
                    else:
                        ctx.check(lib.fluid_cuda_copy_to_device(
                            ctx.handle, device, piece.ctypes.data,
                            edge * plane))
                return host
            for t, array in [(x, xs), (g, gs)]:
                ctx.check(lib.fluid_cuda_memset_zero(ctx.handle, t.pointer,
                                                     t.nbytes))
                edges(t, array)
            ctx("max_pool2d", x, y, params)
            ctx("max_pool2d_grad", g, x, gx, params)
            got = [edges(y), edges(gx)]
        finally:
            for t in (x, g, y, gx):
                t.free()
        cpu_x = xs.reshape([1, 2 * edge, side, side])
        want_y = np.empty([1, 2 * edge] + out[2:], dtype)
        want_gx = np.empty_like(cpu_x)
        fluidcuda.cpu(lib, "max_pool2d", cpu_x, want_y, params)
        fluidcuda.cpu(lib, "max_pool2d_grad",
                      gs.reshape(want_y.shape), cpu_x, want_gx, params)
        for name, want, have in [("output", want_y, got[0]),
                                 ("grad_input", want_gx, got[1])]:
            if not harness.bitwise_equal(have.reshape(want.shape), want):
                raise AssertionError(f"{name} of the edge planes differs")
        return f"{planes * side * side:,} elements, bitwise equal"
    return body


class LayoutParams(harness.Params):
    """fluid_max_pool2d_params with its last field, channels_last; the
    harness's MaxPool2dParams stops before it (passing 0 in the tail
    padding the field takes)."""
    _fields_ = MaxPool2dParams._fields_ + [("channels_last", harness.I32)]


def nhwc_params(kernel, strides, padding, dilation, ceil, channels_last=1):
    """Channels-last params, as the entry points' declared argument."""
    params = LayoutParams(kernel, strides, padding, dilation, ceil,
                          channels_last)
    return ctypes.cast(ctypes.pointer(params),
                       ctypes.POINTER(MaxPool2dParams))


def nhwc_shape(shape):
    n, c, h, w = shape
    return [n, h, w, c]


# Channels last: channel counts on and off the vector path (a multiple of
# 4 f32 or 2 f64 takes 16 bytes a thread).
NHWC = [
    ("nhwc 3x3 s2 p1 C=64 odd sizes", [2, 64, 17, 15], [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], 0),
    ("nhwc 3x3 s2 p1 C=8 even sizes", [3, 8, 16, 14], [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], 0),
    ("nhwc 2x2 s2 ceil C=8", [3, 8, 9, 7], [2, 2], [2, 2], [0, 0, 0, 0],
     [1, 1], 1),
    ("nhwc 3x3 s1 C=6", [2, 6, 8, 9], [3, 3], [1, 1], [1, 1, 1, 1], [1, 1],
     0),
    ("nhwc 1x1 s2 C=12", [2, 12, 7, 7], [1, 1], [2, 2], [0, 0, 0, 0],
     [1, 1], 0),
    ("nhwc 3x2 asymmetric C=5", [2, 5, 8, 7], [3, 2], [2, 1], [0, 1, 2, 0],
     [1, 1], 0),
    ("nhwc dilation 2x3 ceil C=4", [1, 4, 13, 14], [2, 3], [2, 2],
     [1, 0, 0, 2], [2, 3], 1),
    ("nhwc stride > kernel C=2", [2, 2, 11, 11], [2, 2], [3, 3],
     [0, 0, 0, 0], [1, 1], 0),
]
# Channels last without saved picks only: a kernel of more than 256 cells.
NHWC_LARGE_KERNEL = [
    ("nhwc kernel of 272 cells C=4", [1, 4, 20, 21], [16, 17], [1, 2],
     [1, 0, 0, 1], [1, 1], 0),
    ("nhwc kernel of 272 cells C=3", [2, 3, 17, 19], [17, 16], [2, 1],
     [0, 0, 0, 0], [1, 1], 1),
]


def nhwc_case(h, window, dtype, ties=False, indices=True):
    """The channels-last kernels, cuda against cpu, bitwise; with
    `indices`, max_pool2d_with_indices and max_pool2d_grad_indices too."""
    _, shape, kernel, strides, padding, dilation, ceil = window

    def body():
        params = nhwc_params(kernel, strides, padding, dilation, ceil)
        in_shape = nhwc_shape(shape)
        out = nhwc_shape(output_shape(shape, kernel, strides, padding,
                                      dilation, ceil))
        x = pool_input(h, in_shape, dtype, ties)
        g = h.randn(*out, dtype=dtype)
        results = run_both(h, "max_pool2d", x, Out(out, dtype), params)
        results += run_both(h, "max_pool2d_grad", g, x, Out(in_shape, dtype),
                            params)
        if indices:
            forward = run_both(h, "max_pool2d_with_indices", x,
                               Out(out, dtype), Out(out, np.uint8), params)
            backward = run_both(h, "max_pool2d_grad_indices", g,
                                forward[1][1], Out(in_shape, dtype), params)
            if not harness.bitwise_equal(backward[0][1], results[1][0]):
                raise AssertionError("cuda gradient from the indices differs "
                                     "from the cpu's from the input")
            results += forward + backward
        note = harness.compare(results)
        if note != "bitwise equal":
            raise AssertionError(f"channels-last max pooling {note}, not "
                                 "bitwise equal")
        return note
    return body


def large_nhwc_case(h):
    """3x3 s2 p1 over [1, 3, 3, C] with 9 * C > 2^31 (the gradient's
    64-bit indices, 16-byte vectors): zeros but the first and last
    `edge` channels of every pixel, which are compared with the cpu's on
    those channels alone (bitwise, f32). Needs 26 GB of device memory."""
    dtype, side, edge = np.float32, 3, 8
    channels = -(-LARGE_ELEMENTS // (side * side * 4)) * 4 + 4

    def body():
        shape = [1, side, side, channels]
        out = nhwc_shape(output_shape([1, channels, side, side], [3, 3],
                                      [2, 2], [1, 1, 1, 1], [1, 1], 0))
        params = nhwc_params([3, 3], [2, 2], [1, 1, 1, 1], [1, 1], 0)
        ctx, lib = h.ctx, h.lib
        tensors = [fluidcuda.DeviceTensor(ctx, shape, dtype),
                   fluidcuda.DeviceTensor(ctx, out, dtype),
                   fluidcuda.DeviceTensor(ctx, out, dtype),
                   fluidcuda.DeviceTensor(ctx, out, np.uint8),
                   fluidcuda.DeviceTensor(ctx, shape, dtype)]
        x, g, y, picks, gx = tensors
        try:
            xs = pool_input(h, shape[:3] + [2 * edge], dtype, None)
            gs = h.randn(*out[:3], 2 * edge, dtype=dtype)

            def edges(t, array=None):
                """Writes `array` ([..., 2 * edge]) into, or reads, the
                first and last `edge` channels of every pixel of t."""
                item = t.dtype.itemsize
                host = np.empty(tuple(t.shape[:3]) + (2 * edge,), t.dtype) \
                    if array is None else np.ascontiguousarray(array)
                for pixel in np.ndindex(*t.shape[:3]):
                    base = t.pointer + int(np.ravel_multi_index(
                        pixel, t.shape[:3])) * channels * item
                    for k, first in enumerate([0, channels - edge]):
                        piece = np.ascontiguousarray(
                            host[pixel][k * edge:(k + 1) * edge])
                        device = base + first * item
                        if array is None:
                            ctx.check(lib.fluid_cuda_copy_to_host(
                                ctx.handle, piece.ctypes.data, device,
                                piece.nbytes))
                            host[pixel][k * edge:(k + 1) * edge] = piece
                        else:
                            ctx.check(lib.fluid_cuda_copy_to_device(
                                ctx.handle, device, piece.ctypes.data,
                                piece.nbytes))
                return host
            for t, array in [(x, xs), (g, gs)]:
                ctx.check(lib.fluid_cuda_memset_zero(ctx.handle, t.pointer,
                                                     t.nbytes))
                edges(t, array)
            ctx("max_pool2d_with_indices", x, y, picks, params)
            ctx("max_pool2d_grad_indices", g, picks, gx, params)
            got = [edges(y), edges(picks), edges(gx)]
        finally:
            for t in tensors:
                t.free()
        want_y = np.empty(out[:3] + [2 * edge], dtype)
        want_picks = np.empty(out[:3] + [2 * edge], np.uint8)
        want_gx = np.empty_like(xs)
        fluidcuda.cpu(lib, "max_pool2d_with_indices", xs, want_y, want_picks,
                      params)
        fluidcuda.cpu(lib, "max_pool2d_grad_indices", gs, want_picks,
                      want_gx, params)
        for name, want, have in [("output", want_y, got[0]),
                                 ("indices", want_picks, got[1]),
                                 ("grad_input", want_gx, got[2])]:
            if not harness.bitwise_equal(have, want):
                raise AssertionError(f"{name} of the edge channels differs")
        return f"{side * side * channels:,} elements, bitwise equal"
    return body


def avg_case(h, window, dtype, count_include_pad):
    _, shape, kernel, strides, padding, _, ceil = window

    def body():
        params = AvgPool2dParams(kernel, strides, padding, ceil,
                                 int(count_include_pad))
        out = output_shape(shape, kernel, strides, padding, [1, 1], ceil)
        x = h.randn(*shape, dtype=dtype)
        g = h.randn(*out, dtype=dtype)
        results = run_both(h, "avg_pool2d", x, Out(out, dtype), params)
        results += run_both(h, "avg_pool2d_grad", g, Out(shape, dtype),
                            params)
        return harness.compare(results)
    return body


def error_cases(h):
    f64 = np.float64
    x = np.ones((1, 1, 4, 4), f64)
    good = MaxPool2dParams([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)
    cases = {
        "rank": ("max_pool2d", np.ones((4, 4)), Out((2, 2), f64), good),
        "output shape": ("max_pool2d", x, Out((1, 1, 3, 3), f64), good),
        "null params": ("max_pool2d", x, Out((1, 1, 2, 2), f64), None),
        "kernel 0": ("max_pool2d", x, Out((1, 1, 2, 2), f64),
                     MaxPool2dParams([0, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)),
        "negative padding": ("max_pool2d", x, Out((1, 1, 2, 2), f64),
                             MaxPool2dParams([2, 2], [2, 2], [0, -1, 0, 0],
                                             [1, 1], 0)),
        "window larger than input": (
            "max_pool2d", x, Out((1, 1, 1, 1), f64),
            MaxPool2dParams([5, 5], [1, 1], [0, 0, 0, 0], [1, 1], 0)),
        "window over padding only": (
            "max_pool2d", x, Out((1, 1, 4, 4), f64),
            MaxPool2dParams([1, 1], [2, 2], [2, 2, 2, 2], [1, 1], 0)),
        "avg window over padding only": (
            "avg_pool2d", x, Out((1, 1, 4, 4), f64),
            AvgPool2dParams([1, 1], [2, 2], [2, 2, 2, 2], 0, 0)),
        "integer input": ("avg_pool2d", np.ones((1, 1, 4, 4), np.int32),
                          Out((1, 1, 2, 2), np.int32),
                          AvgPool2dParams([2, 2], [2, 2], [0, 0, 0, 0], 0, 1)),
        "grad shape": ("max_pool2d_grad", np.ones((1, 1, 3, 3)), x,
                       Out((1, 1, 4, 4), f64), good),
        "grad_input shape": ("max_pool2d_grad", np.ones((1, 1, 2, 2)), x,
                             Out((1, 1, 4, 5), f64), good),
        "avg grad dtype": ("avg_pool2d_grad",
                           np.ones((1, 1, 2, 2), np.float32),
                           Out((1, 1, 4, 4), f64),
                           AvgPool2dParams([2, 2], [2, 2], [0, 0, 0, 0], 0,
                                           1)),
        "indices dtype": ("max_pool2d_with_indices", x,
                          Out((1, 1, 2, 2), f64), Out((1, 1, 2, 2), np.int32),
                          good),
        "indices shape": ("max_pool2d_with_indices", x,
                          Out((1, 1, 2, 2), f64), Out((1, 1, 2, 3), np.uint8),
                          good),
        "grad indices dtype": ("max_pool2d_grad_indices",
                               np.ones((1, 1, 2, 2)),
                               np.zeros((1, 1, 2, 2), np.float32),
                               Out((1, 1, 4, 4), f64), good),
        "grad indices shape": ("max_pool2d_grad_indices",
                               np.ones((1, 1, 2, 2)),
                               np.zeros((1, 1, 3, 2), np.uint8),
                               Out((1, 1, 4, 4), f64), good),
        "grad indices kernel of more than 256 cells": (
            "max_pool2d_grad_indices", np.ones((1, 1, 1, 1)),
            np.zeros((1, 1, 1, 1), np.uint8), Out((1, 1, 16, 17), f64),
            MaxPool2dParams([16, 17], [1, 1], [0, 0, 0, 0], [1, 1], 0)),
        "global_avg_pool dtype": ("global_avg_pool", x,
                                  Out((1, 1, 1, 1), np.float32)),
        "channels_last 2": ("max_pool2d", x, Out((1, 2, 2, 1), f64),
                            nhwc_params([2, 2], [2, 2], [0, 0, 0, 0],
                                        [1, 1], 0, channels_last=2)),
        "NHWC output given channels first": (
            "max_pool2d", np.ones((1, 4, 4, 3)), Out((1, 3, 2, 2), f64),
            nhwc_params([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)),
        "NHWC grad indices given channels first": (
            "max_pool2d_grad_indices", np.ones((1, 2, 2, 3)),
            np.zeros((1, 3, 2, 2), np.uint8), Out((1, 4, 4, 3), f64),
            nhwc_params([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)),
        "NHWC grad_input shape": (
            "max_pool2d_grad", np.ones((1, 2, 2, 2)), np.ones((1, 4, 4, 2)),
            Out((1, 2, 4, 4), f64),
            nhwc_params([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)),
    }
    for name, (op, *args) in cases.items():
        h.case(f"error {op}: {name}",
               lambda op=op, args=args: harness.expect_same_error(h, op,
                                                                  *args))


def main():
    h = harness.Harness(sys.argv)
    for mode, dtype in harness.FLOATS:
        for window in WINDOWS + DILATED + TILED + FIXED:
            h.case(f"max_pool2d {mode} {window[0]} {window[1]}",
                   max_case(h, window, dtype))
        for window in WINDOWS[:6] + TILED + FIXED:
            h.case(f"max_pool2d {mode} {window[0]} ties",
                   max_case(h, window, dtype, ties=True))
            h.case(f"max_pool2d {mode} {window[0]} NaNs",
                   max_case(h, window, dtype, ties=None))
            h.case(f"max_pool2d {mode} {window[0]} infinities",
                   max_case(h, window, dtype, ties="infinities"))
        for window in WINDOWS + DILATED + TILED + FIXED + INDEXED:
            h.case(f"max_pool2d_with_indices {mode} {window[0]} {window[1]}",
                   indices_case(h, window, dtype))
        for window in WINDOWS[:6] + TILED + FIXED + INDEXED:
            for kind, ties in [("ties", True), ("NaNs", None),
                               ("infinities", "infinities")]:
                h.case(f"max_pool2d_with_indices {mode} {window[0]} {kind}",
                       indices_case(h, window, dtype, ties=ties))
        for window in WINDOWS + DILATED + INDEXED + NHWC:
            h.case(f"channels-last max pooling {mode} {window[0]} "
                   f"{nhwc_shape(window[1])}", nhwc_case(h, window, dtype))
        for window in WINDOWS[:6] + FIXED[:2] + NHWC:
            for kind, ties in [("ties", True), ("NaNs", None),
                               ("infinities", "infinities")]:
                h.case(f"channels-last max pooling {mode} {window[0]} {kind}",
                       nhwc_case(h, window, dtype, ties=ties))
        for window in NHWC_LARGE_KERNEL:
            h.case(f"channels-last max pooling {mode} {window[0]} (int64 "
                   "picks)", nhwc_case(h, window, dtype, indices=False))
        for window in WINDOWS:
            for include in [False, True]:
                h.case(f"avg_pool2d {mode} {window[0]} {window[1]} "
                       f"count_include_pad={int(include)}",
                       avg_case(h, window, dtype, include))
    h.case("max_pool2d f32 more than 2^31 elements", large_tensor_case(h))
    h.case("channels-last max_pool2d_grad_indices f32 more than 2^31 "
           "elements", large_nhwc_case(h))
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
