//===- Softmax.h - The shifted exponential sums of softmax on the cpu -----===//
//
// Shared by softmax, log_softmax and cross-entropy (Softmax.cpp) and the
// cross-entropy gradient (SoftmaxGrad.cpp), so that both take every
// exponential the same way.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPU_SOFTMAX_H
#define FLUID_RUNTIME_CPU_SOFTMAX_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace fluid::rt::cpu {

/// The maximum of `length` values `stride` apart, and the sum of their
/// exponentials after subtracting it, in double: subtracting the maximum
/// keeps large values from overflowing and small ones from being lost.
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

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_SOFTMAX_H
