# RUN: %python %s %fluid_runtime_lib
"""Bad calls to the gradient kernels return a non-OK status with a message
naming the entry point and the problem, never crash, and leave the outputs
untouched (the descriptor-level rules shared by every kernel are covered
by cpu-errors.py, whose helpers this file uses)."""

import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
grad_api = importlib.import_module("cpu-grad-api")
errors = importlib.import_module("cpu-errors")
api = grad_api.api

INVALID, UNSUPPORTED = errors.INVALID_ARGUMENT, errors.UNSUPPORTED
arr, nan, desc, conv = errors.arr, errors.nan, errors.desc, errors.conv_params
f64, i32, i64 = np.float64, np.int32, np.int64


def max_params(kernel=(2, 2), strides=(2, 2), padding=(0, 0, 0, 0),
               dilation=(1, 1), ceil=False):
    return api.MaxPool2dParams(kernel, strides, padding, dilation, int(ceil))


def avg_params(kernel=(2, 2), strides=(2, 2), padding=(0, 0, 0, 0),
               ceil=False, include=True):
    return api.AvgPool2dParams(kernel, strides, padding, int(ceil),
                               int(include))


def perm(values):
    return api.TransposeParams.of(values)


def u8(*shape):
    """Indices of max pooling: every window picks its first tap."""
    return np.zeros(shape, dtype=np.uint8)


def norm_args(**overrides):
    """batch_norm_grad arguments for input [2,3,4,4], with some replaced."""
    args = dict(grad_output=arr(2, 3, 4, 4), input=arr(2, 3, 4, 4),
                scale=arr(3), saved_mean=arr(3), saved_inv_std=arr(3),
                grad_input=nan(2, 3, 4, 4), grad_scale=nan(3),
                grad_shift=nan(3))
    args.update(overrides)
    return tuple(args.values())


def loss_args(labels=None, grad_loss=None, reduction=0, logits=None,
              grad_logits=None):
    """softmax_cross_entropy_grad arguments for logits [4,5]."""
    return (nan() if grad_loss is None else grad_loss,
            arr(4, 5) if logits is None else logits,
            np.zeros(4, dtype=i64) if labels is None else labels,
            nan(4, 5) if grad_logits is None else grad_logits, reduction)


def labels(values, dtype=i64):
    return np.array(values, dtype=dtype)


