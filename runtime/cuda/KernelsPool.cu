//===- KernelsPool.cu - max and average pooling and their gradients -------===//
//
// Own kernels rather than cuDNN's pooling, which has no ceil_mode, no
// asymmetric padding and no dilation. Window geometry is validated on the
// host with the cpu backend's SlidingWindow.h, and the device walks the
// same taps (only those inside the input) in the same order, so forward
// results equal the cpu backend's.
//
// The gradients gather instead of scatter: a thread per input cell visits
// the (at most ceil(k/s) per axis) windows covering it, in the row-major
// order of the outputs, and adds what each sends to it, in double. No
// atomics: results are deterministic, and equal to the cpu backend's, which
// adds in the same order. Max pooling first records each window's pick
// (PyTorch's cpu rule: the first maximum in row-major window order, the
// last NaN if any) in the workspace, a plane-local index per output.
//
// Max pooling and its gradient first try fixed windows (below): 3x3
// stride 2 (ResNet's stem) and 2x2 stride 2 along both axes, dilation 1,
// any padding and ceil_mode, planes of fewer than 2^30 cells (and, for the
// gradient, fewer than 2^31 tiles): compile-time taps, a thread per window
// reading its taps from global memory, and a gradient that owns each input
// cell by one window, so that it writes every cell once with no gather
// loop. Other geometries try row tiles: a block per tile of rows of a
// plane, staged in shared memory. Both recompute the gradient's picks
// rather than store them, so that each moves little more than the bytes it
// must (ResNet's stem: bench/pool-grad.py and bench/NOTES.md). What is
// left (planes too wide for a row tile, dilation in the gradient, 32-bit
// overflow) takes the one-thread-per-element kernels right below.
//
// max_pool2d_with_indices runs the same forward kernels and also writes
// each pick's offset in its window (a byte); max_pool2d_grad_indices
// gathers from those offsets instead of recomputing the picks (the
// section "The gradient from saved picks"), so that it reads a byte per
// window instead of the input.
//
// Max pooling and its gradients with channels_last (NHWC operands) take
// kernels of their own (the last section): a thread per 16 bytes of
// channels, any geometry.
//
//===----------------------------------------------------------------------===//

#include "../cpu/SlidingWindow.h"
#include "KernelUtils.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <cuda_pipeline.h>

#include <type_traits>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

/// WindowAxis (SlidingWindow.h) for the device.
struct Axis {
  int64_t extent, padBefore, padAfter, kernel, stride, dilation, outSize;

  explicit Axis(const cpu::WindowAxis &a)
      : extent(a.extent), padBefore(a.padBefore), padAfter(a.padAfter),
        kernel(a.kernel), stride(a.stride), dilation(a.dilation),
        outSize(a.outSize) {}

  __device__ static int64_t ceilDiv(int64_t a, int64_t b) {
    return a / b + (a % b != 0);
  }

  /// The taps [begin, end) of output `o` inside the input.
  __device__ void taps(int64_t o, int64_t &begin, int64_t &end) const {
    const int64_t start = o * stride - padBefore;
    begin = start >= 0 ? 0 : ceilDiv(-start, dilation);
    end = start >= extent ? 0 : ceilDiv(extent - start, dilation);
    end = end < kernel ? end : kernel;
    begin = begin < end ? begin : end;
  }

  /// Average pooling's divisor factor with count_include_pad.
  __device__ int64_t paddedWindowCells(int64_t o) const {
    const int64_t start = o * stride - padBefore;
    const int64_t cells = extent + padAfter - start;
    return cells < kernel ? cells : kernel;
  }

  /// The output whose tap `k` reads input position `i`, or -1.
  __device__ int64_t outputReading(int64_t i, int64_t k) const {
    const int64_t shifted = i + padBefore - k * dilation;
    if (shifted < 0 || shifted % stride != 0)
      return -1;
    const int64_t o = shifted / stride;
    return o < outSize ? o : -1;
  }
};

struct PoolShape {
  int64_t planes; // N * C
  Axis rows, cols;
  int64_t batch, channels;
  bool channelsLast; // NHWC operands (the last section)

  int64_t outputs() const { return planes * rows.outSize * cols.outSize; }
  int64_t inputs() const { return planes * rows.extent * cols.extent; }
};

/// Decomposes a linear index over [planes, height, width].
template <typename Index> struct PlaneIndex {
  Divider<Index> width, height;

  PlaneIndex(int64_t height, int64_t width)
      : width(Index(width)), height(Index(height)) {}

  __device__ void split(Index i, int64_t &plane, int64_t &y, int64_t &x) const {
    const Index row = width.div(i);
    x = int64_t(i - row * width.divisor);
    const Index p = height.div(row);
    y = int64_t(row - p * height.divisor);
    plane = int64_t(p);
  }
};

/// Whether T is a 16-bit float type.
template <typename T>
constexpr bool kSixteenBit =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

/// Whether max pooling takes `value` over the window's best so far: a
/// larger value, or a NaN (the last one wins, as on the cpu). 16-bit values
/// compare as their exact f32 widenings.
template <typename T> __device__ inline bool takesOver(T value, T best) {
  if constexpr (kSixteenBit<T>) {
    const float v = float(value);
    return v > float(best) || v != v;
  } else {
    return value > best || value != value;
  }
}

/// A gradient term of max pooling's sums, in double (exact).
template <typename T> __device__ inline double sumTerm(T value) {
  if constexpr (kSixteenBit<T>)
    return double(float(value));
  else
    return double(value);
}

/// A cell's gradient from its double sum: rounded to T, a 16-bit T through
/// f32 as the cpu backend rounds it (its f32 kernel, then the narrowing).
template <typename T> __device__ inline T fromSum(double sum) {
  if constexpr (kSixteenBit<T>)
    return T(float(sum));
  else
    return T(sum);
}

/// The plane-local index of the pick of max-pooling window (oh, ow), its
/// value, and in `tap` its offset ky * kernelW + kx in the window.
template <typename T>
__device__ inline int64_t maxPick(const T *plane, const PoolShape &g,
                                  int64_t oh, int64_t ow, T &best,
                                  int64_t &tap) {
  int64_t kyBegin, kyEnd, kxBegin, kxEnd;
  g.rows.taps(oh, kyBegin, kyEnd);
  g.cols.taps(ow, kxBegin, kxEnd);
  const int64_t width = g.cols.extent;
  best = T(-INFINITY);
  int64_t bestIndex =
      (oh * g.rows.stride - g.rows.padBefore + kyBegin * g.rows.dilation) *
          width +
      ow * g.cols.stride - g.cols.padBefore + kxBegin * g.cols.dilation;
  tap = kyBegin * g.cols.kernel + kxBegin;
  for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
    const int64_t rowStart =
        (oh * g.rows.stride - g.rows.padBefore + ky * g.rows.dilation) * width;
    for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
      const int64_t index = rowStart + ow * g.cols.stride - g.cols.padBefore +
                            kx * g.cols.dilation;
      const T value = plane[index];
      if (takesOver(value, best)) {
        best = value;
        bestIndex = index;
        tap = ky * g.cols.kernel + kx;
      }
    }
  }
  return bestIndex;
}

/// Writes each window's maximum to `output` and, where non-null, the
/// plane-local index of the pick to `picks` and its offset in the window
/// to `indices`.
template <typename T, typename Index, typename Pick>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolKernel(const T *input, PoolShape g, PlaneIndex<Index> outIndex,
                  Index outputs, T *output, Pick *picks, uint8_t *indices) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t planeSize = g.rows.extent * g.cols.extent;
  for (Index o = Index(blockIdx.x) * blockDim.x + threadIdx.x; o < outputs;
       o += stride) {
    int64_t p, oh, ow;
    outIndex.split(o, p, oh, ow);
    T best;
    int64_t tap;
    const int64_t pick = maxPick(input + p * planeSize, g, oh, ow, best, tap);
    if (output)
      output[o] = best;
    if (picks)
      picks[o] = Pick(pick);
    if (indices)
      indices[o] = uint8_t(tap);
  }
}

template <typename T, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    avgPoolKernel(const T *input, PoolShape g, PlaneIndex<Index> outIndex,
                  Index outputs, bool countIncludePad, T *output) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t width = g.cols.extent;
  const int64_t planeSize = g.rows.extent * width;
  for (Index o = Index(blockIdx.x) * blockDim.x + threadIdx.x; o < outputs;
       o += stride) {
    int64_t p, oh, ow;
    outIndex.split(o, p, oh, ow);
    int64_t kyBegin, kyEnd, kxBegin, kxEnd;
    g.rows.taps(oh, kyBegin, kyEnd);
    g.cols.taps(ow, kxBegin, kxEnd);
    const T *plane = input + p * planeSize;
    double sum = 0;
    for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
      const T *row =
          plane + (oh * g.rows.stride - g.rows.padBefore + ky) * width;
      for (int64_t kx = kxBegin; kx < kxEnd; ++kx)
        sum += double(row[ow * g.cols.stride - g.cols.padBefore + kx]);
    }
    const double divisor =
        countIncludePad ? double(g.rows.paddedWindowCells(oh)) *
                              double(g.cols.paddedWindowCells(ow))
                        : double(kyEnd - kyBegin) * double(kxEnd - kxBegin);
    output[o] = T(sum / divisor);
  }
}

/// Calls `visit(oh, ow)` for every window covering input cell (ih, iw), in
/// row-major output order (taps descending give outputs ascending).
template <typename Fn>
__device__ inline void forEachCoveringWindow(const PoolShape &g, int64_t ih,
                                             int64_t iw, Fn &&visit) {
  for (int64_t ky = g.rows.kernel - 1; ky >= 0; --ky) {
    const int64_t oh = g.rows.outputReading(ih, ky);
    if (oh < 0)
      continue;
    for (int64_t kx = g.cols.kernel - 1; kx >= 0; --kx) {
      const int64_t ow = g.cols.outputReading(iw, kx);
      if (ow >= 0)
        visit(oh, ow);
    }
  }
}

template <typename T, typename Index, typename Pick>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolGradKernel(const T *gradOutput, const Pick *picks, PoolShape g,
                      PlaneIndex<Index> inIndex, Index inputs, T *gradInput) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t outPlaneSize = g.rows.outSize * g.cols.outSize;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < inputs;
       i += stride) {
    int64_t p, ih, iw;
    inIndex.split(i, p, ih, iw);
    const Pick self = Pick(ih * g.cols.extent + iw);
    const int64_t outBase = p * outPlaneSize;
    double sum = 0;
    forEachCoveringWindow(g, ih, iw, [&](int64_t oh, int64_t ow) {
      const int64_t o = outBase + oh * g.cols.outSize + ow;
      if (picks[o] == self)
        sum += sumTerm(gradOutput[o]);
    });
    gradInput[i] = fromSum<T>(sum);
  }
}

template <typename T, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    avgPoolGradKernel(const T *gradOutput, PoolShape g,
                      PlaneIndex<Index> inIndex, Index inputs,
                      bool countIncludePad, T *gradInput) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t outPlaneSize = g.rows.outSize * g.cols.outSize;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < inputs;
       i += stride) {
    int64_t p, ih, iw;
    inIndex.split(i, p, ih, iw);
    const int64_t outBase = p * outPlaneSize;
    double sum = 0;
    forEachCoveringWindow(g, ih, iw, [&](int64_t oh, int64_t ow) {
      double divisor;
      if (countIncludePad) {
        divisor = double(g.rows.paddedWindowCells(oh)) *
                  double(g.cols.paddedWindowCells(ow));
      } else {
        int64_t kyBegin, kyEnd, kxBegin, kxEnd;
        g.rows.taps(oh, kyBegin, kyEnd);
        g.cols.taps(ow, kxBegin, kxEnd);
        divisor = double(kyEnd - kyBegin) * double(kxEnd - kxBegin);
      }
      sum += double(gradOutput[outBase + oh * g.cols.outSize + ow]) / divisor;
    });
    gradInput[i] = T(sum);
  }
}

//===----------------------------------------------------------------------===//
// Row tiles: the fast path of max pooling and its gradient
//===----------------------------------------------------------------------===//
//
// A block takes one tile of rows of one plane: it copies the input rows the
// tile's windows read (one contiguous span) into shared memory with 16-byte
// loads, then works from there in 32-bit indices, with no division but a
// multiply-high by divisors fixed at launch. The gradient copies the span
// of grad_output of the windows that cover its input rows as well, finds
// each window's pick in shared memory (none is stored in global memory)
// and gathers each input cell's sum as maxPoolGradKernel does, in the same
// order, so that the results are the same bit for bit. Each byte of input
// and grad_output is read from global memory once but for the rows of
// windows two tiles share, and grad_input is written once: about the
// minimum traffic. Planes too wide for a one-row tile in shared memory,
// geometry beyond 32-bit arithmetic and (for the gradient) dilation take
// the kernels above.

/// Shared memory a tile may take, so that no opt-in is needed and several
/// blocks fit on a multiprocessor.
constexpr int64_t kTileSharedBytes = 48 * 1024;

/// The geometry of a launch of the row-tile kernels, in 32-bit integers.
struct RowTiles {
  int32_t height, width, outHeight, outWidth;
  int32_t padTop, padLeft;
  int32_t kernelH, kernelW, strideH, strideW, dilationH, dilationW;
  /// Rows per tile: input rows for the gradient, output rows for the
  /// forward; and tiles per plane.
  int32_t tileRows, tilesPerPlane;
  /// Elements of each shared buffer: the input rows, the grad_output span
  /// (and the picks) of the gradient; each a multiple of 4.
  int32_t inCapacity, outCapacity;
  Divider<uint32_t> byWidth, byOutWidth, byStrideH, byStrideW;
};

