# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_max_pool2d, fluid_cpu_avg_pool2d and fluid_cpu_global_avg_pool
against PyTorch on random inputs.

Channels-last max pooling (channels_last = 1: input and output [N,H,W,C])
is checked against the NCHW kernel on the transposed input, bitwise (in
f32, f64, bf16 and f16, on random inputs with NaNs, ties and windows of
-inf), fluid_cpu_max_pool2d_with_indices too (output and indices); and
the struct with channels_last has the size and offsets of the one
without it (the flag takes the tail padding). Bad layouts and NHWC
shapes are refused with clear messages.

PyTorch pads symmetrically; asymmetric padding without ceil_mode is compared
with an explicit F.pad (-inf for max, zeros for average with
count_include_pad). Where F.pad cannot express the semantics (ceil_mode or
an average without the padded cells), the oracle is `spec_pool` below, a
direct transcription of the dialect's definition, itself checked against
PyTorch in every symmetric case.
"""

import ctypes
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")


def spec_out_size(extent, before, after, kernel, stride, dilation, ceil):
    room = extent + before + after - dilation * (kernel - 1) - 1
    steps = -(-room // stride) if ceil else room // stride
    if ceil and steps * stride >= extent + before:
        steps -= 1
    return steps + 1


def spec_pool(x, kind, kernel, strides, padding, dilation, ceil,
              count_include_pad=True):
    n, c, h, w = x.shape
    top, left, bottom, right = padding
    out_h = spec_out_size(h, top, bottom, kernel[0], strides[0], dilation[0],
                          ceil)
    out_w = spec_out_size(w, left, right, kernel[1], strides[1], dilation[1],
                          ceil)
    out = torch.empty(n, c, out_h, out_w, dtype=x.dtype)
    for oh in range(out_h):
        taps_h = [oh * strides[0] - top + k * dilation[0]
                  for k in range(kernel[0])]
        rows = [i for i in taps_h if 0 <= i < h]
        for ow in range(out_w):
            taps_w = [ow * strides[1] - left + k * dilation[1]
                      for k in range(kernel[1])]
            cols = [i for i in taps_w if 0 <= i < w]
            window = x[:, :, rows][:, :, :, cols]
            if kind == "max":
                out[:, :, oh, ow] = window.amax(dim=(2, 3))
                continue
            if count_include_pad:
                divisor = (sum(-top <= i < h + bottom for i in taps_h) *
                           sum(-left <= i < w + right for i in taps_w))
            else:
                divisor = len(rows) * len(cols)
            out[:, :, oh, ow] = window.sum(dim=(2, 3)) / divisor
    return out


def is_symmetric(padding):
    return padding[0] == padding[2] and padding[1] == padding[3]


def torch_max_pool(x, kernel, strides, padding, dilation, ceil):
    if is_symmetric(padding):
        return F.max_pool2d(x, kernel, strides, padding[:2], dilation,
                            ceil_mode=ceil)
    assert not ceil
    top, left, bottom, right = padding
    x = F.pad(x, (left, right, top, bottom), value=float("-inf"))
    return F.max_pool2d(x, kernel, strides, 0, dilation)


def torch_avg_pool(x, kernel, strides, padding, ceil, count_include_pad):
    if is_symmetric(padding):
        return F.avg_pool2d(x, kernel, strides, padding[:2], ceil_mode=ceil,
                            count_include_pad=count_include_pad)
    assert not ceil and count_include_pad
    top, left, bottom, right = padding
    return F.avg_pool2d(F.pad(x, (left, right, top, bottom)), kernel, strides)


# (name, input shape, kernel, strides, padding [t,l,b,r], dilation, ceil)
MAX_CASES = [
    ("3x3 stride2 pad1 (ResNet stem)", [2, 4, 16, 16], [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], False),
    ("2x2 stride2 non-square image", [2, 3, 7, 11], [2, 2], [2, 2],
     [0, 0, 0, 0], [1, 1], False),
    ("non-square kernel and strides", [1, 2, 9, 8], [3, 2], [2, 1],
     [1, 1, 1, 1], [1, 1], False),
    ("ceil_mode", [1, 2, 8, 8], [3, 3], [2, 2], [0, 0, 0, 0], [1, 1], True),
    ("ceil_mode pad1", [2, 3, 10, 9], [3, 3], [2, 2], [1, 1, 1, 1], [1, 1],
     True),
    ("ceil_mode drops a window starting in padding", [1, 2, 5, 5], [2, 2],
     [2, 2], [1, 1, 1, 1], [1, 1], True),
    ("dilation2", [1, 3, 12, 12], [3, 3], [1, 1], [1, 1, 1, 1], [2, 2],
     False),
    ("dilation 2x3 stride2 ceil_mode", [2, 2, 13, 14], [2, 3], [2, 2],
     [1, 1, 1, 1], [2, 3], True),
    ("kernel covers input batch1", [1, 5, 4, 6], [4, 6], [1, 1],
     [0, 0, 0, 0], [1, 1], False),
    ("asymmetric padding", [2, 3, 8, 7], [3, 3], [1, 2], [0, 1, 2, 0],
     [1, 1], False),
    ("asymmetric padding ceil_mode", [1, 3, 9, 8], [3, 3], [2, 2],
     [1, 0, 0, 1], [1, 1], True),
]

# (name, input shape, kernel, strides, padding [t,l,b,r], ceil)
AVG_CASES = [
    ("2x2 stride2", [2, 3, 8, 10], [2, 2], [2, 2], [0, 0, 0, 0], False),
    ("3x3 stride1 pad1", [2, 3, 7, 9], [3, 3], [1, 1], [1, 1, 1, 1], False),
    ("3x3 stride2 pad1 ceil_mode", [2, 2, 10, 9], [3, 3], [2, 2],
     [1, 1, 1, 1], True),
    ("ceil_mode no padding", [1, 2, 7, 7], [3, 3], [2, 2], [0, 0, 0, 0],
     True),
    ("non-square kernel and strides", [1, 3, 9, 11], [2, 3], [1, 2],
     [1, 1, 1, 1], False),
    ("asymmetric padding", [2, 2, 8, 7], [3, 3], [2, 1], [1, 0, 0, 1],
     False),
    ("asymmetric padding ceil_mode", [1, 3, 9, 10], [3, 3], [2, 2],
     [0, 1, 1, 0], True),
]

GLOBAL_CASES = [[2, 8, 4, 4], [1, 3, 7, 5], [2, 3, 1, 1]]


def check_against(got, want, spec):
    """Compares with PyTorch where it applies (want), and the spec reference
    with PyTorch, so that the spec reference is trusted where PyTorch does
    not apply."""
    if want is not None:
        api.expect_close(spec, want, "spec reference vs torch")
        api.expect_close(got, want)
    else:
        api.expect_close(got, spec)


def max_case(suite, dtype, shape, kernel, strides, padding, dilation, ceil):
    def body():
        # Inputs below zero, so that a zero-padded cell winning would show.
        x = suite.randn(*shape, dtype=dtype) - 3
        x.view(-1)[5] = float("nan")
        spec = spec_pool(x, "max", kernel, strides, padding, dilation, ceil)
        want = None
        if is_symmetric(padding) or not ceil:
            want = torch_max_pool(x, kernel, strides, padding, dilation, ceil)
        got = api.empty(spec.shape, dtype)
        params = api.MaxPool2dParams(kernel, strides, padding, dilation,
                                     int(ceil))
        suite.kernels("fluid_cpu_max_pool2d", x, got, params)
        check_against(got, want, spec)
    return body


def avg_case(suite, dtype, shape, kernel, strides, padding, ceil,
             count_include_pad):
    def body():
        x = suite.randn(*shape, dtype=dtype) + 1
        spec = spec_pool(x, "avg", kernel, strides, padding, [1, 1], ceil,
                         count_include_pad)
        want = None
        if is_symmetric(padding) or (not ceil and count_include_pad):
            want = torch_avg_pool(x, kernel, strides, padding, ceil,
                                  count_include_pad)
        got = api.empty(spec.shape, dtype)
        params = api.AvgPool2dParams(kernel, strides, padding, int(ceil),
                                     int(count_include_pad))
        suite.kernels("fluid_cpu_avg_pool2d", x, got, params)
        check_against(got, want, spec)
    return body


def global_case(suite, dtype, shape):
    def body():
        x = suite.randn(*shape, dtype=dtype)
        want = F.adaptive_avg_pool2d(x, 1)
        got = api.empty(want.shape, dtype)
        suite.kernels("fluid_cpu_global_avg_pool", x, got)
        api.expect_close(got, want)
    return body


class MaxPool2dParams(api.Params):
    """fluid_max_pool2d_params with its last field, channels_last (0:
    NCHW, 1: NHWC); api.MaxPool2dParams stops before it, which passes 0
    (ctypes zeroes the tail padding the field takes)."""
    _fields_ = api.MaxPool2dParams._fields_ + [("channels_last", api.I32)]

    def arg(self):
        """The struct as the entry points' declared argument type."""
        return ctypes.cast(ctypes.pointer(self),
                           ctypes.POINTER(api.MaxPool2dParams))


