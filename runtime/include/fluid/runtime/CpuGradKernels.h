//===- CpuGradKernels.h - Gradient kernels of the cpu reference backend ---===//
//
// The kernels the backward pass calls: one entry point per gradient rule of
// an op of CpuKernels.h, plus the data movement that gradients of
// broadcasting and concatenation need. They follow CpuKernels.h: the caller
// allocates every output, each kernel checks every descriptor before
// writing anything and returns a non-OK status with a message naming the
// entry point and the problem (fluid_last_error()); floating-point tensors
// are FLUID_F32 or FLUID_F64, one dtype per call, summed in double; the
// layout is NCHW, dense and row-major; outputs must not overlap inputs
// unless an entry point says otherwise.
//
// Naming: grad_<x> is the gradient of the loss with respect to <x> of the
// forward op; grad_output is the incoming gradient of the forward output.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPUGRADKERNELS_H
#define FLUID_RUNTIME_CPUGRADKERNELS_H

#include "fluid/runtime/CpuKernels.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Convolution and normalization
//===----------------------------------------------------------------------===//

/// Gradient of conv2d with respect to its input: grad_input [N,C,H,W] has
/// the forward input's shape (which grad_output [N,O,OH,OW] alone does not
/// determine), filter [O,C/groups,KH,KW]. Input cells that no window reads
/// (trailing rows and columns dropped by the stride) get zero gradient.
/// With channels_last = 1: grad_input [N,H,W,C], grad_output [N,OH,OW,O],
/// filter [O,KH,KW,C/groups].
fluid_status fluid_cpu_conv2d_grad_input(const fluid_tensor *grad_output,
                                         const fluid_tensor *filter,
                                         fluid_tensor *grad_input,
                                         const fluid_conv2d_params *params);

/// Gradient of conv2d with respect to its filter: grad_filter
/// [O,C/groups,KH,KW] from grad_output [N,O,OH,OW] and the forward input
/// [N,C,H,W]. (The bias gradient is reduce_sum of grad_output over N, H, W.)
/// With channels_last = 1: grad_filter [O,KH,KW,C/groups], grad_output
/// [N,OH,OW,O], input [N,H,W,C].
fluid_status fluid_cpu_conv2d_grad_filter(const fluid_tensor *grad_output,
                                          const fluid_tensor *input,
                                          fluid_tensor *grad_filter,
                                          const fluid_conv2d_params *params);

/// Gradient of batch_norm in training mode (the forward normalized with the
/// batch statistics saved_mean and saved_inv_std, both [C], as
/// fluid_cpu_batch_norm returns them). input and grad_output are [N,C,H,W]
/// or [N,C]; grad_input has their shape, scale, grad_scale and grad_shift
/// are [C]. With xhat = (input - mean) * inv_std and M = N*H*W values per
/// channel: grad_shift = sum(g), grad_scale = sum(g * xhat), grad_input =
/// scale * inv_std * (g - grad_shift/M - xhat * grad_scale/M).
fluid_status fluid_cpu_batch_norm_grad(
    const fluid_tensor *grad_output, const fluid_tensor *input,
    const fluid_tensor *scale, const fluid_tensor *saved_mean,
    const fluid_tensor *saved_inv_std, fluid_tensor *grad_input,
    fluid_tensor *grad_scale, fluid_tensor *grad_shift);

//===----------------------------------------------------------------------===//
// Elementwise, from the forward output. grad_output, output and grad_input
// have one shape and dtype; in place (the rule of CpuKernels.h's
// elementwise section): grad_input over grad_output, over output, or over
// both when they are one buffer.
//===----------------------------------------------------------------------===//

/// grad_input = 0 where output <= 0, else grad_output (PyTorch's
/// threshold_backward on the result: a NaN output passes its gradient).
fluid_status fluid_cpu_relu_grad(const fluid_tensor *grad_output,
                                 const fluid_tensor *output,
                                 fluid_tensor *grad_input);

/// grad_input = grad_output * output * (1 - output).
fluid_status fluid_cpu_sigmoid_grad(const fluid_tensor *grad_output,
                                    const fluid_tensor *output,
                                    fluid_tensor *grad_input);

/// grad_input = grad_output * (1 - output^2).
fluid_status fluid_cpu_tanh_grad(const fluid_tensor *grad_output,
                                 const fluid_tensor *output,
                                 fluid_tensor *grad_input);

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Gradient of max_pool2d: each window's maximum is recomputed from input
/// [N,C,H,W] as PyTorch's cpu kernel picks it (the first maximum in
/// row-major window order; a NaN wins, the last one if several), and
/// grad_output [N,C,OH,OW] is added into grad_input (input's shape) there.
/// With channels_last, input [N,H,W,C] and grad_output [N,OH,OW,C]: bitwise
/// the NCHW gradient on the transposed tensors (each cell's sum in the
/// same order; here and in fluid_cpu_max_pool2d_grad_indices).
fluid_status fluid_cpu_max_pool2d_grad(const fluid_tensor *grad_output,
                                       const fluid_tensor *input,
                                       fluid_tensor *grad_input,
                                       const fluid_max_pool2d_params *params);