/// Whether every extent, padding, window span, stride and output size of
/// the geometry stays far from 32-bit overflow.
inline bool axesFitNarrow(const PoolShape &g) {
  const int64_t limit = int64_t(1) << 30;
  for (const Axis *a : {&g.rows, &g.cols})
    if (a->extent + a->padBefore + a->padAfter >= limit ||
        a->kernel * a->dilation >= limit || a->stride >= limit ||
        a->outSize >= limit)
      return false;
  return true;
}

/// Whether every value of the geometry stays far from 32-bit overflow.
inline bool fitsRowTiles(const PoolShape &g) {
  const int64_t limit = int64_t(1) << 30;
  return axesFitNarrow(g) && g.rows.extent * g.cols.extent < limit &&
         g.rows.outSize * g.cols.outSize < limit;
}

inline int64_t roundUp4(int64_t n) { return (n + 3) / 4 * 4; }

/// The tile geometry with `tileRows` rows per tile and the given shared
/// buffer sizes.
inline RowTiles makeRowTiles(const PoolShape &g, int64_t tileRows,
                             int64_t tileExtent, int64_t inCapacity,
                             int64_t outCapacity) {
  RowTiles t;
  t.height = int32_t(g.rows.extent);
  t.width = int32_t(g.cols.extent);
  t.outHeight = int32_t(g.rows.outSize);
  t.outWidth = int32_t(g.cols.outSize);
  t.padTop = int32_t(g.rows.padBefore);
  t.padLeft = int32_t(g.cols.padBefore);
  t.kernelH = int32_t(g.rows.kernel);
  t.kernelW = int32_t(g.cols.kernel);
  t.strideH = int32_t(g.rows.stride);
  t.strideW = int32_t(g.cols.stride);
  t.dilationH = int32_t(g.rows.dilation);
  t.dilationW = int32_t(g.cols.dilation);
  t.tileRows = int32_t(tileRows);
  t.tilesPerPlane = int32_t(ceilDiv(tileExtent, tileRows));
  t.inCapacity = int32_t(inCapacity);
  t.outCapacity = int32_t(outCapacity);
  t.byWidth = Divider<uint32_t>(uint32_t(t.width));
  t.byOutWidth = Divider<uint32_t>(uint32_t(t.outWidth));
  t.byStrideH = Divider<uint32_t>(uint32_t(t.strideH));
  t.byStrideW = Divider<uint32_t>(uint32_t(t.strideW));
  return t;
}

/// Evens out `rows` over `extent`: the fewest tiles of at most `rows` rows,
/// then rows per tile for tiles of equal height but the last.
inline int64_t balancedRows(int64_t extent, int64_t rows) {
  rows = std::max<int64_t>(1, std::min(rows, extent));
  return ceilDiv(extent, ceilDiv(extent, rows));
}

/// Shared bytes of a gradient tile: input rows, grad_output span, picks and
/// the per-column and per-row window ranges.
template <typename T>
int64_t gradTileBytes(int64_t inCapacity, int64_t outCapacity, int64_t width,
                      int64_t tileRows) {
  return inCapacity * int64_t(sizeof(T)) +
         outCapacity * int64_t(sizeof(T) + sizeof(int32_t)) +
         (width + tileRows) * int64_t(sizeof(int2));
}

/// Input rows per gradient tile (about 4096 cells), shrunk until the
/// buffers fit; false where even one row does not, or dilation is not 1.
template <typename T>
bool planGradTiles(const PoolShape &g, RowTiles &tiles, int64_t &bytes) {
  if (g.rows.dilation != 1 || g.cols.dilation != 1 || !fitsRowTiles(g))
    return false;
  const int64_t height = g.rows.extent, width = g.cols.extent;
  constexpr int64_t kVector = 16 / sizeof(T);
  for (int64_t rows = balancedRows(height, ceilDiv(4096, width)); rows >= 1;
       rows = rows > 1 ? balancedRows(height, rows - 1) : 0) {
    // At most this many windows cover `rows` consecutive input rows, and
    // they read at most this many input rows.
    const int64_t windows = std::min(
        g.rows.outSize, (rows + g.rows.kernel - 2) / g.rows.stride + 1);
    const int64_t inRows =
        std::min(height, (windows - 1) * g.rows.stride + g.rows.kernel);
    const int64_t inCapacity = roundUp4(inRows * width + kVector - 1);
    const int64_t outCapacity =
        roundUp4(windows * g.cols.outSize + kVector - 1);
    bytes = gradTileBytes<T>(inCapacity, outCapacity, width, rows);
    if (bytes <= kTileSharedBytes) {
      tiles = makeRowTiles(g, rows, height, inCapacity, outCapacity);
      return true;
    }
  }
  return false;
}

/// Output rows per forward tile (about 1024 outputs), shrunk until the
/// input rows they read fit; false where even one row does not.
template <typename T>
bool planForwardTiles(const PoolShape &g, RowTiles &tiles, int64_t &bytes) {
  if (!fitsRowTiles(g))
    return false;
  const int64_t outHeight = g.rows.outSize, width = g.cols.extent;
  constexpr int64_t kVector = 16 / sizeof(T);
  for (int64_t rows = balancedRows(outHeight, ceilDiv(1024, g.cols.outSize));
       rows >= 1; rows = rows > 1 ? balancedRows(outHeight, rows - 1) : 0) {
    const int64_t inRows =
        std::min(g.rows.extent, (rows - 1) * g.rows.stride +
                                    (g.rows.kernel - 1) * g.rows.dilation + 1);
    const int64_t inCapacity = roundUp4(inRows * width + kVector - 1);
    bytes = inCapacity * int64_t(sizeof(T));
    if (bytes <= kTileSharedBytes) {
      tiles = makeRowTiles(g, rows, outHeight, inCapacity, 0);
      return true;
    }
  }
  return false;
}

/// Copies `n` elements from `source` into shared memory at `buffer` (n + 3
/// elements of room, 16-byte aligned), 16 bytes per load but for the ends;
/// returns where element 0 landed: the copy is shifted so that the aligned
/// loads of `source` become aligned stores.
template <typename T>
__device__ inline const T *copyToShared(const T *source, uint32_t n,
                                        T *buffer) {
  constexpr uint32_t kVector = 16 / sizeof(T);
  using Chunk = Vector<T, kVector>;
  const uint32_t misaligned =
      uint32_t(reinterpret_cast<uintptr_t>(source) / sizeof(T)) % kVector;
  const uint32_t head = min(misaligned ? kVector - misaligned : 0u, n);
  T *target = buffer + misaligned;
  const uint32_t chunks = (n - head) / kVector;
  const Chunk *from = reinterpret_cast<const Chunk *>(source + head);
  Chunk *to = reinterpret_cast<Chunk *>(target + head);
  for (uint32_t c = threadIdx.x; c < chunks; c += blockDim.x)
    to[c] = from[c];
  for (uint32_t i = threadIdx.x; i < head; i += blockDim.x)
    target[i] = source[i];
  for (uint32_t i = head + chunks * kVector + threadIdx.x; i < n;
       i += blockDim.x)
    target[i] = source[i];
  return target;
}

/// Axis::taps in 32-bit arithmetic.
__device__ inline void tileTaps(int32_t o, int32_t stride, int32_t pad,
                                int32_t dilation, int32_t kernel,
                                int32_t extent, int32_t &begin, int32_t &end) {
  const int32_t start = o * stride - pad;
  begin = start >= 0 ? 0 : (dilation - 1 - start) / dilation;
  end = start >= extent ? 0 : (extent - start + dilation - 1) / dilation;
  end = min(end, kernel);
  begin = min(begin, end);
}

/// maxPick on the input rows from `firstRow` held in `rows`: the maximum
/// of window (oh, ow), in `pick` its plane-local index and in `tap` its
/// offset in the window.
template <typename T>
__device__ inline T tileWindowMax(const T *rows, int32_t firstRow,
                                  const RowTiles &t, int32_t oh, int32_t ow,
                                  int32_t &pick, int32_t &tap) {
  int32_t kyBegin, kyEnd, kxBegin, kxEnd;
  tileTaps(oh, t.strideH, t.padTop, t.dilationH, t.kernelH, t.height, kyBegin,
           kyEnd);
  tileTaps(ow, t.strideW, t.padLeft, t.dilationW, t.kernelW, t.width, kxBegin,
           kxEnd);
  const int32_t top = oh * t.strideH - t.padTop;
  const int32_t left = ow * t.strideW - t.padLeft;
  T best = T(-INFINITY);
  pick = (top + kyBegin * t.dilationH) * t.width + left + kxBegin * t.dilationW;
  tap = kyBegin * t.kernelW + kxBegin;
  for (int32_t ky = kyBegin; ky < kyEnd; ++ky) {
    const int32_t ih = top + ky * t.dilationH;
    const T *row = rows + (ih - firstRow) * t.width;
    for (int32_t kx = kxBegin; kx < kxEnd; ++kx) {
      const int32_t iw = left + kx * t.dilationW;
      const T value = row[iw];
      if (takesOver(value, best)) {
        best = value;
        pick = ih * t.width + iw;
        tap = ky * t.kernelW + kx;
      }
    }
  }
  return best;
}

/// `indices`, where non-null, gets each pick's offset in its window.
template <typename T>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolTileKernel(const T *input, RowTiles t, int64_t tiles, T *output,
                      uint8_t *indices) {
  extern __shared__ __align__(16) unsigned char shared[];
  T *inBuffer = reinterpret_cast<T *>(shared);
  const int64_t inPlane = int64_t(t.height) * t.width;
  const int64_t outPlane = int64_t(t.outHeight) * t.outWidth;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t plane = tile / t.tilesPerPlane;
    const int32_t oh0 = int32_t(tile - plane * t.tilesPerPlane) * t.tileRows;
    const int32_t oh1 = min(oh0 + t.tileRows, t.outHeight);
    // The input rows windows oh0..oh1-1 read (each reads one at least).
    const int32_t firstRow = max(0, oh0 * t.strideH - t.padTop);
    const int32_t endRow = min(t.height, (oh1 - 1) * t.strideH - t.padTop +
                                             (t.kernelH - 1) * t.dilationH + 1);
    const T *rows =
        copyToShared(input + plane * inPlane + int64_t(firstRow) * t.width,
                     uint32_t((endRow - firstRow) * t.width), inBuffer);
    __syncthreads();
    const int64_t first = plane * outPlane + int64_t(oh0) * t.outWidth;
    T *out = output + first;
    uint8_t *taps = indices ? indices + first : nullptr;
    const uint32_t count = uint32_t((oh1 - oh0) * t.outWidth);
    for (uint32_t j = threadIdx.x; j < count; j += blockDim.x) {
      const uint32_t r = t.byOutWidth.div(j);
      const int32_t ow = int32_t(j - r * uint32_t(t.outWidth));
      int32_t pick, tap;
      out[j] =
          tileWindowMax(rows, firstRow, t, oh0 + int32_t(r), ow, pick, tap);
      if (taps)
        taps[j] = uint8_t(tap);
    }
    __syncthreads();
  }
}

/// The first of the windows (dilation 1) covering input position `i`:
/// ceil((i + pad - kernel + 1) / stride), at least 0.
__device__ inline int32_t firstCoveringWindow(int32_t i, int32_t pad,
                                              int32_t kernel, int32_t stride,
                                              const Divider<uint32_t> &by) {
  const int32_t reach = i + pad - kernel + 1;
  return reach <= 0 ? 0 : int32_t(by.div(uint32_t(reach + stride - 1)));
}

/// The last: floor((i + pad) / stride), at most outSize - 1.
__device__ inline int32_t lastCoveringWindow(int32_t i, int32_t pad,
                                             int32_t outSize,
                                             const Divider<uint32_t> &by) {
  return min(outSize - 1, int32_t(by.div(uint32_t(i + pad))));
}

