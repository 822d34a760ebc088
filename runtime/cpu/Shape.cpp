//===- Shape.cpp - reshape, concat and gather on the cpu ------------------===//
//
// Data movement only, so these work on bytes and accept every dtype.
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuKernels.h"

#include <cstring>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

extern "C" fluid_status fluid_cpu_reshape(const fluid_tensor *inputDesc,
                                          fluid_tensor *outputDesc) {
  if (auto status = throughF32("fluid_cpu_reshape", fluid_cpu_reshape,
                               inputDesc, outputDesc))
    return *status;
  return guard("fluid_cpu_reshape", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireDtype(output, input);
    if (output.numel != input.numel)
      fail("output shape " + formatShape(output.shape) + " has " +
           std::to_string(output.numel) + " elements but input shape " +
           formatShape(input.shape) + " has " + std::to_string(input.numel));
    // memmove: the output may be the input's own buffer.
    if (input.numel > 0)
      std::memmove(output.desc->data, input.desc->data,
                   input.numel * fluid_dtype_size(input.dtype()));
  });
}

extern "C" fluid_status fluid_cpu_concat(const fluid_tensor *inputDescs,
                                         int64_t numInputs,
                                         fluid_tensor *outputDesc,
                                         int64_t axis) {
  // A copy of bytes for any dtype, 16-bit ones included: no widening
  // (throughF32 would widen only the first descriptor of the array).
  return guard("fluid_cpu_concat", [&] {
    if (numInputs < 1)
      fail("needs at least one input, got " + std::to_string(numInputs));
    if (!inputDescs)
      fail("inputs array is null");
    std::vector<CheckedTensor> inputs;
    for (int64_t i = 0; i < numInputs; ++i)
      inputs.push_back(
          checkTensor(&inputDescs[i], "input " + std::to_string(i)));
    CheckedTensor output = checkTensor(outputDesc, "output");

    const CheckedTensor &first = inputs.front();
    const AxisSplit split = splitAtAxis(first, axis);
    Shape expected = first.shape;
    expected[axis] = 0;
    for (const CheckedTensor &input : inputs) {
      requireDtype(input, first);
      bool sameOffAxis = input.rank() == first.rank();
      for (int64_t d = 0; sameOffAxis && d < first.rank(); ++d)
        sameOffAxis = d == axis || input.dim(d) == first.dim(d);
      if (!sameOffAxis)
        fail(input.name + " shape " + formatShape(input.shape) +
             " differs from input 0 shape " + formatShape(first.shape) +
             " outside axis " + std::to_string(axis));
      expected[axis] = checkedAdd(expected[axis], input.dim(axis),
                                  "concatenated size along the axis");
    }
    requireDtype(output, first);
    requireShape(output, expected);

    // Viewed as [outer, axis * inner], each input contributes one contiguous
    // chunk to every row of the output.
    const int64_t innerBytes = split.inner * fluid_dtype_size(first.dtype());
    const int64_t outRowBytes = expected[axis] * innerBytes;
    char *out = static_cast<char *>(output.desc->data);
    int64_t chunkOffset = 0;
    for (const CheckedTensor &input : inputs) {
      const int64_t chunkBytes = input.dim(axis) * innerBytes;
      const char *in = static_cast<const char *>(input.desc->data);
      for (int64_t o = 0; o < split.outer && chunkBytes > 0; ++o)
        std::memcpy(out + o * outRowBytes + chunkOffset, in + o * chunkBytes,
                    chunkBytes);
      chunkOffset += chunkBytes;
    }
  });
}

extern "C" fluid_status fluid_cpu_gather(const fluid_tensor *inputDesc,
                                         const fluid_tensor *indicesDesc,
                                         fluid_tensor *outputDesc,
                                         int64_t axis) {
  // A copy of bytes for any dtype: no widening.
  return guard("fluid_cpu_gather", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor indices = checkTensor(indicesDesc, "indices");
    CheckedTensor output = checkTensor(outputDesc, "output");
    int64_t extent = 0;
    const AxisSplit split = checkGather(input, indices, output, axis, extent);
    const std::vector<int64_t> picks = readGatherIndices(indices, extent);

    // Viewed as [outer, axis, inner]: each output row of `inner` elements
    // is one input row.
    const int64_t rowBytes = split.inner * fluid_dtype_size(input.dtype());
    const char *in = static_cast<const char *>(input.desc->data);
    char *out = static_cast<char *>(output.desc->data);
    for (int64_t o = 0; o < split.outer && rowBytes > 0; ++o)
      for (int64_t i = 0; i < split.length; ++i)
        std::memcpy(out + (o * split.length + i) * rowBytes,
                    in + (o * extent + picks[i]) * rowBytes, rowBytes);
  });
}
