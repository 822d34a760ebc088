//===- KernelUtils.cuh - Shared pieces of the cuda backend's own kernels --===//
//
// What every Kernels*.cu file needs: launch sizes for grid-stride loops,
// fast integer division for index arithmetic, aligned vectors for 16-byte
// loads, deterministic warp and block sums, and the device-side error record
// through which kernels report problems found in device-resident data (a
// class label, a learning rate, a value to cast) that the host cannot check
// without waiting for the device.
//
// Descriptors are validated on the host with the cpu backend's checks
// (../cpu/TensorChecks.h), so both backends reject a call with the same
// message.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDA_KERNELUTILS_CUH
#define FLUID_RUNTIME_CUDA_KERNELUTILS_CUH

#include "../cpu/TensorChecks.h"
#include "Context.h"

#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/Error.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace fluid::rt::cuda {

using cpu::CheckedTensor;
using cpu::Shape;

/// Threads per block of the one-dimensional kernels.
constexpr int kBlockSize = 256;

/// Blocks for a grid-stride loop over `work` items, `threads` per block:
/// one item per thread, capped at enough blocks to fill every multiprocessor
/// several times over; at least 1.
int gridSizeFor(int64_t work, int threads = kBlockSize);

/// The number of multiprocessors of the current device (cached).
int multiprocessorCount();

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The number of elements of a shape (1 for rank 0).
inline int64_t numelOf(const Shape &shape) {
  int64_t n = 1;
  for (int64_t size : shape)
    n *= size;
  return n;
}

/// Fails (as unsupported) unless `t` is f32 or f64.
inline void requireFloatDtype(const CheckedTensor &t) {
  if (t.dtype() != FLUID_F32 && t.dtype() != FLUID_F64)
    throw Error(FLUID_ERROR_UNSUPPORTED,
                t.name + " has dtype " + cpu::dtypeName(t.dtype()) +
                    "; the cuda kernels support f32 and f64");
}

/// Calls `body(T{})` with T the C++ type of a float dtype: f64, f16, bf16,
/// or f32 for any other (the caller has checked the dtype).
template <typename Fn> auto dispatchAnyFloat(int32_t dtype, Fn &&body) {
  switch (dtype) {
  case FLUID_F64:
    return body(double{});
  case FLUID_F16:
    return body(__half{});
  case FLUID_BF16:
    return body(__nv_bfloat16{});
  default:
    return body(float{});
  }
}

/// The stream of `context`, failing on a null context; makes the context's
/// device current.
inline cudaStream_t streamFor(fluid_cuda_context *context) {
  return streamOf(requireContext(context));
}

/// cpu::checkTensor plus: the data is device memory of the context's
/// device.
inline CheckedTensor checkTensor(fluid_cuda_context *context,
                                 const fluid_tensor *desc,
                                 const std::string &name) {
  CheckedTensor t = cpu::checkTensor(desc, name);
  requireDeviceMemory(context, t);
  return t;
}

/// Checks the launch just made.
inline void checkLaunch() { FLUID_CUDA_CHECK(cudaGetLastError()); }

//===----------------------------------------------------------------------===//
// Integer division by a divisor fixed at launch
//===----------------------------------------------------------------------===//

/// Quotient and remainder by a divisor known on the host. The 32-bit form
/// replaces the division by a multiply-high and a shift (Granlund and
/// Montgomery, as PyTorch's IntDivider does), valid for dividends and
/// divisors below 2^31; the 64-bit form divides.
template <typename Index> struct Divider;

template <> struct Divider<uint32_t> {
  uint32_t divisor = 1, multiplier = 0, shift = 0;

  Divider() = default;
  explicit Divider(uint32_t d) : divisor(d) {
    for (shift = 0; shift < 32; ++shift)
      if ((uint64_t(1) << shift) >= d)
        break;
    const uint64_t one = 1;
    multiplier = uint32_t(((one << 32) * ((one << shift) - d)) / d + 1);
  }
  __device__ uint32_t div(uint32_t n) const {
    return (__umulhi(n, multiplier) + n) >> shift;
  }
};

template <> struct Divider<uint64_t> {
  uint64_t divisor = 1;

  Divider() = default;
  explicit Divider(uint64_t d) : divisor(d) {}
  __device__ uint64_t div(uint64_t n) const { return n / divisor; }
};

/// Whether index arithmetic over `count` items fits the 32-bit dividers.
inline bool fitsNarrowIndex(int64_t count) {
  return count < (int64_t(1) << 31);
}

