//===- BatchNorm.cpp - batch normalization with cuDNN ---------------------===//
//
// cuDNN's spatial batch norm (statistics per channel over N, H and W; the
// per-activation mode would normalize each (c, h, w) over N alone) matches
// the cpu kernels' definition:
// - training: y = (x - mean) * invStd * scale + shift with the batch mean
//   and the biased batch variance; saved_inv_std = 1/sqrt(var + epsilon);
//   the running variance is updated with the unbiased variance (as
//   PyTorch), by new = (1 - factor) * old + factor * batch, so factor is
//   the momentum. cuDNN updates the running statistics in place, so they
//   are first copied into new_running_mean and new_running_var (unless
//   those are the same buffers).
// - the gradient takes the saved statistics, so cuDNN recomputes nothing;
//   epsilon is then unused, and the smallest cuDNN accepts is passed (the
//   cpu interface, which the backward mirrors, has no epsilon).
// A rank-2 input [N,C] is the 4-D tensor [N,C,1,1]. f32 keeps statistics
// in f32, f64 in f64 (cuDNN's rule: double only for double data).
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "../cpu/TensorChecks.h"

#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/CudaKernels.h"

#include <cstdio>

using namespace fluid::rt;
using namespace fluid::rt::cpu;
using namespace fluid::rt::cuda;

namespace {

/// A batch-norm input [N,C] or [N,C,H,W] seen as [N, C, H, W].
struct NormLayout {
  int64_t batch, channels, height, width;
  int64_t valuesPerChannel() const { return batch * height * width; }
};

/// Checks a batch-norm input (rank 2 or 4, float) and returns its layout.
NormLayout checkNormInput(fluid_cuda_context *context,
                          const CheckedTensor &input) {
  requireFloat(input);
  if (input.rank() != 2 && input.rank() != 4)
    fail("input must have rank 2 or 4, got shape " + formatShape(input.shape));
  requireDeviceMemory(context, input);
  if (input.rank() == 2)
    return NormLayout{input.dim(0), input.dim(1), 1, 1};
  return NormLayout{input.dim(0), input.dim(1), input.dim(2), input.dim(3)};
}

/// Checks a per-channel operand: the input's dtype, shape [C], on the
/// device.
CheckedTensor checkChannelTensor(fluid_cuda_context *context,
                                 const fluid_tensor *desc,
                                 const std::string &name,
                                 const CheckedTensor &input) {
  CheckedTensor t = checkTensor(desc, name);
  requireDtype(t, input);
  requireShape(t, {input.dim(1)});
  requireDeviceMemory(context, t);
  return t;
}

/// Checks a tensor of the input's dtype and shape, on the device.
CheckedTensor checkLikeInput(fluid_cuda_context *context,
                             const fluid_tensor *desc, const std::string &name,
                             const CheckedTensor &input) {
  CheckedTensor t = checkTensor(desc, name);
  requireDtype(t, input);
  requireShape(t, input.shape);
  requireDeviceMemory(context, t);
  return t;
}

void requireEpsilon(double epsilon) {
  if (!(epsilon >= CUDNN_BN_MIN_EPSILON)) {
    char message[96];
    std::snprintf(message, sizeof(message), "epsilon must be >= %g, got %g",
                  double(CUDNN_BN_MIN_EPSILON), epsilon);
    fail(message);
  }
}

/// The descriptors of one cuDNN batch-norm call: the data (x, y, dy, dx
/// share it) and the per-channel tensors derived from it.
struct NormDescriptors {
  TensorDescriptor data;
  TensorDescriptor perChannel;

  NormDescriptors(int32_t dtype, const NormLayout &l) {
    data.setNchw(dtype, l.batch, l.channels, l.height, l.width);
    FLUID_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(
        perChannel.get(), data.get(), CUDNN_BATCHNORM_SPATIAL));
  }
};

/// Copies a [C] tensor on the stream (nothing when it is the same buffer).
void copyChannels(fluid_cuda_context *context, const CheckedTensor &from,
                  const CheckedTensor &to) {
  if (from.desc->data == to.desc->data || from.numel == 0)
    return;
  FLUID_CUDA_CHECK(cudaMemcpyAsync(
      to.desc->data, from.desc->data,
      static_cast<size_t>(from.numel * fluid_dtype_size(from.dtype())),
      cudaMemcpyDeviceToDevice, streamOf(context)));
}

void zeroFill(fluid_cuda_context *context, const CheckedTensor &t) {
  FLUID_CUDA_CHECK(cudaMemsetAsync(
      t.desc->data, 0,
      static_cast<size_t>(t.numel * fluid_dtype_size(t.dtype())),
      streamOf(context)));
}

} // namespace

