//===- KernelsDepthwise.cu - Channels-last depthwise convolutions ---------===//
//
// conv2d and its two gradients for depthwise convolutions with channel
// multiplier 1 in channels-last layout (Depthwise.h says which): cuDNN's
// NHWC kernels for these run several times slower than its NCHW ones
// (ConvNeXt's 7x7 layers), while the work is little more than streaming
// the activations once.
//
// Layout. Activations are [N, H, W, C] with C innermost; the filter
// [C, KH, KW, 1] holds each channel's taps together. Every output element
// reads only its own channel, so a warp's threads take consecutive
// channels of one pixel and read consecutive addresses.
//
// Forward and input gradient: one kernel, a gather. The forward's output
// (n, oh, ow, c) reads input (oh*sh - pt + kh*dh, ow*sw - pl + kw*dw); the
// input gradient's element (n, ih, iw, c) reads grad_output (oh, ow) where
// ih + pt - kh*dh = oh*sh (and the same along the width), which is the
// forward's gather with the window mirrored. A block takes a tile of
// channels (threadIdx.x: a vector of kV channels each, 16 bytes where C
// and the pointers allow, else one) and threadIdx.y a run of kCols
// destination pixels along a row, looping over the (n, row, run)
// positions; the block first stages its channels' taps in shared memory
// as [tap][channel], in the accumulation type, so that a thread reads a
// tap's weights for its channels in one vector load. For windows of
// stride 1 and dilation 1 along the width and KW in {3, 5, 7}, a thread
// loads each input row's kCols + KW - 1 vectors once into registers and
// forms its kCols outputs from them; any other geometry takes one output a
// thread with each tap loaded (the cache serves the overlap).
//
// Rounding, as the cpu backend (runtime/cpu/Conv.cpp, ConvGrad.cpp): sums
// are kept in f32 (f64 for f64) and rounded to the tensor's type once; the
// forward starts from the bias and adds the taps in row-major order,
// skipping those in the padding (so a tap of the padding never turns an
// infinite weight into NaN); the input gradient adds its taps in
// row-major order. 16-bit operands are loaded and stored as 16 bits.
//
// Filter gradient, deterministic: dw[c, kh, kw] sums dy * x over every
// (n, oh, ow), far too many terms for a thread and too few outputs to
// spread without splitting the sum. The rows (n, oh) are cut into at most
// kMaxChunks chunks of consecutive rows (their number depends only on the
// shape, and on the workspace limit). A first kernel gives each thread a
// chunk, a channel vector and a tap row kh (or, in the general geometry,
// one tap) and sums that chunk's products in registers, in a fixed order,
// into a scratch buffer [chunks, C, KH*KW] in the context's workspace; a
// second kernel adds the chunks of each filter element in a fixed order
// (eight strided slices, then the slices in order) and rounds once. No
// atomics: the bits are the same from run to run.
//
//===----------------------------------------------------------------------===//

#include "Depthwise.h"
#include "DeviceMath.cuh"
#include "KernelUtils.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

/// The type sums are kept in: f64 for f64, f32 otherwise.
template <typename T>
using Accumulator =
    std::conditional_t<std::is_same_v<T, double>, double, float>;

__device__ inline float widen(__half x) { return __half2float(x); }
__device__ inline float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ inline float widen(float x) { return x; }
__device__ inline double widen(double x) { return x; }

/// A sum rounded to the tensor's type (to nearest even).
template <typename T> __device__ T narrow(Accumulator<T> x);
template <> __device__ inline float narrow<float>(float x) { return x; }
template <> __device__ inline double narrow<double>(double x) { return x; }
template <> __device__ inline __half narrow<__half>(float x) {
  return __float2half_rn(x);
}
template <> __device__ inline __nv_bfloat16 narrow<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// kV consecutive elements at `p`, widened: one load for kV > 1 (`p`
/// aligned to kV elements).
template <int kV, typename T>
__device__ inline void loadWidened(const T *p, Accumulator<T> (&out)[kV]) {
  if constexpr (kV == 1) {
    out[0] = widen(p[0]);
  } else {
    const Vector<T, kV> v = *reinterpret_cast<const Vector<T, kV> *>(p);
#pragma unroll
    for (int i = 0; i < kV; ++i)
      out[i] = widen(v.v[i]);
  }
}