/// The gradient of max pooling with dilation 1, a tile of input rows per
/// block. kCover > 0: at most kCover windows cover a cell along each axis
/// (ceil(kernel / stride) <= kCover), so the loops unroll.
template <typename T, int kCover>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolGradTileKernel(const T *gradOutput, const T *input, RowTiles t,
                          int64_t tiles, T *gradInput) {
  extern __shared__ __align__(16) unsigned char shared[];
  T *inBuffer = reinterpret_cast<T *>(shared);
  T *gradBuffer = inBuffer + t.inCapacity;
  int32_t *picks = reinterpret_cast<int32_t *>(gradBuffer + t.outCapacity);
  // Per column: the first covering window and how many; per tile row: the
  // offset of its first covering window's row in the tile's windows and
  // how many.
  int2 *columns = reinterpret_cast<int2 *>(picks + t.outCapacity);
  int2 *tileRows = columns + t.width;
  const int64_t inPlane = int64_t(t.height) * t.width;
  const int64_t outPlane = int64_t(t.outHeight) * t.outWidth;

  for (int32_t iw = threadIdx.x; iw < t.width; iw += blockDim.x) {
    const int32_t first =
        firstCoveringWindow(iw, t.padLeft, t.kernelW, t.strideW, t.byStrideW);
    const int32_t last =
        lastCoveringWindow(iw, t.padLeft, t.outWidth, t.byStrideW);
    columns[iw] = make_int2(first, last - first + 1);
  }
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t plane = tile / t.tilesPerPlane;
    const int32_t row0 = int32_t(tile - plane * t.tilesPerPlane) * t.tileRows;
    const int32_t row1 = min(row0 + t.tileRows, t.height);
    // The windows covering rows row0..row1-1 and the input rows they read.
    const int32_t oh0 =
        firstCoveringWindow(row0, t.padTop, t.kernelH, t.strideH, t.byStrideH);
    const int32_t oh1 =
        lastCoveringWindow(row1 - 1, t.padTop, t.outHeight, t.byStrideH) + 1;
    const uint32_t windows =
        oh1 > oh0 ? uint32_t((oh1 - oh0) * t.outWidth) : 0u;
    const T *rows = inBuffer, *grads = gradBuffer;
    int32_t firstRow = 0;
    if (windows > 0) {
      firstRow = max(0, oh0 * t.strideH - t.padTop);
      const int32_t endRow =
          min(t.height, (oh1 - 1) * t.strideH - t.padTop + t.kernelH);
      rows = copyToShared(input + plane * inPlane + int64_t(firstRow) * t.width,
                          uint32_t((endRow - firstRow) * t.width), inBuffer);
      grads = copyToShared(gradOutput + plane * outPlane +
                               int64_t(oh0) * t.outWidth,
                           windows, gradBuffer);
    }
    for (int32_t r = threadIdx.x; r < row1 - row0; r += blockDim.x) {
      const int32_t first = firstCoveringWindow(row0 + r, t.padTop, t.kernelH,
                                                t.strideH, t.byStrideH);
      const int32_t last =
          lastCoveringWindow(row0 + r, t.padTop, t.outHeight, t.byStrideH);
      tileRows[r] = make_int2((first - oh0) * t.outWidth, last - first + 1);
    }
    __syncthreads();

    for (uint32_t w = threadIdx.x; w < windows; w += blockDim.x) {
      const uint32_t r = t.byOutWidth.div(w);
      const int32_t ow = int32_t(w - r * uint32_t(t.outWidth));
      int32_t pick, tap;
      tileWindowMax(rows, firstRow, t, oh0 + int32_t(r), ow, pick, tap);
      picks[w] = pick;
    }
    __syncthreads();

    // Each cell adds what the windows that picked it send, in row-major
    // window order, as forEachCoveringWindow visits them.
    T *out = gradInput + plane * inPlane + int64_t(row0) * t.width;
    const uint32_t cells = uint32_t((row1 - row0) * t.width);
    for (uint32_t j = threadIdx.x; j < cells; j += blockDim.x) {
      const uint32_t r = t.byWidth.div(j);
      const int32_t iw = int32_t(j - r * uint32_t(t.width));
      const int32_t self = (row0 + int32_t(r)) * t.width + iw;
      const int2 row = tileRows[r], column = columns[iw];
      const int32_t first = row.x + column.x;
      double sum = 0;
      if constexpr (kCover > 0) {
#pragma unroll
        for (int32_t a = 0; a < kCover; ++a) {
          if (a < row.y) {
#pragma unroll
            for (int32_t b = 0; b < kCover; ++b) {
              const int32_t w = first + a * t.outWidth + b;
              if (b < column.y && picks[w] == self)
                sum += double(grads[w]);
            }
          }
        }
      } else {
        for (int32_t a = 0; a < row.y; ++a)
          for (int32_t b = 0; b < column.y; ++b) {
            const int32_t w = first + a * t.outWidth + b;
            if (picks[w] == self)
              sum += double(grads[w]);
          }
      }
      out[j] = T(sum);
    }
    __syncthreads();
  }
}

/// Blocks for `tiles` tiles, one each (a grid-stride loop takes the rest).
inline unsigned tileBlocks(int64_t tiles) {
  return unsigned(std::min<int64_t>(tiles, 0x7fffffff));
}

template <typename T>
bool launchMaxPoolTiles(cudaStream_t stream, const T *input, const PoolShape &g,
                        T *output, uint8_t *indices) {
  RowTiles tiles;
  int64_t bytes;
  if (!planForwardTiles<T>(g, tiles, bytes))
    return false;
  const int64_t count = g.planes * tiles.tilesPerPlane;
  maxPoolTileKernel<<<tileBlocks(count), kBlockSize, size_t(bytes), stream>>>(
      input, tiles, count, output, indices);
  checkLaunch();
  return true;
}

template <typename T>
bool launchMaxPoolGradTiles(cudaStream_t stream, const T *gradOutput,
                            const T *input, const PoolShape &g, T *gradInput) {
  RowTiles tiles;
  int64_t bytes;
  if (!planGradTiles<T>(g, tiles, bytes))
    return false;
  const int64_t count = g.planes * tiles.tilesPerPlane;
  auto launch = [&](auto kernel) {
    kernel<<<tileBlocks(count), kBlockSize, size_t(bytes), stream>>>(
        gradOutput, input, tiles, count, gradInput);
    checkLaunch();
  };
  const int64_t cover = std::max(ceilDiv(g.rows.kernel, g.rows.stride),
                                 ceilDiv(g.cols.kernel, g.cols.stride));
  if (cover == 1)
    launch(maxPoolGradTileKernel<T, 1>);
  else if (cover == 2)
    launch(maxPoolGradTileKernel<T, 2>);
  else
    launch(maxPoolGradTileKernel<T, 0>);
  return true;
}

/// The device-side copy of a pooling geometry the cpu backend checked
/// (cpu::makePool2dGeometry), after the cuda backend's dtype check, so that
/// both backends accept and reject the same calls with the same messages.
/// `sixteenBit`: the kernel also takes f16 and bf16 (max pooling, whose
/// maxima are exact in any type and whose gradients are summed in double
/// and rounded once, through f32, as on the cpu).
template <typename MakeGeometry>
PoolShape checkPool(const CheckedTensor &inputShaped, MakeGeometry &&make,
                    bool sixteenBit = false) {
  if (sixteenBit)
    cpu::requireLibraryFloat(inputShaped);
  else
    requireFloatDtype(inputShaped);
  const cpu::Pool2dGeometry g = make();
  return PoolShape{g.planes, Axis(g.rows), Axis(g.cols),
                   g.batch,  g.channels,   g.channelsLast};
}

/// The geometry of a max pooling with picks (16-bit types too), from
/// `input` and `output` or their gradients: `indices` holds a pick per
/// output, and every window touches the input.
PoolShape checkMaxPoolWithPicks(const CheckedTensor &input,
                                const CheckedTensor &output,
                                const CheckedTensor &indices,
                                const fluid_max_pool2d_params &params) {
  return checkPool(
      input,
      [&] {
        cpu::Pool2dGeometry geometry =
            cpu::makeMaxPool2dGeometry(input, output, params);
        cpu::requirePoolIndices(indices, output, params.kernel);
        geometry.requireWindowsTouchInput();
        return geometry;
      },
      /*sixteenBit=*/true);
}

/// Launches `kernel(Index)` with 32-bit indices when `count` allows.
template <typename Fn> void withIndex(int64_t count, Fn &&launch) {
  if (fitsNarrowIndex(count))
    launch(uint32_t{});
  else
    launch(uint64_t{});
}

//===----------------------------------------------------------------------===//
// Fixed windows: the fast path of max pooling and its gradient
//===----------------------------------------------------------------------===//
//
// For dilation 1 and a kernel and stride fixed at compile time along both
// axes (3x3 stride 2, ResNet's stem, and 2x2 stride 2), with kernel <=
// 2 * stride, so that each input cell is covered by at most two windows
// per axis. Each thread finds the picks of two vertically adjacent windows
// straight from global memory (the caches absorb the windows' overlap;
// the two share the rows they overlap on): the taps are compile-time, the
// loads predicated and issued together, the index arithmetic 32-bit within
// a plane. An out-of-input tap reads as -inf, which never replaces the pick
// (strict >, not NaN), so the pick rule is maxPick's.
//
// The gradient owns cells by window: along an axis, window o owns its
// "home" cells o*s-p+k-s .. o*s-p+k-1 (the last s cells of its span), which
// only windows o and o+1 cover; window 0 also owns the cells before its
// home (only it covers them) and the last window the cells after its span
// (none covers them: their gradient is 0). A block takes a tile of windows
// of one plane (full rows of windows where a row has at most 64, else 63
// columns; up to 17 rows at 56 columns, 14 on the stem) plus one row and
// column of halo, puts each window's pick and grad_output (copied
// asynchronously, so that its loads go out with the input's) in shared
// memory, and after the one barrier each thread writes the cells of its
// two windows, adding the grad_output of those of windows (a,b), (a,b+1),
// (a+1,b), (a+1,b+1) that picked the cell, in that order (row-major window
// order, as the cpu adds them), in double, or in f32 where that rounds the
// same (at most two terms); two cells of a row with one 2-element store
// where they are aligned. Bytes moved: input and grad_output read once but
// for the halo (which the L2 cache mostly serves) and grad_input written
// once. The stem's gradient is bound by the multiprocessors' issue rate,
// not by memory (bench/NOTES.md, 2026-12-02, session 7).

/// The geometry of the fixed-window kernels in 32-bit integers; the
/// gradient's tiles: `tileRows` x `tileCols` windows owned, `haloCols`
/// windows computed per row (tileCols + 1, or tileCols where a tile spans
/// the whole row: no window right of it) and `tileRows + 1` rows.
struct FixedWindows {
  int32_t height, width, outHeight, outWidth, padTop, padLeft;
  int32_t tileRows, tileCols, haloCols, colTiles;
  /// Rows of threads of a gradient block (kGradWindows windows each).
  int32_t threadRows;
  Divider<uint32_t> byPlaneTiles, byColTiles;
};

/// Threads of a gradient block at most, and shared slots per buffer: the
/// (tileRows + 1) x (haloCols + 1) computed windows, one column of no
/// window included, with (tileRows + 1) * haloCols <= kFixedThreads.
constexpr int kFixedThreads = 512;
/// Windows per thread of the gradient, vertically adjacent (the stem
/// measured 0.384 ms with 2, 0.418 ms with 1: bench/NOTES.md).
constexpr int kGradWindows = 2;
constexpr int kFixedSlots = 2 * kGradWindows * kFixedThreads;

/// Whether the fixed-window kernels of kernel `K`, stride `S` take `g`.
template <int K, int S> bool takesFixedWindows(const PoolShape &g) {
  static_assert(K <= 2 * S, "a cell must be covered by two windows at most");
  for (const Axis *a : {&g.rows, &g.cols})
    if (a->kernel != K || a->stride != S || a->dilation != 1)
      return false;
  return fitsRowTiles(g);
}

inline FixedWindows makeFixedWindows(const PoolShape &g) {
  FixedWindows w;
  w.height = int32_t(g.rows.extent);
  w.width = int32_t(g.cols.extent);
  w.outHeight = int32_t(g.rows.outSize);
  w.outWidth = int32_t(g.cols.outSize);
  w.padTop = int32_t(g.rows.padBefore);
  w.padLeft = int32_t(g.cols.padBefore);
  if (w.outWidth <= 64) {
    w.tileCols = w.haloCols = w.outWidth;
  } else {
    w.tileCols = 63;
    w.haloCols = 64;
  }
  // As many rows as the threads take, one of halo included, evened out
  // over the tiles.
  const int32_t most = kFixedThreads / w.haloCols * kGradWindows - 1;
  const int64_t rowTiles = ceilDiv(w.outHeight, std::min(w.outHeight, most));
  w.tileRows = int32_t(ceilDiv(w.outHeight, rowTiles));
  w.threadRows = int32_t(ceilDiv(w.tileRows + 1, kGradWindows));
  w.colTiles = int32_t(ceilDiv(w.outWidth, w.tileCols));
  w.byPlaneTiles = Divider<uint32_t>(uint32_t(rowTiles * w.colTiles));
  w.byColTiles = Divider<uint32_t>(uint32_t(w.colTiles));
  return w;
}

/// How a thread loads a row of a window's taps: kScalarTaps one by one;
/// with stride 2, even widths and aligned data, one 2-element load per row
/// at an even column, the window's first (kPairFromLeft, an even left
/// edge) or second column (kPairFromSecond, an odd one), and the tap that
/// load misses (the third, or the first) from the pair of the neighbouring
/// lane, which holds the next (previous) window of the same row.
enum FixedTaps : int { kScalarTaps, kPairFromLeft, kPairFromSecond };

/// What a thread loads of a row of its window's taps: the taps themselves
/// (kScalarTaps), or its pair and, where the neighbouring lane does not
/// hold it, the tap the pair misses (`own`).
template <typename T, int K> struct FixedRow {
  T taps[K];
  Vector<T, 2> pair;
  T own;
  bool pairInside, alone;
};