# (case name, entry point, arguments, expected message part, status)
CASES = [
    # conv2d_grad_input
    ("conv2d_grad_input grad_output channels not the filter's",
     "conv2d_grad_input",
     (arr(2, 6, 4, 4), arr(8, 3, 3, 3), nan(2, 3, 6, 6), conv()),
     "grad_output shape [2,6,4,4] does not match expected [2,8,4,4]",
     INVALID),
    ("conv2d_grad_input strided output of a smaller input",
     "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 3, 3, 3), nan(2, 3, 8, 8), conv(strides=(2, 2))),
     "grad_output shape [2,8,4,4] does not match expected [2,8,3,3]",
     INVALID),
    ("conv2d_grad_input filter dtype", "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 3, 3, 3, dtype=f64), nan(2, 3, 6, 6), conv()),
     "filter has dtype f64 but grad_output has f32", INVALID),
    ("conv2d_grad_input grad_input rank 3", "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 3, 3, 3), nan(3, 6, 6), conv()),
     "grad_input must have rank 4, got shape [3,6,6]", INVALID),
    ("conv2d_grad_input null grad_input data", "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 3, 3, 3), desc(nan(2, 3, 6, 6), null_data=True),
      conv()), "grad_input data is null", INVALID),
    ("conv2d_grad_input null params", "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 3, 3, 3), nan(2, 3, 6, 6), None),
     "params is null", INVALID),
    ("conv2d_grad_input integer grad_output", "conv2d_grad_input",
     (arr(2, 8, 4, 4, dtype=i32), arr(8, 3, 3, 3, dtype=i32), nan(2, 3, 6, 6),
      conv()), "grad_output has dtype i32; the cpu kernels support f32 and "
     "f64", UNSUPPORTED),
    ("conv2d_grad_input channels not divisible by groups", "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 1, 3, 3), nan(2, 6, 6, 6), conv(groups=4)),
     "input channels 6 (grad_input dimension 1) are not divisible by "
     "groups 4", INVALID),
    ("conv2d_grad_input filter channels do not match groups",
     "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 6, 3, 3), nan(2, 6, 6, 6), conv(groups=2)),
     "filter shape [8,6,3,3] needs dimension 1 = input channels / groups = 3",
     INVALID),
    ("conv2d_grad_input zero dilation", "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 3, 3, 3), nan(2, 3, 6, 6),
      conv(dilation=(1, 0))),
     "dilation along width must be >= 1, got 0", INVALID),
    # conv2d_grad_filter
    ("conv2d_grad_filter grad_output of another input size",
     "conv2d_grad_filter",
     (arr(2, 8, 5, 5), arr(2, 3, 6, 6), nan(8, 3, 3, 3), conv()),
     "grad_output shape [2,8,5,5] does not match expected [2,8,4,4]",
     INVALID),
    ("conv2d_grad_filter grad_filter dtype", "conv2d_grad_filter",
     (arr(2, 8, 4, 4), arr(2, 3, 6, 6), nan(8, 3, 3, 3, dtype=f64), conv()),
     "grad_filter has dtype f64 but grad_output has f32", INVALID),
    ("conv2d_grad_filter output channels not divisible by groups",
     "conv2d_grad_filter",
     (arr(2, 8, 4, 4), arr(2, 6, 6, 6), nan(8, 2, 3, 3), conv(groups=3)),
     "output channels 8 (grad_filter dimension 0) are not divisible by "
     "groups 3", INVALID),
    ("conv2d_grad_filter kernel larger than padded input",
     "conv2d_grad_filter",
     (arr(1, 1, 1, 1), arr(1, 1, 2, 2), nan(1, 1, 3, 3), conv()),
     "window height 3 exceeds the padded input height 2", INVALID),
    ("conv2d_grad_filter null input descriptor", "conv2d_grad_filter",
     (arr(2, 8, 4, 4), None, nan(8, 3, 3, 3), conv()),
     "input descriptor is null", INVALID),
    # batch_norm_grad
    ("batch_norm_grad input rank 3", "batch_norm_grad",
     norm_args(input=arr(2, 3, 4), grad_output=arr(2, 3, 4),
               grad_input=nan(2, 3, 4)),
     "input must have rank 2 or 4, got shape [2,3,4]", INVALID),
    ("batch_norm_grad grad_output shape", "batch_norm_grad",
     norm_args(grad_output=arr(2, 3, 4, 5)),
     "grad_output shape [2,3,4,5] does not match expected [2,3,4,4]",
     INVALID),
    ("batch_norm_grad scale shape", "batch_norm_grad",
     norm_args(scale=arr(4)), "scale shape [4] does not match expected [3]",
     INVALID),
    ("batch_norm_grad saved_inv_std dtype", "batch_norm_grad",
     norm_args(saved_inv_std=arr(3, dtype=f64)),
     "saved_inv_std has dtype f64 but input has f32", INVALID),
    ("batch_norm_grad null saved_mean descriptor", "batch_norm_grad",
     norm_args(saved_mean=None), "saved_mean descriptor is null", INVALID),
    ("batch_norm_grad grad_input shape", "batch_norm_grad",
     norm_args(grad_input=nan(2, 3, 16)),
     "grad_input shape [2,3,16] does not match expected [2,3,4,4]", INVALID),
    ("batch_norm_grad grad_shift shape (the last output)", "batch_norm_grad",
     norm_args(grad_shift=nan(3, 1)),
     "grad_shift shape [3,1] does not match expected [3]", INVALID),
    ("batch_norm_grad null grad_scale data", "batch_norm_grad",
     norm_args(grad_scale=desc(nan(3), null_data=True)),
     "grad_scale data is null", INVALID),
    # Elementwise
    ("relu_grad grad_output shape", "relu_grad",
     (arr(2, 3), arr(3, 2), nan(3, 2)),
     "grad_output shape [2,3] does not match expected [3,2]", INVALID),
    ("relu_grad integer output", "relu_grad",
     (arr(2, dtype=i32), arr(2, dtype=i32), nan(2)),
     "output has dtype i32; the cpu kernels support f32 and f64",
     UNSUPPORTED),
    ("sigmoid_grad grad_input dtype", "sigmoid_grad",
     (arr(2, 3), arr(2, 3), nan(2, 3, dtype=f64)),
     "grad_input has dtype f64 but output has f32", INVALID),
    ("sigmoid_grad null output data", "sigmoid_grad",
     (arr(2, 3), desc(arr(2, 3), null_data=True), nan(2, 3)),
     "output data is null", INVALID),
    ("tanh_grad grad_input shape", "tanh_grad",
     (arr(2, 3), arr(2, 3), nan(6)),
     "grad_input shape [6] does not match expected [2,3]", INVALID),
    # Pooling
    ("max_pool2d_grad grad_input shape", "max_pool2d_grad",
     (arr(1, 2, 3, 3), arr(1, 2, 6, 6), nan(1, 2, 6, 5), max_params()),
     "grad_input shape [1,2,6,5] does not match expected [1,2,6,6]",
     INVALID),
    ("max_pool2d_grad grad_output shape with ceil_mode", "max_pool2d_grad",
     (arr(1, 2, 3, 3), arr(1, 2, 7, 7), nan(1, 2, 7, 7),
      max_params(ceil=True)),
     "grad_output shape [1,2,3,3] does not match expected [1,2,4,4]",
     INVALID),
    ("max_pool2d_grad window over padding alone", "max_pool2d_grad",
     (arr(1, 1, 3, 3), arr(1, 1, 2, 2), nan(1, 1, 2, 2),
      max_params(kernel=(1, 1), strides=(1, 1), padding=(1, 1, 0, 0))),
     "the window of output height index 0 covers only padding", INVALID),
    ("max_pool2d_grad null params", "max_pool2d_grad",
     (arr(1, 2, 3, 3), arr(1, 2, 6, 6), nan(1, 2, 6, 6), None),
     "params is null", INVALID),
    ("max_pool2d_grad input rank 3", "max_pool2d_grad",
     (arr(1, 2, 3, 3), arr(2, 6, 6), nan(2, 6, 6), max_params()),
     "input must have rank 4, got shape [2,6,6]", INVALID),
    ("max_pool2d_grad_indices f32 indices", "max_pool2d_grad_indices",
     (arr(1, 2, 3, 3), arr(1, 2, 3, 3), nan(1, 2, 6, 6), max_params()),
     "indices has dtype f32; the indices of max pooling are u8", INVALID),
    ("max_pool2d_grad_indices i32 indices", "max_pool2d_grad_indices",
     (arr(1, 2, 3, 3), arr(1, 2, 3, 3, dtype=i32), nan(1, 2, 6, 6),
      max_params()),
     "indices has dtype i32; the indices of max pooling are u8", INVALID),
    ("max_pool2d_grad_indices indices shape", "max_pool2d_grad_indices",
     (arr(1, 2, 3, 3), u8(1, 2, 3, 4), nan(1, 2, 6, 6), max_params()),
     "indices shape [1,2,3,4] does not match expected [1,2,3,3]", INVALID),
    ("max_pool2d_grad_indices grad_output shape with ceil_mode",
     "max_pool2d_grad_indices",
     (arr(1, 2, 3, 3), u8(1, 2, 3, 3), nan(1, 2, 7, 7),
      max_params(ceil=True)),
     "grad_output shape [1,2,3,3] does not match expected [1,2,4,4]",
     INVALID),
    ("max_pool2d_grad_indices grad_output dtype", "max_pool2d_grad_indices",
     (arr(1, 2, 3, 3, dtype=f64), u8(1, 2, 3, 3), nan(1, 2, 6, 6),
      max_params()),
     "grad_output has dtype f64 but grad_input has f32", INVALID),
    ("max_pool2d_grad_indices integer grad_input", "max_pool2d_grad_indices",
     (arr(1, 2, 3, 3, dtype=i32), u8(1, 2, 3, 3),
      np.zeros((1, 2, 6, 6), i32), max_params()),
     "grad_input has dtype i32; the cpu kernels support f32 and f64",
     UNSUPPORTED),
    ("max_pool2d_grad_indices kernel of more than 256 cells",
     "max_pool2d_grad_indices",
     (arr(1, 1, 1, 1), u8(1, 1, 1, 1), nan(1, 1, 16, 17),
      max_params(kernel=(16, 17), strides=(1, 1))),
     "the kernel 16x17 has more than 256 cells, too many for u8 indices",
     INVALID),
    ("max_pool2d_grad_indices window over padding alone",
     "max_pool2d_grad_indices",
     (arr(1, 1, 3, 3), u8(1, 1, 3, 3), nan(1, 1, 2, 2),
      max_params(kernel=(1, 1), strides=(1, 1), padding=(1, 1, 0, 0))),
     "the window of output height index 0 covers only padding", INVALID),
    ("max_pool2d_grad_indices null params", "max_pool2d_grad_indices",
     (arr(1, 2, 3, 3), u8(1, 2, 3, 3), nan(1, 2, 6, 6), None),
     "params is null", INVALID),
    ("avg_pool2d_grad grad_output shape", "avg_pool2d_grad",
     (arr(1, 2, 4, 3), nan(1, 2, 6, 6), avg_params()),
     "grad_output shape [1,2,4,3] does not match expected [1,2,3,3]",
     INVALID),
    ("avg_pool2d_grad window over padding alone without count_include_pad",
     "avg_pool2d_grad",
     (arr(1, 1, 3, 3), nan(1, 1, 2, 2),
      avg_params(kernel=(1, 1), strides=(1, 1), padding=(1, 1, 0, 0),
                 include=False)),
     "the window of output height index 0 covers only padding", INVALID),
    ("avg_pool2d_grad zero stride", "avg_pool2d_grad",
     (arr(1, 2, 3, 3), nan(1, 2, 6, 6), avg_params(strides=(2, 0))),
     "stride along width must be >= 1, got 0", INVALID),
    ("avg_pool2d_grad grad_output dtype", "avg_pool2d_grad",
     (arr(1, 2, 3, 3, dtype=f64), nan(1, 2, 6, 6), avg_params()),
     "grad_output has dtype f64 but grad_input has f32", INVALID),
    # Softmax
    ("softmax_grad axis out of range", "softmax_grad",
     (arr(2, 3), arr(2, 3), nan(2, 3), 2),
     "axis 2 is outside [0, 2) for output shape [2,3]", INVALID),
    ("softmax_grad negative axis", "softmax_grad",
     (arr(2, 3), arr(2, 3), nan(2, 3), -1),
     "axis -1 is outside [0, 2)", INVALID),
    ("softmax_grad rank 0", "softmax_grad",
     (arr(), arr(), nan(), 0), "axis 0 is outside [0, 0)", INVALID),
    ("log_softmax_grad grad_output dtype", "log_softmax_grad",
     (arr(2, 3, dtype=f64), arr(2, 3), nan(2, 3), 1),
     "grad_output has dtype f64 but output has f32", INVALID),
    ("log_softmax_grad grad_input shape", "log_softmax_grad",
     (arr(2, 3), arr(2, 3), nan(3, 2), 1),
     "grad_input shape [3,2] does not match expected [2,3]", INVALID),
    # softmax_cross_entropy_grad
    ("softmax_cross_entropy_grad label too large (i64)",
     "softmax_cross_entropy_grad", loss_args(labels([0, 1, 5, 2])),
     "label 5 in row 2 is outside [0, 5)", INVALID),
    ("softmax_cross_entropy_grad negative label (i32)",
     "softmax_cross_entropy_grad",
     loss_args(labels([0, 1, 2, -3], dtype=i32)),
     "label -3 in row 3 is outside [0, 5)", INVALID),
    ("softmax_cross_entropy_grad float labels", "softmax_cross_entropy_grad",
     loss_args(labels([0, 1, 2, 3], dtype=np.float32)),
     "labels has dtype f32; expected i64 or i32", INVALID),
    ("softmax_cross_entropy_grad labels of the wrong length",
     "softmax_cross_entropy_grad", loss_args(labels([0, 1, 2])),
     "labels shape [3] does not match expected [4]", INVALID),
    ("softmax_cross_entropy_grad grad_loss [N] with mean",
     "softmax_cross_entropy_grad", loss_args(grad_loss=arr(4), reduction=0),
     "grad_loss shape [4] does not match expected []", INVALID),
    ("softmax_cross_entropy_grad grad_loss rank 0 without reduction",
     "softmax_cross_entropy_grad", loss_args(grad_loss=arr(), reduction=2),
     "grad_loss shape [] does not match expected [4]", INVALID),
    ("softmax_cross_entropy_grad unknown reduction",
     "softmax_cross_entropy_grad", loss_args(grad_loss=arr(), reduction=3),
     "unknown reduction 3 (expected 0 mean, 1 sum or 2 none)", INVALID),
    ("softmax_cross_entropy_grad grad_logits shape",
     "softmax_cross_entropy_grad",
     loss_args(grad_loss=arr(), grad_logits=nan(5, 4)),
     "grad_logits shape [5,4] does not match expected [4,5]", INVALID),
    ("softmax_cross_entropy_grad logits rank 1",
     "softmax_cross_entropy_grad",
     loss_args(grad_loss=arr(), logits=arr(20)),
     "logits must have rank 2, got shape [20]", INVALID),
    ("softmax_cross_entropy_grad grad_loss dtype",
     "softmax_cross_entropy_grad", loss_args(grad_loss=arr(dtype=f64)),
     "grad_loss has dtype f64 but logits has f32", INVALID),
    # broadcast_to and sum_to
    ("broadcast_to incompatible dimension", "broadcast_to",
     (arr(2, 3), nan(4, 3, 3)),
     "input shape [2,3] does not broadcast to output shape [4,3,3]: "
     "dimension 0 of input is 2, expected 1 or 3", INVALID),
    ("broadcast_to to a lower rank", "broadcast_to", (arr(1), nan()),
     "input shape [1] does not broadcast to output shape []: it has more "
     "dimensions", INVALID),
    ("broadcast_to dtype", "broadcast_to", (arr(3), nan(2, 3, dtype=f64)),
     "output has dtype f64 but input has f32", INVALID),
    ("sum_to output does not broadcast to input", "sum_to",
     (arr(2, 3, 4), nan(3, 3)),
     "output shape [3,3] does not broadcast to input shape [2,3,4]: "
     "dimension 1 of output is 3, expected 1 or 4", INVALID),
    ("sum_to output of higher rank", "sum_to", (arr(3), nan(1, 3)),
     "output shape [1,3] does not broadcast to input shape [3]: it has more "
     "dimensions", INVALID),
    ("sum_to integer input", "sum_to",
     (arr(2, 3, dtype=i64), np.zeros(3, dtype=i64)),
     "input has dtype i64; the cpu kernels support f32 and f64", UNSUPPORTED),
    ("sum_to null output data", "sum_to",
     (arr(2, 3), desc(nan(3), null_data=True)), "output data is null",
     INVALID),
    # conv2d gradients, channels last
    ("conv2d_grad_input channels_last 3", "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 3, 3, 3), nan(2, 3, 6, 6),
      conv(channels_last=3)),
     "channels_last must be 0 (NCHW) or 1 (NHWC), got 3", INVALID),
    ("conv2d_grad_input NHWC grad_output given channels first",
     "conv2d_grad_input",
     (arr(2, 8, 4, 4), arr(8, 3, 3, 3), nan(2, 6, 6, 3),
      conv(channels_last=1)),
     "grad_output shape [2,8,4,4] does not match expected [2,4,4,8]",
     INVALID),
    ("conv2d_grad_input NHWC channels not divisible by groups",
     "conv2d_grad_input",
     (arr(2, 4, 4, 8), arr(8, 3, 3, 1), nan(2, 6, 6, 6),
      conv(groups=4, channels_last=1)),
     "input channels 6 (grad_input dimension 3) are not divisible by "
     "groups 4", INVALID),
    ("conv2d_grad_input NHWC filter given channels first",
     "conv2d_grad_input",
     (arr(2, 4, 4, 8), arr(8, 6, 3, 3), nan(2, 6, 6, 6),
      conv(channels_last=1)),
     "filter shape [8,6,3,3] needs dimension 3 = input channels / groups = 6",
     INVALID),
    ("conv2d_grad_filter channels_last 2", "conv2d_grad_filter",
     (arr(2, 8, 4, 4), arr(2, 3, 6, 6), nan(8, 3, 3, 3),
      conv(channels_last=2)),
     "channels_last must be 0 (NCHW) or 1 (NHWC), got 2", INVALID),
    ("conv2d_grad_filter NHWC grad_filter given channels first",
     "conv2d_grad_filter",
     (arr(2, 4, 4, 8), arr(2, 6, 6, 6), nan(8, 6, 3, 3),
      conv(channels_last=1)),
     "grad_filter shape [8,6,3,3] needs dimension 3 = input channels / "
     "groups = 6", INVALID),
    ("conv2d_grad_filter NHWC grad_output of another input size",
     "conv2d_grad_filter",
     (arr(2, 5, 5, 8), arr(2, 6, 6, 3), nan(8, 3, 3, 3),
      conv(channels_last=1)),
     "grad_output shape [2,5,5,8] does not match expected [2,4,4,8]",
     INVALID),
    # transpose
    ("transpose null params", "transpose", (arr(2, 3), nan(3, 2), None),
     "params is null", INVALID),
    ("transpose params rank above the maximum", "transpose",
     (arr(2, 3), nan(3, 2), api.TransposeParams([0] * 8, 9)),
     "params rank 9 is outside [0, 8]", INVALID),
    ("transpose negative params rank", "transpose",
     (arr(2, 3), nan(3, 2), api.TransposeParams([0] * 8, -1)),
     "params rank -1 is outside [0, 8]", INVALID),
    ("transpose params rank not the input's", "transpose",
     (arr(2, 3), nan(3, 2), perm([1, 0, 2])),
     "params rank 3 differs from input rank 2, shape [2,3]", INVALID),
    ("transpose output rank", "transpose",
     (arr(2, 3), nan(3, 2, 1), perm([1, 0])),
     "output must have rank 2, got shape [3,2,1]", INVALID),
    ("transpose perm entry out of range", "transpose",
     (arr(2, 3), nan(3, 2), perm([0, 2])),
     "perm [0,2] entry 1 is 2, outside [0, 2)", INVALID),
    ("transpose negative perm entry", "transpose",
     (arr(2, 3, 4), nan(4, 3, 2), perm([-1, 1, 0])),
     "perm [-1,1,0] entry 0 is -1, outside [0, 3)", INVALID),
    ("transpose perm repeats an entry", "transpose",
     (arr(2, 3, 4), nan(4, 3, 2), perm([2, 1, 2])),
     "perm [2,1,2] is not a permutation: 2 appears twice", INVALID),
    ("transpose output shape not the permuted input's", "transpose",
     (arr(2, 3, 4), nan(4, 3, 2), perm([0, 2, 1])),
     "output shape [4,3,2] does not match expected [2,4,3]", INVALID),
    ("transpose output of the input's shape", "transpose",
     (arr(2, 3), nan(2, 3), perm([1, 0])),
     "output shape [2,3] does not match expected [3,2]", INVALID),
    ("transpose dtype", "transpose",
     (arr(2, 3), nan(3, 2, dtype=f64), perm([1, 0])),
     "output has dtype f64 but input has f32", INVALID),
    ("transpose null input data", "transpose",
     (desc(arr(2, 3), null_data=True), nan(3, 2), perm([1, 0])),
     "input data is null", INVALID),
    ("transpose null output descriptor", "transpose",
     (arr(2, 3), None, perm([1, 0])), "output descriptor is null", INVALID),
    ("transpose negative dimension", "transpose",
     (desc(arr(2, 3), shape=[2, -3]), nan(3, 2), perm([1, 0])),
     "input shape [2,-3] has a negative dimension", INVALID),
    # slice
    ("slice window past the end", "slice", (arr(2, 6), nan(2, 3), 1, 4),
     "slice [4, 7) along axis 1 exceeds the input, shape [2,6]", INVALID),
    ("slice negative offset", "slice", (arr(2, 6), nan(2, 3), 1, -1),
     "offset -1 is negative", INVALID),
    ("slice offset overflows", "slice",
     (arr(2, 6), nan(2, 3), 1, errors.INT64_MAX),
     "offset + output size along the axis overflows int64", INVALID),
    ("slice axis out of range", "slice", (arr(2, 6), nan(2, 3), 2, 0),
     "axis 2 is outside [0, 2) for input shape [2,6]", INVALID),
    ("slice shapes differ off the axis", "slice",
     (arr(2, 6), nan(3, 3), 1, 0),
     "output shape [3,3] differs from input shape [2,6] outside axis 1",
     INVALID),
    ("slice rank", "slice", (arr(2, 6), nan(2, 3, 1), 1, 0),
     "output must have rank 2, got shape [2,3,1]", INVALID),
    ("slice dtype", "slice", (arr(2, 6), nan(2, 3, dtype=f64), 1, 0),
     "output has dtype f64 but input has f32", INVALID),
    ("slice null input data", "slice",
     (desc(arr(2, 6), null_data=True), nan(2, 3), 1, 0),
     "input data is null", INVALID),
]


def main():
    suite = grad_api.Suite(sys.argv)
    for name, entry_point, args, message, status in CASES:
        suite.case(f"error {name}",
                   errors.error_case(suite, entry_point, args, message,
                                     status))
    suite.finish()


if __name__ == "__main__":
    main()