def pooled_shape(shape, kernel, strides, padding, dilation, ceil,
                 channels_last=False):
    """The output shape of max pooling an NCHW input of `shape`, in NCHW
    or NHWC."""
    n, c, h, w = shape
    oh = spec_out_size(h, padding[0], padding[2], kernel[0], strides[0],
                       dilation[0], ceil)
    ow = spec_out_size(w, padding[1], padding[3], kernel[1], strides[1],
                       dilation[1], ceil)
    return [n, oh, ow, c] if channels_last else [n, c, oh, ow]


# Channels-last geometries: (name, NCHW input shape, kernel, strides,
# padding, dilation, ceil); more channels than MAX_CASES has, odd and even.
NHWC_CASES = MAX_CASES + [
    ("3x3 stride2 pad1 many channels", [2, 16, 9, 10], [3, 3], [2, 2],
     [1, 1, 1, 1], [1, 1], False),
    ("2x2 stride2 ceil_mode odd sizes", [1, 7, 7, 9], [2, 2], [2, 2],
     [0, 0, 0, 0], [1, 1], True),
    ("kernel 1 stride2", [2, 5, 7, 6], [1, 1], [2, 2], [0, 0, 0, 0], [1, 1],
     False),
    ("one channel", [3, 1, 6, 5], [3, 3], [1, 1], [1, 1, 1, 1], [1, 1],
     False),
]
NHWC_DTYPES = api.FLOAT_DTYPES + [(torch.bfloat16, "bf16"),
                                  (torch.float16, "f16")]


