//===- KernelsReduce.cu - mean, reduce_sum, sum_to and global_avg_pool ----===//
//
// One reduction engine for every sum over a set of axes of a dense tensor.
// The host drops dimensions of size 1 and merges neighbours of the same
// kind (kept or reduced), which leaves alternating groups; the output
// enumerates the kept groups in row-major order.
//
//  - innermost group reduced (row sums, global average pooling, the bias
//    gradient's sum over N and H*W): a warp per output for short rows, a
//    block per output for long ones, reading consecutive elements;
//  - innermost group kept (column sums, sum over the batch): a block of
//    32 x 8 threads covers 32 consecutive outputs, so each warp reads 32
//    consecutive elements, and its 8 rows of threads split the reduced
//    range. Where the innermost kept group is a multiple of a 16-byte
//    vector and the input is aligned (a channels-last mean over H and W,
//    [N, H*W, C] -> [N, C]), each thread takes a vector of consecutive
//    outputs instead, and loads kColumnUnroll rows before adding any, so
//    that a warp reads 512 consecutive bytes per row and each thread has
//    several loads in flight.
//
// With few outputs and long reductions the reduced range is also split
// across blocks (gridDim.y); each block writes a partial sum to the
// context's workspace and a second kernel adds the partials of each output
// in a fixed order. Every sum is taken in double (as on the cpu backend)
// by a fixed tree: no atomics, so results are the same from run to run on
// one device; they differ from the cpu's sequential sums by rounding only.
//
// Inputs are f32, f64, f16 or bf16; the output has the input's dtype, or
// is f32 for a 16-bit input (a widening sum: a 16-bit program's mean of
// an activation, without an f32 copy of it first). A 16-bit input is
// widened exactly; a 16-bit output is rounded from the double sum through
// f32, as the cpu backend rounds its f32 result.
//
//===----------------------------------------------------------------------===//

#include "Elementwise.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

/// Rows of at most this many elements get a warp each.
constexpr int64_t kWarpRowLimit = 2048;
/// Least elements per block when the reduced range is split across blocks.
constexpr int64_t kMinRowChunk = 8192;
constexpr int64_t kMinColumnChunk = 256;
/// Threads per block along the outputs, and along the reduced range, of
/// the column kernel.
constexpr int kColumnWidth = 32, kColumnDepth = 8;
/// Rows each thread of the vector column kernel loads before adding.
constexpr int kColumnUnroll = 4;

/// The coalesced geometry of one reduction.
struct ReducePlan {
  // Groups outermost first, with their element strides in the input.
  Shape keptSizes, keptStrides, reducedSizes, reducedStrides;
  int64_t outputs = 1, count = 1;
  bool innerReduced = false;
};

ReducePlan planReduce(const Shape &shape, const std::vector<bool> &reduced) {
  ReducePlan plan;
  // Walk from the innermost dimension; a group's stride is the stride of
  // its innermost dimension.
  int64_t stride = 1;
  int lastKind = -1;
  std::vector<int64_t> sizes[2], strides[2];
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    const int64_t size = shape[d];
    const int kind = reduced[d] ? 1 : 0;
    if (size != 1) {
      if (lastKind == -1)
        plan.innerReduced = kind == 1;
      if (kind == lastKind) {
        sizes[kind].back() *= size;
      } else {
        sizes[kind].push_back(size);
        strides[kind].push_back(stride);
      }
      lastKind = kind;
    }
    stride *= size;
    if (reduced[d])
      plan.count *= size;
    else
      plan.outputs *= size;
  }
  plan.keptSizes.assign(sizes[0].rbegin(), sizes[0].rend());
  plan.keptStrides.assign(strides[0].rbegin(), strides[0].rend());
  plan.reducedSizes.assign(sizes[1].rbegin(), sizes[1].rend());
  plan.reducedStrides.assign(strides[1].rbegin(), strides[1].rend());
  return plan;
}

/// An input element as a double (16-bit types widened exactly).
template <typename T> __device__ inline double toDouble(T x) {
  return double(widen(x));
}

/// A sum stored in the output's type: f32 and f64 rounded once, 16-bit
/// types through f32 (as the cpu backend's f32 result is rounded).
template <typename T> __device__ inline T fromDouble(double x) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return T(x);
  else
    return narrow<T>(float(x));
}

/// Writes the result of output `o` (or its partial sum of split `split`).
template <typename TOut>
__device__ inline void storeSum(double sum, int64_t o, int split,
                                int64_t outputs, double count, bool mean,
                                TOut *out, double *partials) {
  if (partials)
    partials[int64_t(split) * outputs + o] = sum;
  else
    out[o] = fromDouble<TOut>(mean ? sum / count : sum);
}

