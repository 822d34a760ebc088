//===- KernelsShape.cu - reshape, concat, slice and broadcast_to ----------===//
//
// Data movement of any dtype, so these work on bytes. reshape is one
// device-to-device copy; concat and slice copy a block of equal rows
// between row pitches (one launch per concat input), in the widest unit
// (16, 8, 4, 2 or 1 bytes) that every address and pitch allows;
// broadcast_to runs the elementwise engine on same-sized unsigned
// integers, so it gets its vectorized, scalar and per-channel paths.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

template <typename Unit, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    copyRowsKernel(const Unit *src, Index srcPitch, Unit *dst, Index dstPitch,
                   Divider<Index> rowUnits, Index total) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const Index row = rowUnits.div(i);
    const Index column = i - row * rowUnits.divisor;
    dst[row * dstPitch + column] = src[row * srcPitch + column];
  }
}

template <typename Unit>
void launchCopyRows(cudaStream_t stream, const char *src, int64_t srcPitch,
                    char *dst, int64_t dstPitch, int64_t rows,
                    int64_t rowBytes) {
  const int64_t units = rowBytes / int64_t(sizeof(Unit));
  const int64_t total = rows * units;
  const int64_t srcPitchUnits = srcPitch / int64_t(sizeof(Unit));
  const int64_t dstPitchUnits = dstPitch / int64_t(sizeof(Unit));
  const Unit *from = reinterpret_cast<const Unit *>(src);
  Unit *to = reinterpret_cast<Unit *>(dst);
  // Every index, including row * pitch, stays below the larger buffer.
  const int64_t extent =
      std::max(rows * std::max(srcPitchUnits, dstPitchUnits), total);
  if (fitsNarrowIndex(extent))
    copyRowsKernel<<<gridSizeFor(total), kBlockSize, 0, stream>>>(
        from, uint32_t(srcPitchUnits), to, uint32_t(dstPitchUnits),
        Divider<uint32_t>(uint32_t(units)), uint32_t(total));
  else
    copyRowsKernel<<<gridSizeFor(total), kBlockSize, 0, stream>>>(
        from, uint64_t(srcPitchUnits), to, uint64_t(dstPitchUnits),
        Divider<uint64_t>(uint64_t(units)), uint64_t(total));
  checkLaunch();
}

/// Copies `rows` rows of `rowBytes` from src (rows `srcPitch` bytes apart)
/// to dst (rows `dstPitch` bytes apart).
void copyRows(cudaStream_t stream, const void *src, int64_t srcPitch, void *dst,
              int64_t dstPitch, int64_t rows, int64_t rowBytes) {
  if (rows == 0 || rowBytes == 0)
    return;
  if (rows == 1 || (srcPitch == rowBytes && dstPitch == rowBytes)) {
    FLUID_CUDA_CHECK(cudaMemcpyAsync(dst, src, rows * rowBytes,
                                     cudaMemcpyDeviceToDevice, stream));
    return;
  }
  const uint64_t alignment = uint64_t(reinterpret_cast<uintptr_t>(src)) |
                             uint64_t(reinterpret_cast<uintptr_t>(dst)) |
                             uint64_t(srcPitch) | uint64_t(dstPitch) |
                             uint64_t(rowBytes);
  const char *from = static_cast<const char *>(src);
  char *to = static_cast<char *>(dst);
  if (alignment % 16 == 0)
    launchCopyRows<uint4>(stream, from, srcPitch, to, dstPitch, rows, rowBytes);
  else if (alignment % 8 == 0)
    launchCopyRows<uint64_t>(stream, from, srcPitch, to, dstPitch, rows,
                             rowBytes);
  else if (alignment % 4 == 0)
    launchCopyRows<uint32_t>(stream, from, srcPitch, to, dstPitch, rows,
                             rowBytes);
  else if (alignment % 2 == 0)
    launchCopyRows<uint16_t>(stream, from, srcPitch, to, dstPitch, rows,
                             rowBytes);
  else
    launchCopyRows<uint8_t>(stream, from, srcPitch, to, dstPitch, rows,
                            rowBytes);
}

/// Fails unless `from`'s shape broadcasts to `to`'s (as the cpu backend).
void requireBroadcastsTo(const CheckedTensor &from, const CheckedTensor &to) {
  const std::string shapes = from.name + " shape " +
                             cpu::formatShape(from.shape) +
                             " does not broadcast to " + to.name + " shape " +
                             cpu::formatShape(to.shape);
  if (from.rank() > to.rank())
    fail(shapes + ": it has more dimensions");
  const int64_t extra = to.rank() - from.rank();
  for (int64_t d = 0; d < from.rank(); ++d)
    if (from.dim(d) != 1 && from.dim(d) != to.dim(extra + d))
      fail(shapes + ": dimension " + std::to_string(d) + " of " + from.name +
           " is " + std::to_string(from.dim(d)) + ", expected 1 or " +
           std::to_string(to.dim(extra + d)));
}

struct Identity {
  template <typename T> __device__ T operator()(T x) const { return x; }
};

template <typename Unit>
void launchBroadcast(cudaStream_t stream, const CheckedTensor &input,
                     const CheckedTensor &output) {
  launchElementwise<Unit, Unit, 1>(stream, output.data<Unit>(), output.shape,
                                   {input.data<Unit>()}, {input.shape},
                                   Identity{});
}

} // namespace