/// Rounds kV sums and stores them at `p` (one store for kV > 1).
template <int kV, typename T>
__device__ inline void storeNarrowed(T *p, const Accumulator<T> (&in)[kV]) {
  if constexpr (kV == 1) {
    p[0] = narrow<T>(in[0]);
  } else {
    Vector<T, kV> v;
#pragma unroll
    for (int i = 0; i < kV; ++i)
      v.v[i] = narrow<T>(in[i]);
    *reinterpret_cast<Vector<T, kV> *>(p) = v;
  }
}

/// kV staged weights at `p` (shared memory, aligned to kV elements), in
/// loads of at most 16 bytes.
template <int kV, typename Acc>
__device__ inline void loadTaps(const Acc *p, Acc (&out)[kV]) {
  constexpr int kPiece =
      kV < int(16 / sizeof(Acc)) ? kV : int(16 / sizeof(Acc));
#pragma unroll
  for (int i = 0; i < kV; i += kPiece) {
    if constexpr (kPiece == 1) {
      out[i] = p[i];
    } else {
      const Vector<Acc, kPiece> v =
          *reinterpret_cast<const Vector<Acc, kPiece> *>(p + i);
#pragma unroll
      for (int k = 0; k < kPiece; ++k)
        out[i + k] = v.v[k];
    }
  }
}

/// The convolution's geometry as the kernels read it: coordinates in 32
/// bits (isDepthwiseChannelsLast bounds them), offsets computed in 64.
struct DepthwiseShape {
  int64_t batch;
  int32_t channels;
  int32_t height, width;       // the input's
  int32_t outHeight, outWidth; // the output's
  int32_t kernelH, kernelW, strideH, strideW, padTop, padLeft;
  int32_t dilationH, dilationW;

  __host__ __device__ int32_t taps() const { return kernelH * kernelW; }
};

DepthwiseShape shapeOf(const cpu::Conv2dGeometry &g) {
  DepthwiseShape s;
  s.batch = g.batch;
  s.channels = int32_t(g.inChannels);
  s.height = int32_t(g.rows.extent);
  s.width = int32_t(g.cols.extent);
  s.outHeight = int32_t(g.rows.outSize);
  s.outWidth = int32_t(g.cols.outSize);
  s.kernelH = int32_t(g.rows.kernel);
  s.kernelW = int32_t(g.cols.kernel);
  s.strideH = int32_t(g.rows.stride);
  s.strideW = int32_t(g.cols.stride);
  s.padTop = int32_t(g.rows.padBefore);
  s.padLeft = int32_t(g.cols.padBefore);
  s.dilationH = int32_t(g.rows.dilation);
  s.dilationW = int32_t(g.cols.dilation);
  return s;
}

/// Along one axis, the source position that tap `k` of destination `d`
/// reads, or -1 where it reads nothing: for the forward the input position
/// d*stride - pad + k*dilation inside [0, extent); for the input gradient
/// the output o with d + pad - k*dilation = o*stride, o in [0, outSize).
template <bool kGradInput>
__device__ inline int32_t sourceIndex(int32_t d, int32_t k, int32_t stride,
                                      int32_t pad, int32_t dilation,
                                      int32_t extent, int32_t outSize) {
  if constexpr (!kGradInput) {
    const int32_t i = d * stride - pad + k * dilation;
    return i >= 0 && i < extent ? i : -1;
  } else {
    const int32_t shifted = d + pad - k * dilation;
    if (shifted < 0 || shifted % stride != 0)
      return -1;
    const int32_t o = shifted / stride;
    return o < outSize ? o : -1;
  }
}

//===----------------------------------------------------------------------===//
// Forward and input gradient
//===----------------------------------------------------------------------===//

/// Loads columns base .. base + kSlots - 1 of a row (`row` at column 0,
/// at the thread's channels) into `window`, widened; with kGuard, the
/// columns outside [0, width) as zeros, `inside` saying which are in.
template <int kV, int kSlots, bool kGuard, typename T, typename Acc>
__device__ inline void loadWindow(const T *row, int64_t channels, int32_t base,
                                  int32_t width, Acc (&window)[kSlots][kV],
                                  bool (&inside)[kSlots]) {
#pragma unroll
  for (int i = 0; i < kSlots; ++i) {
    const int32_t column = base + i;
    inside[i] = !kGuard || (column >= 0 && column < width);
    if (inside[i]) {
      loadWidened<kV>(row + int64_t(column) * channels, window[i]);
    } else {
#pragma unroll
      for (int v = 0; v < kV; ++v)
        window[i][v] = Acc(0);
    }
  }
}

