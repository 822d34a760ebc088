//===- KernelsShape.cu - reshape, concat, slice, transpose, gather... ----===//
//
// Data movement of any dtype, so these work on bytes. reshape is one
// device-to-device copy; concat and slice copy a block of equal rows
// between row pitches (one launch per concat input), in the widest unit
// (16, 8, 4, 2 or 1 bytes) that every address and pitch allows;
// broadcast_to runs the elementwise engine on same-sized unsigned
// integers, so it gets its vectorized, scalar and per-channel paths.
//
// transpose first simplifies the permutation: size-1 dimensions are
// dropped and dimensions that stay adjacent and in order are merged, so
// NCHW -> NHWC becomes [N, C, HW] -> [N, HW, C] and NHWC -> NCHW [N, HW, C]
// -> [N, C, HW]. What is left is a copy (the identity), a batched 2-D
// transpose [B, R, C] -> [B, C, R], which goes through shared memory tile
// by tile so that both the reads and the writes are coalesced, or any
// other permutation, a gather with one division per dimension (in units
// as wide as the innermost dimension allows when it stays innermost).
//
// gather copies one element per thread from the slice its index names;
// gather_grad sums, per element of its result, the gradient's elements
// whose index names that element's slice, in the order of the indices and
// in double (no atomics: the cpu's result, bit for bit).
//
//===----------------------------------------------------------------------===//

#include "Elementwise.cuh"

#include "../cpu/Transpose.h"

#include "fluid/runtime/CudaKernels.h"

#include <algorithm>
#include <numeric>
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

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

/// A permutation after dropping size-1 dimensions and merging dimensions
/// that stay adjacent and in order: input `shape`, output dimension d is
/// input dimension perm[d]. Rank 1 (or 0) is a copy.
struct SimplifiedTranspose {
  Shape shape;
  Shape perm;
};

SimplifiedTranspose simplifyTranspose(const Shape &shape, const int64_t *perm) {
  const int64_t rank = static_cast<int64_t>(shape.size());
  // The input dimensions of size > 1, renumbered in order.
  Shape kept(rank, -1);
  for (int64_t d = 0, next = 0; d < rank; ++d)
    if (shape[d] != 1)
      kept[d] = next++;
  // In output order, runs of consecutive kept input dimensions, each one
  // merged dimension.
  struct Run {
    int64_t first, size;
  };
  std::vector<Run> runs;
  int64_t previous = -2;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t axis = kept[perm[d]];
    if (axis < 0)
      continue;
    if (!runs.empty() && axis == previous + 1)
      runs.back().size *= shape[perm[d]];
    else
      runs.push_back({axis, shape[perm[d]]});
    previous = axis;
  }
  // The runs partition the kept dimensions into intervals: in input order
  // they are sorted by their first dimension.
  std::vector<size_t> inputOrder(runs.size());
  std::iota(inputOrder.begin(), inputOrder.end(), size_t(0));
  std::sort(inputOrder.begin(), inputOrder.end(),
            [&](size_t a, size_t b) { return runs[a].first < runs[b].first; });
  SimplifiedTranspose t;
  t.perm.resize(runs.size());
  for (size_t k = 0; k < inputOrder.size(); ++k) {
    t.shape.push_back(runs[inputOrder[k]].size);
    t.perm[inputOrder[k]] = static_cast<int64_t>(k);
  }
  return t;
}

/// Tiles of the batched 2-D transpose are 32 input columns wide (a warp's
/// row segment) and moved by blocks of 32 x 8 threads.
constexpr int kTileWidth = 32;
constexpr int kTileThreadRows = 8;
constexpr int kTileThreads = kTileWidth * kTileThreadRows;

/// Input rows per tile: 32 for units of 4 and 8 bytes; more for narrower
/// ones, so that each thread still has 16 bytes in flight per tile.
template <typename Unit>
constexpr int kTileHeight = sizeof(Unit) >= 4 ? 32 : 32 * 4 / int(sizeof(Unit));