/// Loads row `row` (inside the input if `rowInside`) of the taps of a
/// window whose first column is `left`; `neighbour`: the adjacent lane
/// (the next for kPairFromLeft, the previous for kPairFromSecond) holds the
/// adjacent window of the same row of windows. Outside the input the loads
/// read the plane's first elements rather than nothing, so that no branch
/// keeps the compiler from issuing every row's loads together.
template <typename T, int K, int kTaps>
__device__ __forceinline__ void
loadFixedRow(const T *__restrict__ plane, int32_t width, int32_t row,
             bool rowInside, int32_t left, bool neighbour, FixedRow<T, K> &r) {
  const T *rowStart = plane + row * width;
  if constexpr (kTaps == kScalarTaps) {
#pragma unroll
    for (int kx = 0; kx < K; ++kx) {
      r.taps[kx] = T(-INFINITY);
      if (rowInside && uint32_t(left + kx) < uint32_t(width))
        r.taps[kx] = rowStart[left + kx];
    }
  } else {
    static_assert(K == 2 || K == 3, "pairs cover windows of 2 or 3 columns");
    // An even column of an even width: both elements are inside or out.
    const int32_t column = kTaps == kPairFromLeft ? left : left + 1;
    r.pairInside = rowInside && uint32_t(column) < uint32_t(width);
    r.pair = *reinterpret_cast<const Vector<T, 2> *>(
        r.pairInside ? rowStart + column : plane);
    const int32_t other = kTaps == kPairFromLeft ? left + 2 : left;
    r.alone = !neighbour && rowInside && uint32_t(other) < uint32_t(width);
    if (kTaps == kPairFromSecond || K == 3)
      r.own = r.alone ? rowStart[other] : plane[0];
  }
}

/// The K taps of a row loadFixedRow loaded, -inf for those outside the
/// input; every lane of the warp calls it together (the pairs' exchange).
template <typename T, int K, int kTaps>
__device__ __forceinline__ void finishFixedRow(FixedRow<T, K> &r,
                                               bool neighbour) {
  if constexpr (kTaps != kScalarTaps) {
    if (!r.pairInside)
      r.pair.v[0] = r.pair.v[1] = T(-INFINITY);
    T shared = T(-INFINITY);
    if (kTaps == kPairFromSecond || K == 3) {
      shared = kTaps == kPairFromLeft
                   ? __shfl_down_sync(0xffffffffu, r.pair.v[0], 1)
                   : __shfl_up_sync(0xffffffffu, r.pair.v[1], 1);
      if (!neighbour)
        shared = r.alone ? r.own : T(-INFINITY);
    }
    if constexpr (kTaps == kPairFromLeft) {
      r.taps[0] = r.pair.v[0];
      r.taps[1] = r.pair.v[1];
      if constexpr (K == 3)
        r.taps[2] = shared;
    } else {
      r.taps[0] = shared;
      r.taps[1] = r.pair.v[0];
      if constexpr (K == 3)
        r.taps[2] = r.pair.v[1];
    }
  }
}

/// maxPick of windows (oh + r, ow), r < kWindows, with compile-time taps:
/// their maxima in `best`, the plane-local indices of the picks in `pick`
/// and their offsets in the window in `tap`.
/// Vertically adjacent windows share the rows they overlap on. `valid`:
/// whether the thread has windows (a lane without reads nothing but takes
/// part in the exchange of pairs).
template <typename T, int K, int S, int kTaps, int kWindows>
__device__ __forceinline__ void
fixedWindowMax(const T *__restrict__ plane, const FixedWindows &w, int32_t oh,
               int32_t ow, bool valid, bool neighbour, T (&best)[kWindows],
               int32_t (&pick)[kWindows], int32_t (&tap)[kWindows]) {
  static_assert(kTaps == kScalarTaps || S == 2, "pairs need stride 2");
  constexpr int kRows = (kWindows - 1) * S + K;
  const int32_t top = oh * S - w.padTop, left = ow * S - w.padLeft;
  FixedRow<T, K> rows[kRows];
#pragma unroll
  for (int y = 0; y < kRows; ++y)
    loadFixedRow<T, K, kTaps>(plane, w.width, top + y,
                              valid && uint32_t(top + y) < uint32_t(w.height),
                              left, neighbour, rows[y]);
#pragma unroll
  for (int y = 0; y < kRows; ++y)
    finishFixedRow<T, K, kTaps>(rows[y], neighbour);
#pragma unroll
  for (int r = 0; r < kWindows; ++r) {
    // The first tap inside the input, the pick where every value is -inf.
    int32_t pickY = max(-(top + r * S), 0), pickX = max(-left, 0);
    T max = T(-INFINITY);
#pragma unroll
    for (int ky = 0; ky < K; ++ky)
#pragma unroll
      for (int kx = 0; kx < K; ++kx) {
        const T value = rows[r * S + ky].taps[kx];
        if (takesOver(value, max)) {
          max = value;
          pickY = ky;
          pickX = kx;
        }
      }
    best[r] = max;
    pick[r] = (top + r * S + pickY) * w.width + left + pickX;
    tap[r] = pickY * K + pickX;
  }
}

/// Windows per thread of the forward, vertically adjacent (the stem
/// measured 0.137 ms with 2, 0.151 ms with 1: bench/NOTES.md).
constexpr int kForwardWindows = 2;
/// Whether the forward and the gradient load pairs where they can: off.
/// The pair path passes gpu-pool.py but measured slower on the stem
/// (forward 0.208 ms against 0.137, gradient 0.481 against 0.384): the
/// compiler issues each row's load, waits for it and exchanges it before
/// the next row's load, where the scalar taps' loads all go out together.
constexpr bool kForwardPairs = false, kGradPairs = false;

/// Whether the lane adjacent to this one (the next for kPairFromLeft, the
/// previous for kPairFromSecond) holds the adjacent window of the same row
/// of windows, given that adjacent threads hold adjacent windows but for
/// the ends of rows: `column` is this thread's, `columns` per row.
template <int kTaps>
__device__ inline bool hasNeighbour(int32_t column, int32_t columns) {
  const uint32_t lane = threadIdx.x % 32;
  return kTaps == kPairFromLeft ? lane < 31 && column + 1 < columns
                                : lane > 0 && column > 0;
}

/// A thread per kForwardWindows vertically adjacent outputs: `outIndex`
/// splits indices over [planes, ceil(outHeight / kForwardWindows),
/// outWidth]. The loop runs whole blocks, so that every lane of a warp
/// takes part in each exchange of pairs. kIndices: the picks' offsets in
/// their windows go to `indices` as well.
template <typename T, int K, int S, int kTaps, bool kIndices, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolFixedKernel(const T *__restrict__ input, FixedWindows w,
                       PlaneIndex<Index> outIndex, Index items,
                       T *__restrict__ output, uint8_t *__restrict__ indices) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t planeSize = int64_t(w.height) * w.width;
  const int64_t outPlane = int64_t(w.outHeight) * w.outWidth;
  for (Index first = Index(blockIdx.x) * blockDim.x; first < items;
       first += stride) {
    const Index i = first + threadIdx.x;
    const bool valid = i < items;
    int64_t p, group, ow;
    outIndex.split(valid ? i : first, p, group, ow);
    const int32_t oh = int32_t(group) * kForwardWindows;
    T best[kForwardWindows];
    int32_t pick[kForwardWindows], tap[kForwardWindows];
    fixedWindowMax<T, K, S, kTaps, kForwardWindows>(
        input + p * planeSize, w, oh, int32_t(ow), valid,
        hasNeighbour<kTaps>(int32_t(ow), w.outWidth), best, pick, tap);
    if (!valid)
      continue;
    const int64_t o = p * outPlane + int64_t(oh) * w.outWidth + ow;
#pragma unroll
    for (int r = 0; r < kForwardWindows; ++r)
      if (r == 0 || oh + r < w.outHeight) {
        output[o + r * w.outWidth] = best[r];
        if constexpr (kIndices)
          indices[o + r * w.outWidth] = uint8_t(tap[r]);
      }
  }
}

/// The cells [begin, end) along an axis of `extent` that window `o` of
/// `outSize` owns (see above).
template <int K, int S>
__device__ inline void ownedCells(int32_t o, int32_t pad, int32_t outSize,
                                  int32_t extent, int32_t &begin,
                                  int32_t &end) {
  begin = o == 0 ? 0 : max(o * S - pad + K - S, 0);
  end = o == outSize - 1 ? extent : min(o * S - pad + K, extent);
}

/// Blocks of the gradient: at least 3 per multiprocessor (40 registers a
/// thread at most); 4 (32 registers, with spills) measured slower.
constexpr int kFixedGradMinBlocks = 3;

/// Writes the cells window (oh, ow) owns: `picks` and `grads` point at its
/// slot, the next window of the row right of it, the windows of the next
/// row `pitch` slots on.
template <typename T, int K, int S>
__device__ __forceinline__ void
writeOwnedCells(const FixedWindows &w, int32_t oh, int32_t ow,
                const int32_t *picks, const T *grads, int32_t pitch, T *out) {
  const int32_t p00 = picks[0], p01 = picks[1];
  const int32_t p10 = picks[pitch], p11 = picks[pitch + 1];
  const T g00 = grads[0], g01 = grads[1];
  const T g10 = grads[pitch], g11 = grads[pitch + 1];
  // The sum for `cell` of what the windows that picked it send, in
  // row-major window order, in double as on the cpu. For f32 and at most
  // two terms, f32 additions give the same: 0 + a is exact, and a + b
  // rounded to f32 once equals a + b rounded to f64 and then to f32
  // (53 >= 2 * 24 + 2 bits); this saves the f64 conversions, which the
  // multiprocessors issue at a low rate.
  auto cellGrad = [&](int32_t cell) {
    const bool m00 = p00 == cell, m01 = p01 == cell;
    const bool m10 = p10 == cell, m11 = p11 == cell;
    if constexpr (std::is_same_v<T, float>) {
      if (int(m00) + int(m01) + int(m10) + int(m11) <= 2) {
        float sum = 0.0f;
        if (m00)
          sum += g00;
        if (m01)
          sum += g01;
        if (m10)
          sum += g10;
        if (m11)
          sum += g11;
        return sum;
      }
    }
    double sum = 0;
    if (m00)
      sum += double(g00);
    if (m01)
      sum += double(g01);
    if (m10)
      sum += double(g10);
    if (m11)
      sum += double(g11);
    return T(sum);
  };
  int32_t rowBegin, rowEnd, colBegin, colEnd;
  ownedCells<K, S>(oh, w.padTop, w.outHeight, w.height, rowBegin, rowEnd);
  ownedCells<K, S>(ow, w.padLeft, w.outWidth, w.width, colBegin, colEnd);
#pragma unroll 1
  for (int32_t r = rowBegin; r < rowEnd; ++r) {
    const int32_t start = r * w.width;
    T *row = out + start;
    if (colEnd - colBegin == 2 &&
        reinterpret_cast<uintptr_t>(row + colBegin) % (2 * sizeof(T)) == 0) {
      Vector<T, 2> pair;
      pair.v[0] = cellGrad(start + colBegin);
      pair.v[1] = cellGrad(start + colBegin + 1);
      *reinterpret_cast<Vector<T, 2> *>(row + colBegin) = pair;
    } else {
#pragma unroll 1
      for (int32_t c = colBegin; c < colEnd; ++c)
        row[c] = cellGrad(start + c);
    }
  }
}

/// A block of threadRows * haloCols threads, rounded up to whole warps,
/// per tile (one tile per block); thread (ty, tx) computes windows
/// (row0 + ty * kGradWindows + r, col0 + tx), r < kGradWindows, and
/// writes the cells of those that are the tile's.
template <typename T, int K, int S, int kTaps>
__global__ void __launch_bounds__(kFixedThreads, kFixedGradMinBlocks)
    maxPoolGradFixedKernel(const T *__restrict__ gradOutput,
                           const T *__restrict__ input, FixedWindows w,
                           T *__restrict__ gradInput) {
  __shared__ int32_t picks[kFixedSlots];
  __shared__ T grads[kFixedSlots];
  const uint32_t tile = blockIdx.x;
  const uint32_t plane = w.byPlaneTiles.div(tile);
  const uint32_t planeTile = tile - plane * w.byPlaneTiles.divisor;
  const uint32_t rowTile = w.byColTiles.div(planeTile);
  const uint32_t colTile = planeTile - rowTile * uint32_t(w.colTiles);
  const int32_t ty = int32_t(threadIdx.x) / w.haloCols;
  const int32_t tx = int32_t(threadIdx.x) - ty * w.haloCols;
  // The tile's row of windows of this thread's first window.
  const int32_t y0 = ty * kGradWindows;
  const int32_t oh0 = int32_t(rowTile) * w.tileRows + y0;
  const int32_t ow = int32_t(colTile) * w.tileCols + tx;
  const int64_t inPlane = int64_t(w.height) * w.width;
  const int64_t outPlane = int64_t(w.outHeight) * w.outWidth;
  const int32_t pitch = w.haloCols + 1;

  // grad_output goes to shared memory first, by asynchronous copies that
  // the compiler cannot move behind the picks (a load into a register it
  // would), so that its loads go out with the input's; 0 and -1 (no cell)
  // in the slots of no window.
  const bool reads = ty < w.threadRows;
#pragma unroll
  for (int r = 0; r < kGradWindows; ++r) {
    const int32_t slot = (y0 + r) * pitch + tx;
    if (reads && y0 + r <= w.tileRows) {
      if (oh0 + r < w.outHeight && ow < w.outWidth)
        __pipeline_memcpy_async(grads + slot,
                                gradOutput + plane * outPlane +
                                    (oh0 + r) * w.outWidth + ow,
                                sizeof(T));
      else
        grads[slot] = T(0);
      if (tx == w.haloCols - 1) {
        picks[slot + 1] = -1;
        grads[slot + 1] = T(0);
      }
    }
  }
  __pipeline_commit();
  // Every thread of the rows reads its windows' taps inside the plane (and
  // shares its pairs).
  T best[kGradWindows];
  int32_t picked[kGradWindows], taps[kGradWindows];
  fixedWindowMax<T, K, S, kTaps, kGradWindows>(
      input + plane * inPlane, w, oh0, ow, reads,
      hasNeighbour<kTaps>(tx, w.haloCols), best, picked, taps);
#pragma unroll
  for (int r = 0; r < kGradWindows; ++r)
    if (reads && y0 + r <= w.tileRows)
      picks[(y0 + r) * pitch + tx] =
          oh0 + r < w.outHeight && ow < w.outWidth ? picked[r] : -1;
  __pipeline_wait_prior(0);
  __syncthreads();
  if (!reads || tx >= w.tileCols || ow >= w.outWidth)
    return;
  T *out = gradInput + plane * inPlane;
#pragma unroll
  for (int r = 0; r < kGradWindows; ++r) {
    const int32_t oh = oh0 + r;
    if (y0 + r >= w.tileRows || oh >= w.outHeight)
      break;
    const int32_t slot = (y0 + r) * pitch + tx;
    writeOwnedCells<T, K, S>(w, oh, ow, picks + slot, grads + slot, pitch, out);
  }
}

