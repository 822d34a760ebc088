//===- Elementwise.cuh - One engine for every elementwise kernel ----------===//
//
// output[i] = op(operand values...) with NumPy broadcasting, for N = 1..3
// operands of one element type `In` and an output of type `Out`. The host
// first coalesces the shapes: dimensions of size 1 are dropped and
// neighbours that every operand walks alike are merged, so that the common
// cases collapse to at most three dimensions. Then:
//
//  - flat kernel: every operand is contiguous with the output, a scalar, or
//    a per-channel vector (element i reads (i / inner) % channels, the
//    [C,1,1] bias of an NCHW tensor, the [C] bias of an [N,C] one). Each
//    thread handles 16 bytes of output per step with aligned vector loads
//    and stores (float4, double2, ...) when the pointers allow, plus a
//    scalar tail. A per-channel operand gives a vector one value (inner a
//    multiple of the vector width), one aligned vector load (inner 1), or
//    one channel per element.
//  - strided kernel: anything else, one element per thread, offsets from
//    the linear index by division per coalesced dimension (multiply-high
//    for tensors under 2^31 elements, 64-bit division beyond).
//
// Each thread reads all operands of an element (or vector) before writing
// it, so the output may be the buffer of an operand of the output's shape.
//
// f16 and bf16 tensors are storage only, as on the cpu backend
// (../cpu/Widen.h): each operand is widened to f32 exactly, the op runs in
// f32, and the result is rounded once to nearest even (Widened below), so
// both backends give the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDA_ELEMENTWISE_CUH
#define FLUID_RUNTIME_CUDA_ELEMENTWISE_CUH

#include "../cpu/Broadcasting.h"
#include "KernelUtils.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>

namespace fluid::rt::cuda {

/// How the flat kernel reads an operand.
enum class Access : int { Contiguous, Scalar, Channel };

template <typename In, int N> struct Operands {
  const In *data[N];
  Access access[N];
};

/// How the flat kernel reads the kVec elements of a vector from its
/// Channel operands.
enum class ChannelVector : int {
  Uniform,    // one channel (inner is a multiple of kVec): one value
  Contiguous, // inner 1, kVec consecutive channels: one aligned vector load
  PerElement, // anything else: a channel per element
};

/// The [outer, channels, inner] view of the flat kernel's Channel operands.
struct ChannelView {
  int64_t inner = 1, channels = 1;
  bool narrow = true;
  ChannelVector vector = ChannelVector::Uniform;
  Divider<uint32_t> innerDiv, channelsDiv;

  ChannelView() = default;
  ChannelView(int64_t inner, int64_t channels, int64_t numel)
      : inner(inner), channels(channels), narrow(fitsNarrowIndex(numel)) {
    if (narrow) {
      innerDiv = Divider<uint32_t>(uint32_t(inner));
      channelsDiv = Divider<uint32_t>(uint32_t(channels));
    }
  }

  /// The channel that element i reads.
  __device__ int64_t channel(int64_t i) const {
    if (narrow) {
      const uint32_t row = innerDiv.div(uint32_t(i));
      return row - channelsDiv.div(row) * uint32_t(channels);
    }
    return (i / inner) % channels;
  }
};

/// f16 and bf16 values widened to f32 (exact); f32 and f64 as they are.
__device__ inline float widen(__half x) { return __half2float(x); }
__device__ inline float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ inline T widen(T x) { return x; }

/// An f32 value rounded to nearest even in a 16-bit storage type.
template <typename Storage> __device__ Storage narrow(float x);
template <> __device__ inline __half narrow<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ inline __nv_bfloat16 narrow<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// `op` over the f32 values of 16-bit operands, rounded once to `Storage`.
template <typename Storage, typename Op> struct Widened {
  Op op;
  template <typename... T> __device__ Storage operator()(T... x) const {
    return narrow<Storage>(op(widen(x)...));
  }
};

template <typename Op, typename In, int N>
__device__ inline auto applyOp(const Op &op, const In (&v)[N]) {
  if constexpr (N == 1)
    return op(v[0]);
  else if constexpr (N == 2)
    return op(v[0], v[1]);
  else
    return op(v[0], v[1], v[2]);
}

template <int Vec, typename Out, typename In, int N, typename Op>
__global__ void __launch_bounds__(kBlockSize)
    flatKernel(Out *out, Operands<In, N> in, ChannelView view, int64_t n,
               Op op) {
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  In scalars[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    scalars[k] = in.access[k] == Access::Scalar ? in.data[k][0] : In();

  const int64_t vectors = n / Vec;
  for (int64_t v = first; v < vectors; v += stride) {
    In values[Vec][N];
#pragma unroll
    for (int k = 0; k < N; ++k) {
      if (in.access[k] == Access::Contiguous) {
        const Vector<In, Vec> loaded =
            reinterpret_cast<const Vector<In, Vec> *>(in.data[k])[v];
#pragma unroll
        for (int j = 0; j < Vec; ++j)
          values[j][k] = loaded.v[j];
      } else if (in.access[k] == Access::Scalar) {
#pragma unroll
        for (int j = 0; j < Vec; ++j)
          values[j][k] = scalars[k];
      } else if (view.vector == ChannelVector::Uniform) {
        const In value = in.data[k][view.channel(v * Vec)];
#pragma unroll
        for (int j = 0; j < Vec; ++j)
          values[j][k] = value;
      } else if (view.vector == ChannelVector::Contiguous) {
        // The vector starts at a channel index divisible by Vec.
        const Vector<In, Vec> loaded =
            *reinterpret_cast<const Vector<In, Vec> *>(in.data[k] +
                                                       view.channel(v * Vec));
#pragma unroll
        for (int j = 0; j < Vec; ++j)
          values[j][k] = loaded.v[j];
      } else {
#pragma unroll
        for (int j = 0; j < Vec; ++j)
          values[j][k] = in.data[k][view.channel(v * Vec + j)];
      }
    }
    Vector<Out, Vec> result;
#pragma unroll
    for (int j = 0; j < Vec; ++j)
      result.v[j] = applyOp(op, values[j]);
    reinterpret_cast<Vector<Out, Vec> *>(out)[v] = result;
  }

  if constexpr (Vec > 1) {
    const int64_t i = vectors * Vec + first;
    if (i < n) {
      In values[N];
#pragma unroll
      for (int k = 0; k < N; ++k)
        values[k] = in.access[k] == Access::Contiguous ? in.data[k][i]
                    : in.access[k] == Access::Scalar
                        ? scalars[k]
                        : in.data[k][view.channel(i)];
      out[i] = applyOp(op, values);
    }
  }
}

template <typename Index, typename Out, typename In, int N, typename Op>
__global__ void __launch_bounds__(kBlockSize)
    stridedKernel(Out *out, Operands<In, N> in,
                  OffsetCalculator<N, Index> offsets, Index n, Op op) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    Index at[N];
    offsets.offsets(i, at);
    In values[N];
#pragma unroll
    for (int k = 0; k < N; ++k)
      values[k] = in.data[k][at[k]];
    out[i] = applyOp(op, values);
  }
}

