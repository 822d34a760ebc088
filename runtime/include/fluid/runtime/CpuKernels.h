//===- CpuKernels.h - Forward kernels of the cpu reference backend --------===//
//
// One entry point per op of the fluid dialect, called by emitted host code,
// the tensor-level interpreter and the tests. The caller allocates every
// output with the shape the compiler computed; each kernel checks every
// descriptor (dtype, rank, shapes against the op's shape rule and the given
// output shape, non-null data, no overflow in shape arithmetic) and returns a
// non-OK status with a message naming the problem (see fluid_last_error())
// instead of reading or writing out of bounds. An output is written only
// when every check has passed.
//
// Floating-point tensors are FLUID_F32 or FLUID_F64, one dtype per call;
// the layout is NCHW (NHWC where a parameter struct's channels_last says
// so), dense and row-major. Outputs must not overlap inputs unless an
// entry point says otherwise.
//
// The parameter structs and argument lists are backend-neutral: the cuda
// backend mirrors every fluid_cpu_<op> as fluid_cuda_<op> with the same
// arguments (plus its context). Programs allocate their temporaries with
// fluid_cpu_allocate, declared in CpuMemory.h.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPUKERNELS_H
#define FLUID_RUNTIME_CPUKERNELS_H

#include "fluid/runtime/CpuMemory.h"
#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Parameters (shared by every backend)
//===----------------------------------------------------------------------===//

/// Attributes of conv2d. Padding is zero padding.
typedef struct fluid_conv2d_params {
  int64_t strides[2];    /* [sh, sw], each >= 1 */
  int64_t padding[4];    /* [top, left, bottom, right], each >= 0 */
  int64_t dilation[2];   /* [dh, dw], each >= 1 */
  int64_t groups;        /* >= 1, divides the input and output channels */
  int32_t channels_last; /* 0: NCHW tensors, filter [O,C/groups,KH,KW];
                            1: NHWC tensors, filter [O,KH,KW,C/groups] */
} fluid_conv2d_params;

/// Attributes of max_pool2d, max_pool2d_with_indices and their gradients.
/// Padded cells never win; every window must cover at least one input
/// cell. channels_last takes what was the struct's tail padding: its size
/// and the other offsets are those of the NCHW-only struct.
typedef struct fluid_max_pool2d_params {
  int64_t kernel[2];     /* [kh, kw], each >= 1 */
  int64_t strides[2];    /* [sh, sw], each >= 1 */
  int64_t padding[4];    /* [top, left, bottom, right], each >= 0 */
  int64_t dilation[2];   /* [dh, dw], each >= 1 */
  int32_t ceil_mode;     /* 0 or 1 */
  int32_t channels_last; /* 0: NCHW tensors; 1: NHWC tensors (the indices
                            too) */
} fluid_max_pool2d_params;

/// Attributes of avg_pool2d. The divisor counts the window cells inside the
/// padded extent with count_include_pad, inside the input without it.
typedef struct fluid_avg_pool2d_params {
  int64_t kernel[2];         /* [kh, kw], each >= 1 */
  int64_t strides[2];        /* [sh, sw], each >= 1 */
  int64_t padding[4];        /* [top, left, bottom, right], each >= 0 */
  int32_t ceil_mode;         /* 0 or 1 */
  int32_t count_include_pad; /* 0 or 1 */
} fluid_avg_pool2d_params;

/// Attributes of batch_norm in training mode.
typedef struct fluid_batch_norm_params {
  double epsilon;  /* >= 0, added to the biased batch variance */
  double momentum; /* weight of the batch statistics in the running ones */
} fluid_batch_norm_params;

/// Attributes of matmul: whether lhs is given as [K,M] and rhs as [N,K].
typedef struct fluid_matmul_params {
  int32_t transpose_lhs; /* 0 or 1 */
  int32_t transpose_rhs; /* 0 or 1 */
} fluid_matmul_params;

/// Attributes of transpose: output dimension d is input dimension perm[d].
typedef struct fluid_transpose_params {
  int64_t perm[FLUID_MAX_RANK]; /* a permutation of [0, rank) */
  int32_t rank;                 /* entries used in perm: the tensors' rank */
} fluid_transpose_params;

/// Attributes of mean and reduce_sum.
typedef struct fluid_reduce_params {
  int64_t axes[FLUID_MAX_RANK]; /* distinct, each in [0, rank) */
  int32_t num_axes;             /* entries used in axes; 0 reduces all */
  int32_t keep_dims;            /* 0 or 1: reduced axes kept with size 1 */
} fluid_reduce_params;

/// How softmax_cross_entropy combines the per-row losses. The numeric
/// values are part of the ABI.
typedef enum fluid_loss_reduction {
  FLUID_REDUCTION_MEAN = 0, /* output rank 0 */
  FLUID_REDUCTION_SUM = 1,  /* output rank 0 */
  FLUID_REDUCTION_NONE = 2, /* output [N] */
} fluid_loss_reduction;