/// Calls `launch(K, S, taps)` (std::integral_constant) for the fixed
/// windows that take `g` over `input`; false where none does.
template <typename T, typename Fn>
bool withFixedWindows(const PoolShape &g, const T *input, Fn &&launch) {
  using Three = std::integral_constant<int, 3>;
  using Two = std::integral_constant<int, 2>;
  auto withTaps = [&](auto kernel) {
    // Pairs: even rows, aligned planes.
    if (g.cols.extent % 2 != 0 || !isVectorAligned<T, 2>(input))
      launch(kernel, Two{}, std::integral_constant<int, kScalarTaps>{});
    else if (g.cols.padBefore % 2 == 0)
      launch(kernel, Two{}, std::integral_constant<int, kPairFromLeft>{});
    else
      launch(kernel, Two{}, std::integral_constant<int, kPairFromSecond>{});
  };
  if (takesFixedWindows<3, 2>(g)) {
    withTaps(Three{});
    return true;
  }
  if (takesFixedWindows<2, 2>(g)) {
    withTaps(Two{});
    return true;
  }
  return false;
}

template <typename T>
bool launchMaxPoolFixed(cudaStream_t stream, const T *input, const PoolShape &g,
                        T *output, uint8_t *indices) {
  return withFixedWindows(g, input, [&](auto kernel, auto stride, auto taps) {
    constexpr int K = decltype(kernel)::value, S = decltype(stride)::value;
    constexpr int kTaps = kForwardPairs ? decltype(taps)::value : kScalarTaps;
    const FixedWindows w = makeFixedWindows(g);
    const int64_t groups = ceilDiv(g.rows.outSize, kForwardWindows);
    const int64_t items = g.planes * groups * g.cols.outSize;
    withIndex(items, [&](auto zero) {
      using Index = decltype(zero);
      const PlaneIndex<Index> split(groups, g.cols.outSize);
      if (indices)
        maxPoolFixedKernel<T, K, S, kTaps, true, Index>
            <<<gridSizeFor(items), kBlockSize, 0, stream>>>(
                input, w, split, Index(items), output, indices);
      else
        maxPoolFixedKernel<T, K, S, kTaps, false, Index>
            <<<gridSizeFor(items), kBlockSize, 0, stream>>>(
                input, w, split, Index(items), output, nullptr);
      checkLaunch();
    });
  });
}

template <typename T>
bool launchMaxPoolGradFixed(cudaStream_t stream, const T *gradOutput,
                            const T *input, const PoolShape &g, T *gradInput) {
  if (!withFixedWindows(g, input, [](auto, auto, auto) {}))
    return false;
  const FixedWindows w = makeFixedWindows(g);
  // One block per tile, its index split in 32 bits.
  const int64_t tiles = g.planes * int64_t(w.byPlaneTiles.divisor);
  if (!fitsNarrowIndex(tiles))
    return false;
  return withFixedWindows(g, input, [&](auto kernel, auto stride, auto taps) {
    constexpr int K = decltype(kernel)::value, S = decltype(stride)::value;
    constexpr int kTaps = kGradPairs ? decltype(taps)::value : kScalarTaps;
    const unsigned threads =
        unsigned(ceilDiv(w.threadRows * w.haloCols, 32) * 32);
    maxPoolGradFixedKernel<T, K, S, kTaps>
        <<<unsigned(tiles), threads, 0, stream>>>(gradOutput, input, w,
                                                  gradInput);
    checkLaunch();
  });
}

/// Max pooling into `output` and, where non-null, the picks' offsets in
/// their windows into `indices`.
template <typename T>
void launchMaxPool(cudaStream_t stream, const T *input, const PoolShape &g,
                   T *output, uint8_t *indices) {
  if (launchMaxPoolFixed(stream, input, g, output, indices) ||
      launchMaxPoolTiles(stream, input, g, output, indices))
    return;
  withIndex(g.outputs(), [&](auto zero) {
    using Index = decltype(zero);
    maxPoolKernel<<<gridSizeFor(g.outputs()), kBlockSize, 0, stream>>>(
        input, g, PlaneIndex<Index>(g.rows.outSize, g.cols.outSize),
        Index(g.outputs()), output, static_cast<int32_t *>(nullptr), indices);
    checkLaunch();
  });
}

template <typename T, typename Pick>
void launchMaxPoolGrad(fluid_cuda_context *context, cudaStream_t stream,
                       const T *gradOutput, const T *input, const PoolShape &g,
                       T *gradInput) {
  Pick *picks =
      static_cast<Pick *>(workspace(context, sizeof(Pick) * g.outputs()));
  withIndex(g.outputs(), [&](auto zero) {
    using Index = decltype(zero);
    maxPoolKernel<<<gridSizeFor(g.outputs()), kBlockSize, 0, stream>>>(
        input, g, PlaneIndex<Index>(g.rows.outSize, g.cols.outSize),
        Index(g.outputs()), static_cast<T *>(nullptr), picks,
        static_cast<uint8_t *>(nullptr));
    checkLaunch();
  });
  withIndex(g.inputs(), [&](auto zero) {
    using Index = decltype(zero);
    maxPoolGradKernel<<<gridSizeFor(g.inputs()), kBlockSize, 0, stream>>>(
        gradOutput, picks, g, PlaneIndex<Index>(g.rows.extent, g.cols.extent),
        Index(g.inputs()), gradInput);
    checkLaunch();
  });
}

//===----------------------------------------------------------------------===//
// The gradient from saved picks
//===----------------------------------------------------------------------===//
//
// fluid_cuda_max_pool2d_grad_indices reads grad_output and each window's
// pick (one byte: its offset in the window, which
// fluid_cuda_max_pool2d_with_indices saved) and writes each cell of
// grad_input once: no atomics, no zeroing. A cell gathers what the windows
// that picked it send, in row-major window order, in double, or in f32
// where that rounds the same (two terms at most, as writeOwnedCells
// argues), so that the sums are the cpu scatter's bit for bit. The general
// kernel takes one cell per thread and visits its covering windows as
// maxPoolGradKernel does; the fixed one (3x3 and 2x2 stride 2, dilation 1)
// gives each thread two blocks of 2 x 2 cells, whose windows and taps
// follow from the cells' parity (gatherBlock: nine comparisons per four
// cells for 3x3), reads each of its windows once (ResNet's stem: 2 x 3
// windows for 2 x 4 cells) and stores 16 bytes at a time where aligned.
// The gather is bound by instruction issue, not memory (Nsight Compute on
// the stem: 85% of the multiprocessors' issue rate for 45% of copy
// bandwidth before the parity form), hence the fewest comparisons. Bytes
// moved: grad_output and the picks read (neighbouring threads share
// windows through the caches), grad_input written once.

/// A thread per input cell, any geometry.
template <typename T, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolGradIndicesKernel(const T *gradOutput, const uint8_t *indices,
                             PoolShape g, PlaneIndex<Index> inIndex,
                             Index inputs, T *gradInput) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t outPlaneSize = g.rows.outSize * g.cols.outSize;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < inputs;
       i += stride) {
    int64_t p, ih, iw;
    inIndex.split(i, p, ih, iw);
    const int64_t outBase = p * outPlaneSize;
    double sum = 0;
    // Taps descending give outputs ascending (forEachCoveringWindow).
    for (int64_t ky = g.rows.kernel - 1; ky >= 0; --ky) {
      const int64_t oh = g.rows.outputReading(ih, ky);
      if (oh < 0)
        continue;
      for (int64_t kx = g.cols.kernel - 1; kx >= 0; --kx) {
        const int64_t ow = g.cols.outputReading(iw, kx);
        if (ow < 0)
          continue;
        const int64_t o = outBase + oh * g.cols.outSize + ow;
        if (int64_t(indices[o]) == ky * g.cols.kernel + kx)
          sum += sumTerm(gradOutput[o]);
      }
    }
    gradInput[i] = fromSum<T>(sum);
  }
}

/// Cells per thread of the fixed-window gather, in blocks of 2 x 2 (one
/// window's stride): rows of blocks, and columns of blocks (two blocks of
/// f32 make one 16-byte store per row, two of f64).
constexpr int kGatherBlockRows = 1, kGatherBlockCols = 2;

/// Where a block of 2 x 2 cells starts for kernel `K`, stride 2: with
/// (row + pad) odd for K = 3 and even for K = 2, so that every block sees
/// its windows and taps at the same places. `shift` is how far the first
/// block starts before row 0 (0 or 1); window(start) is its top-left
/// window.
template <int K> struct GatherBlocks {
  static_assert(K == 2 || K == 3, "kernel 2 or 3, stride 2");
  /// Window rows (columns) a block row (column) of cells reads beyond its
  /// own: the next one's first taps reach back into it for K = 3.
  static constexpr int kExtra = K == 3 ? 1 : 0;
  __host__ __device__ static int32_t shift(int32_t pad) {
    return K == 3 ? (pad + 1) & 1 : pad & 1;
  }
  __device__ static int32_t window(int32_t start, int32_t pad) {
    return (start + pad - kExtra) >> 1; // floor: -1 before the first
  }
};

/// The cells of one 2 x 2 block from its windows: taps `t` and gradients
/// `v` of windows (q, r), (q, r + 1), (q + 1, r), (q + 1, r + 1) (for
/// K = 2 only the first). With stride 2 a cell's covering windows and
/// their taps follow from its parity alone: for K = 3, cell (0, 0) is tap
/// 4 of window (q, r); (0, 1) taps 5 and 3 of (q, r) and (q, r + 1);
/// (1, 0) taps 7 and 1 of (q, r) and (q + 1, r); (1, 1) taps 8, 6, 2, 0 of
/// all four; for K = 2 cell (y, x) is tap 2y + x of window (q, r): nine
/// (four) comparisons per four cells. Sums in row-major window order, in
/// double as on the cpu; for f32 and at most two terms f32 gives the same
/// (writeOwnedCells), and zeros added in between change nothing.
template <typename T, int K>
__device__ __forceinline__ void gatherBlock(const int32_t (&t)[4],
                                            const T (&v)[4], T (&cell)[4]) {
  auto take = [](bool picked, T value) { return picked ? value : T(0); };
  if constexpr (K == 2) {
#pragma unroll
    for (int c = 0; c < 4; ++c)
      cell[c] = T(0) + take(t[0] == c, v[0]);
    return;
  } else {
    cell[0] = T(0) + take(t[0] == 4, v[0]);
    cell[1] = take(t[0] == 5, v[0]) + take(t[1] == 3, v[1]);
    cell[2] = take(t[0] == 7, v[0]) + take(t[2] == 1, v[2]);
    const bool m0 = t[0] == 8, m1 = t[1] == 6, m2 = t[2] == 2, m3 = t[3] == 0;
    if (int(m0) + int(m1) + int(m2) + int(m3) <= 2) {
      cell[3] =
          (take(m0, v[0]) + take(m1, v[1])) + (take(m2, v[2]) + take(m3, v[3]));
      return;
    }
    double sum = 0;
    if (m0)
      sum += double(v[0]);
    if (m1)
      sum += double(v[1]);
    if (m2)
      sum += double(v[2]);
    if (m3)
      sum += double(v[3]);
    cell[3] = T(sum);
  }
}

