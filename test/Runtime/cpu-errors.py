# RUN: %python %s %fluid_runtime_lib
"""Bad calls to the cpu kernels return a non-OK status with a message naming
the problem, never crash, and leave the outputs untouched."""

import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")
fluidrt = api.fluidrt

INVALID_ARGUMENT = 1
UNSUPPORTED = 3
INT64_MAX = 2**63 - 1


def arr(*shape, dtype=np.float32):
    return np.ones(shape, dtype=dtype)


def nan(*shape, dtype=np.float32):
    return np.full(shape, np.nan, dtype=dtype)


def desc(array, shape=None, dtype=None, null_data=False, rank=None):
    """A descriptor of `array` with some of its fields overridden; the data
    pointer stays `array`'s, so an out-of-bounds access would still be
    caught only by the kernel's own checks."""
    t = fluidrt.tensor(array)
    if shape is not None:
        t.rank = len(shape)
        for i, size in enumerate(shape):
            t.shape[i] = size
    if rank is not None:
        t.rank = rank
    if dtype is not None:
        t.dtype = dtype
    if null_data:
        t.data = None
    return t


def conv_params(strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
                groups=1, channels_last=0):
    return api.Conv2dParams(strides, padding, dilation, groups, channels_last)


def reduce_params(axes, keep_dims=False):
    return api.ReduceParams(list(axes) + [0] * (8 - len(axes)), len(axes),
                            int(keep_dims))


def loss_args(labels, reduction=0):
    return (arr(4, 5), labels, nan(), reduction)


