//===- Math.cpp - Elementwise math, select and cast on the cpu ------------===//
//
// The arithmetic learning-rate schedules are written in (exp, cos, pow,
// floor, minimum, comparisons, select, casts of the step counter) and erf
// (GELU), with PyTorch's NaN behaviour. Every kernel but cast goes through
// mapBroadcast, which writes each output element after reading its operands, so
// an output may be the buffer of an input of its shape.
//
//===----------------------------------------------------------------------===//

#include "Broadcasting.h"
#include "TensorChecks.h"
#include "Widen.h"
#include "fluid/runtime/Float16.h"

#include "fluid/runtime/CpuOptimizerKernels.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// Calls `body(T{})` with T the C++ type of a dtype cast converts between.
template <typename Fn>
void dispatchCastable(const CheckedTensor &t, Fn &&body) {
  switch (t.dtype()) {
  case FLUID_F32:
    return body(float{});
  case FLUID_F64:
    return body(double{});
  case FLUID_I32:
    return body(int32_t{});
  case FLUID_I64:
    return body(int64_t{});
  case FLUID_F16:
    return body(Half{});
  case FLUID_BF16:
    return body(BFloat16{});
  default:
    throw Error(FLUID_ERROR_UNSUPPORTED,
                t.name + " has dtype " + dtypeName(t.dtype()) +
                    "; cast supports f16, bf16, f32, f64, i32 and i64");
  }
}

template <typename T>
constexpr bool isFloating = std::is_floating_point_v<T> || isFloat16<T>;

/// A 16-bit element's (exact) f32 value; any other element as it is.
template <typename T> auto widened(T x) {
  if constexpr (isFloat16<T>)
    return static_cast<float>(x);
  else
    return x;
}

/// Whether converting x to To is defined and is x truncated toward zero
/// (for an integer To) or x rounded (for a float To).
template <typename To, typename From> bool castable(From x) {
  if constexpr (isFloat16<From>) {
    return castable<To>(widened(x));
  } else if constexpr (isFloating<To>) {
    return true;
  } else if constexpr (std::is_floating_point_v<From>) {
    // -2^digits and 2^digits are exact in every float type; NaN fails.
    const From limit = std::ldexp(From(1), std::numeric_limits<To>::digits);
    const From truncated = std::trunc(x);
    return truncated >= -limit && truncated < limit;
  } else if constexpr (sizeof(From) <= sizeof(To)) {
    return true;
  } else {
    return x >= std::numeric_limits<To>::min() &&
           x <= std::numeric_limits<To>::max();
  }
}

/// `x` with enough digits to tell it from its neighbours.
template <typename T> std::string formatElement(T x) {
  std::ostringstream text;
  text.precision(std::numeric_limits<decltype(widened(x))>::max_digits10);
  text << widened(x);
  return text.str();
}

/// `x` as a `To`: to a 16-bit type rounded once (an integer through f64),
/// from one through its exact f32 value.
template <typename To, typename From> To convertElement(From x) {
  if constexpr (isFloat16<To>) {
    if constexpr (std::is_integral_v<From>)
      return To(static_cast<double>(x));
    else
      return To(widened(x));
  } else {
    return static_cast<To>(widened(x));
  }
}

template <typename To, typename From>
void cast(const CheckedTensor &input, const CheckedTensor &output) {
  const From *in = input.data<From>();
  for (int64_t i = 0; i < input.numel; ++i) {
    if (castable<To>(in[i]))
      continue;
    if constexpr (isFloating<From>)
      if (std::isnan(widened(in[i])))
        fail(input.name + " element " + std::to_string(i) +
             " is NaN, which has no " + dtypeName(output.dtype()) + " value");
    fail(input.name + " element " + std::to_string(i) + " (" +
         formatElement(in[i]) + ") is outside the range of " +
         dtypeName(output.dtype()));
  }
  To *out = output.data<To>();
  if constexpr (std::is_same_v<To, From>) {
    if (input.numel > 0 && in != out)
      std::memcpy(out, in, sizeof(To) * input.numel);
  } else {
    for (int64_t i = 0; i < input.numel; ++i)
      out[i] = convertElement<To>(in[i]);
  }
}

} // namespace

extern "C" fluid_status fluid_cpu_neg(const fluid_tensor *input,
                                      fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_neg", fluid_cpu_neg, input, output))
    return *status;
  return unaryEntry("fluid_cpu_neg", input, output, [](auto x) { return -x; });
}

extern "C" fluid_status fluid_cpu_exp(const fluid_tensor *input,
                                      fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_exp", fluid_cpu_exp, input, output))
    return *status;
  return unaryEntry("fluid_cpu_exp", input, output,
                    [](auto x) { return std::exp(x); });
}