/// The shapes of a broadcast after coalescing: output dimensions outermost
/// first, and per operand its element strides along them (0 where it is
/// broadcast).
template <int N> struct CoalescedBroadcast {
  Shape sizes;
  std::array<Shape, N> strides;
};

template <int N>
CoalescedBroadcast<N> coalesceBroadcast(const Shape &outShape,
                                        const std::array<Shape, N> &shapes) {
  std::array<Shape, N> full;
  for (int k = 0; k < N; ++k)
    full[k] = cpu::broadcastStrides(shapes[k], outShape.size());
  CoalescedBroadcast<N> result;
  for (size_t d = 0; d < outShape.size(); ++d) {
    if (outShape[d] == 1)
      continue;
    // Merge into the previous (outer) dimension when every operand steps
    // through both as through one: outer stride = inner stride * inner size.
    bool merge = !result.sizes.empty();
    for (int k = 0; k < N && merge; ++k)
      merge = result.strides[k].back() == full[k][d] * outShape[d];
    if (merge) {
      result.sizes.back() *= outShape[d];
      for (int k = 0; k < N; ++k)
        result.strides[k].back() = full[k][d];
    } else {
      result.sizes.push_back(outShape[d]);
      for (int k = 0; k < N; ++k)
        result.strides[k].push_back(full[k][d]);
    }
  }
  return result;
}

