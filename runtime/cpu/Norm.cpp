//===- Norm.cpp - batch normalization on the cpu --------------------------===//
//
// Statistics are computed per channel in double, the variance in a second
// pass over the data (sum of squared deviations from the mean), which stays
// accurate when the mean is large compared to the spread. The output is
// normalized with the statistics rounded to the tensor's dtype, as saved,
// so that batch_norm_apply recomputes it bitwise from them.
//
//===----------------------------------------------------------------------===//

#include "Norm.h"
#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuKernels.h"

#include <cmath>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

ChannelLayout cpu::checkNormInput(const CheckedTensor &input) {
  requireFloat(input);
  if (input.rank() != 2 && input.rank() != 4)
    fail("input must have rank 2 or 4, got shape " + formatShape(input.shape));
  int64_t spatial = input.rank() == 4 ? input.dim(2) * input.dim(3) : 1;
  return ChannelLayout{input.dim(0), input.dim(1), spatial};
}

CheckedTensor cpu::checkChannelTensor(const fluid_tensor *desc,
                                      const std::string &name,
                                      const CheckedTensor &input) {
  CheckedTensor t = checkTensor(desc, name);
  requireDtype(t, input);
  requireShape(t, {input.dim(1)});
  return t;
}

CheckedTensor cpu::checkInputShapedTensor(const fluid_tensor *desc,
                                          const std::string &name,
                                          const CheckedTensor &input) {
  CheckedTensor t = checkTensor(desc, name);
  requireDtype(t, input);
  requireShape(t, input.shape);
  return t;
}

namespace {

/// output = (input - mean) * (scale * invStd) + shift over channel `c`, in
/// double, rounded once to T: the normalize loop of both batch_norm and
/// batch_norm_apply, so that batch_norm_apply with batch_norm's saved
/// statistics reproduces batch_norm's output bitwise. This file is compiled
/// with -ffp-contract=off, so the rounding does not depend on where the
/// compiler inlines this. Each element is read before it is written, at
/// its own index: output may be input.
template <typename T>
void normalizeChannel(const T *input, const T *scale, const T *shift,
                      double mean, double invStd, T *output,
                      const ChannelLayout &layout, int64_t c) {
  const double channelScale = double(scale[c]) * invStd;
  const double channelShift = shift[c];
  layout.forEachInChannel(c, [&](int64_t i) {
    output[i] = T((input[i] - mean) * channelScale + channelShift);
  });
}

template <typename T> struct BatchNormTensors {
  const T *input, *scale, *shift, *runningMean, *runningVar;
  T *output, *savedMean, *savedInvStd, *newRunningMean, *newRunningVar;
};

template <typename T>
void batchNorm(const BatchNormTensors<T> &t, const ChannelLayout &layout,
               double epsilon, double momentum) {
  const double count = double(layout.batch * layout.spatial);
  for (int64_t c = 0; c < layout.channels; ++c) {
    double sum = 0;
    layout.forEachInChannel(c, [&](int64_t i) { sum += t.input[i]; });
    const double mean = sum / count;
    double squares = 0;
    layout.forEachInChannel(c, [&](int64_t i) {
      double deviation = t.input[i] - mean;
      squares += deviation * deviation;
    });
    const double biasedVar = squares / count;
    const double invStd = 1.0 / std::sqrt(biasedVar + epsilon);
    // Normalize with the statistics as saved (rounded to T), which is all
    // batch_norm_apply gets.
    const T savedMean = T(mean), savedInvStd = T(invStd);
    normalizeChannel(t.input, t.scale, t.shift, double(savedMean),
                     double(savedInvStd), t.output, layout, c);

    t.savedMean[c] = savedMean;
    t.savedInvStd[c] = savedInvStd;
    // Read the running statistics before writing: they may be updated in
    // place.
    const double runningMean = t.runningMean[c];
    const double runningVar = t.runningVar[c];
    const double unbiasedVar = squares / (count - 1);
    t.newRunningMean[c] = T((1 - momentum) * runningMean + momentum * mean);
    t.newRunningVar[c] =
        T((1 - momentum) * runningVar + momentum * unbiasedVar);
  }
}

template <typename T>
void batchNormInference(const T *input, const T *scaleIn, const T *shiftIn,
                        const T *mean, const T *var, T *output,
                        const ChannelLayout &layout, double epsilon) {
  for (int64_t c = 0; c < layout.channels; ++c) {
    const double scale = scaleIn[c] / std::sqrt(double(var[c]) + epsilon);
    const double channelMean = mean[c];
    const double shift = shiftIn[c];
    layout.forEachInChannel(c, [&](int64_t i) {
      output[i] = T((input[i] - channelMean) * scale + shift);
    });
  }
}

void requireEpsilon(double epsilon) {
  if (!(epsilon >= 0))
    fail("epsilon must be >= 0, got " + std::to_string(epsilon));
}

} // namespace