extern "C" fluid_status fluid_cuda_reshape(fluid_cuda_context *context,
                                           const fluid_tensor *inputDesc,
                                           fluid_tensor *outputDesc) {
  return guard("fluid_cuda_reshape", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    cpu::requireDtype(output, input);
    if (output.numel != input.numel)
      fail("output shape " + cpu::formatShape(output.shape) + " has " +
           std::to_string(output.numel) + " elements but input shape " +
           cpu::formatShape(input.shape) + " has " +
           std::to_string(input.numel));
    // The output may be the input's own buffer: nothing to move then.
    if (input.numel > 0 && output.desc->data != input.desc->data)
      FLUID_CUDA_CHECK(
          cudaMemcpyAsync(output.desc->data, input.desc->data,
                          input.numel * fluid_dtype_size(input.dtype()),
                          cudaMemcpyDeviceToDevice, stream));
  });
}

extern "C" fluid_status
fluid_cuda_concat(fluid_cuda_context *context, const fluid_tensor *inputDescs,
                  int64_t numInputs, fluid_tensor *outputDesc, int64_t axis) {
  return guard("fluid_cuda_concat", [&] {
    cudaStream_t stream = streamFor(context);
    if (numInputs < 1)
      fail("needs at least one input, got " + std::to_string(numInputs));
    if (!inputDescs)
      fail("inputs array is null");
    std::vector<CheckedTensor> inputs;
    for (int64_t i = 0; i < numInputs; ++i)
      inputs.push_back(
          checkTensor(context, &inputDescs[i], "input " + std::to_string(i)));
    CheckedTensor output = checkTensor(context, outputDesc, "output");

    const CheckedTensor &first = inputs.front();
    if (axis < 0 || axis >= first.rank())
      fail("axis " + std::to_string(axis) + " is outside [0, " +
           std::to_string(first.rank()) + ") for input 0 shape " +
           cpu::formatShape(first.shape));
    Shape expected = first.shape;
    expected[axis] = 0;
    for (const CheckedTensor &input : inputs) {
      cpu::requireDtype(input, first);
      bool sameOffAxis = input.rank() == first.rank();
      for (int64_t d = 0; sameOffAxis && d < first.rank(); ++d)
        sameOffAxis = d == axis || input.dim(d) == first.dim(d);
      if (!sameOffAxis)
        fail(input.name + " shape " + cpu::formatShape(input.shape) +
             " differs from input 0 shape " + cpu::formatShape(first.shape) +
             " outside axis " + std::to_string(axis));
      expected[axis] = cpu::checkedAdd(expected[axis], input.dim(axis),
                                       "concatenated size along the axis");
    }
    cpu::requireDtype(output, first);
    cpu::requireShape(output, expected);

    // Viewed as [outer, axis * inner], each input is one block of `outer`
    // rows in the output, at its column offset.
    const int64_t elementSize = fluid_dtype_size(first.dtype());
    int64_t outer = 1, innerBytes = elementSize;
    for (int64_t d = 0; d < axis; ++d)
      outer *= first.dim(d);
    for (int64_t d = axis + 1; d < first.rank(); ++d)
      innerBytes *= first.dim(d);
    const int64_t outRowBytes = expected[axis] * innerBytes;
    char *out = static_cast<char *>(output.desc->data);
    int64_t chunkOffset = 0;
    for (const CheckedTensor &input : inputs) {
      const int64_t chunkBytes = input.dim(axis) * innerBytes;
      if (output.numel > 0)
        copyRows(stream, input.desc->data, chunkBytes, out + chunkOffset,
                 outRowBytes, outer, chunkBytes);
      chunkOffset += chunkBytes;
    }
  });
}

extern "C" fluid_status fluid_cuda_slice(fluid_cuda_context *context,
                                         const fluid_tensor *inputDesc,
                                         fluid_tensor *outputDesc, int64_t axis,
                                         int64_t offset) {
  return guard("fluid_cuda_slice", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    cpu::requireDtype(output, input);
    cpu::AxisSplit split = cpu::splitAtAxis(input, axis);
    cpu::requireRank(output, input.rank());
    for (int64_t d = 0; d < input.rank(); ++d)
      if (d != axis && output.dim(d) != input.dim(d))
        fail("output shape " + cpu::formatShape(output.shape) +
             " differs from input shape " + cpu::formatShape(input.shape) +
             " outside axis " + std::to_string(axis));
    const int64_t length = output.dim(axis);
    if (offset < 0)
      fail("offset " + std::to_string(offset) + " is negative");
    const int64_t end =
        cpu::checkedAdd(offset, length, "offset + output size along the axis");
    if (end > input.dim(axis))
      fail("slice [" + std::to_string(offset) + ", " + std::to_string(end) +
           ") along axis " + std::to_string(axis) +
           " exceeds the input, shape " + cpu::formatShape(input.shape));

    // Viewed as [outer, length * inner], each output row is one contiguous
    // chunk of the matching input row.
    const int64_t innerBytes = split.inner * fluid_dtype_size(input.dtype());
    if (output.numel > 0)
      copyRows(stream,
               static_cast<const char *>(input.desc->data) +
                   offset * innerBytes,
               split.length * innerBytes, output.desc->data,
               length * innerBytes, split.outer, length * innerBytes);
  });
}

extern "C" fluid_status fluid_cuda_broadcast_to(fluid_cuda_context *context,
                                                const fluid_tensor *inputDesc,
                                                fluid_tensor *outputDesc) {
  return guard("fluid_cuda_broadcast_to", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    cpu::requireDtype(output, input);
    requireBroadcastsTo(input, output);
    switch (fluid_dtype_size(input.dtype())) {
    case 1:
      return launchBroadcast<uint8_t>(stream, input, output);
    case 2:
      return launchBroadcast<uint16_t>(stream, input, output);
    case 4:
      return launchBroadcast<uint32_t>(stream, input, output);
    default:
      return launchBroadcast<uint64_t>(stream, input, output);
    }
  });
}
