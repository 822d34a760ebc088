# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_max_pool2d_grad and fluid_cpu_avg_pool2d_grad against PyTorch
autograd, and against central finite differences of fluid_cpu_max_pool2d
and fluid_cpu_avg_pool2d, on the window geometries of cpu-pool.py and a few
more.

The oracle is PyTorch's autograd where PyTorch expresses the pooling
(symmetric padding, or asymmetric padding through F.pad without ceil_mode),
otherwise autograd through cpu-pool.py's `spec_pool`, which cpu-pool.py
checks against PyTorch. Max pooling is also checked on inputs with ties
(PyTorch's cpu rule: the first maximum in row-major window order) and with
NaNs (a NaN wins, the last one of a window if several), against PyTorch
only: the spec reference's amax splits the gradient of a tie.

fluid_cpu_max_pool2d_with_indices and fluid_cpu_max_pool2d_grad_indices
(the picks saved as u8 offsets in the window) on the same geometries and
on inputs with ties, NaNs and windows of -inf only: the output bitwise
fluid_cpu_max_pool2d's, the indices those of `spec_indices` below (a
transcription of the rule) and, where PyTorch expresses the pooling and
no window is -inf only, PyTorch's max_pool2d(return_indices=True) turned
into window offsets; the gradient from the indices bitwise
fluid_cpu_max_pool2d_grad's from the input (the same sums in the same
order), and close to PyTorch's autograd.