//===----------------------------------------------------------------------===//
// Convolution and normalization
//===----------------------------------------------------------------------===//

/// input [N,C,H,W], filter [O,C/groups,KH,KW], bias [O] or NULL,
/// output [N,O,OH,OW] with OH = (H + top + bottom - dh*(KH-1) - 1)/sh + 1
/// (rounded down), and the same for OW. With channels_last = 1: input
/// [N,H,W,C], filter [O,KH,KW,C/groups], output [N,OH,OW,O] (bitwise the
/// channels-first result, transposed).
fluid_status fluid_cpu_conv2d(const fluid_tensor *input,
                              const fluid_tensor *filter,
                              const fluid_tensor *bias, fluid_tensor *output,
                              const fluid_conv2d_params *params);

/// Batch normalization in training mode over input [N,C,H,W] or [N,C],
/// per channel, with count = N*H*W >= 2 values per channel. scale, shift,
/// running_mean, running_var and every output but `output` are [C].
/// saved_mean is the batch mean, saved_inv_std = 1/sqrt(biased batch
/// variance + epsilon); new_running_mean = (1-momentum)*running_mean +
/// momentum*batch_mean, and new_running_var the same with the unbiased batch
/// variance. new_running_mean and new_running_var may be the same buffers as
/// running_mean and running_var (updated in place).
fluid_status fluid_cpu_batch_norm(
    const fluid_tensor *input, const fluid_tensor *scale,
    const fluid_tensor *shift, const fluid_tensor *running_mean,
    const fluid_tensor *running_var, fluid_tensor *output,
    fluid_tensor *saved_mean, fluid_tensor *saved_inv_std,
    fluid_tensor *new_running_mean, fluid_tensor *new_running_var,
    const fluid_batch_norm_params *params);

/// Batch normalization with given statistics: output = (input - mean) /
/// sqrt(var + epsilon) * scale + shift, input [N,C,H,W] or [N,C], the
/// others [C].
fluid_status fluid_cpu_batch_norm_inference(
    const fluid_tensor *input, const fluid_tensor *scale,
    const fluid_tensor *shift, const fluid_tensor *mean,
    const fluid_tensor *var, fluid_tensor *output, double epsilon);

/// Training batch norm's output recomputed from its saved statistics:
/// output = (input - mean) * inv_std * scale + shift, input [N,C,H,W] or
/// [N,C], the others [C]; mean and inv_std are what fluid_cpu_batch_norm
/// returned as saved_mean and saved_inv_std. With those (and the same
/// input, scale and shift) the output is bitwise fluid_cpu_batch_norm's:
/// both compute (input - mean) * (scale * inv_std) + shift in double from
/// the saved values and round once. In place: output may be the buffer of
/// input (each element is read before it is written, at its own index).
fluid_status
fluid_cpu_batch_norm_apply(const fluid_tensor *input, const fluid_tensor *scale,
                           const fluid_tensor *shift, const fluid_tensor *mean,
                           const fluid_tensor *inv_std, fluid_tensor *output);

//===----------------------------------------------------------------------===//
// Elementwise
//
// In place: output may be the same buffer as any input of the output's shape
// and dtype, or as several of them at once (add(x, x) over x), whatever the
// shapes of the other, broadcast, operands. Each output element is written
// after every operand element it depends on was read, and an operand of the
// output's shape is read only at the element's own index. A broadcast input
// (one of a smaller shape) must not overlap the output, and no buffer may
// overlap another partially. This holds for every elementwise kernel here
// and in CpuGradKernels.h and CpuOptimizerKernels.h (cast: between equal
// dtypes only), on every backend, bitwise: test/Runtime/cpu-in-place.py and
// gpu-in-place.py compare each in-place result with the one into a
// separate output.
//===----------------------------------------------------------------------===//