def nhwc(x):
    return x.permute(0, 2, 3, 1).contiguous()


def bits(t):
    """The bytes of a tensor (of any dtype), to compare bitwise."""
    return t.reshape(-1).view(torch.uint8).numpy().tobytes()


def max_pool_input(suite, shape, dtype, kind):
    """Random values with NaNs, few distinct values (ties in most
    windows), or mostly -inf (windows of -inf only)."""
    if kind == "ties":
        return suite.randint(3, *shape).to(dtype)
    if kind == "infinities":
        values = torch.tensor([float("-inf")] * 6 + [1.0, float("nan")],
                              dtype=dtype)
        return values[suite.randint(len(values), *shape)]
    x = suite.randn(*shape).to(dtype)
    x.view(-1)[::7] = float("nan")
    return x


def nhwc_case(suite, dtype, kind, shape, kernel, strides, padding, dilation,
              ceil):
    def body():
        x = max_pool_input(suite, shape, dtype, kind)
        geometry = (kernel, strides, padding, dilation, ceil)
        nchw = MaxPool2dParams(*geometry[:4], int(ceil), 0).arg()
        last = MaxPool2dParams(*geometry[:4], int(ceil), 1).arg()
        out = pooled_shape(shape, *geometry)
        want = api.empty(out, dtype)
        suite.kernels("fluid_cpu_max_pool2d", x, want, nchw)
        got = api.empty(pooled_shape(shape, *geometry, True), dtype)
        suite.kernels("fluid_cpu_max_pool2d", nhwc(x), got, last)
        if bits(got) != bits(nhwc(want)):
            raise AssertionError("NHWC output differs from the NCHW one")
        picks = torch.full(tuple(out), 255, dtype=torch.uint8)
        suite.kernels("fluid_cpu_max_pool2d_with_indices", x, want, picks,
                      nchw)
        got = api.empty(got.shape, dtype)
        got_picks = torch.full(tuple(got.shape), 255, dtype=torch.uint8)
        suite.kernels("fluid_cpu_max_pool2d_with_indices", nhwc(x), got,
                      got_picks, last)
        if bits(got) != bits(nhwc(want)):
            raise AssertionError("NHWC output with indices differs")
        if not torch.equal(got_picks, nhwc(picks)):
            raise AssertionError("NHWC indices differ from the NCHW ones")
    return body