/// Adds one source row's taps to the kCols destinations of a thread from a
/// register window: slot i holds source column base + i (zero, and never
/// added, outside [0, width) when kGuard), destination j's tap kw reads
/// slot j + kw, or with kMirror (the input gradient) slot j + KW-1 - kw.
/// `row` points at column 0 of the row, at the thread's channels;
/// `tapRow` at the staged weights of tap (kh, 0).
template <int kV, int kKW, int kCols, bool kMirror, bool kGuard, typename T,
          typename Acc>
__device__ inline void accumulateWindow(const T *row, int64_t channels,
                                        int32_t base, int32_t width,
                                        const Acc *tapRow, int32_t tileChannels,
                                        Acc (&acc)[kCols][kV]) {
  constexpr int kSlots = kCols + kKW - 1;
  Acc window[kSlots][kV];
  bool inside[kSlots];
  loadWindow<kV, kSlots, kGuard>(row, channels, base, width, window, inside);
#pragma unroll
  for (int kw = 0; kw < kKW; ++kw) {
    Acc w[kV];
    loadTaps<kV>(tapRow + kw * tileChannels, w);
#pragma unroll
    for (int j = 0; j < kCols; ++j) {
      const int slot = kMirror ? j + kKW - 1 - kw : j + kw;
      if (inside[slot]) {
#pragma unroll
        for (int v = 0; v < kV; ++v)
          acc[j][v] = math::fmaRn(window[slot][v], w[v], acc[j][v]);
      }
    }
  }
}

/// The forward (src = input, dst = output, `bias` or null) or, with
/// kGradInput, the input gradient (src = grad_output, dst = grad_input,
/// no bias). blockDim.x threads of kV channels each make the block's tile
/// of channels (blockIdx.y); threadIdx.y picks positions (n, row, run of
/// kCols columns) of the destination, grid-strided. kKW > 0: the window
/// path (stride and dilation 1 along the width, KW = kKW); kKW = 0: any
/// geometry, kCols = 1.
template <typename T, int kV, int kKW, int kCols, bool kGradInput>
__global__ void __launch_bounds__(kBlockSize)
    depthwiseGatherKernel(const T *__restrict__ src,
                          const T *__restrict__ filter,
                          const T *__restrict__ bias, DepthwiseShape s,
                          int32_t runs, int64_t positions,
                          T *__restrict__ dst) {
  static_assert(kKW > 0 || kCols == 1, "the general path takes one column");
  using Acc = Accumulator<T>;
  extern __shared__ __align__(16) unsigned char depthwiseShared[];
  Acc *taps = reinterpret_cast<Acc *>(depthwiseShared);

  const int32_t tapCount = s.taps();
  const int32_t tileChannels = int32_t(blockDim.x) * kV;
  const int32_t firstChannel = int32_t(blockIdx.y) * tileChannels;
  const int32_t threads = int32_t(blockDim.x * blockDim.y);
  for (int32_t i = int32_t(threadIdx.y * blockDim.x + threadIdx.x);
       i < tileChannels * tapCount; i += threads) {
    const int32_t local = i / tapCount, tap = i - local * tapCount;
    const int32_t channel = firstChannel + local;
    taps[tap * tileChannels + local] =
        channel < s.channels ? widen(filter[int64_t(channel) * tapCount + tap])
                             : Acc(0);
  }
  __syncthreads();

  const int32_t local = int32_t(threadIdx.x) * kV;
  const int32_t channel = firstChannel + local;
  if (channel >= s.channels)
    return;
  const int64_t channels = s.channels;
  const int32_t srcH = kGradInput ? s.outHeight : s.height;
  const int32_t srcW = kGradInput ? s.outWidth : s.width;
  const int32_t dstH = kGradInput ? s.height : s.outHeight;
  const int32_t dstW = kGradInput ? s.width : s.outWidth;
  Acc start[kV];
#pragma unroll
  for (int v = 0; v < kV; ++v)
    start[v] = bias ? widen(bias[channel + v]) : Acc(0);

  for (int64_t p = int64_t(blockIdx.x) * blockDim.y + threadIdx.y;
       p < positions; p += int64_t(gridDim.x) * blockDim.y) {
    const int64_t line = p / runs; // n * dstH + row
    const int32_t col0 = int32_t(p - line * runs) * kCols;
    const int32_t r = int32_t(line % dstH);
    const int64_t n = line / dstH;
    Acc acc[kCols][kV];
#pragma unroll
    for (int j = 0; j < kCols; ++j)
#pragma unroll
      for (int v = 0; v < kV; ++v)
        acc[j][v] = start[v];

    for (int32_t kh = 0; kh < s.kernelH; ++kh) {
      const int32_t sr = sourceIndex<kGradInput>(
          r, kh, s.strideH, s.padTop, s.dilationH, s.height, s.outHeight);
      if (sr < 0)
        continue;
      const T *row = src + (n * srcH + sr) * srcW * channels + channel;
      const Acc *tapRow = taps + kh * s.kernelW * tileChannels + local;
      if constexpr (kKW > 0) {
        constexpr int kSlots = kCols + kKW - 1;
        const int32_t base =
            kGradInput ? col0 + s.padLeft - (kKW - 1) : col0 - s.padLeft;
        if (base >= 0 && base + kSlots <= srcW)
          accumulateWindow<kV, kKW, kCols, kGradInput, false>(
              row, channels, base, srcW, tapRow, tileChannels, acc);
        else
          accumulateWindow<kV, kKW, kCols, kGradInput, true>(
              row, channels, base, srcW, tapRow, tileChannels, acc);
      } else {
        for (int32_t kw = 0; kw < s.kernelW; ++kw) {
          const int32_t sc = sourceIndex<kGradInput>(
              col0, kw, s.strideW, s.padLeft, s.dilationW, s.width, s.outWidth);
          if (sc < 0)
            continue;
          Acc x[kV], w[kV];
          loadWidened<kV>(row + int64_t(sc) * channels, x);
          loadTaps<kV>(tapRow + kw * tileChannels, w);
#pragma unroll
          for (int v = 0; v < kV; ++v)
            acc[0][v] = math::fmaRn(x[v], w[v], acc[0][v]);
        }
      }
    }
    T *out = dst + (line * dstW + col0) * channels + channel;
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (col0 + j < dstW)
        storeNarrowed<kV>(out + j * channels, acc[j]);
  }
}

