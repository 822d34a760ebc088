//===- SoftmaxGrad.cpp - Gradients of softmax, log_softmax, cross-entropy -===//
//
// The softmax gradients need one sum per slice along the axis, taken in
// double before any element of the slice is written, so grad_input may
// share its buffer with grad_output or output. The cross-entropy gradient
// recomputes the softmax of each row from the logits (shifted by the row's
// maximum, as in the forward).
//
//===----------------------------------------------------------------------===//

#include "Softmax.h"
#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuGradKernels.h"

#include <cmath>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

template <typename T>
void softmaxGrad(const T *gradOutput, const T *output, T *gradInput,
                 const AxisSplit &split, bool log) {
  const int64_t stride = split.inner;
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t j = 0; j < split.inner; ++j) {
      const int64_t base = o * split.length * split.inner + j;
      const T *g = gradOutput + base;
      const T *y = output + base;
      T *result = gradInput + base;
      // softmax: sum(g * y); log_softmax: sum(g).
      double sum = 0;
      for (int64_t i = 0; i < split.length; ++i)
        sum +=
            log ? double(g[i * stride]) : double(g[i * stride]) * y[i * stride];
      for (int64_t i = 0; i < split.length; ++i) {
        const double grad = g[i * stride], value = y[i * stride];
        result[i * stride] =
            T(log ? grad - std::exp(value) * sum : value * (grad - sum));
      }
    }
  }
}

fluid_status softmaxGradEntry(const char *entryPoint,
                              const fluid_tensor *gradOutputDesc,
                              const fluid_tensor *outputDesc,
                              fluid_tensor *gradInputDesc, int64_t axis,
                              bool log) {
  return guard(entryPoint, [&] {
    OutputGradOperands t =
        checkOutputGradOperands(gradOutputDesc, outputDesc, gradInputDesc);
    AxisSplit split = splitAtAxis(t.output, axis);
    dispatchFloat(t.output.dtype(), [&](auto zero) {
      using T = decltype(zero);
      softmaxGrad(t.gradOutput.data<T>(), t.output.data<T>(),
                  t.gradInput.data<T>(), split, log);
    });
  });
}

template <typename T>
void softmaxCrossEntropyGrad(const T *gradLoss, const T *logits,
                             const std::vector<int64_t> &labels, T *gradLogits,
                             int64_t classes, int32_t reduction) {
  const int64_t rows = static_cast<int64_t>(labels.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double scale = reduction == FLUID_REDUCTION_NONE ? gradLoss[r]
                         : reduction == FLUID_REDUCTION_SUM
                             ? gradLoss[0]
                             : gradLoss[0] / double(rows);
    const T *row = logits + r * classes;
    const SliceStats<T> stats(row, classes, 1);
    T *gradRow = gradLogits + r * classes;
    for (int64_t c = 0; c < classes; ++c) {
      const double probability = std::exp(row[c] - stats.max) / stats.sumExp;
      gradRow[c] = T((probability - (c == labels[r] ? 1.0 : 0.0)) * scale);
    }
  }
}

} // namespace

extern "C" fluid_status fluid_cpu_softmax_grad(const fluid_tensor *gradOutput,
                                               const fluid_tensor *output,
                                               fluid_tensor *gradInput,
                                               int64_t axis) {
  if (auto status = throughF32("fluid_cpu_softmax_grad", fluid_cpu_softmax_grad,
                               gradOutput, output, gradInput, axis))
    return *status;
  return softmaxGradEntry("fluid_cpu_softmax_grad", gradOutput, output,
                          gradInput, axis, /*log=*/false);
}

extern "C" fluid_status
fluid_cpu_log_softmax_grad(const fluid_tensor *gradOutput,
                           const fluid_tensor *output, fluid_tensor *gradInput,
                           int64_t axis) {
  if (auto status =
          throughF32("fluid_cpu_log_softmax_grad", fluid_cpu_log_softmax_grad,
                     gradOutput, output, gradInput, axis))
    return *status;
  return softmaxGradEntry("fluid_cpu_log_softmax_grad", gradOutput, output,
                          gradInput, axis, /*log=*/true);
}

extern "C" fluid_status fluid_cpu_softmax_cross_entropy_grad(
    const fluid_tensor *gradLossDesc, const fluid_tensor *logitsDesc,
    const fluid_tensor *labelsDesc, fluid_tensor *gradLogitsDesc,
    int32_t reduction) {
  if (auto status =
          throughF32("fluid_cpu_softmax_cross_entropy_grad",
                     fluid_cpu_softmax_cross_entropy_grad, gradLossDesc,
                     logitsDesc, labelsDesc, gradLogitsDesc, reduction))
    return *status;
  return guard("fluid_cpu_softmax_cross_entropy_grad", [&] {
    CheckedTensor gradLoss = checkTensor(gradLossDesc, "grad_loss");
    CheckedTensor logits = checkTensor(logitsDesc, "logits");
    CheckedTensor labels = checkTensor(labelsDesc, "labels");
    CheckedTensor gradLogits = checkTensor(gradLogitsDesc, "grad_logits");
    requireFloat(logits);
    requireRank(logits, 2);
    const int64_t rows = logits.dim(0), classes = logits.dim(1);
    requireShape(labels, {rows});
    requireDtype(gradLoss, logits);
    requireLossShape(gradLoss, rows, reduction);
    requireDtype(gradLogits, logits);
    requireShape(gradLogits, logits.shape);
    std::vector<int64_t> labelValues = readClassLabels(labels, classes);

    dispatchFloat(logits.dtype(), [&](auto zero) {
      using T = decltype(zero);
      softmaxCrossEntropyGrad(gradLoss.data<T>(), logits.data<T>(), labelValues,
                              gradLogits.data<T>(), classes, reduction);
    });
  });
}