# (case name, entry point, arguments, expected message part, status)
CASES = [
    # Descriptors in general (checked the same way by every kernel).
    ("conv2d wrong output shape", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None, nan(2, 8, 5, 5), conv_params()),
     "output shape [2,8,5,5] does not match expected [2,8,4,4]",
     INVALID_ARGUMENT),
    ("conv2d mismatched filter dtype", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3, dtype=np.float64), None,
      nan(2, 8, 4, 4), conv_params()),
     "filter has dtype f64 but input has f32", INVALID_ARGUMENT),
    ("conv2d mismatched output dtype", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None,
      nan(2, 8, 4, 4, dtype=np.float64), conv_params()),
     "output has dtype f64 but input has f32", INVALID_ARGUMENT),
    ("conv2d null input data", "conv2d",
     (desc(arr(2, 3, 6, 6), null_data=True), arr(8, 3, 3, 3), None,
      nan(2, 8, 4, 4), conv_params()),
     "input data is null", INVALID_ARGUMENT),
    ("conv2d null output data", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None,
      desc(nan(2, 8, 4, 4), null_data=True), conv_params()),
     "output data is null", INVALID_ARGUMENT),
    ("conv2d null filter descriptor", "conv2d",
     (arr(2, 3, 6, 6), None, None, nan(2, 8, 4, 4), conv_params()),
     "filter descriptor is null", INVALID_ARGUMENT),
    ("conv2d null params", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4), None),
     "params is null", INVALID_ARGUMENT),
    ("conv2d integer input unsupported", "conv2d",
     (arr(2, 3, 6, 6, dtype=np.int32), arr(8, 3, 3, 3, dtype=np.int32), None,
      nan(2, 8, 4, 4), conv_params()),
     "input has dtype i32; the cpu kernels support f32 and f64", UNSUPPORTED),
    ("conv2d unknown dtype", "conv2d",
     (desc(arr(2, 3, 6, 6), dtype=42), arr(8, 3, 3, 3), None,
      nan(2, 8, 4, 4), conv_params()),
     "input has unknown dtype 42", INVALID_ARGUMENT),
    ("conv2d rank above the maximum", "conv2d",
     (desc(arr(2, 3, 6, 6), rank=9), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4),
      conv_params()),
     "input has rank 9, outside [0, 8]", INVALID_ARGUMENT),
    ("conv2d negative dimension", "conv2d",
     (desc(arr(2, 3, 6, 6), shape=[2, 3, -6, 6]), arr(8, 3, 3, 3), None,
      nan(2, 8, 4, 4), conv_params()),
     "input shape [2,3,-6,6] has a negative dimension", INVALID_ARGUMENT),
    ("conv2d element count overflows", "conv2d",
     (desc(arr(2, 3, 6, 6), shape=[2**40, 2**40, 6, 6]), arr(8, 3, 3, 3),
      None, nan(2, 8, 4, 4), conv_params()),
     "input shape [1099511627776,1099511627776,6,6] overflows int64",
     INVALID_ARGUMENT),
    ("conv2d byte size overflows", "conv2d",
     (desc(arr(2, 3, 6, 6), shape=[2**31, 2**31, 1, 1]), arr(8, 3, 3, 3),
      None, nan(2, 8, 4, 4), conv_params()),
     "input size in bytes overflows int64", INVALID_ARGUMENT),
    ("conv2d byte size of an empty tensor overflows", "conv2d",
     (desc(arr(2, 3, 6, 6), shape=[0, 2**40, 2**40, 6]), arr(8, 3, 3, 3),
      None, nan(2, 8, 4, 4), conv_params()),
     "overflows int64", INVALID_ARGUMENT),
    # conv2d's own rules.
    ("conv2d input channels not divisible by groups", "conv2d",
     (arr(2, 6, 6, 6), arr(8, 1, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(groups=4)),
     "input channels 6 are not divisible by groups 4", INVALID_ARGUMENT),
    ("conv2d output channels not divisible by groups", "conv2d",
     (arr(2, 6, 6, 6), arr(8, 2, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(groups=3)),
     "output channels 8 (filter dimension 0) are not divisible by groups 3",
     INVALID_ARGUMENT),
    ("conv2d filter channels do not match groups", "conv2d",
     (arr(2, 6, 6, 6), arr(8, 6, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(groups=2)),
     "filter shape [8,6,3,3] needs dimension 1 = input channels / groups = 3",
     INVALID_ARGUMENT),
    ("conv2d channels_last 2", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(channels_last=2)),
     "channels_last must be 0 (NCHW) or 1 (NHWC), got 2", INVALID_ARGUMENT),
    ("conv2d channels_last -1", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(channels_last=-1)),
     "channels_last must be 0 (NCHW) or 1 (NHWC), got -1", INVALID_ARGUMENT),
    ("conv2d NHWC output given channels first", "conv2d",
     (arr(2, 6, 6, 3), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(channels_last=1)),
     "output shape [2,8,4,4] does not match expected [2,4,4,8]",
     INVALID_ARGUMENT),
    ("conv2d NHWC input channels not divisible by groups", "conv2d",
     (arr(2, 6, 6, 6), arr(8, 3, 3, 1), None, nan(2, 4, 4, 8),
      conv_params(groups=4, channels_last=1)),
     "input channels 6 are not divisible by groups 4", INVALID_ARGUMENT),
    ("conv2d NHWC filter channels do not match groups", "conv2d",
     (arr(2, 6, 6, 6), arr(8, 3, 3, 6), None, nan(2, 4, 4, 8),
      conv_params(groups=2, channels_last=1)),
     "filter shape [8,3,3,6] needs dimension 3 = input channels / groups = 3",
     INVALID_ARGUMENT),
    ("conv2d NHWC kernel larger than the input", "conv2d",
     (arr(1, 2, 2, 3), arr(4, 3, 3, 3), None, nan(1, 1, 1, 4),
      conv_params(channels_last=1)),
     "window height 3 exceeds the padded input height 2", INVALID_ARGUMENT),
    ("conv2d NHWC wrong bias shape", "conv2d",
     (arr(2, 6, 6, 3), arr(8, 3, 3, 3), arr(3), nan(2, 4, 4, 8),
      conv_params(channels_last=1)),
     "bias shape [3] does not match expected [8]", INVALID_ARGUMENT),
    ("conv2d zero groups", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(groups=0)),
     "groups must be >= 1, got 0", INVALID_ARGUMENT),
    ("conv2d zero stride", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(strides=(0, 1))),
     "stride along height must be >= 1, got 0", INVALID_ARGUMENT),
    ("conv2d negative padding", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4),
      conv_params(padding=(0, -1, 0, 0))),
     "padding along width must be >= 0", INVALID_ARGUMENT),
    ("conv2d kernel larger than padded input", "conv2d",
     (arr(1, 1, 2, 2), arr(1, 1, 3, 3), None, nan(1, 1, 1, 1),
      conv_params()),
     "window height 3 exceeds the padded input height 2", INVALID_ARGUMENT),
    ("conv2d padding overflows", "conv2d",
     (arr(1, 1, 2, 2), arr(1, 1, 1, 1), None, nan(1, 1, 2, 2),
      conv_params(padding=(INT64_MAX, 0, 0, 0))),
     "padded height overflows int64", INVALID_ARGUMENT),
    ("conv2d dilated window overflows", "conv2d",
     (arr(1, 1, 2, 2), arr(1, 1, 3, 1), None, nan(1, 1, 2, 2),
      conv_params(dilation=(2**62, 1))),
     "window height overflows int64", INVALID_ARGUMENT),
    ("conv2d wrong bias shape", "conv2d",
     (arr(2, 3, 6, 6), arr(8, 3, 3, 3), arr(3), nan(2, 8, 4, 4),
      conv_params()),
     "bias shape [3] does not match expected [8]", INVALID_ARGUMENT),
    ("conv2d input of rank 3", "conv2d",
     (arr(3, 6, 6), arr(8, 3, 3, 3), None, nan(2, 8, 4, 4), conv_params()),
     "input must have rank 4, got shape [3,6,6]", INVALID_ARGUMENT),
    # Normalization.
    ("batch_norm one value per channel", "batch_norm",
     (arr(1, 4), arr(4), arr(4), arr(4), arr(4), nan(1, 4), nan(4), nan(4),
      nan(4), nan(4), api.BatchNormParams(1e-5, 0.1)),
     "training needs more than one value per channel, input shape [1,4]",
     INVALID_ARGUMENT),
    ("batch_norm wrong scale shape", "batch_norm",
     (arr(2, 4, 3, 3), arr(3), arr(4), arr(4), arr(4), nan(2, 4, 3, 3),
      nan(4), nan(4), nan(4), nan(4), api.BatchNormParams(1e-5, 0.1)),
     "scale shape [3] does not match expected [4]", INVALID_ARGUMENT),
    ("batch_norm negative epsilon", "batch_norm",
     (arr(2, 4), arr(4), arr(4), arr(4), arr(4), nan(2, 4), nan(4), nan(4),
      nan(4), nan(4), api.BatchNormParams(-1.0, 0.1)),
     "epsilon must be >= 0", INVALID_ARGUMENT),
    ("batch_norm_inference input of rank 3", "batch_norm_inference",
     (arr(2, 4, 3), arr(4), arr(4), arr(4), arr(4), nan(2, 4, 3), 1e-5),
     "input must have rank 2 or 4, got shape [2,4,3]", INVALID_ARGUMENT),
    ("batch_norm_apply input of rank 1", "batch_norm_apply",
     (arr(4), arr(4), arr(4), arr(4), arr(4), nan(4)),
     "input must have rank 2 or 4, got shape [4]", INVALID_ARGUMENT),
    ("batch_norm_apply wrong inv_std shape", "batch_norm_apply",
     (arr(2, 4, 3, 3), arr(4), arr(4), arr(4), arr(3), nan(2, 4, 3, 3)),
     "inv_std shape [3] does not match expected [4]", INVALID_ARGUMENT),
    ("batch_norm_apply mean of another dtype", "batch_norm_apply",
     (arr(2, 4), arr(4), arr(4), arr(4, dtype=np.float64), arr(4),
      nan(2, 4)),
     "mean has dtype f64 but input has f32", INVALID_ARGUMENT),
    ("batch_norm_apply wrong output shape", "batch_norm_apply",
     (arr(2, 4), arr(4), arr(4), arr(4), arr(4), nan(4, 2)),
     "output shape [4,2] does not match expected [2,4]", INVALID_ARGUMENT),
    # f16 and bf16 run through f32 (test/Runtime/cpu-float16.py); a bad
    # 16-bit descriptor is still an error.
    ("batch_norm_apply u8 unsupported", "batch_norm_apply",
     (arr(2, 4, dtype=np.uint8), arr(4), arr(4), arr(4), arr(4), nan(2, 4)),
     "input has dtype u8; the cpu kernels support f32 and f64", UNSUPPORTED),
    ("batch_norm_apply f16 of the wrong shape", "batch_norm_apply",
     (arr(2, 4, dtype=np.float16), arr(4, dtype=np.float16),
      arr(4, dtype=np.float16), arr(4, dtype=np.float16),
      arr(4, dtype=np.float16), nan(2, 5, dtype=np.float16)),
     "output shape [2,5] does not match expected [2,4]", INVALID_ARGUMENT),
    # Elementwise.
    ("add shapes that do not broadcast", "add",
     (arr(2, 3), arr(4), nan(2, 3)),
     "lhs shape [2,3] and rhs shape [4] do not broadcast (3 vs 4 in "
     "dimension 1 of the result)", INVALID_ARGUMENT),
    ("mul output shape is not the broadcast shape", "mul",
     (arr(2, 1), arr(3), nan(2, 1)),
     "output shape [2,1] does not match expected [2,3]", INVALID_ARGUMENT),
    ("sub mismatched dtypes", "sub",
     (arr(2, 3), arr(2, 3, dtype=np.float64), nan(2, 3)),
     "rhs has dtype f64 but lhs has f32", INVALID_ARGUMENT),
    ("relu wrong output shape", "relu", (arr(2, 3), nan(3, 2)),
     "output shape [3,2] does not match expected [2,3]", INVALID_ARGUMENT),
    ("sigmoid u8 unsupported", "sigmoid",
     (arr(2, dtype=np.uint8), nan(2)),
     "input has dtype u8; the cpu kernels support f32 and f64", UNSUPPORTED),
    # Pooling.
    ("max_pool2d window over padding only", "max_pool2d",
     (arr(1, 1, 2, 2), nan(1, 1, 5, 5),
      api.MaxPool2dParams([2, 2], [1, 1], [2, 2, 2, 2], [1, 1], 0)),
     "the window of output height index 0 covers only padding",
     INVALID_ARGUMENT),
    ("avg_pool2d without padded cells, window over padding only",
     "avg_pool2d",
     (arr(1, 1, 2, 2), nan(1, 1, 5, 5),
      api.AvgPool2dParams([2, 2], [1, 1], [2, 2, 2, 2], 0, 0)),
     "the window of output height index 0 covers only padding",
     INVALID_ARGUMENT),
    ("max_pool2d ceil_mode wrong output shape", "max_pool2d",
     (arr(1, 2, 8, 8), nan(1, 2, 3, 3),
      api.MaxPool2dParams([3, 3], [2, 2], [0, 0, 0, 0], [1, 1], 1)),
     "output shape [1,2,3,3] does not match expected [1,2,4,4]",
     INVALID_ARGUMENT),
    ("max_pool2d zero kernel", "max_pool2d",
     (arr(1, 2, 7, 7), nan(1, 2, 7, 7),
      api.MaxPool2dParams([1, 0], [1, 1], [0, 0, 0, 0], [1, 1], 0)),
     "kernel width must be >= 1, got 0", INVALID_ARGUMENT),
    ("max_pool2d_with_indices f32 indices", "max_pool2d_with_indices",
     (arr(1, 2, 6, 6), nan(1, 2, 3, 3), arr(1, 2, 3, 3),
      api.MaxPool2dParams([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)),
     "indices has dtype f32; the indices of max pooling are u8",
     INVALID_ARGUMENT),
    ("max_pool2d_with_indices indices shape", "max_pool2d_with_indices",
     (arr(1, 2, 6, 6), nan(1, 2, 3, 3), np.zeros((1, 2, 3, 4), np.uint8),
      api.MaxPool2dParams([2, 2], [2, 2], [0, 0, 0, 0], [1, 1], 0)),
     "indices shape [1,2,3,4] does not match expected [1,2,3,3]",
     INVALID_ARGUMENT),
    ("max_pool2d_with_indices kernel of more than 256 cells",
     "max_pool2d_with_indices",
     (arr(1, 1, 17, 16), nan(1, 1, 1, 1), np.zeros((1, 1, 1, 1), np.uint8),
      api.MaxPool2dParams([17, 16], [1, 1], [0, 0, 0, 0], [1, 1], 0)),
     "the kernel 17x16 has more than 256 cells, too many for u8 indices",
     INVALID_ARGUMENT),
    ("max_pool2d_with_indices output shape", "max_pool2d_with_indices",
     (arr(1, 2, 8, 8), nan(1, 2, 3, 3), np.zeros((1, 2, 3, 3), np.uint8),
      api.MaxPool2dParams([3, 3], [2, 2], [0, 0, 0, 0], [1, 1], 1)),
     "output shape [1,2,3,3] does not match expected [1,2,4,4]",
     INVALID_ARGUMENT),
    ("max_pool2d_with_indices null params", "max_pool2d_with_indices",
     (arr(1, 2, 6, 6), nan(1, 2, 3, 3), np.zeros((1, 2, 3, 3), np.uint8),
      None), "params is null", INVALID_ARGUMENT),
    ("global_avg_pool wrong output shape", "global_avg_pool",
     (arr(2, 3, 4, 4), nan(2, 3)),
     "output shape [2,3] does not match expected [2,3,1,1]", INVALID_ARGUMENT),
    # Linear algebra.
    ("matmul contraction sizes differ", "matmul",
     (arr(3, 4), arr(5, 2), nan(3, 2), api.MatmulParams(0, 0)),
     "contraction sizes differ: lhs shape [3,4] has K = 4, rhs shape [5,2] "
     "has K = 5", INVALID_ARGUMENT),
    ("matmul batch sizes differ", "matmul",
     (arr(2, 3, 4), arr(3, 4, 5), nan(2, 3, 5), api.MatmulParams(0, 0)),
     "have different batch sizes", INVALID_ARGUMENT),
    ("matmul rank 4", "matmul",
     (arr(1, 2, 3, 4), arr(1, 2, 4, 5), nan(1, 2, 3, 5),
      api.MatmulParams(0, 0)),
     "lhs must have rank 2 or 3", INVALID_ARGUMENT),
    ("linear weight does not match input features", "linear",
     (arr(2, 5), arr(3, 4), None, nan(2, 3)),
     "weight shape [3,4] does not match input features 5", INVALID_ARGUMENT),
    # Data movement.
    ("reshape element counts differ", "reshape", (arr(2, 3), nan(7)),
     "output shape [7] has 7 elements but input shape [2,3] has 6",
     INVALID_ARGUMENT),
    ("reshape mismatched dtypes", "reshape",
     (arr(2, 3), nan(6, dtype=np.float64)),
     "output has dtype f64 but input has f32", INVALID_ARGUMENT),
    # Softmax and loss.
    ("softmax axis out of range", "softmax", (arr(2, 3), nan(2, 3), 2),
     "axis 2 is outside [0, 2) for input shape [2,3]", INVALID_ARGUMENT),
    ("softmax_cross_entropy i64 label out of range",
     "softmax_cross_entropy",
     loss_args(np.array([0, 1, 4, 7], dtype=np.int64)),
     "label 7 in row 3 is outside [0, 5)", INVALID_ARGUMENT),
    ("softmax_cross_entropy negative i32 label", "softmax_cross_entropy",
     loss_args(np.array([0, -1, 2, 3], dtype=np.int32)),
     "label -1 in row 1 is outside [0, 5)", INVALID_ARGUMENT),
    ("softmax_cross_entropy float labels", "softmax_cross_entropy",
     loss_args(arr(4)), "labels has dtype f32; expected i64 or i32",
     INVALID_ARGUMENT),
    ("softmax_cross_entropy unknown reduction", "softmax_cross_entropy",
     loss_args(np.zeros(4, dtype=np.int64), reduction=5),
     "unknown reduction 5", INVALID_ARGUMENT),
    ("softmax_cross_entropy mean into [1] instead of rank 0",
     "softmax_cross_entropy",
     (arr(4, 5), np.zeros(4, dtype=np.int64), nan(1), 0),
     "output shape [1] does not match expected []", INVALID_ARGUMENT),
    ("softmax_cross_entropy labels of the wrong length",
     "softmax_cross_entropy",
     (arr(4, 5), np.zeros(3, dtype=np.int64), nan(), 0),
     "labels shape [3] does not match expected [4]", INVALID_ARGUMENT),
    # gather: indices are checked before anything is written.
    ("gather i64 index out of range", "gather",
     (arr(5, 3), np.array([0, 5], dtype=np.int64), nan(2, 3), 0),
     "index 5 at position 1 of indices is outside [0, 5)", INVALID_ARGUMENT),
    ("gather negative i32 index", "gather",
     (arr(5, 3), np.array([-1], dtype=np.int32), nan(5, 1), 1),
     "index -1 at position 0 of indices is outside [0, 3)", INVALID_ARGUMENT),
    ("gather float indices", "gather", (arr(5, 3), arr(2), nan(2, 3), 0),
     "indices has dtype f32; expected i64 or i32", INVALID_ARGUMENT),
    ("gather indices of rank 2", "gather",
     (arr(5, 3), np.zeros((1, 2), dtype=np.int64), nan(2, 3), 0),
     "indices must have rank 1, got shape [1,2]", INVALID_ARGUMENT),
    ("gather axis out of range", "gather",
     (arr(5, 3), np.zeros(2, dtype=np.int64), nan(5, 2), 2),
     "axis 2 is outside [0, 2) for input shape [5,3]", INVALID_ARGUMENT),
    ("gather output shape", "gather",
     (arr(5, 3), np.zeros(2, dtype=np.int64), nan(3, 3), 0),
     "output shape [3,3] does not match expected [2,3]", INVALID_ARGUMENT),
    ("gather output dtype", "gather",
     (arr(5, 3), np.zeros(2, dtype=np.int64), nan(2, 3, dtype=np.float64), 0),
     "output has dtype f64 but input has f32", INVALID_ARGUMENT),
    # Reductions.
    ("mean axis listed twice", "mean",
     (arr(2, 3), nan(2), reduce_params([1, 1])), "axis 1 is listed twice",
     INVALID_ARGUMENT),
    ("reduce_sum axis out of range", "reduce_sum",
     (arr(2, 3), nan(2), reduce_params([2])),
     "axis 2 is outside [0, 2) for input shape [2,3]", INVALID_ARGUMENT),
    ("reduce_sum keep_dims output without the kept axis", "reduce_sum",
     (arr(2, 3), nan(2), reduce_params([1], keep_dims=True)),
     "output shape [2] does not match expected [2,1]", INVALID_ARGUMENT),
    ("mean more axes than the rank", "mean",
     (arr(2, 3), nan(), reduce_params([0, 1, 0])),
     "num_axes 3 is outside [0, 2]", INVALID_ARGUMENT),
]