/// Innermost group reduced: each output is summed by a group of kGroup
/// threads (a warp, with blockDim.y outputs per block, or the whole
/// one-dimensional block); blockIdx.y picks the split of the reduced range.
template <int kGroup, typename TIn, typename TOut, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    reduceRowsKernel(const TIn *in, OffsetCalculator<1, Index> kept,
                     OffsetCalculator<1, Index> reducedDims, Index outputs,
                     Index count, Index chunk, bool mean, TOut *out,
                     double *partials) {
  __shared__ double scratch[kBlockSize / 32];
  const Index begin = Index(blockIdx.y) * chunk;
  const Index end = min(count, begin + chunk);
  const Index groupsPerBlock = blockDim.y;
  for (Index base = Index(blockIdx.x) * groupsPerBlock; base < outputs;
       base += Index(gridDim.x) * groupsPerBlock) {
    const Index o = base + threadIdx.y;
    double sum = 0;
    if (o < outputs) {
      Index at[1];
      kept.offsets(o, at);
      const TIn *row = in + at[0];
      for (Index r = begin + threadIdx.x; r < end; r += kGroup) {
        Index offset[1];
        reducedDims.offsets(r, offset);
        sum += toDouble(row[offset[0]]);
      }
    }
    if constexpr (kGroup == 32)
      sum = warpSum(sum);
    else
      sum = blockSum<kGroup>(sum, scratch);
    if (threadIdx.x == 0 && o < outputs)
      storeSum(sum, int64_t(o), blockIdx.y, int64_t(outputs), double(count),
               mean, out, partials);
  }
}

/// Innermost group kept: thread (x, y) sums output base + x over the
/// reduced indices r = y, y + kColumnDepth, ... of its block's split.
template <typename TIn, typename TOut, typename Index>
__global__ void __launch_bounds__(kColumnWidth *kColumnDepth)
    reduceColumnsKernel(const TIn *in, OffsetCalculator<1, Index> kept,
                        OffsetCalculator<1, Index> reducedDims, Index outputs,
                        Index count, Index chunk, bool mean, TOut *out,
                        double *partials) {
  __shared__ double sums[kColumnDepth][kColumnWidth];
  const Index begin = Index(blockIdx.y) * chunk;
  const Index end = min(count, begin + chunk);
  for (Index base = Index(blockIdx.x) * kColumnWidth; base < outputs;
       base += Index(gridDim.x) * kColumnWidth) {
    const Index o = base + threadIdx.x;
    double sum = 0;
    if (o < outputs) {
      Index at[1];
      kept.offsets(o, at);
      const TIn *column = in + at[0];
      for (Index r = begin + threadIdx.y; r < end; r += kColumnDepth) {
        Index offset[1];
        reducedDims.offsets(r, offset);
        sum += toDouble(column[offset[0]]);
      }
    }
    sums[threadIdx.y][threadIdx.x] = sum;
    __syncthreads();
    if (threadIdx.y == 0 && o < outputs) {
      double total = 0;
#pragma unroll
      for (int y = 0; y < kColumnDepth; ++y)
        total += sums[y][threadIdx.x];
      storeSum(total, int64_t(o), blockIdx.y, int64_t(outputs), double(count),
               mean, out, partials);
    }
    __syncthreads();
  }
}