/// Linear index -> per-operand element offsets over up to FLUID_MAX_RANK
/// dimensions, stored innermost first; each operand has its own strides
/// (0 along the dimensions it is broadcast over).
template <int N, typename Index> struct OffsetCalculator {
  int rank = 0;
  Divider<Index> sizes[FLUID_MAX_RANK];
  Index strides[FLUID_MAX_RANK][N] = {};

  /// `sizes` and `strides[k]` given outermost first (row-major order).
  OffsetCalculator(const Shape &outerFirstSizes, const Shape *outerFirstStrides)
      : rank(int(outerFirstSizes.size())) {
    for (int d = 0; d < rank; ++d) {
      const int from = rank - 1 - d;
      sizes[d] = Divider<Index>(Index(outerFirstSizes[from]));
      for (int k = 0; k < N; ++k)
        strides[d][k] = Index(outerFirstStrides[k][from]);
    }
  }

  __device__ void offsets(Index linear, Index (&out)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k)
      out[k] = 0;
#pragma unroll
    for (int d = 0; d < FLUID_MAX_RANK; ++d) {
      if (d == rank)
        break;
      // The outermost dimension needs no division: what is left is its
      // index.
      Index index = linear;
      if (d + 1 < rank) {
        const Index quotient = sizes[d].div(linear);
        index = linear - quotient * sizes[d].divisor;
        linear = quotient;
      }
#pragma unroll
      for (int k = 0; k < N; ++k)
        out[k] += index * strides[d][k];
    }
  }
};

//===----------------------------------------------------------------------===//
// Vectors and reductions
//===----------------------------------------------------------------------===//

/// `N` consecutive elements, aligned so that one instruction loads them.
template <typename T, int N> struct alignas(sizeof(T) * N) Vector { T v[N]; };

/// Whether `pointer` is aligned for Vector<T, N> loads.
template <typename T, int N> bool isVectorAligned(const void *pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % (sizeof(T) * N) == 0;
}

/// The sum of `value` over the 32 lanes of a warp, the same in every lane;
/// a fixed butterfly, so the rounding does not vary from run to run.
__device__ inline double warpSum(double value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

/// The larger of two values as std::max(a, b) on the cpu picks it: a NaN
/// b is ignored (the slice maxima of softmax start at -inf, so they never
/// become NaN).
template <typename T> __device__ inline T maxOf(T a, T b) {
  return a < b ? b : a;
}

/// The maximum of `value` over the 32 lanes of a warp, in every lane.
template <typename T> __device__ inline T warpMax(T value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    value = maxOf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

/// The sum of `value` over a one-dimensional block of kThreads threads
/// (a multiple of 32), returned to every thread. `scratch` holds
/// kThreads / 32 doubles; the call synchronizes the block, also before
/// returning, so `scratch` may be reused at once.
template <int kThreads>
__device__ inline double blockSum(double value, double *scratch) {
  constexpr int kWarps = kThreads / 32;
  value = warpSum(value);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    scratch[warp] = value;
  __syncthreads();
  double total = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w)
    total += scratch[w];
  __syncthreads();
  return total;
}

/// The maximum over a one-dimensional block, as blockSum.
template <int kThreads, typename T>
__device__ inline T blockMax(T value, T *scratch) {
  constexpr int kWarps = kThreads / 32;
  value = warpMax(value);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0)
    scratch[warp] = value;
  __syncthreads();
  T best = scratch[0];
#pragma unroll
  for (int w = 1; w < kWarps; ++w)
    best = maxOf(best, scratch[w]);
  __syncthreads();
  return best;
}

//===----------------------------------------------------------------------===//
// Errors found by kernels
//===----------------------------------------------------------------------===//

/// What a kernel found wrong in device-resident data.
enum DeviceErrorKind : uint32_t {
  kNoDeviceError = 0,
  kLabelOutOfRange, // index: row, value: label, bound: classes
  kBadLearningRate, // real: the learning rate
  kBadStep,         // value: the step
  kCastNaN,         // index: element
  kCastOutOfRange,  // index: element, value or real: the element
  kIndexOutOfRange, // index: position, value: the index, bound: the extent
};

/// The entry point that launched the kernel (names in KernelsCommon.cu).
enum DeviceErrorSource : uint32_t {
  kFromSoftmaxCrossEntropy = 0,
  kFromSoftmaxCrossEntropyGrad,
  kFromSgd,
  kFromMomentum,
  kFromAdam,
  kFromCast,
  kFromSgdGroup,
  kFromMomentumGroup,
  kFromAdamGroup,
  kFromUnscaleGrads,
  kFromGather,
  kFromGatherGrad,
};

/// The first error flagged on a device since fluid_cuda_check_errors last
/// looked. Kernels fill it through raiseDeviceError; the host reads and
/// clears it.
struct DeviceErrorRecord {
  uint32_t kind;
  uint32_t source;
  int64_t index;
  int64_t value;
  int64_t bound;
  double real;
  int32_t fromDtype;
  int32_t toDtype;
};

/// The record of the context's device, shared by every context on that
/// device: allocated and zeroed on first use (the one time this
/// synchronizes), never freed.
DeviceErrorRecord *deviceErrorRecord(fluid_cuda_context *context);

/// Records `error` unless an earlier error is recorded already.
__device__ inline void raiseDeviceError(DeviceErrorRecord *record,
                                        const DeviceErrorRecord &error) {
  if (atomicCAS(&record->kind, kNoDeviceError, error.kind) != kNoDeviceError)
    return;
  record->source = error.source;
  record->index = error.index;
  record->value = error.value;
  record->bound = error.bound;
  record->real = error.real;
  record->fromDtype = error.fromDtype;
  record->toDtype = error.toDtype;
  __threadfence();
}

} // namespace fluid::rt::cuda

#endif // FLUID_RUNTIME_CUDA_KERNELUTILS_CUH