/// A thread per kGatherBlockRows x kGatherBlockCols blocks of 2 x 2 input
/// cells (GatherBlocks<K>): `groupIndex` splits indices over [planes,
/// groupRows, groupCols]. The thread reads each of its windows once.
template <typename T, int K, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolGradIndicesFixedKernel(const T *__restrict__ gradOutput,
                                  const uint8_t *__restrict__ indices,
                                  FixedWindows w, PlaneIndex<Index> groupIndex,
                                  Index items, T *__restrict__ gradInput) {
  using Blocks = GatherBlocks<K>;
  constexpr int kRows = 2 * kGatherBlockRows, kCols = 2 * kGatherBlockCols;
  constexpr int kWindowRows = kGatherBlockRows + Blocks::kExtra;
  constexpr int kWindowCols = kGatherBlockCols + Blocks::kExtra;
  constexpr int kStore = int(16 / sizeof(T));
  static_assert(kCols % kStore == 0, "whole stores per thread");
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t inPlane = int64_t(w.height) * w.width;
  const int64_t outPlane = int64_t(w.outHeight) * w.outWidth;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < items;
       i += stride) {
    int64_t p, groupRow, groupCol;
    groupIndex.split(i, p, groupRow, groupCol);
    const int32_t row0 = int32_t(groupRow) * kRows - Blocks::shift(w.padTop);
    const int32_t col0 = int32_t(groupCol) * kCols - Blocks::shift(w.padLeft);
    const int32_t q = Blocks::window(row0, w.padTop);
    const int32_t r = Blocks::window(col0, w.padLeft);
    // The windows' picks and gradients; -1 (no tap) outside the output.
    int32_t taps[kWindowRows][kWindowCols];
    T grads[kWindowRows][kWindowCols];
    const uint8_t *planeIndices = indices + p * outPlane;
    const T *planeGrads = gradOutput + p * outPlane;
#pragma unroll
    for (int a = 0; a < kWindowRows; ++a)
#pragma unroll
      for (int b = 0; b < kWindowCols; ++b) {
        const int32_t oh = q + a, ow = r + b;
        const bool inside = uint32_t(oh) < uint32_t(w.outHeight) &&
                            uint32_t(ow) < uint32_t(w.outWidth);
        const int32_t o = inside ? oh * w.outWidth + ow : 0;
        taps[a][b] = inside ? int32_t(planeIndices[o]) : -1;
        grads[a][b] = inside ? planeGrads[o] : T(0);
      }
    T cells[kRows][kCols];
#pragma unroll
    for (int y = 0; y < kGatherBlockRows; ++y)
#pragma unroll
      for (int x = 0; x < kGatherBlockCols; ++x) {
        const int y1 = y + Blocks::kExtra, x1 = x + Blocks::kExtra;
        const int32_t t[4] = {taps[y][x], taps[y][x1], taps[y1][x],
                              taps[y1][x1]};
        const T v[4] = {grads[y][x], grads[y][x1], grads[y1][x], grads[y1][x1]};
        T cell[4];
        gatherBlock<T, K>(t, v, cell);
#pragma unroll
        for (int c = 0; c < 4; ++c)
          cells[2 * y + c / 2][2 * x + c % 2] = cell[c];
      }
    T *plane = gradInput + p * inPlane;
#pragma unroll
    for (int y = 0; y < kRows; ++y) {
      const int32_t ih = row0 + y;
      if (uint32_t(ih) >= uint32_t(w.height))
        continue;
      T *row = plane + int64_t(ih) * w.width;
#pragma unroll
      for (int c = 0; c < kCols; c += kStore) {
        const int32_t iw = col0 + c;
        if (iw >= 0 && iw + kStore <= w.width &&
            reinterpret_cast<uintptr_t>(row + iw) % 16 == 0) {
          Vector<T, kStore> chunk;
#pragma unroll
          for (int k = 0; k < kStore; ++k)
            chunk.v[k] = cells[y][c + k];
          *reinterpret_cast<Vector<T, kStore> *>(row + iw) = chunk;
        } else {
#pragma unroll
          for (int k = 0; k < kStore; ++k)
            if (uint32_t(iw + k) < uint32_t(w.width))
              row[iw + k] = cells[y][c + k];
        }
      }
    }
  }
}

template <typename T>
void launchMaxPoolGradIndices(cudaStream_t stream, const T *gradOutput,
                              const uint8_t *indices, const PoolShape &g,
                              T *gradInput) {
  auto fixed = [&](auto kernel) {
    constexpr int K = decltype(kernel)::value;
    using Blocks = GatherBlocks<K>;
    const FixedWindows w = makeFixedWindows(g);
    const int64_t groupRows =
        ceilDiv(g.rows.extent + Blocks::shift(w.padTop), 2 * kGatherBlockRows);
    const int64_t groupCols =
        ceilDiv(g.cols.extent + Blocks::shift(w.padLeft), 2 * kGatherBlockCols);
    const int64_t items = g.planes * groupRows * groupCols;
    // A thread per item: the gather is issue-bound, and a grid-stride loop
    // over fewer threads measured 10% slower (bench/NOTES.md).
    const int64_t blocks =
        std::min<int64_t>(ceilDiv(items, kBlockSize), int64_t(1) << 30);
    withIndex(items, [&](auto zero) {
      using Index = decltype(zero);
      maxPoolGradIndicesFixedKernel<T, K, Index>
          <<<unsigned(blocks), kBlockSize, 0, stream>>>(
              gradOutput, indices, w, PlaneIndex<Index>(groupRows, groupCols),
              Index(items), gradInput);
      checkLaunch();
    });
  };
  // The fixed-window gather stores 16 bytes of f32 or f64 cells; 16-bit
  // gradients take the thread-per-cell kernel.
  if constexpr (!kSixteenBit<T>) {
    if (takesFixedWindows<3, 2>(g)) {
      fixed(std::integral_constant<int, 3>{});
      return;
    }
    if (takesFixedWindows<2, 2>(g)) {
      fixed(std::integral_constant<int, 2>{});
      return;
    }
  }
  withIndex(g.inputs(), [&](auto zero) {
    using Index = decltype(zero);
    maxPoolGradIndicesKernel<<<gridSizeFor(g.inputs()), kBlockSize, 0,
                               stream>>>(
        gradOutput, indices, g, PlaneIndex<Index>(g.rows.extent, g.cols.extent),
        Index(g.inputs()), gradInput);
    checkLaunch();
  });
}

//===----------------------------------------------------------------------===//
// Channels last (NHWC)
//===----------------------------------------------------------------------===//
//
// With channels innermost, a window's taps are the same for every channel
// of a pixel, and those channels are contiguous: a thread takes kV
// consecutive channels (16 bytes: 4 f32 or 2 f64) of one output (the
// forward) or of one input cell (the gradient), so that consecutive
// threads take consecutive 16-byte chunks of a pixel, then of the next
// pixel along the row, and every tap is one vector load (a whole warp:
// 512 contiguous bytes). Where the channel count or an operand's alignment
// does not allow vectors, a thread takes one channel (kV = 1).
//
// The forward walks its window's taps inside the input in row-major order
// and keeps, per channel, maxPick's pick (strict >, a NaN wins, the last
// one if several; a window of -inf picks its first tap inside the input),
// writing the maxima and, where asked, the picks' offsets in the window.
// The gradient gathers: the thread visits the windows covering its cell
// in row-major window order (rows [first, last] by columns [first, last],
// no loop over the taps that miss), reads each one's pick and gradient,
// and adds those of the windows that picked the cell, as the cpu adds
// them: in double, or in f32 where that rounds the same (at most two
// terms, as writeOwnedCells argues; a thread with a channel of three or
// more gathers again in double). No atomics, no zeroing: deterministic,
// and bitwise the cpu's. max_pool2d_grad (no saved picks) runs the forward
// first for the picks only, into the workspace (a byte each, or int64 for
// a kernel of more than 256 cells), then the same gather.
//
// Bytes moved, ResNet's stem: the forward reads the input and writes the
// output and the picks once (the windows' overlap is served by the
// caches); the gradient reads grad_output and the picks (each window by
// the threads of the cells it covers, through the caches) and writes
// grad_input once.

/// Channels per thread of the channels-last kernels where vectors apply.
template <typename T> constexpr int kNhwcVector = int(16 / sizeof(T));

/// The geometry of a channels-last launch: thread indices of type Index
/// split over [batch, rows, columns, channel vectors] (the output's for
/// the forward, the input's for the gradient); positions inside an image
/// in Coord (32-bit with 32-bit indices), offsets in a tensor in 64 bits.
template <typename Index> struct NhwcWindows {
  using Coord =
      std::conditional_t<std::is_same_v<Index, uint32_t>, int32_t, int64_t>;
  Coord height, width, outHeight, outWidth, padTop, padLeft;
  Coord kernelH, kernelW, strideH, strideW, dilationH, dilationW;
  int64_t channels;
  Divider<Index> byVectors, byStrideH, byStrideW;
  PlaneIndex<Index> pixels;

  NhwcWindows(const PoolShape &g, int64_t vectors, bool gradient)
      : height(Coord(g.rows.extent)), width(Coord(g.cols.extent)),
        outHeight(Coord(g.rows.outSize)), outWidth(Coord(g.cols.outSize)),
        padTop(Coord(g.rows.padBefore)), padLeft(Coord(g.cols.padBefore)),
        kernelH(Coord(g.rows.kernel)), kernelW(Coord(g.cols.kernel)),
        strideH(Coord(g.rows.stride)), strideW(Coord(g.cols.stride)),
        dilationH(Coord(g.rows.dilation)), dilationW(Coord(g.cols.dilation)),
        channels(g.channels), byVectors(Index(vectors)),
        byStrideH(Index(g.rows.stride)), byStrideW(Index(g.cols.stride)),
        pixels(gradient ? g.rows.extent : g.rows.outSize,
               gradient ? g.cols.extent : g.cols.outSize) {}

  /// Thread index `i` as image `n`, row `y`, column `x` and the first of
  /// its kV channels.
  __device__ void split(Index i, int kV, int64_t &n, Coord &y, Coord &x,
                        int64_t &channel) const {
    const Index pixel = byVectors.div(i);
    channel = int64_t(i - pixel * byVectors.divisor) * kV;
    int64_t row, column;
    pixels.split(pixel, n, row, column);
    y = Coord(row);
    x = Coord(column);
  }
};

/// Axis::taps in Coord arithmetic.
template <typename Coord>
__device__ inline void nhwcTaps(Coord o, Coord stride, Coord pad,
                                Coord dilation, Coord kernel, Coord extent,
                                Coord &begin, Coord &end) {
  const Coord start = o * stride - pad;
  begin = start >= 0 ? 0 : (dilation - 1 - start) / dilation;
  end = start >= extent ? 0 : (extent - start + dilation - 1) / dilation;
  end = end < kernel ? end : kernel;
  begin = begin < end ? begin : end;
}

/// The windows [first, last] along an axis whose span covers position
/// `reach` = i + padBefore: from ceil((reach - (kernel - 1) * dilation) /
/// stride), at least 0, to floor(reach / stride), at most outSize - 1.
/// With dilation, a window in between may step over the position.
template <typename Coord, typename Index>
__device__ inline void coveringWindows(Coord reach, Coord kernel,
                                       Coord dilation, Coord stride,
                                       Coord outSize, const Divider<Index> &by,
                                       Coord &first, Coord &last) {
  const Coord low = reach - (kernel - 1) * dilation;
  first = low <= 0 ? 0 : Coord(by.div(Index(low + stride - 1)));
  last = Coord(by.div(Index(reach)));
  last = last < outSize - 1 ? last : outSize - 1;
}

/// A thread per kV channels of one output: the maxima to `output` and the
/// picks' offsets in the window to `taps`, each where non-null. With kMax
/// > 0 the window is at most kMax x kMax taps: the loops unroll and every
/// tap's load is issued before the first comparison (a tap outside the
/// input reads -inf, which never wins), rather than one load's latency
/// per tap.
template <typename T, int kV, typename Index, typename Tap, int kMax>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolNhwcKernel(const T *__restrict__ input, NhwcWindows<Index> w,
                      Index items, T *__restrict__ output,
                      Tap *__restrict__ taps) {
  using Coord = typename NhwcWindows<Index>::Coord;
  using UCoord = std::make_unsigned_t<Coord>;
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t rowSize = int64_t(w.width) * w.channels;
  const int64_t imageSize = w.height * rowSize;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < items;
       i += stride) {
    int64_t n, channel;
    Coord oh, ow;
    w.split(i, kV, n, oh, ow, channel);
    Coord kyBegin, kyEnd, kxBegin, kxEnd;
    nhwcTaps(oh, w.strideH, w.padTop, w.dilationH, w.kernelH, w.height, kyBegin,
             kyEnd);
    nhwcTaps(ow, w.strideW, w.padLeft, w.dilationW, w.kernelW, w.width, kxBegin,
             kxEnd);
    const Coord top = oh * w.strideH - w.padTop;
    const Coord left = ow * w.strideW - w.padLeft;
    const T *image = input + n * imageSize + channel;
    // Offsets in the window in unsigned arithmetic: past 256 cells they
    // matter only as int64 picks (Coord is then 64-bit).
    T best[kV];
    UCoord pick[kV];
#pragma unroll
    for (int l = 0; l < kV; ++l) {
      best[l] = T(-INFINITY);
      pick[l] = UCoord(kyBegin) * UCoord(w.kernelW) + UCoord(kxBegin);
    }
    auto consider = [&](const Vector<T, kV> &value, UCoord tap) {
#pragma unroll
      for (int l = 0; l < kV; ++l) {
        const T v = value.v[l];
        if (takesOver(v, best[l])) {
          best[l] = v;
          pick[l] = tap;
        }
      }
    };
    auto load = [&](Coord ky, Coord kx) {
      return *reinterpret_cast<const Vector<T, kV> *>(
          image + (top + ky * w.dilationH) * rowSize +
          int64_t(left + kx * w.dilationW) * w.channels);
    };
    if constexpr (kMax > 0) {
      Vector<T, kV> values[kMax][kMax];
#pragma unroll
      for (int ky = 0; ky < kMax; ++ky)
#pragma unroll
        for (int kx = 0; kx < kMax; ++kx) {
          if (ky >= kyBegin && ky < kyEnd && kx >= kxBegin && kx < kxEnd) {
            values[ky][kx] = load(ky, kx);
          } else {
#pragma unroll
            for (int l = 0; l < kV; ++l)
              values[ky][kx].v[l] = T(-INFINITY);
          }
        }
#pragma unroll
      for (int ky = 0; ky < kMax; ++ky)
#pragma unroll
        for (int kx = 0; kx < kMax; ++kx)
          consider(values[ky][kx], UCoord(ky) * UCoord(w.kernelW) + UCoord(kx));
    } else {
      for (Coord ky = kyBegin; ky < kyEnd; ++ky)
        for (Coord kx = kxBegin; kx < kxEnd; ++kx)
          consider(load(ky, kx), UCoord(ky) * UCoord(w.kernelW) + UCoord(kx));
    }
    const int64_t o = int64_t(i) * kV;
    if (output) {
      Vector<T, kV> maxima;
#pragma unroll
      for (int l = 0; l < kV; ++l)
        maxima.v[l] = best[l];
      *reinterpret_cast<Vector<T, kV> *>(output + o) = maxima;
    }
    if (taps) {
      Vector<Tap, kV> picks;
#pragma unroll
      for (int l = 0; l < kV; ++l)
        picks.v[l] = Tap(pick[l]);
      *reinterpret_cast<Vector<Tap, kV> *>(taps + o) = picks;
    }
  }
}