/// Innermost group kept, `kVec` consecutive outputs per thread: thread
/// (x, y) sums outputs base + x * kVec ... + kVec - 1 (one aligned vector
/// per row: the innermost kept group is a multiple of kVec, and every
/// other stride a multiple of it) over the reduced indices r = y, y +
/// kColumnDepth, ... of its block's split, kColumnUnroll rows loaded at a
/// time; each output's terms are added in the order of r, then across y
/// in order: a fixed order.
template <typename TIn, typename TOut, int kVec, typename Index>
__global__ void __launch_bounds__(kColumnWidth *kColumnDepth)
    reduceColumnVectorsKernel(const TIn *in, OffsetCalculator<1, Index> kept,
                              OffsetCalculator<1, Index> reducedDims,
                              Index outputs, Index count, Index chunk,
                              bool mean, TOut *out, double *partials) {
  __shared__ double sums[kColumnDepth][kColumnWidth * kVec];
  using Vec = Vector<TIn, kVec>;
  const Index begin = Index(blockIdx.y) * chunk;
  const Index end = min(count, begin + chunk);
  constexpr Index kStep = kColumnDepth;
  for (Index base = Index(blockIdx.x) * kColumnWidth * kVec; base < outputs;
       base += Index(gridDim.x) * kColumnWidth * kVec) {
    const Index o = base + Index(threadIdx.x) * kVec;
    double sum[kVec] = {};
    if (o < outputs) {
      Index at[1];
      kept.offsets(o, at);
      const TIn *column = in + at[0];
      auto load = [&](Index r) {
        Index offset[1];
        reducedDims.offsets(r, offset);
        return *reinterpret_cast<const Vec *>(column + offset[0]);
      };
      Index r = begin + threadIdx.y;
      for (; r + (kColumnUnroll - 1) * kStep < end;
           r += kColumnUnroll * kStep) {
        Vec rows[kColumnUnroll];
#pragma unroll
        for (int u = 0; u < kColumnUnroll; ++u)
          rows[u] = load(r + Index(u) * kStep);
#pragma unroll
        for (int u = 0; u < kColumnUnroll; ++u)
#pragma unroll
          for (int l = 0; l < kVec; ++l)
            sum[l] += toDouble(rows[u].v[l]);
      }
      for (; r < end; r += kStep) {
        const Vec row = load(r);
#pragma unroll
        for (int l = 0; l < kVec; ++l)
          sum[l] += toDouble(row.v[l]);
      }
    }
#pragma unroll
    for (int l = 0; l < kVec; ++l)
      sums[threadIdx.y][threadIdx.x * kVec + l] = sum[l];
    __syncthreads();
    if (threadIdx.y == 0 && o < outputs) {
#pragma unroll
      for (int l = 0; l < kVec; ++l) {
        double total = 0;
#pragma unroll
        for (int y = 0; y < kColumnDepth; ++y)
          total += sums[y][threadIdx.x * kVec + l];
        storeSum(total, int64_t(o) + l, blockIdx.y, int64_t(outputs),
                 double(count), mean, out, partials);
      }
    }
    __syncthreads();
  }
}

/// Adds the `splits` partial sums of each output, in order.
template <typename TOut>
__global__ void __launch_bounds__(kBlockSize)
    combinePartialsKernel(const double *partials, int splits, int64_t outputs,
                          double count, bool mean, TOut *out) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < outputs;
       o += stride) {
    double sum = 0;
    for (int s = 0; s < splits; ++s)
      sum += partials[int64_t(s) * outputs + o];
    out[o] = fromDouble<TOut>(mean ? sum / count : sum);
  }
}

template <typename TOut>
__global__ void __launch_bounds__(kBlockSize)
    fillKernel(TOut *out, int64_t n, double value) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    out[i] = fromDouble<TOut>(value);
}

/// The number of splits of the reduced range: enough blocks to fill the
/// device, but at least `minChunk` elements per split.
int splitCount(int64_t blocksWithoutSplit, int64_t count, int64_t minChunk) {
  const int64_t wanted = ceilDiv(int64_t(multiprocessorCount()) * 8,
                                 std::max<int64_t>(1, blocksWithoutSplit));
  const int64_t affordable = std::max<int64_t>(1, count / minChunk);
  return int(std::clamp<int64_t>(std::min(wanted, affordable), 1, 65535));
}