Channels last (channels_last = 1, [N,H,W,C] tensors and indices):
fluid_cpu_max_pool2d_grad and fluid_cpu_max_pool2d_grad_indices bitwise
the NCHW kernels on the transposed tensors (each cell's sum in the same
order), on cpu-pool.py's NHWC geometries and the ones above, in f32, f64,
bf16 and f16, with ties, NaNs and windows of -inf; and the sums-order
case with several channels.
"""

import importlib
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
grad_api = importlib.import_module("cpu-grad-api")
pool = importlib.import_module("cpu-pool")
api = grad_api.api

# (name, input shape, kernel, strides, padding [t,l,b,r], dilation, ceil)
MAX_CASES = pool.MAX_CASES + [
    ("3x3 stride1 overlapping windows", [2, 3, 7, 8], [3, 3], [1, 1],
     [1, 1, 1, 1], [1, 1], False),
    ("stride3 skips cells", [1, 2, 11, 10], [2, 2], [3, 3], [0, 0, 0, 0],
     [1, 1], False),
]

# (name, input shape, kernel, strides, padding [t,l,b,r], ceil)
AVG_CASES = pool.AVG_CASES + [
    ("3x3 stride1 overlapping windows", [2, 2, 6, 7], [3, 3], [1, 1],
     [1, 1, 1, 1], False),
    ("2x2 stride3 skips cells batch1", [1, 3, 10, 8], [2, 2], [3, 3],
     [0, 0, 0, 0], False),
]


def torch_expresses(padding, ceil):
    return pool.is_symmetric(padding) or not ceil


def max_input(suite, kind, shape, dtype):
    if kind == "ties":
        return suite.randint(3, *shape).to(dtype)
    x = suite.randn(*shape, dtype=dtype)
    if kind == "nan":
        # Two NaNs next to each other: mostly in one window.
        x.view(-1)[5] = float("nan")
        x.view(-1)[6] = float("nan")
    return x


def distinct_input(suite, shape):
    """Values at least 0.01 apart, so that a finite-difference step never
    changes which cell of a window is the maximum."""
    numel = torch.Size(shape).numel()
    order = torch.randperm(numel, generator=suite.generator)
    return (order.to(torch.float64) * 0.01).reshape(shape)


def out_shape(shape, kernel, strides, padding, dilation, ceil):
    n, c, h, w = shape
    return [n, c,
            pool.spec_out_size(h, padding[0], padding[2], kernel[0],
                               strides[0], dilation[0], ceil),
            pool.spec_out_size(w, padding[1], padding[3], kernel[1],
                               strides[1], dilation[1], ceil)]


def max_forward(suite, x, params, shape):
    out = api.empty(shape, x.dtype)
    suite.kernels("fluid_cpu_max_pool2d", x, out, params)
    return out


def max_grad(suite, r, x, params):
    got = api.empty(x.shape, x.dtype)
    suite.kernels("fluid_cpu_max_pool2d_grad", r, x, got, params)
    return got


def max_torch_case(suite, dtype, kind, shape, kernel, strides, padding,
                   dilation, ceil):
    def body():
        x = max_input(suite, kind, shape, dtype)
        if torch_expresses(padding, ceil):
            def reference(x):
                return pool.torch_max_pool(x, kernel, strides, padding,
                                           dilation, ceil)
        else:
            def reference(x):
                return pool.spec_pool(x, "max", kernel, strides, padding,
                                      dilation, ceil)
        r = suite.randn(*reference(x).shape, dtype=dtype)
        (want,) = grad_api.torch_grads(reference, [x], r)
        params = api.MaxPool2dParams(kernel, strides, padding, dilation,
                                     int(ceil))
        # A gradient sent to another cell of the window would differ by
        # O(1), far above the tolerance.
        api.expect_close(max_grad(suite, r, x, params), want)
    return body


def max_fd_case(suite, shape, kernel, strides, padding, dilation, ceil):
    def body():
        params = api.MaxPool2dParams(kernel, strides, padding, dilation,
                                     int(ceil))
        pooled = out_shape(shape, kernel, strides, padding, dilation, ceil)
        x = distinct_input(suite, shape)
        r = suite.randn(*pooled)
        grad_api.finite_difference_check(
            suite, lambda x: grad_api.projection(
                max_forward(suite, x, params, pooled), r),
            x, max_grad(suite, r, x, params))
    return body


def spec_indices(x, kernel, strides, padding, dilation, ceil):
    """Each window's pick as its offset ky * KW + kx in the window: the
    first maximum of the taps inside the input in row-major order (strict
    >), replaced by every NaN; the first tap inside if all are -inf."""
    n, c, h, w = x.shape
    top, left = padding[0], padding[1]
    out_h, out_w = out_shape(x.shape, kernel, strides, padding, dilation,
                             ceil)[2:]
    values = x.numpy()
    picks = np.zeros((n, c, out_h, out_w), np.uint8)
    for oh in range(out_h):
        for ow in range(out_w):
            taps = [(ky, kx) for ky in range(kernel[0])
                    for kx in range(kernel[1])
                    if 0 <= oh * strides[0] - top + ky * dilation[0] < h and
                    0 <= ow * strides[1] - left + kx * dilation[1] < w]
            for plane in np.ndindex(n, c):
                best, pick = -np.inf, taps[0]
                for ky, kx in taps:
                    v = values[plane + (oh * strides[0] - top +
                                        ky * dilation[0],
                                        ow * strides[1] - left +
                                        kx * dilation[1])]
                    if v > best or np.isnan(v):
                        best, pick = v, (ky, kx)
                picks[plane + (oh, ow)] = pick[0] * kernel[1] + pick[1]
    return torch.from_numpy(picks)


def torch_window_offsets(x, kernel, strides, padding, dilation, ceil):
    """PyTorch's picks (flat indices in the plane, padded by F.pad where the
    padding is asymmetric) as offsets in the window."""
    top, left, bottom, right = padding
    if pool.is_symmetric(padding):
        _, flat = F.max_pool2d(x, kernel, strides, padding[:2], dilation,
                               ceil_mode=ceil, return_indices=True)
        width, shift_y, shift_x = x.shape[3], top, left
    else:
        padded = F.pad(x, (left, right, top, bottom), value=float("-inf"))
        _, flat = F.max_pool2d(padded, kernel, strides, 0, dilation,
                               return_indices=True)
        width, shift_y, shift_x = padded.shape[3], 0, 0
    oh = torch.arange(flat.shape[2]).view(1, 1, -1, 1)
    ow = torch.arange(flat.shape[3]).view(1, 1, 1, -1)
    ky = (flat // width - oh * strides[0] + shift_y) // dilation[0]
    kx = (flat % width - ow * strides[1] + shift_x) // dilation[1]
    return (ky * kernel[1] + kx).to(torch.uint8)


def with_indices(suite, x, params, shape):
    out = api.empty(shape, x.dtype)
    picks = torch.full(tuple(shape), 255, dtype=torch.uint8)
    suite.kernels("fluid_cpu_max_pool2d_with_indices", x, out, picks, params)
    return out, picks


def grad_indices(suite, r, picks, shape, params):
    got = api.empty(shape, r.dtype)
    suite.kernels("fluid_cpu_max_pool2d_grad_indices", r, picks, got, params)
    return got


def expect_bitwise(got, want, what):
    if not np.array_equal(got.numpy().view(np.uint8),
                          want.numpy().view(np.uint8)):
        raise AssertionError(f"{what} is not bitwise equal")


def indices_case(suite, dtype, kind, shape, kernel, strides, padding,
                 dilation, ceil):
    def body():
        if kind == "infinities":  # windows of -inf only, a few NaNs
            values = torch.tensor([float("-inf")] * 6 + [1.0, float("nan")],
                                  dtype=dtype)
            x = values[suite.randint(len(values), *shape)]
        else:
            x = max_input(suite, kind, shape, dtype)
        params = api.MaxPool2dParams(kernel, strides, padding, dilation,
                                     int(ceil))
        pooled = out_shape(shape, kernel, strides, padding, dilation, ceil)
        y, picks = with_indices(suite, x, params, pooled)
        expect_bitwise(y, max_forward(suite, x, params, pooled),
                       "output vs fluid_cpu_max_pool2d")
        want = spec_indices(x, kernel, strides, padding, dilation, ceil)
        if not torch.equal(picks, want):
            raise AssertionError(f"indices {picks.flatten().tolist()} != "
                                 f"spec {want.flatten().tolist()}")
        geometry = (kernel, strides, padding, dilation, ceil)
        expressed = torch_expresses(padding, ceil)
        if expressed and kind != "infinities":
            if not torch.equal(picks, torch_window_offsets(x, *geometry)):
                raise AssertionError("indices differ from PyTorch's")
        r = suite.randn(*pooled, dtype=dtype)
        got = grad_indices(suite, r, picks, shape, params)
        expect_bitwise(got, max_grad(suite, r, x, params),
                       "grad_input vs fluid_cpu_max_pool2d_grad")
        if expressed and kind != "infinities":
            (grad,) = grad_api.torch_grads(
                lambda x: pool.torch_max_pool(x, *geometry), [x], r)
            api.expect_close(got, grad)
    return body


def sums_order_case(suite):
    """Three windows that pick one cell, whose f32 gradients sum to a
    different float in any other order or precision than the cpu's (in
    double, in row-major window order, rounded once)."""
    def body():
        x = torch.zeros(1, 1, 3, 3)
        x[0, 0, 1, 1] = 1.0  # every 2x2 stride-1 window picks the centre
        r = torch.tensor([[[[1.0, 2.0**-24], [2.0**-24, 0.0]]]])
        params = api.MaxPool2dParams([2, 2], [1, 1], [0, 0, 0, 0], [1, 1], 0)
        _, picks = with_indices(suite, x, params, [1, 1, 2, 2])
        got = grad_indices(suite, r, picks, [1, 1, 3, 3], params)
        # f32 left to right: (1 + 2^-24) + 2^-24 = 1; in double: 1 + 2^-23.
        if float(got[0, 0, 1, 1]) != 1.0 + 2.0**-23:
            raise AssertionError(f"centre {float(got[0, 0, 1, 1])!r}")
        expect_bitwise(got, max_grad(suite, r, x, params),
                       "grad_input vs fluid_cpu_max_pool2d_grad")
    return body


def nhwc_grad_case(suite, dtype, kind, shape, kernel, strides, padding,
                   dilation, ceil):
    def body():
        x = pool.max_pool_input(suite, shape, dtype, kind)
        geometry = (kernel, strides, padding, dilation, ceil)
        nchw = pool.MaxPool2dParams(*geometry[:4], int(ceil), 0).arg()
        last = pool.MaxPool2dParams(*geometry[:4], int(ceil), 1).arg()
        pooled = pool.pooled_shape(shape, *geometry)
        r = suite.randn(*pooled).to(dtype)
        y = api.empty(pooled, dtype)
        picks = torch.full(tuple(pooled), 255, dtype=torch.uint8)
        suite.kernels("fluid_cpu_max_pool2d_with_indices", x, y, picks, nchw)
        want = api.empty(shape, dtype)
        suite.kernels("fluid_cpu_max_pool2d_grad", r, x, want, nchw)
        nhwc = pool.nhwc
        got = api.empty(nhwc(want).shape, dtype)
        suite.kernels("fluid_cpu_max_pool2d_grad", nhwc(r), nhwc(x), got,
                      last)
        if pool.bits(got) != pool.bits(nhwc(want)):
            raise AssertionError("NHWC max_pool2d_grad differs from NCHW")
        got = api.empty(got.shape, dtype)
        suite.kernels("fluid_cpu_max_pool2d_grad_indices", nhwc(r),
                      nhwc(picks), got, last)
        if pool.bits(got) != pool.bits(nhwc(want)):
            raise AssertionError("NHWC max_pool2d_grad_indices differs from "
                                 "NCHW max_pool2d_grad")
    return body


def nhwc_sums_order_case(suite):
    """sums_order_case with two channels (the second's gradients scaled),
    channels last: each cell's sum in double, in window order."""
    def body():
        x = torch.zeros(1, 3, 3, 2)
        x[0, 1, 1, :] = 1.0
        r = torch.tensor([[[[1.0, 2.0], [2.0**-24, 2.0**-23]],
                           [[2.0**-24, 2.0**-23], [0.0, 0.0]]]])
        params = pool.MaxPool2dParams([2, 2], [1, 1], [0, 0, 0, 0], [1, 1],
                                      0, 1).arg()
        picks = torch.full((1, 2, 2, 2), 255, dtype=torch.uint8)
        suite.kernels("fluid_cpu_max_pool2d_with_indices", x,
                      api.empty([1, 2, 2, 2], torch.float32), picks, params)
        got = api.empty([1, 3, 3, 2], torch.float32)
        suite.kernels("fluid_cpu_max_pool2d_grad_indices", r, picks, got,
                      params)
        centre = got[0, 1, 1].tolist()
        if centre != [1.0 + 2.0**-23, 2.0 + 2.0**-22]:
            raise AssertionError(f"centre {centre!r}")
    return body


def avg_forward(suite, x, params, shape):
    out = api.empty(shape, x.dtype)
    suite.kernels("fluid_cpu_avg_pool2d", x, out, params)
    return out


def avg_grad(suite, r, shape, params):
    got = api.empty(shape, r.dtype)
    suite.kernels("fluid_cpu_avg_pool2d_grad", r, got, params)
    return got


def avg_torch_case(suite, dtype, shape, kernel, strides, padding, ceil,
                   include):
    def body():
        x = suite.randn(*shape, dtype=dtype)
        if pool.is_symmetric(padding) or (not ceil and include):
            def reference(x):
                return pool.torch_avg_pool(x, kernel, strides, padding, ceil,
                                           include)
        else:
            def reference(x):
                return pool.spec_pool(x, "avg", kernel, strides, padding,
                                      [1, 1], ceil, include)
        r = suite.randn(*reference(x).shape, dtype=dtype)
        (want,) = grad_api.torch_grads(reference, [x], r)
        params = api.AvgPool2dParams(kernel, strides, padding, int(ceil),
                                     int(include))
        api.expect_close(avg_grad(suite, r, shape, params), want)
    return body


def avg_fd_case(suite, shape, kernel, strides, padding, ceil, include):
    def body():
        pooled = out_shape(shape, kernel, strides, padding, [1, 1], ceil)
        params = api.AvgPool2dParams(kernel, strides, padding, int(ceil),
                                     int(include))
        x = suite.randn(*shape)
        r = suite.randn(*pooled)
        grad_api.finite_difference_check(
            suite, lambda x: grad_api.projection(
                avg_forward(suite, x, params, pooled), r),
            x, avg_grad(suite, r, shape, params))
    return body


def main():
    suite = grad_api.Suite(sys.argv)
    for name, shape, kernel, strides, padding, dilation, ceil in MAX_CASES:
        geometry = (shape, kernel, strides, padding, dilation, ceil)
        kinds = ["random"]
        if torch_expresses(padding, ceil):
            kinds += ["ties", "nan"]
        for dtype, dtype_name in api.FLOAT_DTYPES:
            for kind in kinds:
                suite.case(f"max_pool2d_grad {dtype_name} {name} input "
                           f"{shape} {kind} values vs torch",
                           max_torch_case(suite, dtype, kind, *geometry))
        suite.case(f"max_pool2d_grad f64 {name} input {shape} vs finite "
                   f"differences", max_fd_case(suite, *geometry))
        for dtype, dtype_name in api.FLOAT_DTYPES:
            for kind in ["random", "ties", "nan", "infinities"]:
                suite.case(f"max_pool2d_with_indices and grad_indices "
                           f"{dtype_name} {name} input {shape} {kind} values",
                           indices_case(suite, dtype, kind, *geometry))
    suite.case("max_pool2d_grad_indices f32 sums in double, in window order",
               sums_order_case(suite))
    nhwc_cases = pool.NHWC_CASES + MAX_CASES[len(pool.MAX_CASES):]
    for name, shape, *geometry in nhwc_cases:
        for dtype, dtype_name in pool.NHWC_DTYPES:
            for kind in ["random", "ties", "infinities"]:
                suite.case(f"max_pool2d_grad channels-last {dtype_name} "
                           f"{name} input {shape} {kind} values bitwise NCHW",
                           nhwc_grad_case(suite, dtype, kind, shape,
                                          *geometry))
    suite.case("max_pool2d_grad_indices channels-last f32 sums in double, "
               "in window order", nhwc_sums_order_case(suite))
    for name, shape, kernel, strides, padding, ceil in AVG_CASES:
        for include in (True, False):
            geometry = (shape, kernel, strides, padding, ceil, include)
            label = (f"{name} input {shape} "
                     f"count_include_pad={int(include)}")
            for dtype, dtype_name in api.FLOAT_DTYPES:
                suite.case(f"avg_pool2d_grad {dtype_name} {label} vs torch",
                           avg_torch_case(suite, dtype, *geometry))
            suite.case(f"avg_pool2d_grad f64 {label} vs finite differences",
                       avg_fd_case(suite, *geometry))
    suite.finish()


if __name__ == "__main__":
    main()