/// Launches output = op(operands...) over `outShape` on `stream`; each
/// operand's shape broadcasts to outShape (already checked).
template <typename Out, typename In, int N, typename Op>
void launchElementwise(cudaStream_t stream, Out *out, const Shape &outShape,
                       const std::array<const In *, N> &data,
                       const std::array<Shape, N> &shapes, Op op) {
  const int64_t n = numelOf(outShape);
  if (n == 0)
    return;
  const CoalescedBroadcast<N> layout = coalesceBroadcast<N>(outShape, shapes);
  const int rank = int(layout.sizes.size());
  Shape contiguous(rank, 1);
  for (int d = rank - 2; d >= 0; --d)
    contiguous[d] = contiguous[d + 1] * layout.sizes[d + 1];

  Operands<In, N> operands;
  for (int k = 0; k < N; ++k)
    operands.data[k] = data[k];

  // The flat kernel applies when each operand is contiguous, a scalar, or
  // indexed by one dimension `channelDim` alone (the same for all).
  auto accessFor = [&](int k, int channelDim, Access &access) {
    const Shape &strides = layout.strides[k];
    if (strides == contiguous) {
      access = Access::Contiguous;
      return true;
    }
    bool scalar = true, channel = channelDim >= 0;
    for (int d = 0; d < rank; ++d) {
      scalar = scalar && strides[d] == 0;
      channel = channel && strides[d] == (d == channelDim ? 1 : 0);
    }
    access = scalar ? Access::Scalar : Access::Channel;
    return scalar || channel;
  };
  int channelDim = -2;
  for (int candidate = -1; candidate < rank && channelDim == -2; ++candidate) {
    bool all = true;
    for (int k = 0; k < N && all; ++k)
      all = accessFor(k, candidate, operands.access[k]);
    if (all)
      channelDim = candidate;
  }

  if (channelDim != -2) {
    ChannelView view;
    if (channelDim >= 0)
      view = ChannelView(contiguous[channelDim], layout.sizes[channelDim], n);
    // 16 bytes of the wider of In and Out per vector.
    constexpr int kVec = int(16 / std::max(sizeof(In), sizeof(Out)));
    bool vectorize = isVectorAligned<Out, kVec>(out);
    bool channelsAligned = true;
    for (int k = 0; k < N; ++k) {
      if (operands.access[k] == Access::Contiguous)
        vectorize = vectorize && isVectorAligned<In, kVec>(data[k]);
      else if (operands.access[k] == Access::Channel)
        channelsAligned = channelsAligned && isVectorAligned<In, kVec>(data[k]);
    }
    if (view.inner % kVec == 0)
      view.vector = ChannelVector::Uniform;
    else if (view.inner == 1 && view.channels % kVec == 0 && channelsAligned)
      view.vector = ChannelVector::Contiguous;
    else
      view.vector = ChannelVector::PerElement;
    if (vectorize) {
      flatKernel<kVec><<<gridSizeFor(n / kVec), kBlockSize, 0, stream>>>(
          out, operands, view, n, op);
    } else {
      flatKernel<1><<<gridSizeFor(n), kBlockSize, 0, stream>>>(out, operands,
                                                               view, n, op);
    }
    checkLaunch();
    return;
  }

  if (fitsNarrowIndex(n)) {
    OffsetCalculator<N, uint32_t> offsets(layout.sizes, layout.strides.data());
    stridedKernel<<<gridSizeFor(n), kBlockSize, 0, stream>>>(
        out, operands, offsets, uint32_t(n), op);
  } else {
    OffsetCalculator<N, uint64_t> offsets(layout.sizes, layout.strides.data());
    stridedKernel<<<gridSizeFor(n), kBlockSize, 0, stream>>>(
        out, operands, offsets, uint64_t(n), op);
  }
  checkLaunch();
}

/// Fails (as unsupported) unless `t` is f32, f64, f16 or bf16 (the last two
/// computed in f32).
inline void requireElementwiseFloat(const CheckedTensor &t) {
  if (!cpu::isFloat16Dtype(t.dtype()))
    requireFloatDtype(t);
}

/// The checks of the cpu backend's mapBroadcast: float operands of one
/// dtype, an output of that dtype and of the broadcast shape.
template <size_t N>
void checkFloatBroadcast(const std::array<const CheckedTensor *, N> &operands,
                         const CheckedTensor &output) {
  requireElementwiseFloat(*operands[0]);
  for (size_t k = 1; k < N; ++k)
    cpu::requireDtype(*operands[k], *operands[0]);
  cpu::requireDtype(output, *operands[0]);
  cpu::requireShape(output, cpu::broadcastShapes(operands));
}

/// Launches `op` over checked float operands in the output's dtype.
template <int N, typename Op>
void launchFloatElementwise(cudaStream_t stream,
                            const std::array<const CheckedTensor *, N> &in,
                            const CheckedTensor &output, Op op) {
  std::array<Shape, N> shapes;
  for (int k = 0; k < N; ++k)
    shapes[k] = in[k]->shape;
  auto run = [&](auto zero, auto typedOp) {
    using T = decltype(zero);
    std::array<const T *, N> data;
    for (int k = 0; k < N; ++k)
      data[k] = in[k]->template data<T>();
    launchElementwise<T, T, N>(stream, output.data<T>(), output.shape, data,
                               shapes, typedOp);
  };
  switch (output.dtype()) {
  case FLUID_F32:
    return run(float{}, op);
  case FLUID_F64:
    return run(double{}, op);
  case FLUID_F16:
    return run(__half{}, Widened<__half, Op>{op});
  default:
    return run(__nv_bfloat16{}, Widened<__nv_bfloat16, Op>{op});
  }
}

/// A float unary elementwise entry point: checks, then launches `op`.
template <typename Op>
fluid_status unary(const char *entryPoint, fluid_cuda_context *context,
                   const fluid_tensor *inputDesc, fluid_tensor *outputDesc,
                   Op op) {
  return guard(entryPoint, [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    checkFloatBroadcast<1>({&input}, output);
    launchFloatElementwise<1>(stream, {&input}, output, op);
  });
}

/// A float binary entry point with NumPy broadcasting.
template <typename Op>
fluid_status binary(const char *entryPoint, fluid_cuda_context *context,
                    const fluid_tensor *lhsDesc, const fluid_tensor *rhsDesc,
                    fluid_tensor *outputDesc, Op op) {
  return guard(entryPoint, [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor lhs = checkTensor(context, lhsDesc, "lhs");
    CheckedTensor rhs = checkTensor(context, rhsDesc, "rhs");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    checkFloatBroadcast<2>({&lhs, &rhs}, output);
    launchFloatElementwise<2>(stream, {&lhs, &rhs}, output, op);
  });
}

} // namespace fluid::rt::cuda

#endif // FLUID_RUNTIME_CUDA_ELEMENTWISE_CUH