/// Calls `visit(o, tap)` for every window covering input cell (ih, iw) of
/// image `n`, in row-major window order: `o` the offset of the window's
/// first channel in grad_output, `tap` the offset in the window of the
/// tap that reads the cell.
template <typename Index, typename Fn>
__device__ __forceinline__ void
forEachCoveringNhwc(const NhwcWindows<Index> &w, int64_t n,
                    typename NhwcWindows<Index>::Coord ih,
                    typename NhwcWindows<Index>::Coord iw, Fn &&visit) {
  using Coord = typename NhwcWindows<Index>::Coord;
  using UCoord = std::make_unsigned_t<Coord>;
  const Coord reachH = ih + w.padTop, reachW = iw + w.padLeft;
  Coord ohFirst, ohLast, owFirst, owLast;
  coveringWindows(reachH, w.kernelH, w.dilationH, w.strideH, w.outHeight,
                  w.byStrideH, ohFirst, ohLast);
  coveringWindows(reachW, w.kernelW, w.dilationW, w.strideW, w.outWidth,
                  w.byStrideW, owFirst, owLast);
  const int64_t outImage = n * w.outHeight;
  for (Coord oh = ohFirst; oh <= ohLast; ++oh) {
    const Coord dy = reachH - oh * w.strideH;
    if (w.dilationH != 1 && dy % w.dilationH != 0)
      continue;
    const UCoord rowTap =
        UCoord(w.dilationH == 1 ? dy : dy / w.dilationH) * UCoord(w.kernelW);
    const int64_t outRow = (outImage + oh) * w.outWidth;
    for (Coord ow = owFirst; ow <= owLast; ++ow) {
      const Coord dx = reachW - ow * w.strideW;
      if (w.dilationW != 1 && dx % w.dilationW != 0)
        continue;
      const UCoord kx = UCoord(w.dilationW == 1 ? dx : dx / w.dilationW);
      visit((outRow + ow) * w.channels, rowTap + kx);
    }
  }
}

/// The windows covering input cell (ih, iw) of image `n`, at most kMax
/// along each axis, as forEachCoveringNhwc visits them: every window's
/// picks and gradients loaded first (into `picks` and `grads`, row-major,
/// `valid` saying which of the kMax x kMax slots are windows), so that the
/// loads overlap.
template <int kMax, typename T, int kV, typename Index, typename Tap>
__device__ __forceinline__ void
loadCoveringNhwc(const NhwcWindows<Index> &w, int64_t n,
                 typename NhwcWindows<Index>::Coord ih,
                 typename NhwcWindows<Index>::Coord iw, int64_t channel,
                 const T *gradOutput, const Tap *taps,
                 Vector<Tap, kV> (&picks)[kMax * kMax],
                 Vector<T, kV> (&grads)[kMax * kMax],
                 std::make_unsigned_t<typename NhwcWindows<Index>::Coord> (
                     &tapOf)[kMax * kMax],
                 bool (&valid)[kMax * kMax]) {
  using Coord = typename NhwcWindows<Index>::Coord;
  using UCoord = std::make_unsigned_t<Coord>;
  const Coord reachH = ih + w.padTop, reachW = iw + w.padLeft;
  Coord ohFirst, ohLast, owFirst, owLast;
  coveringWindows(reachH, w.kernelH, w.dilationH, w.strideH, w.outHeight,
                  w.byStrideH, ohFirst, ohLast);
  coveringWindows(reachW, w.kernelW, w.dilationW, w.strideW, w.outWidth,
                  w.byStrideW, owFirst, owLast);
  const int64_t outImage = n * w.outHeight;
#pragma unroll
  for (int j = 0; j < kMax; ++j) {
    const Coord oh = ohFirst + j;
    const Coord dy = reachH - oh * w.strideH;
    const bool rowValid =
        oh <= ohLast && (w.dilationH == 1 || dy % w.dilationH == 0);
    const UCoord rowTap =
        UCoord(w.dilationH == 1 ? dy : dy / w.dilationH) * UCoord(w.kernelW);
#pragma unroll
    for (int k = 0; k < kMax; ++k) {
      const Coord ow = owFirst + k;
      const Coord dx = reachW - ow * w.strideW;
      const int slot = j * kMax + k;
      valid[slot] = rowValid && ow <= owLast &&
                    (w.dilationW == 1 || dx % w.dilationW == 0);
      tapOf[slot] = rowTap + UCoord(w.dilationW == 1 ? dx : dx / w.dilationW);
      if (valid[slot]) {
        const int64_t o =
            ((outImage + oh) * w.outWidth + ow) * w.channels + channel;
        picks[slot] = *reinterpret_cast<const Vector<Tap, kV> *>(taps + o);
        grads[slot] = *reinterpret_cast<const Vector<T, kV> *>(gradOutput + o);
      }
    }
  }
}

/// A thread per kV channels of one input cell: the gradient from the
/// windows' picks `taps` (offsets in the window). With kMax > 0 at most
/// kMax windows cover a cell along each axis: their loads are issued
/// together (loadCoveringNhwc) instead of one window after another.
template <typename T, int kV, typename Index, typename Tap, int kMax>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolGradNhwcKernel(const T *__restrict__ gradOutput,
                          const Tap *__restrict__ taps, NhwcWindows<Index> w,
                          Index items, T *__restrict__ gradInput) {
  using Coord = typename NhwcWindows<Index>::Coord;
  using UCoord = std::make_unsigned_t<Coord>;
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < items;
       i += stride) {
    int64_t n, channel;
    Coord ih, iw;
    w.split(i, kV, n, ih, iw, channel);
    Vector<T, kV> cell;
    constexpr int kSlots = kMax > 0 ? kMax * kMax : 1;
    Vector<Tap, kV> loadedPicks[kSlots];
    Vector<T, kV> loadedGrads[kSlots];
    UCoord loadedTaps[kSlots];
    bool loadedValid[kSlots];
    if constexpr (kMax > 0)
      loadCoveringNhwc<kMax>(w, n, ih, iw, channel, gradOutput, taps,
                             loadedPicks, loadedGrads, loadedTaps, loadedValid);
    // The gradients of the windows that picked the cell, summed in
    // row-major window order; unpicked windows add +0, which changes no
    // sum (a sum of +0 and picked terms is never -0).
    auto gather = [&](auto *sums) {
      using Sum = std::remove_pointer_t<decltype(sums)>;
      int most = 0;
      int count[kV] = {};
      auto add = [&](const Vector<Tap, kV> &picks, const Vector<T, kV> &grads,
                     UCoord tap) {
#pragma unroll
        for (int l = 0; l < kV; ++l) {
          const bool picked = UCoord(picks.v[l]) == tap;
          sums[l] += picked ? Sum(sumTerm(grads.v[l])) : Sum(0);
          count[l] += int(picked);
        }
      };
      if constexpr (kMax > 0) {
#pragma unroll
        for (int slot = 0; slot < kSlots; ++slot)
          if (loadedValid[slot])
            add(loadedPicks[slot], loadedGrads[slot], loadedTaps[slot]);
      } else {
        forEachCoveringNhwc(w, n, ih, iw, [&](int64_t o, UCoord tap) {
          add(*reinterpret_cast<const Vector<Tap, kV> *>(taps + o + channel),
              *reinterpret_cast<const Vector<T, kV> *>(gradOutput + o +
                                                       channel),
              tap);
        });
      }
#pragma unroll
      for (int l = 0; l < kV; ++l)
        most = count[l] > most ? count[l] : most;
      return most;
    };
    bool done = false;
    if constexpr (std::is_same_v<T, float>) {
      float sums[kV] = {};
      if (gather(sums) <= 2) {
#pragma unroll
        for (int l = 0; l < kV; ++l)
          cell.v[l] = sums[l];
        done = true;
      }
    }
    if (!done) {
      double sums[kV] = {};
      gather(sums);
#pragma unroll
      for (int l = 0; l < kV; ++l)
        cell.v[l] = fromSum<T>(sums[l]);
    }
    *reinterpret_cast<Vector<T, kV> *>(gradInput + int64_t(i) * kV) = cell;
  }
}

/// The channels-last gradient of 3x3 windows at stride 2 with one cell of
/// padding and no dilation (ResNet's stem): a thread per kV channels of a
/// 2x2 block of input cells, rows 2m and 2m + 1 and columns 2k and 2k + 1.
/// Row 2m lies in window row m only, row 2m + 1 in rows m and m + 1 (the
/// same for columns), so the four windows (m, k), (m, k + 1), (m + 1, k)
/// and (m + 1, k + 1) cover the block: each is loaded once for four cells
/// instead of once per cell that reads it (2.25 times per cell). A cell
/// sums its windows' picked gradients in row-major window order in double
/// and rounds once, as maxPoolGradNhwcKernel does (whose float sums of at
/// most two terms round the same).
template <typename T, int kV, typename Index>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolGradNhwc3x3s2Kernel(const T *__restrict__ gradOutput,
                               const uint8_t *__restrict__ taps,
                               NhwcWindows<Index> w, PlaneIndex<Index> blocks,
                               Index items, T *__restrict__ gradInput) {
  using Coord = typename NhwcWindows<Index>::Coord;
  const Index stride = Index(gridDim.x) * blockDim.x;
  for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < items;
       i += stride) {
    const Index block = w.byVectors.div(i);
    const int64_t channel = int64_t(i - block * w.byVectors.divisor) * kV;
    int64_t n, m64, k64;
    blocks.split(block, n, m64, k64);
    const Coord m = Coord(m64), k = Coord(k64);
    // Window (m + a, k + b) in slot 2a + b; a missing one picks nothing.
    Vector<uint8_t, kV> picks[4];
    Vector<T, kV> grads[4];
    bool valid[4];
#pragma unroll
    for (int slot = 0; slot < 4; ++slot) {
      const Coord oh = m + slot / 2, ow = k + slot % 2;
      valid[slot] = oh < w.outHeight && ow < w.outWidth;
      if (valid[slot]) {
        const int64_t o =
            ((n * w.outHeight + oh) * w.outWidth + ow) * w.channels + channel;
        picks[slot] = *reinterpret_cast<const Vector<uint8_t, kV> *>(taps + o);
        grads[slot] = *reinterpret_cast<const Vector<T, kV> *>(gradOutput + o);
      }
    }
    // Cell (2m + r, 2k + c): the window slots that cover it and the tap it
    // is in each (row-major: tap = 3 * (row in window) + column).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const Coord ih = 2 * m + r;
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        const Coord iw = 2 * k + c;
        if (ih >= w.height || iw >= w.width)
          continue;
        double sums[kV] = {};
#pragma unroll
        for (int slot = 0; slot < 4; ++slot) {
          const int a = slot / 2, b = slot % 2;
          // Row 2m is in window row m only; column 2k in column k only.
          if ((r == 0 && a == 1) || (c == 0 && b == 1) || !valid[slot])
            continue;
          // The cell's row in window row m + a: 1 + r - 2a (1 or 2 for a =
          // 0, 0 for a = 1); the same for columns.
          const int tap = 3 * (1 + r - 2 * a) + (1 + c - 2 * b);
#pragma unroll
          for (int l = 0; l < kV; ++l)
            sums[l] +=
                picks[slot].v[l] == tap ? sumTerm(grads[slot].v[l]) : 0.0;
        }
        Vector<T, kV> cell;
#pragma unroll
        for (int l = 0; l < kV; ++l)
          cell.v[l] = fromSum<T>(sums[l]);
        *reinterpret_cast<Vector<T, kV> *>(
            gradInput + ((n * w.height + ih) * w.width + iw) * w.channels +
            channel) = cell;
      }
    }
  }
}

/// Calls `launch(width, index)` with width a std::integral_constant of the
/// channels per thread and index a zero of the thread index type: with
/// kGeneral (picks of more than a byte) one channel and 64-bit indices;
/// otherwise kNhwcVector<T> channels where `vector`, else 1, and 32-bit
/// indices where the threads and the geometry allow. `cells`: the pixels
/// the threads take.
template <typename T, bool kGeneral, typename Fn>
void withNhwcLaunch(const PoolShape &g, int64_t cells, bool vector,
                    Fn &&launch) {
  using One = std::integral_constant<int, 1>;
  if constexpr (kGeneral) {
    launch(One{}, uint64_t{});
  } else {
    auto withIndex = [&](auto width) {
      if (axesFitNarrow(g) && fitsNarrowIndex(cells * g.channels))
        launch(width, uint32_t{});
      else
        launch(width, uint64_t{});
    };
    if (vector)
      withIndex(std::integral_constant<int, kNhwcVector<T>>{});
    else
      withIndex(One{});
  }
}

