//===- Softmax.cpp - softmax, log_softmax and cross-entropy on the cpu ----===//
//
// Every exponential is taken after subtracting the maximum of its slice, so
// large logits neither overflow nor lose the small ones; sums are in double.
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"

#include "fluid/runtime/CpuKernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// A tensor seen as [outer, length, inner] around the softmax axis.
struct AxisLayout {
  int64_t outer = 1, length = 1, inner = 1;
};

AxisLayout axisLayout(const CheckedTensor &t, int64_t axis) {
  if (axis < 0 || axis >= t.rank())
    fail("axis " + std::to_string(axis) + " is outside [0, " +
         std::to_string(t.rank()) + ") for " + t.name + " shape " +
         formatShape(t.shape));
  AxisLayout layout;
  for (int64_t d = 0; d < axis; ++d)
    layout.outer *= t.dim(d);
  layout.length = t.dim(axis);
  for (int64_t d = axis + 1; d < t.rank(); ++d)
    layout.inner *= t.dim(d);
  return layout;
}

/// The maximum of `length` values `stride` apart, and the sum of their
/// exponentials after subtracting it.
template <typename T> struct SliceStats {
  double max, sumExp;

  SliceStats(const T *x, int64_t length, int64_t stride) {
    max = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < length; ++i)
      max = std::max(max, double(x[i * stride]));
    sumExp = 0;
    for (int64_t i = 0; i < length; ++i)
      sumExp += std::exp(x[i * stride] - max);
  }
  double logSumExp() const { return max + std::log(sumExp); }
};

template <typename T>
void softmax(const T *input, T *output, const AxisLayout &layout, bool log) {
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t j = 0; j < layout.inner; ++j) {
      const int64_t base = o * layout.length * layout.inner + j;
      const T *x = input + base;
      T *y = output + base;
      SliceStats<T> stats(x, layout.length, layout.inner);
      const double logSum = std::log(stats.sumExp);
      for (int64_t i = 0; i < layout.length; ++i) {
        const double shifted = x[i * layout.inner] - stats.max;
        y[i * layout.inner] =
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
    AxisLayout layout = axisLayout(input, axis);
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      softmax(input.data<T>(), output.data<T>(), layout, log);
    });
  });
}

/// Reads the labels as int64 and checks each is a class index in
/// [0, classes).
std::vector<int64_t> readLabels(const CheckedTensor &labels, int64_t classes) {
  std::vector<int64_t> values(labels.numel);
  for (int64_t i = 0; i < labels.numel; ++i)
    values[i] = labels.dtype() == FLUID_I64 ? labels.data<int64_t>()[i]
                                            : labels.data<int32_t>()[i];
  for (int64_t i = 0; i < labels.numel; ++i)
    if (values[i] < 0 || values[i] >= classes)
      fail("label " + std::to_string(values[i]) + " in row " +
           std::to_string(i) + " is outside [0, " + std::to_string(classes) +
           ")");
  return values;
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
  return softmaxEntry("fluid_cpu_softmax", input, output, axis,
                      /*log=*/false);
}

extern "C" fluid_status fluid_cpu_log_softmax(const fluid_tensor *input,
                                              fluid_tensor *output,
                                              int64_t axis) {
  return softmaxEntry("fluid_cpu_log_softmax", input, output, axis,
                      /*log=*/true);
}

extern "C" fluid_status
fluid_cpu_softmax_cross_entropy(const fluid_tensor *logitsDesc,
                                const fluid_tensor *labelsDesc,
                                fluid_tensor *outputDesc, int32_t reduction) {
  return guard("fluid_cpu_softmax_cross_entropy", [&] {
    CheckedTensor logits = checkTensor(logitsDesc, "logits");
    CheckedTensor labels = checkTensor(labelsDesc, "labels");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireFloat(logits);
    requireRank(logits, 2);
    if (labels.dtype() != FLUID_I64 && labels.dtype() != FLUID_I32)
      fail("labels has dtype " + dtypeName(labels.dtype()) +
           "; expected i64 or i32");
    const int64_t rows = logits.dim(0), classes = logits.dim(1);
    requireShape(labels, {rows});
    requireDtype(output, logits);
    if (reduction == FLUID_REDUCTION_NONE)
      requireShape(output, {rows});
    else if (reduction == FLUID_REDUCTION_MEAN ||
             reduction == FLUID_REDUCTION_SUM)
      requireShape(output, {});
    else
      fail("unknown reduction " + std::to_string(reduction) +
           " (expected 0 mean, 1 sum or 2 none)");
    std::vector<int64_t> labelValues = readLabels(labels, classes);

    dispatchFloat(logits.dtype(), [&](auto zero) {
      using T = decltype(zero);
      softmaxCrossEntropy(logits.data<T>(), labelValues, output.data<T>(),
                          classes, reduction);
    });
  });
}
