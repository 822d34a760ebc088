//===- Depthwise.h - Channels-last depthwise convolutions -----------------===//
//
// Internal to runtime/cuda: the hand-written kernels of KernelsDepthwise.cu
// that CudnnConv.cpp runs instead of cuDNN for channels-last depthwise
// convolutions (cuDNN's NHWC kernels for them are several times slower
// than its NCHW ones). The operands are checked by the caller; these only
// enqueue work on the context's stream.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDA_DEPTHWISE_H
#define FLUID_RUNTIME_CUDA_DEPTHWISE_H

#include "../cpu/SlidingWindow.h"

#include "fluid/runtime/CudaRuntime.h"

namespace fluid::rt::cuda {

/// Whether the kernels below compute the convolution `g`: channels last,
/// depthwise with channel multiplier 1 (groups == input channels == output
/// channels > 1, filter [C, KH, KW, 1]), a window of at most
/// kMaxDepthwiseTaps taps, and sizes whose index arithmetic fits 32 bits
/// per axis.
bool isDepthwiseChannelsLast(const cpu::Conv2dGeometry &g);

/// The most filter taps (KH * KW) of the depthwise kernels: a block stages
/// its channels' taps in shared memory.
constexpr int64_t kMaxDepthwiseTaps = 1024;

/// output = conv2d(input, filter) + bias (bias may be null), for
/// isDepthwiseChannelsLast(g) and non-empty operands of dtype `dtype` (f32,
/// f64, f16 or bf16).
void depthwiseConv2d(fluid_cuda_context *context, int32_t dtype,
                     const void *input, const void *filter, const void *bias,
                     void *output, const cpu::Conv2dGeometry &g);

/// grad_input of the convolution, every element written.
void depthwiseConv2dGradInput(fluid_cuda_context *context, int32_t dtype,
                              const void *gradOutput, const void *filter,
                              void *gradInput, const cpu::Conv2dGeometry &g);

/// grad_filter of the convolution, the same bits from run to run. Needs
/// scratch in the context's workspace (partial sums of chunks of rows);
/// returns false, having enqueued nothing, when none can be had (the
/// workspace limit, or no device memory), for the caller to use cuDNN.
bool depthwiseConv2dGradFilter(fluid_cuda_context *context, int32_t dtype,
                               const void *gradOutput, const void *input,
                               void *gradFilter, const cpu::Conv2dGeometry &g);

} // namespace fluid::rt::cuda

#endif // FLUID_RUNTIME_CUDA_DEPTHWISE_H
