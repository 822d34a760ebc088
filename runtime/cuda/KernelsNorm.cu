//===- KernelsNorm.cu - batch_norm_apply: batch norm's output again -------===//
//
// fluid_cuda_batch_norm_apply recomputes a training batch norm's output
// from its input and saved statistics: output = (x - mean) * (scale *
// inv_std) + shift per channel. cuDNN has no such call (its inference form
// takes the variance and epsilon, not inv_std), so this is an own kernel.
//
// It computes as the cpu kernel does (runtime/cpu/Norm.cpp): in double, each
// operation rounded on its own (__dsub_rn, __dmul_rn, __dadd_rn: never a
// fused multiply-add), then rounded once to the element type; so it
// reproduces fluid_cpu_batch_norm_apply, and with the cpu's statistics the
// cpu's batch_norm output. cuDNN's training forward (fluid_cuda_batch_norm)
// normalizes in its own precision and order (f32 in f32), so this kernel,
// given cuDNN's saved statistics, equals cuDNN's training output only to
// rounding, not bitwise.
//
// One thread per element, or per 16-byte vector when the pointers are
// aligned and a vector never spans two channels (H*W a multiple of its
// width); each thread loads its elements before it stores them at the
// same index, so the output may be the input's buffer.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Norm.h"
#include "Elementwise.cuh"

#include "fluid/runtime/CudaKernels.h"

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

template <typename T> struct ApplyOperands {
  const T *input, *scale, *shift, *mean, *invStd;
  T *output;
};

/// The per-channel factors of channel c, as the cpu kernel forms them.
struct ChannelFactors {
  double mean, scale, shift;
};

template <typename T>
__device__ inline ChannelFactors channelFactors(const ApplyOperands<T> &t,
                                                int64_t c) {
  return ChannelFactors{double(t.mean[c]),
                        __dmul_rn(double(t.scale[c]), double(t.invStd[c])),
                        double(t.shift[c])};
}

template <typename T>
__device__ inline T normalize(T x, const ChannelFactors &f) {
  return T(
      __dadd_rn(__dmul_rn(__dsub_rn(double(x), f.mean), f.scale), f.shift));
}

/// `n` elements in vectors of Vec, each within one channel (view.inner is
/// a multiple of Vec, so n is too).
template <int Vec, typename T>
__global__ void __launch_bounds__(kBlockSize)
    batchNormApplyKernel(ApplyOperands<T> t, ChannelView view, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t v = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; v < n / Vec;
       v += stride) {
    const ChannelFactors f = channelFactors(t, view.channel(v * Vec));
    Vector<T, Vec> values =
        reinterpret_cast<const Vector<T, Vec> *>(t.input)[v];
#pragma unroll
    for (int j = 0; j < Vec; ++j)
      values.v[j] = normalize(values.v[j], f);
    reinterpret_cast<Vector<T, Vec> *>(t.output)[v] = values;
  }
}

/// Checks a per-channel operand as the cpu kernel does, on the device.
CheckedTensor checkChannel(fluid_cuda_context *context,
                           const fluid_tensor *desc, const std::string &name,
                           const CheckedTensor &input) {
  CheckedTensor t = cpu::checkChannelTensor(desc, name, input);
  requireDeviceMemory(context, t);
  return t;
}

} // namespace

extern "C" fluid_status fluid_cuda_batch_norm_apply(
    fluid_cuda_context *context, const fluid_tensor *inputDesc,
    const fluid_tensor *scaleDesc, const fluid_tensor *shiftDesc,
    const fluid_tensor *meanDesc, const fluid_tensor *invStdDesc,
    fluid_tensor *outputDesc) {
  return guard("fluid_cuda_batch_norm_apply", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    requireFloatDtype(input);
    cpu::ChannelLayout layout = cpu::checkNormInput(input);
    CheckedTensor scale = checkChannel(context, scaleDesc, "scale", input);
    CheckedTensor shift = checkChannel(context, shiftDesc, "shift", input);
    CheckedTensor mean = checkChannel(context, meanDesc, "mean", input);
    CheckedTensor invStd = checkChannel(context, invStdDesc, "inv_std", input);
    CheckedTensor output =
        cpu::checkInputShapedTensor(outputDesc, "output", input);
    requireDeviceMemory(context, output);
    const int64_t n = input.numel;
    if (n == 0)
      return;

    const ChannelView view(layout.spatial, layout.channels, n);
    cpu::dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const ApplyOperands<T> t{input.data<T>(),  scale.data<T>(),
                               shift.data<T>(),  mean.data<T>(),
                               invStd.data<T>(), output.data<T>()};
      constexpr int kVec = int(16 / sizeof(T));
      if (layout.spatial % kVec == 0 && isVectorAligned<T, kVec>(t.input) &&
          isVectorAligned<T, kVec>(t.output))
        batchNormApplyKernel<kVec>
            <<<gridSizeFor(n / kVec), kBlockSize, 0, stream>>>(t, view, n);
      else
        batchNormApplyKernel<1>
            <<<gridSizeFor(n), kBlockSize, 0, stream>>>(t, view, n);
      checkLaunch();
    });
  });
}