extern "C" fluid_status fluid_cpu_batch_norm(
    const fluid_tensor *inputDesc, const fluid_tensor *scaleDesc,
    const fluid_tensor *shiftDesc, const fluid_tensor *runningMeanDesc,
    const fluid_tensor *runningVarDesc, fluid_tensor *outputDesc,
    fluid_tensor *savedMeanDesc, fluid_tensor *savedInvStdDesc,
    fluid_tensor *newRunningMeanDesc, fluid_tensor *newRunningVarDesc,
    const fluid_batch_norm_params *params) {
  if (auto status = throughF32(
          "fluid_cpu_batch_norm", fluid_cpu_batch_norm, inputDesc, scaleDesc,
          shiftDesc, runningMeanDesc, runningVarDesc, outputDesc, savedMeanDesc,
          savedInvStdDesc, newRunningMeanDesc, newRunningVarDesc, params))
    return *status;
  return guard("fluid_cpu_batch_norm", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    ChannelLayout layout = checkNormInput(input);
    requireParams(params);
    requireEpsilon(params->epsilon);
    CheckedTensor scale = checkChannelTensor(scaleDesc, "scale", input);
    CheckedTensor shift = checkChannelTensor(shiftDesc, "shift", input);
    CheckedTensor runningMean =
        checkChannelTensor(runningMeanDesc, "running_mean", input);
    CheckedTensor runningVar =
        checkChannelTensor(runningVarDesc, "running_var", input);
    CheckedTensor output = checkInputShapedTensor(outputDesc, "output", input);
    CheckedTensor savedMean =
        checkChannelTensor(savedMeanDesc, "saved_mean", input);
    CheckedTensor savedInvStd =
        checkChannelTensor(savedInvStdDesc, "saved_inv_std", input);
    CheckedTensor newRunningMean =
        checkChannelTensor(newRunningMeanDesc, "new_running_mean", input);
    CheckedTensor newRunningVar =
        checkChannelTensor(newRunningVarDesc, "new_running_var", input);
    // The unbiased variance divides by count - 1.
    if (layout.batch * layout.spatial < 2)
      fail("training needs more than one value per channel, input shape " +
           formatShape(input.shape));

    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      BatchNormTensors<T> t{input.data<T>(),          scale.data<T>(),
                            shift.data<T>(),          runningMean.data<T>(),
                            runningVar.data<T>(),     output.data<T>(),
                            savedMean.data<T>(),      savedInvStd.data<T>(),
                            newRunningMean.data<T>(), newRunningVar.data<T>()};
      batchNorm(t, layout, params->epsilon, params->momentum);
    });
  });
}

extern "C" fluid_status fluid_cpu_batch_norm_inference(
    const fluid_tensor *inputDesc, const fluid_tensor *scaleDesc,
    const fluid_tensor *shiftDesc, const fluid_tensor *meanDesc,
    const fluid_tensor *varDesc, fluid_tensor *outputDesc, double epsilon) {
  if (auto status =
          throughF32("fluid_cpu_batch_norm_inference",
                     fluid_cpu_batch_norm_inference, inputDesc, scaleDesc,
                     shiftDesc, meanDesc, varDesc, outputDesc, epsilon))
    return *status;
  return guard("fluid_cpu_batch_norm_inference", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    ChannelLayout layout = checkNormInput(input);
    requireEpsilon(epsilon);
    CheckedTensor scale = checkChannelTensor(scaleDesc, "scale", input);
    CheckedTensor shift = checkChannelTensor(shiftDesc, "shift", input);
    CheckedTensor mean = checkChannelTensor(meanDesc, "mean", input);
    CheckedTensor var = checkChannelTensor(varDesc, "var", input);
    CheckedTensor output = checkInputShapedTensor(outputDesc, "output", input);

    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      batchNormInference(input.data<T>(), scale.data<T>(), shift.data<T>(),
                         mean.data<T>(), var.data<T>(), output.data<T>(),
                         layout, epsilon);
    });
  });
}

extern "C" fluid_status fluid_cpu_batch_norm_apply(
    const fluid_tensor *inputDesc, const fluid_tensor *scaleDesc,
    const fluid_tensor *shiftDesc, const fluid_tensor *meanDesc,
    const fluid_tensor *invStdDesc, fluid_tensor *outputDesc) {
  if (auto status = throughF32("fluid_cpu_batch_norm_apply",
                               fluid_cpu_batch_norm_apply, inputDesc, scaleDesc,
                               shiftDesc, meanDesc, invStdDesc, outputDesc))
    return *status;
  return guard("fluid_cpu_batch_norm_apply", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    ChannelLayout layout = checkNormInput(input);
    CheckedTensor scale = checkChannelTensor(scaleDesc, "scale", input);
    CheckedTensor shift = checkChannelTensor(shiftDesc, "shift", input);
    CheckedTensor mean = checkChannelTensor(meanDesc, "mean", input);
    CheckedTensor invStd = checkChannelTensor(invStdDesc, "inv_std", input);
    CheckedTensor output = checkInputShapedTensor(outputDesc, "output", input);

    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T *meanData = mean.data<T>(), *invStdData = invStd.data<T>();
      for (int64_t c = 0; c < layout.channels; ++c)
        normalizeChannel(input.data<T>(), scale.data<T>(), shift.data<T>(),
                         double(meanData[c]), double(invStdData[c]),
                         output.data<T>(), layout, c);
    });
  });
}
