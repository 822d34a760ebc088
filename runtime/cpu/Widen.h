//===- Widen.h - f16 and bf16 tensors through the f32 kernels ---*- C++ -*-===//
//
// The cpu kernels compute in f32 or f64. A kernel called with f16 or bf16
// tensors runs as the cuda backend's 16-bit paths do: each 16-bit tensor is
// widened to an f32 copy (exactly), the f32 kernel runs on the copies, and
// each 16-bit output is rounded back once, to nearest even. Outputs are
// widened too before the call, for the kernels that also read them
// (running statistics). Every entry point of CpuKernels.h and
// CpuGradKernels.h starts with
//
//   if (auto status = throughF32("fluid_cpu_relu", fluid_cpu_relu, input,
//                                output))
//     return *status;
//
// which does nothing unless a tensor argument is 16-bit.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPU_WIDEN_H
#define FLUID_RUNTIME_CPU_WIDEN_H

#include "TensorChecks.h"
#include "fluid/runtime/Float16.h"

#include "fluid/runtime/Error.h"
#include "fluid/runtime/Tensor.h"

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace fluid::rt::cpu {

namespace detail {

template <typename A>
constexpr bool isTensorArgument = std::is_same_v<A, const fluid_tensor *> ||
                                  std::is_same_v<A, fluid_tensor *>;

template <typename A> bool isFloat16Argument(A arg) {
  if constexpr (isTensorArgument<A>)
    return arg && isFloat16Dtype(arg->dtype);
  else
    return false;
}

/// The f32 copy of a 16-bit tensor, and where its values go back to (an
/// output) or null (an input).
struct WidenedTensor {
  fluid_tensor desc = {};
  std::vector<float> values;
  fluid_tensor *target = nullptr;
};

template <typename A>
A widenArgument(A arg, std::vector<std::unique_ptr<WidenedTensor>> &held) {
  if constexpr (!isTensorArgument<A>) {
    return arg;
  } else {
    if (!isFloat16Argument(arg))
      return arg;
    CheckedTensor t = checkTensor(arg, "a 16-bit tensor argument");
    auto widened = std::make_unique<WidenedTensor>();
    widened->values.resize(static_cast<size_t>(t.numel));
    const uint16_t *bits = static_cast<const uint16_t *>(arg->data);
    for (int64_t i = 0; i < t.numel; ++i)
      widened->values[i] =
          arg->dtype == FLUID_F16
              ? static_cast<float>(Half::fromBits(bits[i]))
              : static_cast<float>(BFloat16::fromBits(bits[i]));
    widened->desc = *arg;
    widened->desc.dtype = FLUID_F32;
    widened->desc.data = widened->values.data();
    if constexpr (!std::is_const_v<std::remove_pointer_t<A>>)
      widened->target = arg;
    held.push_back(std::move(widened));
    return &held.back()->desc;
  }
}

} // namespace detail

/// Whether any tensor among `args` is f16 or bf16.
template <typename... Args> bool anyFloat16(Args... args) {
  return (detail::isFloat16Argument(args) || ...);
}

/// Runs `entry` on f32 copies of the 16-bit tensors among `args` and
/// rounds its 16-bit outputs back; rethrows `entry`'s error (without the
/// entry point's name, which the caller's guard adds).
template <typename... Params, typename... Args>
void runThroughF32(const char *name, fluid_status (*entry)(Params...),
                   Args... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "one per parameter");
  std::vector<std::unique_ptr<detail::WidenedTensor>> held;
  held.reserve(sizeof...(Args));
  fluid_status status = entry(detail::widenArgument(args, held)...);
  if (status != FLUID_OK) {
    std::string message = fluid_last_error();
    const std::string prefix = std::string(name) + ": ";
    if (message.compare(0, prefix.size(), prefix) == 0)
      message.erase(0, prefix.size());
    throw Error(status, message);
  }
  for (const auto &widened : held) {
    fluid_tensor *target = widened->target;
    if (!target)
      continue;
    uint16_t *bits = static_cast<uint16_t *>(target->data);
    for (size_t i = 0; i < widened->values.size(); ++i)
      bits[i] = target->dtype == FLUID_F16 ? Half(widened->values[i]).bits
                                           : BFloat16(widened->values[i]).bits;
  }
}

/// runThroughF32 under the entry point's guard where a tensor argument is
/// 16-bit; nothing otherwise.
template <typename... Params, typename... Args>
std::optional<fluid_status>
throughF32(const char *name, fluid_status (*entry)(Params...), Args... args) {
  if (!anyFloat16(args...))
    return std::nullopt;
  return guard(name, [&] { runThroughF32(name, entry, args...); });
}

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_WIDEN_H