/// out[b, c, r] = in[b, r, c] for `matrices` matrices of rows x cols, one
/// tile of kTileHeight rows by kTileWidth columns at a time: each warp reads
/// row segments of the tile into shared memory and writes column segments
/// of it, so that global reads and writes are both coalesced. A row of the
/// tile is padded by one unit, so that the column reads from shared memory
/// hit 32 different banks.
template <typename Unit, typename Index>
__global__ void __launch_bounds__(kTileThreads)
    transposeTilesKernel(const Unit *__restrict__ in, Unit *__restrict__ out,
                         Index rows, Index cols, Divider<Index> tilesPerRow,
                         Divider<Index> tilesPerMatrix, Index tiles) {
  constexpr int kHeight = kTileHeight<Unit>;
  __shared__ Unit tile[kHeight][kTileWidth + 1];
  const Index matrixSize = rows * cols;
  for (Index t = blockIdx.x; t < tiles; t += gridDim.x) {
    const Index matrix = tilesPerMatrix.div(t);
    const Index inMatrix = t - matrix * tilesPerMatrix.divisor;
    const Index tileRow = tilesPerRow.div(inMatrix);
    const Index tileCol = inMatrix - tileRow * tilesPerRow.divisor;
    const Index row0 = tileRow * Index(kHeight);
    const Index col0 = tileCol * Index(kTileWidth);
    const Unit *src = in + matrix * matrixSize;
    Unit *dst = out + matrix * matrixSize;

    const Index col = col0 + Index(threadIdx.x);
    if (col < cols) {
#pragma unroll
      for (int k = 0; k < kHeight / kTileThreadRows; ++k) {
        const int r = int(threadIdx.y) + k * kTileThreadRows;
        if (row0 + Index(r) < rows)
          tile[r][threadIdx.x] = src[(row0 + Index(r)) * cols + col];
      }
    }
    __syncthreads();
    // Output row col0 + j holds tile column j; its elements are the tile's
    // rows, kTileWidth per warp step.
#pragma unroll
    for (int k = 0; k < kTileWidth / kTileThreadRows; ++k) {
      const int j = int(threadIdx.y) + k * kTileThreadRows;
      const Index outRow = col0 + Index(j);
      if (outRow >= cols)
        continue;
#pragma unroll
      for (int m = 0; m < kHeight / kTileWidth; ++m) {
        const int i = int(threadIdx.x) + m * kTileWidth;
        if (row0 + Index(i) < rows)
          dst[outRow * rows + row0 + Index(i)] = tile[i][j];
      }
    }
    __syncthreads();
  }
}

template <typename Unit, typename Index>
void launchTiles(cudaStream_t stream, const void *in, void *out,
                 int64_t matrices, int64_t rows, int64_t cols) {
  const int64_t tilesPerRow = ceilDiv(cols, kTileWidth);
  const int64_t tilesPerMatrix = ceilDiv(rows, kTileHeight<Unit>) * tilesPerRow;
  const int64_t tiles = matrices * tilesPerMatrix;
  transposeTilesKernel<Unit, Index>
      <<<gridSizeFor(tiles * kTileThreads, kTileThreads),
         dim3(kTileWidth, kTileThreadRows), 0, stream>>>(
          static_cast<const Unit *>(in), static_cast<Unit *>(out), Index(rows),
          Index(cols), Divider<Index>(Index(tilesPerRow)),
          Divider<Index>(Index(tilesPerMatrix)), Index(tiles));
  checkLaunch();
}

/// The batched 2-D transpose [matrices, rows, cols] -> [matrices, cols,
/// rows] of elements of `elementSize` bytes.
void transposeMatrices(cudaStream_t stream, const void *in, void *out,
                       int64_t elementSize, int64_t matrices, int64_t rows,
                       int64_t cols) {
  const bool narrow = fitsNarrowIndex(matrices * rows * cols);
  auto launch = [&](auto unit) {
    using Unit = decltype(unit);
    if (narrow)
      launchTiles<Unit, uint32_t>(stream, in, out, matrices, rows, cols);
    else
      launchTiles<Unit, uint64_t>(stream, in, out, matrices, rows, cols);
  };
  switch (elementSize) {
  case 1:
    return launch(uint8_t{});
  case 2:
    return launch(uint16_t{});
  case 4:
    return launch(uint32_t{});
  default:
    return launch(uint64_t{});
  }
}

/// out[i] = in[offset of i], with the output's sizes and, per output
/// dimension, its stride in the input (both in units).
template <typename Unit, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    gatherKernel(const Unit *__restrict__ in, Unit *__restrict__ out,
                 OffsetCalculator<1, Index> inputOffsets, Index total) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    Index offset[1];
    inputOffsets.offsets(i, offset);
    out[i] = in[offset[0]];
  }
}

template <typename Unit>
void launchGather(cudaStream_t stream, const void *in, void *out,
                  const Shape &outSizes, const Shape &inStrides) {
  const int64_t total = numelOf(outSizes);
  const Unit *from = static_cast<const Unit *>(in);
  Unit *to = static_cast<Unit *>(out);
  if (fitsNarrowIndex(total))
    gatherKernel<<<gridSizeFor(total), kBlockSize, 0, stream>>>(
        from, to, OffsetCalculator<1, uint32_t>(outSizes, &inStrides),
        uint32_t(total));
  else
    gatherKernel<<<gridSizeFor(total), kBlockSize, 0, stream>>>(
        from, to, OffsetCalculator<1, uint64_t>(outSizes, &inStrides),
        uint64_t(total));
  checkLaunch();
}

