//===- ShapeGrad.cpp - slice, transpose and gather_grad on the cpu --------===//
//
// slice is the gradient of concat; transpose its own gradient (by the
// inverse permutation). Data movement only, so both work on bytes and
// accept every dtype. (The gradient of reshape is a reshape back,
// fluid_cpu_reshape.) gather_grad, the gradient of gather, adds the
// gradient's slices back where gather took them from, in double.
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"
#include "Transpose.h"
#include "Widen.h"

#include "fluid/runtime/CpuGradKernels.h"

#include <cstring>
#include <vector>

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

extern "C" fluid_status
fluid_cpu_gather_grad(const fluid_tensor *gradOutputDesc,
                      const fluid_tensor *indicesDesc,
                      fluid_tensor *gradInputDesc, int64_t axis) {
  if (auto status =
          throughF32("fluid_cpu_gather_grad", fluid_cpu_gather_grad,
                     gradOutputDesc, indicesDesc, gradInputDesc, axis))
    return *status;
  return guard("fluid_cpu_gather_grad", [&] {
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor indices = checkTensor(indicesDesc, "indices");
    CheckedTensor gradInput = checkTensor(gradInputDesc, "grad_input");
    requireFloat(gradInput);
    int64_t extent = 0;
    const AxisSplit split =
        checkGather(gradInput, indices, gradOutput, axis, extent);
    const std::vector<int64_t> picks = readGatherIndices(indices, extent);
    dispatchFloat(gradInput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T *dy = gradOutput.data<T>();
      T *dx = gradInput.data<T>();
      // Slice r of the result accumulates the slices i with picks[i] = r.
      std::vector<double> sums(static_cast<size_t>(gradInput.numel), 0.0);
      for (int64_t o = 0; o < split.outer; ++o)
        for (int64_t i = 0; i < split.length; ++i) {
          const T *from = dy + (o * split.length + i) * split.inner;
          double *to = sums.data() + (o * extent + picks[i]) * split.inner;
          for (int64_t j = 0; j < split.inner; ++j)
            to[j] += from[j];
        }
      for (int64_t k = 0; k < gradInput.numel; ++k)
        dx[k] = static_cast<T>(sums[k]);
    });
  });
}

void cpu::checkTranspose(const CheckedTensor &input,
                         const CheckedTensor &output,
                         const fluid_transpose_params *params) {
  requireParams(params);
  requireDtype(output, input);
  const int64_t rank = params->rank;
  if (rank < 0 || rank > FLUID_MAX_RANK)
    fail("params rank " + std::to_string(rank) + " is outside [0, " +
         std::to_string(FLUID_MAX_RANK) + "]");
  if (input.rank() != rank)
    fail("params rank " + std::to_string(rank) + " differs from input rank " +
         std::to_string(input.rank()) + ", shape " + formatShape(input.shape));
  requireRank(output, rank);
  const std::string perm =
      "perm " + formatShape(Shape(params->perm, params->perm + rank));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t from = params->perm[d];
    if (from < 0 || from >= rank)
      fail(perm + " entry " + std::to_string(d) + " is " +
           std::to_string(from) + ", outside [0, " + std::to_string(rank) +
           ")");
    if (seen[from])
      fail(perm + " is not a permutation: " + std::to_string(from) +
           " appears twice");
    seen[from] = true;
  }
  requireShape(output, permuteShape(input.shape, params->perm));
}

Shape cpu::permuteShape(const Shape &shape, const int64_t *perm) {
  Shape permuted(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    permuted[d] = shape[perm[d]];
  return permuted;
}

namespace {

/// out[i] = in[i * stride] for i in [0, count), elements of kSize bytes
/// (a fixed-size memcpy: one load and one store, at any alignment).
template <int64_t kSize>
void gatherElements(const char *in, int64_t strideBytes, int64_t count,
                    char *out) {
  for (int64_t i = 0; i < count; ++i)
    std::memcpy(out + i * kSize, in + i * strideBytes, kSize);
}

} // namespace

void cpu::transposeData(const void *input, const Shape &inputShape,
                        const int64_t *perm, int64_t elementSize,
                        void *output) {
  const int64_t rank = static_cast<int64_t>(inputShape.size());
  int64_t numel = 1;
  for (int64_t size : inputShape)
    numel *= size;
  if (numel == 0)
    return;
  const char *in = static_cast<const char *>(input);
  char *out = static_cast<char *>(output);

  // The trailing output dimensions that are the trailing input dimensions,
  // in order, make contiguous runs, each copied at once.
  int64_t gathered = rank;
  int64_t runBytes = elementSize;
  while (gathered > 0 && perm[gathered - 1] == gathered - 1)
    runBytes *= inputShape[--gathered];
  if (gathered == 0) {
    std::memcpy(out, in, numel * elementSize);
    return;
  }

  // The other output dimensions: their sizes and input strides in bytes.
  Shape inputStrides(rank);
  for (int64_t d = rank - 1, stride = elementSize; d >= 0; --d) {
    inputStrides[d] = stride;
    stride *= inputShape[d];
  }
  Shape sizes(gathered), strides(gathered);
  for (int64_t d = 0; d < gathered; ++d) {
    sizes[d] = inputShape[perm[d]];
    strides[d] = inputStrides[perm[d]];
  }

  // An odometer over the leading gathered dimensions; the innermost one is
  // the loop below, over runs `innerStride` bytes apart in the input.
  const int64_t innerSize = sizes.back(), innerStride = strides.back();
  forEachRow(sizes, [&](const Shape &index) {
    const char *from = in;
    for (size_t d = 0; d < index.size(); ++d)
      from += index[d] * strides[d];
    if (runBytes == 1)
      gatherElements<1>(from, innerStride, innerSize, out);
    else if (runBytes == 2)
      gatherElements<2>(from, innerStride, innerSize, out);
    else if (runBytes == 4)
      gatherElements<4>(from, innerStride, innerSize, out);
    else if (runBytes == 8)
      gatherElements<8>(from, innerStride, innerSize, out);
    else
      for (int64_t i = 0; i < innerSize; ++i)
        std::memcpy(out + i * runBytes, from + i * innerStride, runBytes);
    out += innerSize * runBytes;
  });
}

extern "C" fluid_status
fluid_cpu_transpose(const fluid_tensor *inputDesc, fluid_tensor *outputDesc,
                    const fluid_transpose_params *params) {
  // A permutation of bytes for any dtype, 16-bit ones included: no
  // widening, so every bit pattern (NaN payloads too) is kept.
  return guard("fluid_cpu_transpose", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    checkTranspose(input, output, params);
    transposeData(input.desc->data, input.shape, params->perm,
                  fluid_dtype_size(input.dtype()), output.desc->data);
  });
}