/// Shared memory a block may stage taps in (the default limit).
constexpr int64_t kSharedBudget = 48 * 1024;

/// Channel vectors per block along x: at most 32 (a warp), as many as the
/// staged taps leave room for, spread evenly over the tiles.
struct ChannelTiles {
  int64_t threads, tiles;
};

ChannelTiles channelTiles(int64_t vectors, int64_t most) {
  const int64_t widest = std::max<int64_t>(1, std::min(most, vectors));
  const int64_t tiles = ceilDiv(vectors, widest);
  return {ceilDiv(vectors, tiles), tiles};
}

/// Calls run(vector width, window width, columns per thread) with
/// compile-time constants: kVector channels per thread when `vector`, else
/// 1; a register window of kColumns outputs for kernel widths 3, 5 and 7
/// when `window`, else none (0) and one output per thread.
template <int kVector, int kColumns, typename Run>
void dispatchKernel(bool vector, bool window, int32_t kernelW, Run &&run) {
  auto withWidth = [&](auto width) {
    using Cols = std::integral_constant<int, kColumns>;
    if (window && kernelW == 3)
      run(width, std::integral_constant<int, 3>{}, Cols{});
    else if (window && kernelW == 5)
      run(width, std::integral_constant<int, 5>{}, Cols{});
    else if (window && kernelW == 7)
      run(width, std::integral_constant<int, 7>{}, Cols{});
    else
      run(width, std::integral_constant<int, 0>{},
          std::integral_constant<int, 1>{});
  };
  if (vector)
    withWidth(std::integral_constant<int, kVector>{});
  else
    withWidth(std::integral_constant<int, 1>{});
}