def params_layout_case():
    def body():
        with_flag = ctypes.sizeof(MaxPool2dParams)
        without = ctypes.sizeof(api.MaxPool2dParams)
        if with_flag != without or MaxPool2dParams.channels_last.offset != 84:
            raise AssertionError(f"sizes {with_flag} and {without}, "
                                 "channels_last at "
                                 f"{MaxPool2dParams.channels_last.offset}")
    return body


# (name, entry point, arguments but params, params, expected message part)
def nhwc_error_cases():
    x = torch.zeros(1, 6, 6, 2)
    good = ([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)
    return [
        ("layout 2", "fluid_cpu_max_pool2d", (x, api.empty([1, 3, 3, 2],
                                                           torch.float32)),
         MaxPool2dParams(*good, 2).arg(),
         "channels_last must be 0 (NCHW) or 1 (NHWC), got 2"),
        ("NCHW-shaped output", "fluid_cpu_max_pool2d",
         (x, api.empty([1, 2, 3, 3], torch.float32)),
         MaxPool2dParams(*good, 1).arg(),
         "output shape [1,2,3,3] does not match expected [1,3,3,2]"),
        ("rank 3", "fluid_cpu_max_pool2d",
         (torch.zeros(6, 6, 2), api.empty([3, 3, 2], torch.float32)),
         MaxPool2dParams(*good, 1).arg(), "input must have rank 4, got shape"),
        ("indices shape", "fluid_cpu_max_pool2d_with_indices",
         (x, api.empty([1, 3, 3, 2], torch.float32),
          torch.zeros(1, 2, 3, 3, dtype=torch.uint8)),
         MaxPool2dParams(*good, 1).arg(),
         "indices shape [1,2,3,3] does not match expected [1,3,3,2]"),
    ]


def nhwc_error_case(suite, entry, args, params, message):
    def body():
        outputs = [a.clone() for a in args[1:]]
        status, error = suite.kernels.status(entry, args[0], *outputs, params)
        if status == 0 or message not in error:
            raise AssertionError(f"status {status}, message {error!r}")
        for before, after in zip(args[1:], outputs):
            if bits(before) != bits(after):
                raise AssertionError("an output was written")
    return body


def main():
    suite = api.Suite(sys.argv)
    suite.case("max_pool2d params: channels_last takes the tail padding",
               params_layout_case())
    for dtype, dtype_name in NHWC_DTYPES:
        for name, *geometry in NHWC_CASES:
            for kind in ["random", "ties", "infinities"]:
                suite.case(f"max_pool2d channels-last {dtype_name} {name} "
                           f"input {geometry[0]} {kind} values bitwise NCHW",
                           nhwc_case(suite, dtype, kind, *geometry))
    for name, entry, args, params, message in nhwc_error_cases():
        suite.case(f"max_pool2d channels-last error: {name}",
                   nhwc_error_case(suite, entry, args, params, message))
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for name, shape, kernel, strides, padding, dilation, ceil in MAX_CASES:
            suite.case(f"max_pool2d {dtype_name} {name} input {shape}",
                       max_case(suite, dtype, shape, kernel, strides, padding,
                                dilation, ceil))
        for name, shape, kernel, strides, padding, ceil in AVG_CASES:
            for include in (True, False):
                suite.case(f"avg_pool2d {dtype_name} {name} input {shape} "
                           f"count_include_pad={int(include)}",
                           avg_case(suite, dtype, shape, kernel, strides,
                                    padding, ceil, include))
        for shape in GLOBAL_CASES:
            suite.case(f"global_avg_pool {dtype_name} input {shape}",
                       global_case(suite, dtype, shape))
    suite.finish()


if __name__ == "__main__":
    main()