template <typename TIn, typename TOut, typename Index>
void launchReducePlan(fluid_cuda_context *context, cudaStream_t stream,
                      const TIn *in, TOut *out, const ReducePlan &plan,
                      bool mean) {
  const Shape *keptStrides = &plan.keptStrides;
  const Shape *reducedStrides = &plan.reducedStrides;
  OffsetCalculator<1, Index> kept(plan.keptSizes, keptStrides);
  OffsetCalculator<1, Index> reducedDims(plan.reducedSizes, reducedStrides);
  const int64_t outputs = plan.outputs, count = plan.count;

  // Columns by vectors: the innermost kept group (stride 1) a multiple of
  // the vector width and the input aligned to it.
  constexpr int kVec = int(16 / sizeof(TIn));
  const bool columnVectors = !plan.innerReduced && !plan.keptSizes.empty() &&
                             plan.keptStrides.back() == 1 &&
                             plan.keptSizes.back() % kVec == 0 &&
                             isVectorAligned<TIn, kVec>(in);
  int64_t blocksX;
  int splits;
  if (columnVectors) {
    blocksX = ceilDiv(outputs, int64_t(kColumnWidth) * kVec);
    splits = splitCount(blocksX, count, kMinColumnChunk);
  } else if (plan.innerReduced && count <= kWarpRowLimit) {
    blocksX = ceilDiv(outputs, kBlockSize / 32);
    splits = 1;
  } else if (plan.innerReduced) {
    blocksX = outputs;
    splits = splitCount(blocksX, count, kMinRowChunk);
  } else {
    blocksX = ceilDiv(outputs, kColumnWidth);
    splits = splitCount(blocksX, count, kMinColumnChunk);
  }
  blocksX = std::min<int64_t>(blocksX, int64_t(multiprocessorCount()) * 32);
  const int64_t chunk = ceilDiv(count, splits);
  double *partials = nullptr;
  if (splits > 1)
    partials = static_cast<double *>(
        workspace(context, sizeof(double) * size_t(outputs) * splits));

  const dim3 grid{unsigned(blocksX), unsigned(splits)};
  if (columnVectors)
    reduceColumnVectorsKernel<TIn, TOut, kVec>
        <<<grid, dim3(kColumnWidth, kColumnDepth), 0, stream>>>(
            in, kept, reducedDims, Index(outputs), Index(count), Index(chunk),
            mean, out, partials);
  else if (plan.innerReduced && count <= kWarpRowLimit)
    reduceRowsKernel<32, TIn, TOut>
        <<<grid, dim3(32, kBlockSize / 32), 0, stream>>>(
            in, kept, reducedDims, Index(outputs), Index(count), Index(chunk),
            mean, out, partials);
  else if (plan.innerReduced)
    reduceRowsKernel<kBlockSize, TIn, TOut>
        <<<grid, dim3(kBlockSize, 1), 0, stream>>>(
            in, kept, reducedDims, Index(outputs), Index(count), Index(chunk),
            mean, out, partials);
  else
    reduceColumnsKernel<TIn, TOut>
        <<<grid, dim3(kColumnWidth, kColumnDepth), 0, stream>>>(
            in, kept, reducedDims, Index(outputs), Index(count), Index(chunk),
            mean, out, partials);
  checkLaunch();
  if (partials) {
    combinePartialsKernel<<<gridSizeFor(outputs), kBlockSize, 0, stream>>>(
        partials, splits, outputs, double(count), mean, out);
    checkLaunch();
  }
}

/// The input and output dtypes a reduction takes: f32 or f64 to the same,
/// f16 or bf16 to the same or to f32.
void requireReduceDtypes(const CheckedTensor &input,
                         const CheckedTensor &output) {
  if (cpu::isFloat16Dtype(input.dtype()) && output.dtype() == FLUID_F32)
    return;
  requireElementwiseFloat(input);
  cpu::requireDtype(output, input);
}

/// Calls body(TIn{}, TOut{}) for dtypes requireReduceDtypes accepted.
template <typename Fn> void dispatchReduce(int32_t in, int32_t out, Fn &&body) {
  switch (in) {
  case FLUID_F32:
    return body(float{}, float{});
  case FLUID_F64:
    return body(double{}, double{});
  case FLUID_F16:
    return out == FLUID_F32 ? body(__half{}, float{})
                            : body(__half{}, __half{});
  default:
    return out == FLUID_F32 ? body(__nv_bfloat16{}, float{})
                            : body(__nv_bfloat16{}, __nv_bfloat16{});
  }
}

/// output = the sum (or mean) of input over the dimensions marked in
/// `reduced`; output holds the kept dimensions in row-major order.
void launchReduction(fluid_cuda_context *context, cudaStream_t stream,
                     const CheckedTensor &input, const CheckedTensor &output,
                     const std::vector<bool> &reduced, bool mean) {
  const ReducePlan plan = planReduce(input.shape, reduced);
  if (plan.outputs == 0)
    return;
  dispatchReduce(input.dtype(), output.dtype(), [&](auto inZero, auto outZero) {
    using TIn = decltype(inZero);
    using TOut = decltype(outZero);
    const TIn *in = input.data<TIn>();
    TOut *out = output.data<TOut>();
    if (plan.count == 0) {
      // An empty sum is 0, its mean 0/0 = NaN (as in PyTorch).
      const double value =
          mean ? std::numeric_limits<double>::quiet_NaN() : 0.0;
      fillKernel<<<gridSizeFor(plan.outputs), kBlockSize, 0, stream>>>(
          out, plan.outputs, value);
      checkLaunch();
    } else if (plan.reducedSizes.empty() && std::is_same_v<TIn, TOut>) {
      // Nothing to add up (every reduced dimension has size 1).
      if (static_cast<const void *>(in) != static_cast<const void *>(out))
        FLUID_CUDA_CHECK(cudaMemcpyAsync(out, in, sizeof(TOut) * plan.outputs,
                                         cudaMemcpyDeviceToDevice, stream));
    } else if (fitsNarrowIndex(input.numel)) {
      launchReducePlan<TIn, TOut, uint32_t>(context, stream, in, out, plan,
                                            mean);
    } else {
      launchReducePlan<TIn, TOut, uint64_t>(context, stream, in, out, plan,
                                            mean);
    }
  });
}