/// Gradient of max_pool2d from the picks fluid_cpu_max_pool2d_with_indices
/// wrote: indices (FLUID_U8, grad_output's shape [N,C,OH,OW]) name each
/// window's cell, into which its grad_output is added; grad_input
/// [N,C,H,W] is the forward input's shape. Bitwise what
/// fluid_cpu_max_pool2d_grad gives from that input: the same sums in the
/// same order. An index naming a tap outside the input (padding, or past
/// the kernel's cells) sends nothing. With channels_last, grad_output and
/// indices [N,OH,OW,C], grad_input [N,H,W,C].
fluid_status fluid_cpu_max_pool2d_grad_indices(
    const fluid_tensor *grad_output, const fluid_tensor *indices,
    fluid_tensor *grad_input, const fluid_max_pool2d_params *params);

/// Gradient of avg_pool2d: each element of grad_output [N,C,OH,OW], divided
/// by its window's divisor (as in the forward), is added into the window's
/// cells of grad_input [N,C,H,W] (the forward input's shape).
fluid_status fluid_cpu_avg_pool2d_grad(const fluid_tensor *grad_output,
                                       fluid_tensor *grad_input,
                                       const fluid_avg_pool2d_params *params);

//===----------------------------------------------------------------------===//
// Softmax and loss
//===----------------------------------------------------------------------===//

/// Gradient of softmax along axis, from its output y: grad_input = y * (g -
/// sum(g * y)), the sum along axis. grad_input may be the same buffer as
/// grad_output or output.
fluid_status fluid_cpu_softmax_grad(const fluid_tensor *grad_output,
                                    const fluid_tensor *output,
                                    fluid_tensor *grad_input, int64_t axis);

/// Gradient of log_softmax along axis, from its output y: grad_input = g -
/// exp(y) * sum(g), the sum along axis. grad_input may be the same buffer as
/// grad_output or output.
fluid_status fluid_cpu_log_softmax_grad(const fluid_tensor *grad_output,
                                        const fluid_tensor *output,
                                        fluid_tensor *grad_input, int64_t axis);

/// Gradient of softmax_cross_entropy with respect to logits [N,C]:
/// grad_logits [N,C] = (softmax(logits) - onehot(labels)) * g per row, where
/// g is grad_loss (rank 0) / N for FLUID_REDUCTION_MEAN, grad_loss (rank 0)
/// for FLUID_REDUCTION_SUM and grad_loss[row] (grad_loss [N]) for
/// FLUID_REDUCTION_NONE. labels [N] are FLUID_I64 or FLUID_I32 in [0, C).
fluid_status fluid_cpu_softmax_cross_entropy_grad(const fluid_tensor *grad_loss,
                                                  const fluid_tensor *logits,
                                                  const fluid_tensor *labels,
                                                  fluid_tensor *grad_logits,
                                                  int32_t reduction);

//===----------------------------------------------------------------------===//
// Broadcasting and slicing
//===----------------------------------------------------------------------===//

/// Broadcasts input to output's shape, NumPy style: input's shape aligned
/// with output's from the right, each input dimension equal to output's or
/// 1, missing leading dimensions acting as 1. Any dtype (moves bytes).
fluid_status fluid_cpu_broadcast_to(const fluid_tensor *input,
                                    fluid_tensor *output);

/// The adjoint of broadcast_to: output's shape must broadcast to input's
/// (output's rank may be lower), and each output element is the sum of the
/// input elements that broadcasting would have copied it to. The gradient
/// of a broadcasting binary op with respect to its smaller operand.
fluid_status fluid_cpu_sum_to(const fluid_tensor *input, fluid_tensor *output);

/// output = the output-shaped window of input starting at offset along axis
/// in [0, rank); output has input's rank and its shape off the axis. The
/// gradient of concat with respect to one of its inputs. Any dtype (moves
/// bytes).
fluid_status fluid_cpu_slice(const fluid_tensor *input, fluid_tensor *output,
                             int64_t axis, int64_t offset);

/// The gradient of fluid_cpu_gather with respect to its input: grad_input
/// (the input's shape) is zero but for each slice r along axis, which is
/// the sum of the slices i of grad_output (gather's output shape) with
/// indices[i] = r, added in the order of i in double and rounded once.
/// Floats only.
fluid_status fluid_cpu_gather_grad(const fluid_tensor *grad_output,
                                   const fluid_tensor *indices,
                                   fluid_tensor *grad_input, int64_t axis);

/// output = input with its dimensions permuted: output dimension d is input
/// dimension params->perm[d] (output shape [input.shape[perm[0]], ...]).
/// The gradient of a transpose is the transpose by the inverse permutation.
/// Any dtype (moves bytes).
fluid_status fluid_cpu_transpose(const fluid_tensor *input,
                                 fluid_tensor *output,
                                 const fluid_transpose_params *params);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_CPUGRADKERNELS_H