extern "C" fluid_status fluid_cuda_batch_norm(
    fluid_cuda_context *context, const fluid_tensor *inputDesc,
    const fluid_tensor *scaleDesc, const fluid_tensor *shiftDesc,
    const fluid_tensor *runningMeanDesc, const fluid_tensor *runningVarDesc,
    fluid_tensor *outputDesc, fluid_tensor *savedMeanDesc,
    fluid_tensor *savedInvStdDesc, fluid_tensor *newRunningMeanDesc,
    fluid_tensor *newRunningVarDesc, const fluid_batch_norm_params *params) {
  return guard("fluid_cuda_batch_norm", [&] {
    requireContext(context);
    CheckedTensor input = checkTensor(inputDesc, "input");
    NormLayout layout = checkNormInput(context, input);
    requireParams(params);
    requireEpsilon(params->epsilon);
    CheckedTensor scale =
        checkChannelTensor(context, scaleDesc, "scale", input);
    CheckedTensor shift =
        checkChannelTensor(context, shiftDesc, "shift", input);
    CheckedTensor runningMean =
        checkChannelTensor(context, runningMeanDesc, "running_mean", input);
    CheckedTensor runningVar =
        checkChannelTensor(context, runningVarDesc, "running_var", input);
    CheckedTensor output = checkLikeInput(context, outputDesc, "output", input);
    CheckedTensor savedMean =
        checkChannelTensor(context, savedMeanDesc, "saved_mean", input);
    CheckedTensor savedInvStd =
        checkChannelTensor(context, savedInvStdDesc, "saved_inv_std", input);
    CheckedTensor newRunningMean = checkChannelTensor(
        context, newRunningMeanDesc, "new_running_mean", input);
    CheckedTensor newRunningVar = checkChannelTensor(context, newRunningVarDesc,
                                                     "new_running_var", input);
    // The unbiased variance divides by count - 1.
    if (layout.valuesPerChannel() < 2)
      fail("training needs more than one value per channel, input shape " +
           formatShape(input.shape));
    if (layout.channels == 0)
      return;

    const int32_t dtype = input.dtype();
    copyChannels(context, runningMean, newRunningMean);
    copyChannels(context, runningVar, newRunningVar);
    NormDescriptors d(dtype, layout);
    FLUID_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
        cudnnOf(context), CUDNN_BATCHNORM_SPATIAL, scalarOne(dtype),
        scalarZero(dtype), d.data.get(), input.desc->data, d.data.get(),
        output.desc->data, d.perChannel.get(), scale.desc->data,
        shift.desc->data, params->momentum, newRunningMean.desc->data,
        newRunningVar.desc->data, params->epsilon, savedMean.desc->data,
        savedInvStd.desc->data));
  });
}

extern "C" fluid_status fluid_cuda_batch_norm_inference(
    fluid_cuda_context *context, const fluid_tensor *inputDesc,
    const fluid_tensor *scaleDesc, const fluid_tensor *shiftDesc,
    const fluid_tensor *meanDesc, const fluid_tensor *varDesc,
    fluid_tensor *outputDesc, double epsilon) {
  return guard("fluid_cuda_batch_norm_inference", [&] {
    requireContext(context);
    CheckedTensor input = checkTensor(inputDesc, "input");
    NormLayout layout = checkNormInput(context, input);
    requireEpsilon(epsilon);
    CheckedTensor scale =
        checkChannelTensor(context, scaleDesc, "scale", input);
    CheckedTensor shift =
        checkChannelTensor(context, shiftDesc, "shift", input);
    CheckedTensor mean = checkChannelTensor(context, meanDesc, "mean", input);
    CheckedTensor var = checkChannelTensor(context, varDesc, "var", input);
    CheckedTensor output = checkLikeInput(context, outputDesc, "output", input);
    if (output.numel == 0)
      return;

    const int32_t dtype = input.dtype();
    NormDescriptors d(dtype, layout);
    FLUID_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
        cudnnOf(context), CUDNN_BATCHNORM_SPATIAL, scalarOne(dtype),
        scalarZero(dtype), d.data.get(), input.desc->data, d.data.get(),
        output.desc->data, d.perChannel.get(), scale.desc->data,
        shift.desc->data, mean.desc->data, var.desc->data, epsilon));
  });
}

extern "C" fluid_status fluid_cuda_batch_norm_grad(
    fluid_cuda_context *context, const fluid_tensor *gradOutputDesc,
    const fluid_tensor *inputDesc, const fluid_tensor *scaleDesc,
    const fluid_tensor *savedMeanDesc, const fluid_tensor *savedInvStdDesc,
    fluid_tensor *gradInputDesc, fluid_tensor *gradScaleDesc,
    fluid_tensor *gradShiftDesc) {
  return guard("fluid_cuda_batch_norm_grad", [&] {
    requireContext(context);
    CheckedTensor input = checkTensor(inputDesc, "input");
    NormLayout layout = checkNormInput(context, input);
    CheckedTensor gradOutput =
        checkLikeInput(context, gradOutputDesc, "grad_output", input);
    CheckedTensor scale =
        checkChannelTensor(context, scaleDesc, "scale", input);
    CheckedTensor savedMean =
        checkChannelTensor(context, savedMeanDesc, "saved_mean", input);
    CheckedTensor savedInvStd =
        checkChannelTensor(context, savedInvStdDesc, "saved_inv_std", input);
    CheckedTensor gradInput =
        checkLikeInput(context, gradInputDesc, "grad_input", input);
    CheckedTensor gradScale =
        checkChannelTensor(context, gradScaleDesc, "grad_scale", input);
    CheckedTensor gradShift =
        checkChannelTensor(context, gradShiftDesc, "grad_shift", input);
    if (layout.channels == 0)
      return;
    if (layout.valuesPerChannel() == 0) {
      // Empty sums; cuDNN takes no empty tensors.
      zeroFill(context, gradScale);
      zeroFill(context, gradShift);
      return;
    }

    const int32_t dtype = input.dtype();
    NormDescriptors d(dtype, layout);
    FLUID_CUDNN_CHECK(cudnnBatchNormalizationBackward(
        cudnnOf(context), CUDNN_BATCHNORM_SPATIAL, scalarOne(dtype),
        scalarZero(dtype), scalarOne(dtype), scalarZero(dtype), d.data.get(),
        input.desc->data, d.data.get(), gradOutput.desc->data, d.data.get(),
        gradInput.desc->data, d.perChannel.get(), scale.desc->data,
        gradScale.desc->data, gradShift.desc->data, CUDNN_BN_MIN_EPSILON,
        savedMean.desc->data, savedInvStd.desc->data));
  });
}