extern "C" fluid_status fluid_cpu_log(const fluid_tensor *input,
                                      fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_log", fluid_cpu_log, input, output))
    return *status;
  return unaryEntry("fluid_cpu_log", input, output,
                    [](auto x) { return std::log(x); });
}

extern "C" fluid_status fluid_cpu_cos(const fluid_tensor *input,
                                      fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_cos", fluid_cpu_cos, input, output))
    return *status;
  return unaryEntry("fluid_cpu_cos", input, output,
                    [](auto x) { return std::cos(x); });
}

extern "C" fluid_status fluid_cpu_sqrt(const fluid_tensor *input,
                                       fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_sqrt", fluid_cpu_sqrt, input, output))
    return *status;
  return unaryEntry("fluid_cpu_sqrt", input, output,
                    [](auto x) { return std::sqrt(x); });
}

extern "C" fluid_status fluid_cpu_floor(const fluid_tensor *input,
                                        fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_floor", fluid_cpu_floor, input, output))
    return *status;
  return unaryEntry("fluid_cpu_floor", input, output,
                    [](auto x) { return std::floor(x); });
}

extern "C" fluid_status fluid_cpu_erf(const fluid_tensor *input,
                                      fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_erf", fluid_cpu_erf, input, output))
    return *status;
  return unaryEntry("fluid_cpu_erf", input, output,
                    [](auto x) { return std::erf(x); });
}

extern "C" fluid_status fluid_cpu_pow(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_pow", fluid_cpu_pow, lhs, rhs, output))
    return *status;
  return binaryEntry("fluid_cpu_pow", lhs, rhs, output,
                     [](auto a, auto b) { return std::pow(a, b); });
}

// `a != a` picks a NaN lhs; a NaN rhs fails the comparison and is picked.
extern "C" fluid_status fluid_cpu_minimum(const fluid_tensor *lhs,
                                          const fluid_tensor *rhs,
                                          fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_minimum", fluid_cpu_minimum, lhs, rhs, output))
    return *status;
  return binaryEntry("fluid_cpu_minimum", lhs, rhs, output,
                     [](auto a, auto b) { return a < b || a != a ? a : b; });
}

extern "C" fluid_status fluid_cpu_maximum(const fluid_tensor *lhs,
                                          const fluid_tensor *rhs,
                                          fluid_tensor *output) {
  if (auto status =
          throughF32("fluid_cpu_maximum", fluid_cpu_maximum, lhs, rhs, output))
    return *status;
  return binaryEntry("fluid_cpu_maximum", lhs, rhs, output,
                     [](auto a, auto b) { return a > b || a != a ? a : b; });
}

extern "C" fluid_status fluid_cpu_greater_equal(const fluid_tensor *lhs,
                                                const fluid_tensor *rhs,
                                                fluid_tensor *output) {
  if (auto status = throughF32("fluid_cpu_greater_equal",
                               fluid_cpu_greater_equal, lhs, rhs, output))
    return *status;
  return binaryEntry(
      "fluid_cpu_greater_equal", lhs, rhs, output,
      [](auto a, auto b) { return decltype(a)(a >= b ? 1 : 0); });
}

extern "C" fluid_status fluid_cpu_select(const fluid_tensor *conditionDesc,
                                         const fluid_tensor *onTrueDesc,
                                         const fluid_tensor *onFalseDesc,
                                         fluid_tensor *outputDesc) {
  if (auto status =
          throughF32("fluid_cpu_select", fluid_cpu_select, conditionDesc,
                     onTrueDesc, onFalseDesc, outputDesc))
    return *status;
  return guard("fluid_cpu_select", [&] {
    CheckedTensor condition = checkTensor(conditionDesc, "condition");
    CheckedTensor onTrue = checkTensor(onTrueDesc, "on_true");
    CheckedTensor onFalse = checkTensor(onFalseDesc, "on_false");
    CheckedTensor output = checkTensor(outputDesc, "output");
    mapBroadcast<3>({&condition, &onTrue, &onFalse}, output,
                    [](auto c, auto a, auto b) { return c != 0 ? a : b; });
  });
}

extern "C" fluid_status fluid_cpu_cast(const fluid_tensor *inputDesc,
                                       fluid_tensor *outputDesc) {
  return guard("fluid_cpu_cast", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireShape(output, input.shape);
    dispatchCastable(input, [&](auto from) {
      dispatchCastable(output, [&](auto to) {
        cast<decltype(to), decltype(from)>(input, output);
      });
    });
  });
}