template <typename T, bool kGradInput>
void launchGather(cudaStream_t stream, const T *src, const T *filter,
                  const T *bias, T *dst, const DepthwiseShape &s) {
  using Acc = Accumulator<T>;
  constexpr int kVector = int(16 / sizeof(T));
  // Outputs per thread on the window path: as many as the registers allow
  // at 2 blocks of 256 threads per multiprocessor.
  constexpr int kColumns = sizeof(T) == 2 ? 4 : 8;
  const bool vector = s.channels % kVector == 0 &&
                      isVectorAligned<T, kVector>(src) &&
                      isVectorAligned<T, kVector>(dst);
  const bool window = s.strideW == 1 && s.dilationW == 1;
  const int32_t dstH = kGradInput ? s.height : s.outHeight;
  const int32_t dstW = kGradInput ? s.width : s.outWidth;

  auto run = [&](auto width, auto kernelW, auto columns) {
    constexpr int kV = decltype(width)::value;
    constexpr int kKW = decltype(kernelW)::value;
    constexpr int kCols = decltype(columns)::value;
    const int64_t tapBytes = int64_t(s.taps()) * kV * int64_t(sizeof(Acc));
    const ChannelTiles tiles = channelTiles(
        s.channels / kV, std::min<int64_t>(32, kSharedBudget / tapBytes));
    const int64_t rowsPerBlock = kBlockSize / tiles.threads;
    const int32_t runs = int32_t(ceilDiv(dstW, kCols));
    const int64_t positions = s.batch * dstH * runs;
    // Enough blocks to fill the device several times; each loops over
    // positions, so that the taps are staged once per block.
    const int64_t blocks = std::min(
        ceilDiv(positions, rowsPerBlock),
        std::max<int64_t>(1, int64_t(multiprocessorCount()) * 8 / tiles.tiles));
    const dim3 grid(unsigned(blocks), unsigned(tiles.tiles));
    const dim3 block(unsigned(tiles.threads), unsigned(rowsPerBlock));
    const size_t shared = size_t(tiles.threads * tapBytes);
    depthwiseGatherKernel<T, kV, kKW, kCols, kGradInput>
        <<<grid, block, shared, stream>>>(src, filter, bias, s, runs, positions,
                                          dst);
    checkLaunch();
  };
  dispatchKernel<kVector, kColumns>(vector, window, s.kernelW, run);
}

//===----------------------------------------------------------------------===//
// Filter gradient
//===----------------------------------------------------------------------===//

/// At most this many chunks of rows (partial sums per filter element).
constexpr int64_t kMaxChunks = 1024;
/// A chunk covers at least this many output pixels, so that the scratch
/// (4 bytes per chunk, channel and tap) stays small beside the activations
/// the kernel reads...
constexpr int64_t kChunkPixels = 256;
/// ...unless that leaves fewer threads than this (small images of many
/// channels: ConvNeXt's last stage), too few to hide the loads' latency.
/// Constants rather than the device's size, so that the sums, and so the
/// bits, do not depend on the device.
constexpr int64_t kMinThreads = 64 * 1024;

/// Adds the products of kCols grad_output columns col0.. of a row with the
/// input row through the KW taps of one tap row: slot i of the window
/// holds input column base + i, and output column col0 + j's tap kw reads
/// slot j + kw. With kGuard, columns outside the output or the input add
/// nothing.
template <int kV, int kKW, int kCols, bool kGuard, typename T, typename Acc>
__device__ inline void
accumulateFilterWindow(const T *dyRow, const T *xRow, int64_t channels,
                       int32_t col0, int32_t base, int32_t outWidth,
                       int32_t width, Acc (&acc)[kKW][kV]) {
  constexpr int kSlots = kCols + kKW - 1;
  Acc dy[kCols][kV];
  bool live[kCols];
#pragma unroll
  for (int j = 0; j < kCols; ++j) {
    live[j] = !kGuard || col0 + j < outWidth;
    if (live[j]) {
      loadWidened<kV>(dyRow + int64_t(col0 + j) * channels, dy[j]);
    } else {
#pragma unroll
      for (int v = 0; v < kV; ++v)
        dy[j][v] = Acc(0);
    }
  }
  Acc window[kSlots][kV];
  bool inside[kSlots];
  loadWindow<kV, kSlots, kGuard>(xRow, channels, base, width, window, inside);
#pragma unroll
  for (int j = 0; j < kCols; ++j)
#pragma unroll
    for (int kw = 0; kw < kKW; ++kw)
      if (live[j] && inside[j + kw]) {
#pragma unroll
        for (int v = 0; v < kV; ++v)
          acc[kw][v] = math::fmaRn(dy[j][v], window[j + kw][v], acc[kw][v]);
      }
}

