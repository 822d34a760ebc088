//===- Elementwise.cpp - Unary and broadcasting binary ops on the cpu -----===//
//
// Each element of the output is written after both of its operands were
// read, so an output may share its buffer with an input of the same shape.
//
//===----------------------------------------------------------------------===//

#include "Broadcasting.h"
#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuKernels.h"

#include <cmath>
#include <type_traits>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// Like binaryEntry(), but integer operands (i32, i64: step counters) are
/// allowed too. Integer overflow wraps, as the counter never gets near it.
template <typename Fn>
fluid_status arithmetic(const char *entryPoint, const fluid_tensor *lhsDesc,
                        const fluid_tensor *rhsDesc, fluid_tensor *outputDesc,
                        Fn &&apply) {
  return guard(entryPoint, [&] {
    CheckedTensor lhs = checkTensor(lhsDesc, "lhs");
    CheckedTensor rhs = checkTensor(rhsDesc, "rhs");
    CheckedTensor output = checkTensor(outputDesc, "output");
    if (lhs.dtype() != FLUID_I32 && lhs.dtype() != FLUID_I64)
      return mapBroadcast<2>({&lhs, &rhs}, output, apply);
    requireDtype(rhs, lhs);
    requireDtype(output, lhs);
    requireShape(output, broadcastShapes<2>({&lhs, &rhs}));
    auto run = [&](auto zero) {
      using T = decltype(zero);
      using Wide = std::make_unsigned_t<T>;
      const T *a = lhs.data<T>(), *b = rhs.data<T>();
      T *out = output.data<T>();
      forEachBroadcastElement<2>(
          output.shape, {lhs.shape, rhs.shape},
          [&](int64_t i, const std::array<int64_t, 2> &at) {
            // Unsigned arithmetic wraps instead of being undefined.
            out[i] = static_cast<T>(apply(static_cast<Wide>(a[at[0]]),
                                          static_cast<Wide>(b[at[1]])));
          });
    };
    if (lhs.dtype() == FLUID_I32)
      run(int32_t{});
    else
      run(int64_t{});
  });
}

} // namespace

extern "C" fluid_status fluid_cpu_relu(const fluid_tensor *input,
                                       fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_relu", fluid_cpu_relu, input, output))
    return *status;
  // `x < 0 ? 0 : x` rather than max(x, 0) so that NaN propagates.
  return unaryEntry("fluid_cpu_relu", input, output,
                    [](auto x) { return x < 0 ? decltype(x)(0) : x; });
}

extern "C" fluid_status fluid_cpu_sigmoid(const fluid_tensor *input,
                                          fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_sigmoid", fluid_cpu_sigmoid, input, output))
    return *status;
  return unaryEntry("fluid_cpu_sigmoid", input, output, [](auto x) {
    using T = decltype(x);
    return T(1) / (T(1) + std::exp(-x));
  });
}

extern "C" fluid_status fluid_cpu_tanh(const fluid_tensor *input,
                                       fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_tanh", fluid_cpu_tanh, input, output))
    return *status;
  return unaryEntry("fluid_cpu_tanh", input, output,
                    [](auto x) { return std::tanh(x); });
}

extern "C" fluid_status fluid_cpu_add(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_add", fluid_cpu_add, lhs, rhs, output))
    return *status;
  return arithmetic("fluid_cpu_add", lhs, rhs, output,
                    [](auto a, auto b) { return a + b; });
}

extern "C" fluid_status fluid_cpu_sub(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_sub", fluid_cpu_sub, lhs, rhs, output))
    return *status;
  return arithmetic("fluid_cpu_sub", lhs, rhs, output,
                    [](auto a, auto b) { return a - b; });
}

extern "C" fluid_status fluid_cpu_mul(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_mul", fluid_cpu_mul, lhs, rhs, output))
    return *status;
  return arithmetic("fluid_cpu_mul", lhs, rhs, output,
                    [](auto a, auto b) { return a * b; });
}

extern "C" fluid_status fluid_cpu_div(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_div", fluid_cpu_div, lhs, rhs, output))
    return *status;
  return binaryEntry("fluid_cpu_div", lhs, rhs, output,
                     [](auto a, auto b) { return a / b; });
}