/// In place: output over input (relu, sigmoid, tanh).
fluid_status fluid_cpu_relu(const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cpu_sigmoid(const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cpu_tanh(const fluid_tensor *input, fluid_tensor *output);

/// Binary ops with NumPy broadcasting: shapes aligned from the right, each
/// dimension equal or 1 (a rank-0 operand broadcasts everywhere); output has
/// the broadcast shape. add, sub and mul also take i32 and i64 operands
/// (step counters), whose overflow wraps. In place: output over lhs, rhs or
/// both, whichever have the output's shape (the integer ones too).
fluid_status fluid_cpu_add(const fluid_tensor *lhs, const fluid_tensor *rhs,
                           fluid_tensor *output);
fluid_status fluid_cpu_sub(const fluid_tensor *lhs, const fluid_tensor *rhs,
                           fluid_tensor *output);
fluid_status fluid_cpu_mul(const fluid_tensor *lhs, const fluid_tensor *rhs,
                           fluid_tensor *output);
fluid_status fluid_cpu_div(const fluid_tensor *lhs, const fluid_tensor *rhs,
                           fluid_tensor *output);

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// input [N,C,H,W] -> output [N,C,OH,OW] with OH = (H + top + bottom -
/// dh*(kh-1) - 1)/sh + 1, rounded up with ceil_mode, in which case a last
/// window starting at or after H + top is dropped (as PyTorch does). With
/// channels_last, input [N,H,W,C] -> output [N,OH,OW,C]: bitwise the NCHW
/// kernel on the transposed tensors (here and in every max pooling kernel
/// and gradient).
fluid_status fluid_cpu_max_pool2d(const fluid_tensor *input,
                                  fluid_tensor *output,
                                  const fluid_max_pool2d_params *params);

/// max_pool2d that also writes each window's pick to indices (FLUID_U8,
/// output's shape): its offset kh * kw_size + kw in the window, for tap
/// (kh, kw) of the kernel (padded taps counted), picked as
/// fluid_cpu_max_pool2d picks it (the first maximum in row-major window
/// order; a NaN wins, the last one if several; a window of -inf only, its
/// first tap inside the input). The kernel has at most 256 cells.
fluid_status
fluid_cpu_max_pool2d_with_indices(const fluid_tensor *input,
                                  fluid_tensor *output, fluid_tensor *indices,
                                  const fluid_max_pool2d_params *params);

/// Output size as for max_pool2d with dilation 1.
fluid_status fluid_cpu_avg_pool2d(const fluid_tensor *input,
                                  fluid_tensor *output,
                                  const fluid_avg_pool2d_params *params);

/// input [N,C,H,W] -> output [N,C,1,1], the mean over H and W.
fluid_status fluid_cpu_global_avg_pool(const fluid_tensor *input,
                                       fluid_tensor *output);

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

/// lhs [M,K] ([K,M] with transpose_lhs), rhs [K,N] ([N,K] with
/// transpose_rhs) -> output [M,N]; or all three rank 3 with an equal
/// leading batch dimension.
fluid_status fluid_cpu_matmul(const fluid_tensor *lhs, const fluid_tensor *rhs,
                              fluid_tensor *output,
                              const fluid_matmul_params *params);

/// input [N,in], weight [out,in], bias [out] or NULL -> output [N,out],
/// output = input * weight^T + bias.
fluid_status fluid_cpu_linear(const fluid_tensor *input,
                              const fluid_tensor *weight,
                              const fluid_tensor *bias, fluid_tensor *output);

//===----------------------------------------------------------------------===//
// Data movement (any dtype)
//===----------------------------------------------------------------------===//

/// Copies the data into an output of any shape with the same element count
/// (reshape and flatten). output may be the same buffer as input.
fluid_status fluid_cpu_reshape(const fluid_tensor *input, fluid_tensor *output);

/// Concatenates inputs[0..num_inputs) (num_inputs >= 1, same dtype and
/// rank, equal shapes except along axis) along axis in [0, rank).
fluid_status fluid_cpu_concat(const fluid_tensor *inputs, int64_t num_inputs,
                              fluid_tensor *output, int64_t axis);

/// output = the slices of input at `indices` along axis in [0, rank):
/// output has input's shape with dimension axis replaced by the length of
/// indices, a 1-D i64 or i32 tensor of values in [0, input.shape[axis]),
/// and slice i of output along axis is slice indices[i] of input. Any
/// dtype (moves bytes).
fluid_status fluid_cpu_gather(const fluid_tensor *input,
                              const fluid_tensor *indices, fluid_tensor *output,
                              int64_t axis);

//===----------------------------------------------------------------------===//
// Softmax and loss
//===----------------------------------------------------------------------===//

/// Softmax of input along axis in [0, rank); output has input's shape.
fluid_status fluid_cpu_softmax(const fluid_tensor *input, fluid_tensor *output,
                               int64_t axis);

/// Log of the softmax along axis in [0, rank); output has input's shape.
fluid_status fluid_cpu_log_softmax(const fluid_tensor *input,
                                   fluid_tensor *output, int64_t axis);

/// logits [N,C], labels [N] (FLUID_I64 or FLUID_I32, each in [0, C)),
/// reduction a fluid_loss_reduction. Per row, loss = logsumexp(logits) -
/// logits[label]; output is rank 0 (mean or sum over rows) or [N] (none).
fluid_status fluid_cpu_softmax_cross_entropy(const fluid_tensor *logits,
                                             const fluid_tensor *labels,
                                             fluid_tensor *output,
                                             int32_t reduction);

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Mean over params->axes; output drops the reduced axes, or keeps them with
/// size 1 with keep_dims.
fluid_status fluid_cpu_mean(const fluid_tensor *input, fluid_tensor *output,
                            const fluid_reduce_params *params);

/// Sum over params->axes; output shape as for fluid_cpu_mean.
fluid_status fluid_cpu_reduce_sum(const fluid_tensor *input,
                                  fluid_tensor *output,
                                  const fluid_reduce_params *params);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_CPUKERNELS_H