/// The partial sums of chunk blockIdx.x * blockDim.z + threadIdx.z (rows
/// [chunk * rowsPerChunk, +rowsPerChunk) of the N * OH output rows) into
/// partials[chunk][c][tap]. threadIdx.x: a vector of kV channels of the
/// tile blockIdx.y; threadIdx.y: the tap rows kh (kKW > 0: the window path,
/// stride and dilation 1 along the width, KW = kKW, kCols columns at a
/// time) or the taps (kKW = 0, any geometry), strided by blockDim.y.
template <typename T, int kV, int kKW, int kCols>
__global__ void __launch_bounds__(kBlockSize)
    depthwiseGradFilterPartialKernel(const T *__restrict__ gradOutput,
                                     const T *__restrict__ input,
                                     DepthwiseShape s, int64_t rowsPerChunk,
                                     int32_t chunks,
                                     Accumulator<T> *__restrict__ partials) {
  using Acc = Accumulator<T>;
  const int32_t chunk = int32_t(blockIdx.x * blockDim.z + threadIdx.z);
  const int32_t channel = int32_t(blockIdx.y * blockDim.x + threadIdx.x) * kV;
  if (chunk >= chunks || channel >= s.channels)
    return;
  const int64_t channels = s.channels;
  const int64_t rows = s.batch * s.outHeight;
  const int64_t rowBegin = chunk * rowsPerChunk;
  const int64_t rowEnd =
      rowBegin + rowsPerChunk < rows ? rowBegin + rowsPerChunk : rows;
  const int32_t tapCount = s.taps();
  Acc *out = partials + (chunk * channels + channel) * tapCount;

  if constexpr (kKW > 0) {
    constexpr int kSlots = kCols + kKW - 1;
    for (int32_t kh = int32_t(threadIdx.y); kh < s.kernelH;
         kh += int32_t(blockDim.y)) {
      Acc acc[kKW][kV];
#pragma unroll
      for (int kw = 0; kw < kKW; ++kw)
#pragma unroll
        for (int v = 0; v < kV; ++v)
          acc[kw][v] = Acc(0);
      for (int64_t row = rowBegin; row < rowEnd; ++row) {
        const int32_t oh = int32_t(row % s.outHeight);
        const int64_t n = row / s.outHeight;
        const int32_t ih = oh * s.strideH - s.padTop + kh * s.dilationH;
        if (ih < 0 || ih >= s.height)
          continue;
        const T *dyRow = gradOutput + row * s.outWidth * channels + channel;
        const T *xRow =
            input + (n * s.height + ih) * s.width * channels + channel;
        for (int32_t col0 = 0; col0 < s.outWidth; col0 += kCols) {
          const int32_t base = col0 - s.padLeft;
          if (base >= 0 && base + kSlots <= s.width &&
              col0 + kCols <= s.outWidth)
            accumulateFilterWindow<kV, kKW, kCols, false>(
                dyRow, xRow, channels, col0, base, s.outWidth, s.width, acc);
          else
            accumulateFilterWindow<kV, kKW, kCols, true>(
                dyRow, xRow, channels, col0, base, s.outWidth, s.width, acc);
        }
      }
#pragma unroll
      for (int kw = 0; kw < kKW; ++kw)
#pragma unroll
        for (int v = 0; v < kV; ++v)
          out[v * tapCount + kh * kKW + kw] = acc[kw][v];
    }
  } else {
    for (int32_t tap = int32_t(threadIdx.y); tap < tapCount;
         tap += int32_t(blockDim.y)) {
      const int32_t kh = tap / s.kernelW, kw = tap - kh * s.kernelW;
      // The output columns [owBegin, owEnd) whose tap kw reads inside the
      // input, at input column ow * strideW + offset.
      const int32_t offset = kw * s.dilationW - s.padLeft;
      int32_t owBegin = offset >= 0 ? 0 : (s.strideW - 1 - offset) / s.strideW;
      int32_t owEnd = s.width - offset <= 0
                          ? 0
                          : (s.width - offset + s.strideW - 1) / s.strideW;
      owEnd = owEnd < s.outWidth ? owEnd : s.outWidth;
      owBegin = owBegin < owEnd ? owBegin : owEnd;
      Acc acc[kV];
#pragma unroll
      for (int v = 0; v < kV; ++v)
        acc[v] = Acc(0);
      for (int64_t row = rowBegin; row < rowEnd; ++row) {
        const int32_t oh = int32_t(row % s.outHeight);
        const int64_t n = row / s.outHeight;
        const int32_t ih = oh * s.strideH - s.padTop + kh * s.dilationH;
        if (ih < 0 || ih >= s.height)
          continue;
        const T *dyRow = gradOutput + row * s.outWidth * channels + channel;
        const T *xRow =
            input + (n * s.height + ih) * s.width * channels + channel;
        for (int32_t ow = owBegin; ow < owEnd; ++ow) {
          Acc dy[kV], x[kV];
          loadWidened<kV>(dyRow + int64_t(ow) * channels, dy);
          loadWidened<kV>(xRow + int64_t(ow * s.strideW + offset) * channels,
                          x);
#pragma unroll
          for (int v = 0; v < kV; ++v)
            acc[v] = math::fmaRn(dy[v], x[v], acc[v]);
        }
      }
#pragma unroll
      for (int v = 0; v < kV; ++v)
        out[v * tapCount + tap] = acc[v];
    }
  }
}

