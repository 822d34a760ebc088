//===- Reduce.cpp - mean and reduce_sum on the cpu ------------------------===//
//
// One pass over the input in row-major order, adding each element into the
// output element it reduces to (sums in double); the mean then divides by
// the number of elements reduced into each output.
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuKernels.h"

#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// The validated meaning of a reduction's axes for one input.
struct ReductionPlan {
  /// Per input dimension, the stride of the output element it maps to (0
  /// along reduced dimensions).
  Shape outStrides;
  int64_t outNumel;
  /// Elements reduced into each output element.
  int64_t count;
};

ReductionPlan planReduction(const CheckedTensor &input,
                            const CheckedTensor &output,
                            const fluid_reduce_params &params) {
  const int64_t rank = input.rank();
  if (params.num_axes < 0 || params.num_axes > rank)
    fail("num_axes " + std::to_string(params.num_axes) + " is outside [0, " +
         std::to_string(rank) + "] for input shape " +
         formatShape(input.shape));
  std::vector<bool> reduced(rank, params.num_axes == 0);
  for (int32_t i = 0; i < params.num_axes; ++i) {
    int64_t axis = params.axes[i];
    if (axis < 0 || axis >= rank)
      fail("axis " + std::to_string(axis) + " is outside [0, " +
           std::to_string(rank) + ") for input shape " +
           formatShape(input.shape));
    if (reduced[axis])
      fail("axis " + std::to_string(axis) + " is listed twice");
    reduced[axis] = true;
  }

  Shape expected;
  ReductionPlan plan{Shape(rank, 0), 1, 1};
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (reduced[d]) {
      plan.count *= input.dim(d);
    } else {
      plan.outStrides[d] = plan.outNumel;
      plan.outNumel *= input.dim(d);
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      expected.push_back(input.dim(d));
    else if (params.keep_dims)
      expected.push_back(1);
  }
  requireShape(output, expected);
  return plan;
}

template <typename T>
void reduce(const T *input, const Shape &inShape, T *output,
            const ReductionPlan &plan, bool mean) {
  std::vector<double> sums(plan.outNumel, 0.0);
  const int64_t rowLength = inShape.empty() ? 1 : inShape.back();
  const int64_t rowStep = inShape.empty() ? 0 : plan.outStrides.back();
  const T *inRow = input;
  forEachRow(inShape, [&](const Shape &index) {
    int64_t outOffset = 0;
    for (size_t d = 0; d < index.size(); ++d)
      outOffset += index[d] * plan.outStrides[d];
    for (int64_t i = 0; i < rowLength; ++i)
      sums[outOffset + i * rowStep] += inRow[i];
    inRow += rowLength;
  });
  // An empty reduction has mean 0/0 = NaN, as in PyTorch.
  for (int64_t i = 0; i < plan.outNumel; ++i)
    output[i] = T(mean ? sums[i] / double(plan.count) : sums[i]);
}

fluid_status reduceEntry(const char *entryPoint, const fluid_tensor *inputDesc,
                         fluid_tensor *outputDesc,
                         const fluid_reduce_params *params, bool mean) {
  return guard(entryPoint, [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireParams(params);
    requireFloat(input);
    requireDtype(output, input);
    ReductionPlan plan = planReduction(input, output, *params);
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      reduce(input.data<T>(), input.shape, output.data<T>(), plan, mean);
    });
  });
}

} // namespace

extern "C" fluid_status fluid_cpu_mean(const fluid_tensor *input,
                                       fluid_tensor *output,
                                       const fluid_reduce_params *params) {
  if (auto status =
          throughF32("fluid_cpu_mean", fluid_cpu_mean, input, output, params))
    return *status;
  return reduceEntry("fluid_cpu_mean", input, output, params, /*mean=*/true);
}

extern "C" fluid_status
fluid_cpu_reduce_sum(const fluid_tensor *input, fluid_tensor *output,
                     const fluid_reduce_params *params) {
  if (auto status = throughF32("fluid_cpu_reduce_sum", fluid_cpu_reduce_sum,
                               input, output, params))
    return *status;
  return reduceEntry("fluid_cpu_reduce_sum", input, output, params,
                     /*mean=*/false);
}