/// The reduced dimensions of params, as the cpu backend validates them,
/// and the output shape check.
std::vector<bool> reducedAxes(const CheckedTensor &input,
                              const CheckedTensor &output,
                              const fluid_reduce_params &params) {
  const int64_t rank = input.rank();
  if (params.num_axes < 0 || params.num_axes > rank)
    fail("num_axes " + std::to_string(params.num_axes) + " is outside [0, " +
         std::to_string(rank) + "] for input shape " +
         cpu::formatShape(input.shape));
  std::vector<bool> reduced(rank, params.num_axes == 0);
  for (int32_t i = 0; i < params.num_axes; ++i) {
    int64_t axis = params.axes[i];
    if (axis < 0 || axis >= rank)
      fail("axis " + std::to_string(axis) + " is outside [0, " +
           std::to_string(rank) + ") for input shape " +
           cpu::formatShape(input.shape));
    if (reduced[axis])
      fail("axis " + std::to_string(axis) + " is listed twice");
    reduced[axis] = true;
  }
  Shape expected;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      expected.push_back(input.dim(d));
    else if (params.keep_dims)
      expected.push_back(1);
  }
  cpu::requireShape(output, expected);
  return reduced;
}

fluid_status reduceEntry(const char *entryPoint, fluid_cuda_context *context,
                         const fluid_tensor *inputDesc,
                         fluid_tensor *outputDesc,
                         const fluid_reduce_params *params, bool mean) {
  return guard(entryPoint, [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    cpu::requireParams(params);
    requireReduceDtypes(input, output);
    std::vector<bool> reduced = reducedAxes(input, output, *params);
    launchReduction(context, stream, input, output, reduced, mean);
  });
}

} // namespace

extern "C" fluid_status fluid_cuda_mean(fluid_cuda_context *context,
                                        const fluid_tensor *input,
                                        fluid_tensor *output,
                                        const fluid_reduce_params *params) {
  return reduceEntry("fluid_cuda_mean", context, input, output, params,
                     /*mean=*/true);
}

extern "C" fluid_status
fluid_cuda_reduce_sum(fluid_cuda_context *context, const fluid_tensor *input,
                      fluid_tensor *output, const fluid_reduce_params *params) {
  return reduceEntry("fluid_cuda_reduce_sum", context, input, output, params,
                     /*mean=*/false);
}

extern "C" fluid_status fluid_cuda_sum_to(fluid_cuda_context *context,
                                          const fluid_tensor *inputDesc,
                                          fluid_tensor *outputDesc) {
  return guard("fluid_cuda_sum_to", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    requireReduceDtypes(input, output);
    // output's shape must broadcast to input's.
    const std::string shapes = output.name + " shape " +
                               cpu::formatShape(output.shape) +
                               " does not broadcast to " + input.name +
                               " shape " + cpu::formatShape(input.shape);
    if (output.rank() > input.rank())
      fail(shapes + ": it has more dimensions");
    const int64_t extra = input.rank() - output.rank();
    for (int64_t d = 0; d < output.rank(); ++d)
      if (output.dim(d) != 1 && output.dim(d) != input.dim(extra + d))
        fail(shapes + ": dimension " + std::to_string(d) + " of " +
             output.name + " is " + std::to_string(output.dim(d)) +
             ", expected 1 or " + std::to_string(input.dim(extra + d)));
    // Summed: the leading dimensions output lacks and those where it has 1.
    std::vector<bool> reduced(input.rank());
    for (int64_t d = 0; d < input.rank(); ++d)
      reduced[d] = d < extra || output.dim(d - extra) == 1;
    launchReduction(context, stream, input, output, reduced, /*mean=*/false);
  });
}

extern "C" fluid_status
fluid_cuda_global_avg_pool(fluid_cuda_context *context,
                           const fluid_tensor *inputDesc,
                           fluid_tensor *outputDesc) {
  return guard("fluid_cuda_global_avg_pool", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    requireReduceDtypes(input, output);
    cpu::requireRank(input, 4);
    cpu::requireShape(output, {input.dim(0), input.dim(1), 1, 1});
    launchReduction(context, stream, input, output, {false, false, true, true},
                    /*mean=*/true);
  });
}