/// Any permutation `t` of elements of `elementSize` bytes, as a gather over
/// the output. When the innermost dimension stays innermost, its rows move
/// in the widest unit (16, 8, 4, 2 or 1 bytes) that the row size and both
/// addresses allow.
void gatherTranspose(cudaStream_t stream, const void *in, void *out,
                     int64_t elementSize, SimplifiedTranspose t) {
  const size_t rank = t.shape.size();
  int64_t unit = elementSize;
  if (t.perm.back() == int64_t(rank) - 1) {
    const uint64_t alignment = uint64_t(reinterpret_cast<uintptr_t>(in)) |
                               uint64_t(reinterpret_cast<uintptr_t>(out)) |
                               uint64_t(t.shape.back() * elementSize);
    unit = 16;
    while (alignment % uint64_t(unit) != 0)
      unit /= 2;
    t.shape.back() = t.shape.back() * elementSize / unit;
  }
  Shape inStrides(rank);
  for (size_t d = rank, stride = 1; d-- > 0;) {
    inStrides[d] = int64_t(stride);
    stride *= size_t(t.shape[d]);
  }
  Shape outSizes(rank), outStrides(rank);
  for (size_t d = 0; d < rank; ++d) {
    outSizes[d] = t.shape[t.perm[d]];
    outStrides[d] = inStrides[t.perm[d]];
  }
  switch (unit) {
  case 1:
    return launchGather<uint8_t>(stream, in, out, outSizes, outStrides);
  case 2:
    return launchGather<uint16_t>(stream, in, out, outSizes, outStrides);
  case 4:
    return launchGather<uint32_t>(stream, in, out, outSizes, outStrides);
  case 8:
    return launchGather<uint64_t>(stream, in, out, outSizes, outStrides);
  default:
    return launchGather<uint4>(stream, in, out, outSizes, outStrides);
  }
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

extern "C" fluid_status
fluid_cuda_transpose(fluid_cuda_context *context, const fluid_tensor *inputDesc,
                     fluid_tensor *outputDesc,
                     const fluid_transpose_params *params) {
  return guard("fluid_cuda_transpose", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    cpu::checkTranspose(input, output, params);
    if (input.numel == 0)
      return;
    const int64_t elementSize = fluid_dtype_size(input.dtype());
    const void *in = input.desc->data;
    void *out = output.desc->data;
    const SimplifiedTranspose t = simplifyTranspose(input.shape, params->perm);
    const size_t rank = t.shape.size();
    if (rank <= 1) {
      if (out != in)
        FLUID_CUDA_CHECK(cudaMemcpyAsync(out, in, input.numel * elementSize,
                                         cudaMemcpyDeviceToDevice, stream));
    } else if (rank == 2) {
      // Merging leaves [1, 0]: a single matrix.
      transposeMatrices(stream, in, out, elementSize, 1, t.shape[0],
                        t.shape[1]);
    } else if (rank == 3 && t.perm == Shape{0, 2, 1}) {
      transposeMatrices(stream, in, out, elementSize, t.shape[0], t.shape[1],
                        t.shape[2]);
    } else {
      gatherTranspose(stream, in, out, elementSize, t);
    }
  });
}

//===----------------------------------------------------------------------===//
// gather and gather_grad
//===----------------------------------------------------------------------===//

namespace {

template <typename Fn> void dispatchIndex(int32_t dtype, Fn &&body) {
  if (dtype == FLUID_I64)
    body(int64_t{});
  else
    body(int32_t{});
}

/// out [outer, count, inner] = in [outer, extent, inner] at the indices
/// along the middle dimension; `rowUnits` divides by inner, `count` by the
/// number of indices.
template <typename Unit, typename Index, typename Pick>
__global__ void __launch_bounds__(kBlockSize)
    gatherKernel(const Unit *in, const Pick *indices, Unit *out, Index total,
                 Divider<Index> rowUnits, Divider<Index> count, Index extent,
                 DeviceErrorRecord *errors) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index n = Index(blockIdx.x) * blockDim.x + threadIdx.x; n < total;
       n += stride) {
    const Index row = rowUnits.div(n);
    const Index column = n - row * rowUnits.divisor;
    const Index outer = count.div(row);
    const Index position = row - outer * count.divisor;
    const int64_t pick = int64_t(indices[position]);
    if (pick < 0 || pick >= int64_t(extent)) {
      out[n] = Unit{};
      if (outer == 0 && column == 0) {
        DeviceErrorRecord error{};
        error.kind = kIndexOutOfRange;
        error.source = kFromGather;
        error.index = int64_t(position);
        error.value = pick;
        error.bound = int64_t(extent);
        raiseDeviceError(errors, error);
      }
      continue;
    }
    out[n] = in[(outer * extent + Index(pick)) * rowUnits.divisor + column];
  }
}

