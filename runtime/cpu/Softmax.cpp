//===- Softmax.cpp - softmax, log_softmax and cross-entropy on the cpu ----===//
//
// Every exponential is taken after subtracting the maximum of its slice, so
// large logits neither overflow nor lose the small ones; sums are in double.
//
//===----------------------------------------------------------------------===//

#include "Softmax.h"
#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuKernels.h"

#include <cmath>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

template <typename T>
void softmax(const T *input, T *output, const AxisSplit &split, bool log) {
  for (int64_t o = 0; o < split.outer; ++o) {
    for (int64_t j = 0; j < split.inner; ++j) {
      const int64_t base = o * split.length * split.inner + j;
      const T *x = input + base;
      T *y = output + base;
      SliceStats<T> stats(x, split.length, split.inner);
      const double logSum = std::log(stats.sumExp);
      for (int64_t i = 0; i < split.length; ++i) {
        const double shifted = x[i * split.inner] - stats.max;
        y[i * split.inner] =
            T(log ? shifted - logSum : std::exp(shifted) / stats.sumExp);
      }
    }
  }
}

fluid_status softmaxEntry(const char *entryPoint, const fluid_tensor *inputDesc,
                          fluid_tensor *outputDesc, int64_t axis, bool log) {
  return guard(entryPoint, [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireFloat(input);
    requireDtype(output, input);
    requireShape(output, input.shape);
    AxisSplit split = splitAtAxis(input, axis);
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      softmax(input.data<T>(), output.data<T>(), split, log);
    });
  });
}

template <typename T>
void softmaxCrossEntropy(const T *logits, const std::vector<int64_t> &labels,
                         T *output, int64_t classes, int32_t reduction) {
  const int64_t rows = static_cast<int64_t>(labels.size());
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T *row = logits + r * classes;
    double loss = SliceStats<T>(row, classes, 1).logSumExp() - row[labels[r]];
    if (reduction == FLUID_REDUCTION_NONE)
      output[r] = T(loss);
    total += loss;
  }
  if (reduction == FLUID_REDUCTION_SUM)
    output[0] = T(total);
  else if (reduction == FLUID_REDUCTION_MEAN)
    output[0] = T(total / double(rows));
}

} // namespace

extern "C" fluid_status fluid_cpu_softmax(const fluid_tensor *input,
                                          fluid_tensor *output, int64_t axis) {
  if (auto status = throughF32("fluid_cpu_softmax", fluid_cpu_softmax, input,
                               output, axis))
    return *status;
  return softmaxEntry("fluid_cpu_softmax", input, output, axis,
                      /*log=*/false);
}

extern "C" fluid_status fluid_cpu_log_softmax(const fluid_tensor *input,
                                              fluid_tensor *output,
                                              int64_t axis) {
  if (auto status = throughF32("fluid_cpu_log_softmax", fluid_cpu_log_softmax,
                               input, output, axis))
    return *status;
  return softmaxEntry("fluid_cpu_log_softmax", input, output, axis,
                      /*log=*/true);
}

extern "C" fluid_status
fluid_cpu_softmax_cross_entropy(const fluid_tensor *logitsDesc,
                                const fluid_tensor *labelsDesc,
                                fluid_tensor *outputDesc, int32_t reduction) {
  if (auto status = throughF32("fluid_cpu_softmax_cross_entropy",
                               fluid_cpu_softmax_cross_entropy, logitsDesc,
                               labelsDesc, outputDesc, reduction))
    return *status;
  return guard("fluid_cpu_softmax_cross_entropy", [&] {
    CheckedTensor logits = checkTensor(logitsDesc, "logits");
    CheckedTensor labels = checkTensor(labelsDesc, "labels");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireFloat(logits);
    requireRank(logits, 2);
    requireClassLabelDtype(labels);
    const int64_t rows = logits.dim(0), classes = logits.dim(1);
    requireShape(labels, {rows});
    requireDtype(output, logits);
    requireLossShape(output, rows, reduction);
    std::vector<int64_t> labelValues = readClassLabels(labels, classes);

    dispatchFloat(logits.dtype(), [&](auto zero) {
      using T = decltype(zero);
      softmaxCrossEntropy(logits.data<T>(), labelValues, output.data<T>(),
                          classes, reduction);
    });
  });
}
