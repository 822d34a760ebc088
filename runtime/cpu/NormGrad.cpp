//===- NormGrad.cpp - Gradient of training-mode batch norm on the cpu -----===//
//
// The forward normalized with batch statistics, so the input gradient has,
// besides the direct path through (x - mean) * inv_std, the paths through
// the mean and the variance: per channel, with xhat the normalized input and
// M the values per channel, dx = scale * inv_std * (g - mean(g) - xhat *
// mean(g * xhat)). Both channel sums are taken in double in a first pass.
//
//===----------------------------------------------------------------------===//

#include "Norm.h"
#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuGradKernels.h"

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

template <typename T> struct BatchNormGradTensors {
  const T *gradOutput, *input, *scale, *mean, *invStd;
  T *gradInput, *gradScale, *gradShift;
};

template <typename T>
void batchNormGrad(const BatchNormGradTensors<T> &t,
                   const ChannelLayout &layout) {
  const double count = double(layout.batch * layout.spatial);
  for (int64_t c = 0; c < layout.channels; ++c) {
    const double mean = t.mean[c], invStd = t.invStd[c];
    double sumGrad = 0, sumGradXhat = 0;
    layout.forEachInChannel(c, [&](int64_t i) {
      const double grad = t.gradOutput[i];
      sumGrad += grad;
      sumGradXhat += grad * (t.input[i] - mean) * invStd;
    });
    t.gradShift[c] = T(sumGrad);
    t.gradScale[c] = T(sumGradXhat);
    if (count == 0)
      continue;
    const double meanGrad = sumGrad / count;
    const double meanGradXhat = sumGradXhat / count;
    const double factor = double(t.scale[c]) * invStd;
    layout.forEachInChannel(c, [&](int64_t i) {
      const double xhat = (t.input[i] - mean) * invStd;
      t.gradInput[i] =
          T(factor * (t.gradOutput[i] - meanGrad - xhat * meanGradXhat));
    });
  }
}

} // namespace

extern "C" fluid_status fluid_cpu_batch_norm_grad(
    const fluid_tensor *gradOutputDesc, const fluid_tensor *inputDesc,
    const fluid_tensor *scaleDesc, const fluid_tensor *savedMeanDesc,
    const fluid_tensor *savedInvStdDesc, fluid_tensor *gradInputDesc,
    fluid_tensor *gradScaleDesc, fluid_tensor *gradShiftDesc) {
  if (auto status = throughF32(
          "fluid_cpu_batch_norm_grad", fluid_cpu_batch_norm_grad,
          gradOutputDesc, inputDesc, scaleDesc, savedMeanDesc, savedInvStdDesc,
          gradInputDesc, gradScaleDesc, gradShiftDesc))
    return *status;
  return guard("fluid_cpu_batch_norm_grad", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    ChannelLayout layout = checkNormInput(input);
    CheckedTensor gradOutput =
        checkInputShapedTensor(gradOutputDesc, "grad_output", input);
    CheckedTensor scale = checkChannelTensor(scaleDesc, "scale", input);
    CheckedTensor savedMean =
        checkChannelTensor(savedMeanDesc, "saved_mean", input);
    CheckedTensor savedInvStd =
        checkChannelTensor(savedInvStdDesc, "saved_inv_std", input);
    CheckedTensor gradInput =
        checkInputShapedTensor(gradInputDesc, "grad_input", input);
    CheckedTensor gradScale =
        checkChannelTensor(gradScaleDesc, "grad_scale", input);
    CheckedTensor gradShift =
        checkChannelTensor(gradShiftDesc, "grad_shift", input);

    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      BatchNormGradTensors<T> t{gradOutput.data<T>(),  input.data<T>(),
                                scale.data<T>(),       savedMean.data<T>(),
                                savedInvStd.data<T>(), gradInput.data<T>(),
                                gradScale.data<T>(),   gradShift.data<T>()};
      batchNormGrad(t, layout);
    });
  });
}
