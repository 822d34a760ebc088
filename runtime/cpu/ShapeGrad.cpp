//===- ShapeGrad.cpp - slice, the gradient of concat, on the cpu ----------===//
//
// Data movement only, so it works on bytes and accepts every dtype. (The
// gradient of reshape is a reshape back, fluid_cpu_reshape.)
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuGradKernels.h"

#include <cstring>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

extern "C" fluid_status fluid_cpu_slice(const fluid_tensor *inputDesc,
                                        fluid_tensor *outputDesc, int64_t axis,
                                        int64_t offset) {
  if (auto status = throughF32("fluid_cpu_slice", fluid_cpu_slice, inputDesc,
                               outputDesc, axis, offset))
    return *status;
  return guard("fluid_cpu_slice", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireDtype(output, input);
    AxisSplit split = splitAtAxis(input, axis);
    requireRank(output, input.rank());
    for (int64_t d = 0; d < input.rank(); ++d)
      if (d != axis && output.dim(d) != input.dim(d))
        fail("output shape " + formatShape(output.shape) +
             " differs from input shape " + formatShape(input.shape) +
             " outside axis " + std::to_string(axis));
    const int64_t length = output.dim(axis);
    if (offset < 0)
      fail("offset " + std::to_string(offset) + " is negative");
    const int64_t end =
        checkedAdd(offset, length, "offset + output size along the axis");
    if (end > input.dim(axis))
      fail("slice [" + std::to_string(offset) + ", " + std::to_string(end) +
           ") along axis " + std::to_string(axis) +
           " exceeds the input, shape " + formatShape(input.shape));

    // Viewed as [outer, length * inner], each output row is one contiguous
    // chunk of the matching input row.
    const int64_t innerBytes = split.inner * fluid_dtype_size(input.dtype());
    const int64_t chunkBytes = length * innerBytes;
    const char *in = static_cast<const char *>(input.desc->data);
    char *out = static_cast<char *>(output.desc->data);
    for (int64_t o = 0; o < split.outer && chunkBytes > 0; ++o)
      std::memcpy(out + o * chunkBytes,
                  in + (o * split.length + offset) * innerBytes, chunkBytes);
  });
}