constexpr int kSumColumns = 32, kSumSlices = 8;

/// gradFilter[i] = the sum over the chunks of partials[chunk][i], for i
/// in [0, count): slice y of a block adds chunks y, y + 8, ... in order,
/// then the slices are added in order and the sum rounded once.
template <typename T>
__global__ void __launch_bounds__(kSumColumns *kSumSlices)
    depthwiseGradFilterSumKernel(const Accumulator<T> *__restrict__ partials,
                                 int32_t chunks, int64_t count,
                                 T *__restrict__ gradFilter) {
  using Acc = Accumulator<T>;
  __shared__ Acc slices[kSumSlices][kSumColumns];
  const int64_t i = int64_t(blockIdx.x) * kSumColumns + threadIdx.x;
  Acc sum = 0;
  if (i < count)
    for (int32_t k = int32_t(threadIdx.y); k < chunks; k += kSumSlices)
      sum += partials[k * count + i];
  slices[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y != 0 || i >= count)
    return;
  Acc total = slices[0][threadIdx.x];
#pragma unroll
  for (int y = 1; y < kSumSlices; ++y)
    total += slices[y][threadIdx.x];
  gradFilter[i] = narrow<T>(total);
}

/// The scratch of the filter gradient: `chunks` chunks of `rowsPerChunk`
/// rows, the partial sums at `partials`.
struct GradFilterScratch {
  int64_t chunks, rowsPerChunk;
  void *partials;
};

/// Sizes the chunks (kChunkPixels, kMinThreads for `threadsPerChunk`,
/// kMaxChunks, the workspace limit) and takes their scratch from the
/// workspace, with fewer chunks if device memory is short; none (partials
/// null) if not even one chunk fits.
GradFilterScratch gradFilterScratch(fluid_cuda_context *context,
                                    const DepthwiseShape &s,
                                    size_t accumulatorBytes,
                                    int64_t threadsPerChunk) {
  const int64_t rows = s.batch * s.outHeight;
  const int64_t chunkBytes =
      int64_t(s.channels) * s.taps() * int64_t(accumulatorBytes);
  int64_t chunks =
      std::clamp<int64_t>(std::max(rows * s.outWidth / kChunkPixels,
                                   ceilDiv(kMinThreads, threadsPerChunk)),
                          1, std::min(rows, kMaxChunks));
  if (std::optional<size_t> limit = workspaceLimit(context))
    chunks = std::min(chunks, int64_t(*limit / size_t(chunkBytes)));
  while (chunks >= 1) {
    const int64_t rowsPerChunk = ceilDiv(rows, chunks);
    chunks = ceilDiv(rows, rowsPerChunk);
    try {
      void *partials = workspace(context, size_t(chunks * chunkBytes));
      return {chunks, rowsPerChunk, partials};
    } catch (const Error &e) {
      if (e.status() != FLUID_ERROR_OUT_OF_MEMORY)
        throw;
    }
    chunks = chunks == 1 ? 0 : ceilDiv(chunks, 2);
  }
  return {0, 0, nullptr};
}