/// Blocks for a thread per item (with a grid-stride loop past 2^30).
inline unsigned nhwcBlocks(int64_t items) {
  return unsigned(
      std::min<int64_t>(ceilDiv(items, kBlockSize), int64_t(1) << 30));
}

/// Channels-last max pooling into `output` and the picks into `taps`,
/// each where non-null. Picks of more than a byte (int64) take the
/// general form: one channel a thread, 64-bit indices.
template <typename T, typename Tap>
void launchMaxPoolNhwc(cudaStream_t stream, const T *input, const PoolShape &g,
                       T *output, Tap *taps) {
  constexpr int kVector = kNhwcVector<T>;
  constexpr bool kBytePicks = std::is_same_v<Tap, uint8_t>;
  const bool vector = kBytePicks && g.channels % kVector == 0 &&
                      isVectorAligned<T, kVector>(input) &&
                      (!output || isVectorAligned<T, kVector>(output)) &&
                      (!taps || isVectorAligned<Tap, kVector>(taps));
  const int64_t cells = g.batch * g.rows.outSize * g.cols.outSize;
  withNhwcLaunch<T, !kBytePicks>(g, cells, vector, [&](auto width, auto zero) {
    constexpr int kV = decltype(width)::value;
    using Index = decltype(zero);
    const int64_t items = cells * (g.channels / kV);
    auto run = [&](auto max) {
      maxPoolNhwcKernel<T, kV, Index, Tap, decltype(max)::value>
          <<<nhwcBlocks(items), kBlockSize, 0, stream>>>(
              input, NhwcWindows<Index>(g, g.channels / kV, false),
              Index(items), output, taps);
      checkLaunch();
    };
    if (kBytePicks && g.rows.kernel <= 3 && g.cols.kernel <= 3)
      run(std::integral_constant<int, 3>{});
    else
      run(std::integral_constant<int, 0>{});
  });
}

/// The channels-last gradient from the picks `taps`.
template <typename T, typename Tap>
void launchMaxPoolGradNhwc(cudaStream_t stream, const T *gradOutput,
                           const Tap *taps, const PoolShape &g, T *gradInput) {
  constexpr int kVector = kNhwcVector<T>;
  constexpr bool kBytePicks = std::is_same_v<Tap, uint8_t>;
  const bool vector = kBytePicks && g.channels % kVector == 0 &&
                      isVectorAligned<T, kVector>(gradOutput) &&
                      isVectorAligned<T, kVector>(gradInput) &&
                      isVectorAligned<Tap, kVector>(taps);
  const int64_t cells = g.batch * g.rows.extent * g.cols.extent;
  withNhwcLaunch<T, !kBytePicks>(g, cells, vector, [&](auto width, auto zero) {
    constexpr int kV = decltype(width)::value;
    using Index = decltype(zero);
    const int64_t items = cells * (g.channels / kV);
    auto run = [&](auto max) {
      maxPoolGradNhwcKernel<T, kV, Index, Tap, decltype(max)::value>
          <<<nhwcBlocks(items), kBlockSize, 0, stream>>>(
              gradOutput, taps, NhwcWindows<Index>(g, g.channels / kV, true),
              Index(items), gradInput);
      checkLaunch();
    };
    // At most ceil(span / stride) windows cover a cell along an axis.
    auto covering = [](const auto &axis) {
      return ceilDiv((axis.kernel - 1) * axis.dilation + 1, axis.stride);
    };
    auto stem = [](const Axis &axis) {
      return axis.kernel == 3 && axis.stride == 2 && axis.padBefore == 1 &&
             axis.dilation == 1;
    };
    if (kBytePicks && kV > 1 && stem(g.rows) && stem(g.cols)) {
      if constexpr (kBytePicks) {
        const int64_t blockRows = ceilDiv(g.rows.extent, 2),
                      blockCols = ceilDiv(g.cols.extent, 2);
        const int64_t blockItems =
            g.batch * blockRows * blockCols * (g.channels / kV);
        maxPoolGradNhwc3x3s2Kernel<T, kV, Index>
            <<<nhwcBlocks(blockItems), kBlockSize, 0, stream>>>(
                gradOutput, taps, NhwcWindows<Index>(g, g.channels / kV, true),
                PlaneIndex<Index>(blockRows, blockCols), Index(blockItems),
                gradInput);
        checkLaunch();
      }
    } else if (kBytePicks && covering(g.rows) <= 2 && covering(g.cols) <= 2)
      run(std::integral_constant<int, 2>{});
    else
      run(std::integral_constant<int, 0>{});
  });
}

/// Channels-last max_pool2d_grad: the picks into the workspace, then the
/// gather from them.
template <typename T>
void launchMaxPoolGradFromInputNhwc(fluid_cuda_context *context,
                                    cudaStream_t stream, const T *gradOutput,
                                    const T *input, const PoolShape &g,
                                    T *gradInput) {
  auto run = [&](auto zero) {
    using Tap = decltype(zero);
    Tap *taps =
        static_cast<Tap *>(workspace(context, sizeof(Tap) * g.outputs()));
    launchMaxPoolNhwc<T, Tap>(stream, input, g, static_cast<T *>(nullptr),
                              taps);
    launchMaxPoolGradNhwc<T, Tap>(stream, gradOutput, taps, g, gradInput);
  };
  // makePool2dGeometry has checked that both sizes are >= 1.
  if (g.rows.kernel <= cpu::kMaxPoolIndexCells / g.cols.kernel)
    run(uint8_t{});
  else
    run(int64_t{});
}

} // namespace

extern "C" fluid_status
fluid_cuda_max_pool2d(fluid_cuda_context *context,
                      const fluid_tensor *inputDesc, fluid_tensor *outputDesc,
                      const fluid_max_pool2d_params *params) {
  return guard("fluid_cuda_max_pool2d", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    cpu::requireParams(params);
    const PoolShape g = checkPool(
        input,
        [&] {
          cpu::Pool2dGeometry geometry =
              cpu::makeMaxPool2dGeometry(input, output, *params);
          geometry.requireWindowsTouchInput();
          return geometry;
        },
        /*sixteenBit=*/true);
    if (g.outputs() == 0)
      return;
    dispatchAnyFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (g.channelsLast)
        launchMaxPoolNhwc(stream, input.data<T>(), g, output.data<T>(),
                          static_cast<uint8_t *>(nullptr));
      else
        launchMaxPool(stream, input.data<T>(), g, output.data<T>(),
                      static_cast<uint8_t *>(nullptr));
    });
  });
}

extern "C" fluid_status fluid_cuda_max_pool2d_with_indices(
    fluid_cuda_context *context, const fluid_tensor *inputDesc,
    fluid_tensor *outputDesc, fluid_tensor *indicesDesc,
    const fluid_max_pool2d_params *params) {
  return guard("fluid_cuda_max_pool2d_with_indices", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    CheckedTensor indices = checkTensor(context, indicesDesc, "indices");
    cpu::requireParams(params);
    const PoolShape g = checkMaxPoolWithPicks(input, output, indices, *params);
    if (g.outputs() == 0)
      return;
    dispatchAnyFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (g.channelsLast)
        launchMaxPoolNhwc(stream, input.data<T>(), g, output.data<T>(),
                          indices.data<uint8_t>());
      else
        launchMaxPool(stream, input.data<T>(), g, output.data<T>(),
                      indices.data<uint8_t>());
    });
  });
}

extern "C" fluid_status
fluid_cuda_avg_pool2d(fluid_cuda_context *context,
                      const fluid_tensor *inputDesc, fluid_tensor *outputDesc,
                      const fluid_avg_pool2d_params *params) {
  return guard("fluid_cuda_avg_pool2d", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    cpu::requireParams(params);
    const bool countIncludePad = params->count_include_pad != 0;
    const PoolShape g = checkPool(input, [&] {
      return cpu::makeAvgPool2dGeometry(
          input, output, params->kernel, params->strides, params->padding,
          params->ceil_mode != 0, countIncludePad);
    });
    if (g.outputs() == 0)
      return;
    cpu::dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      withIndex(g.outputs(), [&](auto index) {
        using Index = decltype(index);
        avgPoolKernel<<<gridSizeFor(g.outputs()), kBlockSize, 0, stream>>>(
            input.data<T>(), g,
            PlaneIndex<Index>(g.rows.outSize, g.cols.outSize),
            Index(g.outputs()), countIncludePad, output.data<T>());
        checkLaunch();
      });
    });
  });
}

extern "C" fluid_status fluid_cuda_max_pool2d_grad(
    fluid_cuda_context *context, const fluid_tensor *gradOutputDesc,
    const fluid_tensor *inputDesc, fluid_tensor *gradInputDesc,
    const fluid_max_pool2d_params *params) {
  return guard("fluid_cuda_max_pool2d_grad", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor gradOutput =
        checkTensor(context, gradOutputDesc, "grad_output");
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor gradInput = checkTensor(context, gradInputDesc, "grad_input");
    cpu::requireParams(params);
    const PoolShape g = checkPool(
        input,
        [&] {
          cpu::Pool2dGeometry geometry =
              cpu::makeMaxPool2dGeometry(input, gradOutput, *params);
          cpu::requireDtype(gradInput, input);
          cpu::requireShape(gradInput, input.shape);
          geometry.requireWindowsTouchInput();
          return geometry;
        },
        /*sixteenBit=*/true);
    if (g.inputs() == 0)
      return;
    dispatchAnyFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (g.channelsLast) {
        launchMaxPoolGradFromInputNhwc(context, stream, gradOutput.data<T>(),
                                       input.data<T>(), g, gradInput.data<T>());
        return;
      }
      // The fixed-window and row-tile kernels take f32 and f64; 16-bit
      // gradients take the picks-then-gather kernels below.
      if constexpr (!kSixteenBit<T>)
        if (launchMaxPoolGradFixed(stream, gradOutput.data<T>(),
                                   input.data<T>(), g, gradInput.data<T>()) ||
            launchMaxPoolGradTiles(stream, gradOutput.data<T>(),
                                   input.data<T>(), g, gradInput.data<T>()))
          return;
      const int64_t planeSize = g.rows.extent * g.cols.extent;
      if (fitsNarrowIndex(planeSize))
        launchMaxPoolGrad<T, int32_t>(context, stream, gradOutput.data<T>(),
                                      input.data<T>(), g, gradInput.data<T>());
      else
        launchMaxPoolGrad<T, int64_t>(context, stream, gradOutput.data<T>(),
                                      input.data<T>(), g, gradInput.data<T>());
    });
  });
}

extern "C" fluid_status fluid_cuda_max_pool2d_grad_indices(
    fluid_cuda_context *context, const fluid_tensor *gradOutputDesc,
    const fluid_tensor *indicesDesc, fluid_tensor *gradInputDesc,
    const fluid_max_pool2d_params *params) {
  return guard("fluid_cuda_max_pool2d_grad_indices", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor gradOutput =
        checkTensor(context, gradOutputDesc, "grad_output");
    CheckedTensor indices = checkTensor(context, indicesDesc, "indices");
    CheckedTensor gradInput = checkTensor(context, gradInputDesc, "grad_input");
    cpu::requireParams(params);
    const PoolShape g =
        checkMaxPoolWithPicks(gradInput, gradOutput, indices, *params);
    if (g.inputs() == 0)
      return;
    dispatchAnyFloat(gradInput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (g.channelsLast)
        launchMaxPoolGradNhwc(stream, gradOutput.data<T>(),
                              indices.data<uint8_t>(), g, gradInput.data<T>());
      else
        launchMaxPoolGradIndices(stream, gradOutput.data<T>(),
                                 indices.data<uint8_t>(), g,
                                 gradInput.data<T>());
    });
  });
}

extern "C" fluid_status fluid_cuda_avg_pool2d_grad(
    fluid_cuda_context *context, const fluid_tensor *gradOutputDesc,
    fluid_tensor *gradInputDesc, const fluid_avg_pool2d_params *params) {
  return guard("fluid_cuda_avg_pool2d_grad", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor gradOutput =
        checkTensor(context, gradOutputDesc, "grad_output");
    CheckedTensor gradInput = checkTensor(context, gradInputDesc, "grad_input");
    cpu::requireParams(params);
    const bool countIncludePad = params->count_include_pad != 0;
    const PoolShape g = checkPool(gradInput, [&] {
      return cpu::makeAvgPool2dGeometry(
          gradInput, gradOutput, params->kernel, params->strides,
          params->padding, params->ceil_mode != 0, countIncludePad);
    });
    if (g.inputs() == 0)
      return;
    cpu::dispatchFloat(gradInput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      withIndex(g.inputs(), [&](auto index) {
        using Index = decltype(index);
        avgPoolGradKernel<<<gridSizeFor(g.inputs()), kBlockSize, 0, stream>>>(
            gradOutput.data<T>(), g,
            PlaneIndex<Index>(g.rows.extent, g.cols.extent), Index(g.inputs()),
            countIncludePad, gradInput.data<T>());
        checkLaunch();
      });
    });
  });
}