template <typename Unit, typename Pick>
void launchGather(cudaStream_t stream, const CheckedTensor &input,
                  const CheckedTensor &indices, const CheckedTensor &output,
                  const cpu::AxisSplit &split, int64_t extent,
                  DeviceErrorRecord *errors) {
  const Unit *in = input.data<const Unit>();
  const Pick *picks = indices.data<const Pick>();
  Unit *out = output.data<Unit>();
  if (fitsNarrowIndex(std::max(input.numel, output.numel)))
    gatherKernel<<<gridSizeFor(output.numel), kBlockSize, 0, stream>>>(
        in, picks, out, uint32_t(output.numel),
        Divider<uint32_t>(uint32_t(split.inner)),
        Divider<uint32_t>(uint32_t(split.length)), uint32_t(extent), errors);
  else
    gatherKernel<<<gridSizeFor(output.numel), kBlockSize, 0, stream>>>(
        in, picks, out, uint64_t(output.numel),
        Divider<uint64_t>(uint64_t(split.inner)),
        Divider<uint64_t>(uint64_t(split.length)), uint64_t(extent), errors);
  checkLaunch();
}

/// dx [outer, extent, inner]: element (o, r, j) is the sum over the
/// positions i with indices[i] = r of dy (o, i, j), dy [outer, count,
/// inner]. Thread 0 checks every index.
template <typename T, typename Pick>
__global__ void __launch_bounds__(kBlockSize)
    gatherGradKernel(const T *dy, const Pick *indices, T *dx, int64_t total,
                     int64_t inner, int64_t extent, int64_t count,
                     DeviceErrorRecord *errors) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t n = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; n < total;
       n += stride) {
    const int64_t row = n / inner, column = n - row * inner;
    const int64_t outer = row / extent, target = row - outer * extent;
    const T *from = dy + outer * count * inner + column;
    double sum = 0;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t pick = int64_t(indices[i]);
      if (pick == target)
        sum += double(from[i * inner]);
      else if (n == 0 && (pick < 0 || pick >= extent)) {
        DeviceErrorRecord error{};
        error.kind = kIndexOutOfRange;
        error.source = kFromGatherGrad;
        error.index = i;
        error.value = pick;
        error.bound = extent;
        raiseDeviceError(errors, error);
      }
    }
    dx[n] = T(sum);
  }
}

} // namespace

extern "C" fluid_status fluid_cuda_gather(fluid_cuda_context *context,
                                          const fluid_tensor *inputDesc,
                                          const fluid_tensor *indicesDesc,
                                          fluid_tensor *outputDesc,
                                          int64_t axis) {
  return guard("fluid_cuda_gather", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor indices = checkTensor(context, indicesDesc, "indices");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    int64_t extent = 0;
    const cpu::AxisSplit split =
        cpu::checkGather(input, indices, output, axis, extent);
    if (output.numel == 0)
      return;
    DeviceErrorRecord *errors = deviceErrorRecord(context);
    dispatchIndex(indices.dtype(), [&](auto index) {
      using Pick = decltype(index);
      switch (fluid_dtype_size(input.dtype())) {
      case 1:
        return launchGather<uint8_t, Pick>(stream, input, indices, output,
                                           split, extent, errors);
      case 2:
        return launchGather<uint16_t, Pick>(stream, input, indices, output,
                                            split, extent, errors);
      case 4:
        return launchGather<uint32_t, Pick>(stream, input, indices, output,
                                            split, extent, errors);
      default:
        return launchGather<uint64_t, Pick>(stream, input, indices, output,
                                            split, extent, errors);
      }
    });
  });
}

extern "C" fluid_status
fluid_cuda_gather_grad(fluid_cuda_context *context,
                       const fluid_tensor *gradOutputDesc,
                       const fluid_tensor *indicesDesc,
                       fluid_tensor *gradInputDesc, int64_t axis) {
  return guard("fluid_cuda_gather_grad", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor gradOutput =
        checkTensor(context, gradOutputDesc, "grad_output");
    CheckedTensor indices = checkTensor(context, indicesDesc, "indices");
    CheckedTensor gradInput = checkTensor(context, gradInputDesc, "grad_input");
    requireFloatDtype(gradInput);
    int64_t extent = 0;
    const cpu::AxisSplit split =
        cpu::checkGather(gradInput, indices, gradOutput, axis, extent);
    if (gradInput.numel == 0)
      return;
    DeviceErrorRecord *errors = deviceErrorRecord(context);
    cpu::dispatchFloat(gradInput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      dispatchIndex(indices.dtype(), [&](auto index) {
        using Pick = decltype(index);
        gatherGradKernel<<<gridSizeFor(gradInput.numel), kBlockSize, 0,
                           stream>>>(gradOutput.data<const T>(),
                                     indices.data<const Pick>(),
                                     gradInput.data<T>(), gradInput.numel,
                                     split.inner, extent, split.length, errors);
        checkLaunch();
      });
    });
  });
}