template <typename T>
bool launchGradFilter(fluid_cuda_context *context, const T *gradOutput,
                      const T *input, T *gradFilter, const DepthwiseShape &s) {
  using Acc = Accumulator<T>;
  // 8-byte vectors for 16-bit types: the registers hold KW sums per channel.
  constexpr int kVector = std::min(4, int(16 / sizeof(T)));
  constexpr int kColumns = 4;
  const bool vector = s.channels % kVector == 0 &&
                      isVectorAligned<T, kVector>(gradOutput) &&
                      isVectorAligned<T, kVector>(input);
  const bool window = s.strideW == 1 && s.dilationW == 1 &&
                      (s.kernelW == 3 || s.kernelW == 5 || s.kernelW == 7);
  // A chunk's threads: one per channel vector and tap row (or tap).
  const int64_t threadsPerChunk =
      (s.channels / (vector ? kVector : 1)) * (window ? s.kernelH : s.taps());
  const GradFilterScratch scratch =
      gradFilterScratch(context, s, sizeof(Acc), threadsPerChunk);
  if (!scratch.partials)
    return false;
  cudaStream_t stream = streamOf(context);
  Acc *partials = static_cast<Acc *>(scratch.partials);

  auto run = [&](auto width, auto kernelW, auto columns) {
    constexpr int kV = decltype(width)::value;
    constexpr int kKW = decltype(kernelW)::value;
    constexpr int kCols = decltype(columns)::value;
    const ChannelTiles tiles = channelTiles(s.channels / kV, 32);
    const int64_t perVector = kKW > 0 ? s.kernelH : s.taps();
    const int64_t y = std::min(perVector, kBlockSize / tiles.threads);
    const int64_t z =
        std::clamp<int64_t>(kBlockSize / (tiles.threads * y), 1, 64);
    const dim3 grid(unsigned(ceilDiv(scratch.chunks, z)),
                    unsigned(tiles.tiles));
    const dim3 block(unsigned(tiles.threads), unsigned(y), unsigned(z));
    depthwiseGradFilterPartialKernel<T, kV, kKW, kCols>
        <<<grid, block, 0, stream>>>(gradOutput, input, s, scratch.rowsPerChunk,
                                     int32_t(scratch.chunks), partials);
    checkLaunch();
  };
  dispatchKernel<kVector, kColumns>(vector, window, s.kernelW, run);

  const int64_t count = int64_t(s.channels) * s.taps();
  depthwiseGradFilterSumKernel<T>
      <<<unsigned(ceilDiv(count, kSumColumns)), dim3(kSumColumns, kSumSlices),
         0, stream>>>(partials, int32_t(scratch.chunks), count, gradFilter);
  checkLaunch();
  return true;
}

} // namespace

bool cuda::isDepthwiseChannelsLast(const cpu::Conv2dGeometry &g) {
  if (!g.channelsLast || g.groups <= 1 || g.groups != g.inChannels ||
      g.outChannels != g.inChannels)
    return false;
  // Coordinates, and positions computed from them, stay below 2^31; the
  // channel tiles fit a grid's y dimension.
  constexpr int64_t kLimit = int64_t(1) << 30;
  auto fits = [&](const cpu::WindowAxis &a) {
    return a.extent + a.padBefore + a.padAfter < kLimit && a.stride < kLimit &&
           a.dilation * a.kernel < kLimit;
  };
  return g.rows.kernel * g.cols.kernel <= kMaxDepthwiseTaps &&
         g.inChannels <= 65535 && fits(g.rows) && fits(g.cols);
}

void cuda::depthwiseConv2d(fluid_cuda_context *context, int32_t dtype,
                           const void *input, const void *filter,
                           const void *bias, void *output,
                           const cpu::Conv2dGeometry &g) {
  dispatchAnyFloat(dtype, [&](auto zero) {
    using T = decltype(zero);
    launchGather<T, false>(streamOf(context), static_cast<const T *>(input),
                           static_cast<const T *>(filter),
                           static_cast<const T *>(bias),
                           static_cast<T *>(output), shapeOf(g));
  });
}

void cuda::depthwiseConv2dGradInput(fluid_cuda_context *context, int32_t dtype,
                                    const void *gradOutput, const void *filter,
                                    void *gradInput,
                                    const cpu::Conv2dGeometry &g) {
  dispatchAnyFloat(dtype, [&](auto zero) {
    using T = decltype(zero);
    launchGather<T, true>(streamOf(context), static_cast<const T *>(gradOutput),
                          static_cast<const T *>(filter),
                          static_cast<const T *>(nullptr),
                          static_cast<T *>(gradInput), shapeOf(g));
  });
}

bool cuda::depthwiseConv2dGradFilter(fluid_cuda_context *context, int32_t dtype,
                                     const void *gradOutput, const void *input,
                                     void *gradFilter,
                                     const cpu::Conv2dGeometry &g) {
  return dispatchAnyFloat(dtype, [&](auto zero) {
    using T = decltype(zero);
    return launchGradFilter(context, static_cast<const T *>(gradOutput),
                            static_cast<const T *>(input),
                            static_cast<T *>(gradFilter), shapeOf(g));
  });
}
