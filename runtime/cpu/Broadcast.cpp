//===- Broadcast.cpp - broadcast_to and its adjoint sum_to on the cpu -----===//
//
// broadcast_to copies each input element to every output element that
// NumPy broadcasting maps to it; sum_to adds each input element into the
// output element it would have been broadcast from (in double), which makes
// it the gradient of a broadcasting op with respect to a smaller operand.
//
//===----------------------------------------------------------------------===//

#include "Broadcasting.h"
#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuGradKernels.h"

#include <cstring>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// Fails unless `from`'s shape broadcasts to `to`'s: no more dimensions,
/// and, aligned from the right, each dimension equal to `to`'s or 1.
void requireBroadcastsTo(const CheckedTensor &from, const CheckedTensor &to) {
  const std::string shapes = from.name + " shape " + formatShape(from.shape) +
                             " does not broadcast to " + to.name + " shape " +
                             formatShape(to.shape);
  if (from.rank() > to.rank())
    fail(shapes + ": it has more dimensions");
  const int64_t extra = to.rank() - from.rank();
  for (int64_t d = 0; d < from.rank(); ++d)
    if (from.dim(d) != 1 && from.dim(d) != to.dim(extra + d))
      fail(shapes + ": dimension " + std::to_string(d) + " of " + from.name +
           " is " + std::to_string(from.dim(d)) + ", expected 1 or " +
           std::to_string(to.dim(extra + d)));
}

template <typename T>
void sumTo(const T *input, const Shape &inShape, T *output,
           const Shape &outShape, int64_t outNumel) {
  std::vector<double> sums(outNumel, 0.0);
  forEachBroadcastElement<1>(
      inShape, {outShape},
      [&](int64_t i, const std::array<int64_t, 1> &offsets) {
        sums[offsets[0]] += input[i];
      });
  std::copy(sums.begin(), sums.end(), output);
}

} // namespace

extern "C" fluid_status fluid_cpu_broadcast_to(const fluid_tensor *inputDesc,
                                               fluid_tensor *outputDesc) {
  if (auto status = throughF32("fluid_cpu_broadcast_to", fluid_cpu_broadcast_to,
                               inputDesc, outputDesc))
    return *status;
  return guard("fluid_cpu_broadcast_to", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireDtype(output, input);
    requireBroadcastsTo(input, output);
    const int64_t elementSize = fluid_dtype_size(input.dtype());
    const char *in = static_cast<const char *>(input.desc->data);
    char *out = static_cast<char *>(output.desc->data);
    forEachBroadcastElement<1>(
        output.shape, {input.shape},
        [&](int64_t i, const std::array<int64_t, 1> &offsets) {
          std::memcpy(out + i * elementSize, in + offsets[0] * elementSize,
                      elementSize);
        });
  });
}

extern "C" fluid_status fluid_cpu_sum_to(const fluid_tensor *inputDesc,
                                         fluid_tensor *outputDesc) {
  if (auto status = throughF32("fluid_cpu_sum_to", fluid_cpu_sum_to, inputDesc,
                               outputDesc))
    return *status;
  return guard("fluid_cpu_sum_to", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireFloat(input);
    requireDtype(output, input);
    requireBroadcastsTo(output, input);
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      sumTo(input.data<T>(), input.shape, output.data<T>(), output.shape,
            output.numel);
    });
  });
}