def error_case(suite, entry_point, args, message, status):
    def body():
        outputs = [arg for arg in args if isinstance(arg, np.ndarray) and
                   arg.dtype.kind == "f" and np.isnan(arg).all()]
        got_status, got_message = suite.kernels.status(
            f"fluid_cpu_{entry_point}", *args)
        assert got_status == status, (
            f"status {got_status} (expected {status}), message "
            f"{got_message!r}")
        assert message in got_message, (
            f"message {got_message!r} does not contain {message!r}")
        assert got_message.startswith(f"fluid_cpu_{entry_point}: "), (
            f"message {got_message!r} does not name the entry point")
        for output in outputs:
            assert np.isnan(output).all(), "an output was written"
    return body


def concat_case(suite, inputs, count, output, axis, message):
    def body():
        array = None
        if inputs is not None:
            array = (fluidrt.FluidTensor * max(len(inputs), 1))(
                *[fluidrt.tensor(x) for x in inputs])
        got_status, got_message = suite.kernels.status(
            "fluid_cpu_concat", array, count, output, axis)
        assert got_status == INVALID_ARGUMENT, f"status {got_status}"
        assert message in got_message, (
            f"message {got_message!r} does not contain {message!r}")
    return body


def main():
    suite = api.Suite(sys.argv)
    for name, entry_point, args, message, status in CASES:
        suite.case(f"error {name}",
                   error_case(suite, entry_point, args, message, status))
    concat_cases = [
        ("no inputs", [], 0, nan(2), 0, "needs at least one input, got 0"),
        ("null inputs array", None, 2, nan(2), 0, "inputs array is null"),
        ("shapes differ off the axis", [arr(2, 3), arr(3, 3)], 2, nan(5, 3),
         1, "input 1 shape [3,3] differs from input 0 shape [2,3] outside "
         "axis 1"),
        ("axis out of range", [arr(2, 3), arr(2, 3)], 2, nan(4, 3), 2,
         "axis 2 is outside [0, 2)"),
        ("wrong output shape", [arr(2, 3), arr(2, 3)], 2, nan(4, 4), 0,
         "output shape [4,4] does not match expected [4,3]"),
        ("mixed dtypes", [arr(2), arr(2, dtype=np.float64)], 2, nan(4), 0,
         "input 1 has dtype f64 but input 0 has f32"),
    ]
    for name, inputs, count, output, axis, message in concat_cases:
        suite.case(f"error concat {name}",
                   concat_case(suite, inputs, count, output, axis, message))
    suite.finish()


if __name__ == "__main__":
    main()
