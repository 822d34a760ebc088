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
// Max pooling and its gradient first try row tiles (below): a block per
// tile of rows of a plane, staged in shared memory, the gradient's picks
// recomputed there rather than stored, so that each moves little more than
// the bytes it must (ResNet's stem: bench/pool-grad.py).
//
//===----------------------------------------------------------------------===//

#include "../cpu/SlidingWindow.h"
#include "KernelUtils.cuh"

#include "fluid/runtime/CudaKernels.h"

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

/// The plane-local index of the pick of max-pooling window (oh, ow), and
/// its value.
template <typename T>
__device__ inline int64_t maxPick(const T *plane, const PoolShape &g,
                                  int64_t oh, int64_t ow, T &best) {
  int64_t kyBegin, kyEnd, kxBegin, kxEnd;
  g.rows.taps(oh, kyBegin, kyEnd);
  g.cols.taps(ow, kxBegin, kxEnd);
  const int64_t width = g.cols.extent;
  best = T(-INFINITY);
  int64_t bestIndex =
      (oh * g.rows.stride - g.rows.padBefore + kyBegin * g.rows.dilation) *
          width +
      ow * g.cols.stride - g.cols.padBefore + kxBegin * g.cols.dilation;
  for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
    const int64_t rowStart =
        (oh * g.rows.stride - g.rows.padBefore + ky * g.rows.dilation) * width;
    for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
      const int64_t index = rowStart + ow * g.cols.stride - g.cols.padBefore +
                            kx * g.cols.dilation;
      const T value = plane[index];
      // A NaN wins, the last one if several, as on the cpu.
      if (value > best || value != value) {
        best = value;
        bestIndex = index;
      }
    }
  }
  return bestIndex;
}

/// Writes each window's maximum to `output` and, if `picks` is non-null,
/// the plane-local index of the pick.
template <typename T, typename Index, typename Pick>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolKernel(const T *input, PoolShape g, PlaneIndex<Index> outIndex,
                  Index outputs, T *output, Pick *picks) {
  const Index stride = Index(gridDim.x) * blockDim.x;
  const int64_t planeSize = g.rows.extent * g.cols.extent;
  for (Index o = Index(blockIdx.x) * blockDim.x + threadIdx.x; o < outputs;
       o += stride) {
    int64_t p, oh, ow;
    outIndex.split(o, p, oh, ow);
    T best;
    const int64_t pick = maxPick(input + p * planeSize, g, oh, ow, best);
    if (output)
      output[o] = best;
    if (picks)
      picks[o] = Pick(pick);
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
        sum += double(gradOutput[o]);
    });
    gradInput[i] = T(sum);
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

/// Whether every value of the geometry stays far from 32-bit overflow.
inline bool fitsRowTiles(const PoolShape &g) {
  const int64_t limit = int64_t(1) << 30;
  for (const Axis *a : {&g.rows, &g.cols})
    if (a->extent + a->padBefore + a->padAfter >= limit ||
        a->kernel * a->dilation >= limit || a->stride >= limit ||
        a->outSize >= limit)
      return false;
  return g.rows.extent * g.cols.extent < limit &&
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
/// of window (oh, ow), and in `pick` its plane-local index.
template <typename T>
__device__ inline T tileWindowMax(const T *rows, int32_t firstRow,
                                  const RowTiles &t, int32_t oh, int32_t ow,
                                  int32_t &pick) {
  int32_t kyBegin, kyEnd, kxBegin, kxEnd;
  tileTaps(oh, t.strideH, t.padTop, t.dilationH, t.kernelH, t.height, kyBegin,
           kyEnd);
  tileTaps(ow, t.strideW, t.padLeft, t.dilationW, t.kernelW, t.width, kxBegin,
           kxEnd);
  const int32_t top = oh * t.strideH - t.padTop;
  const int32_t left = ow * t.strideW - t.padLeft;
  T best = T(-INFINITY);
  pick = (top + kyBegin * t.dilationH) * t.width + left + kxBegin * t.dilationW;
  for (int32_t ky = kyBegin; ky < kyEnd; ++ky) {
    const int32_t ih = top + ky * t.dilationH;
    const T *row = rows + (ih - firstRow) * t.width;
    for (int32_t kx = kxBegin; kx < kxEnd; ++kx) {
      const int32_t iw = left + kx * t.dilationW;
      const T value = row[iw];
      // A NaN wins, the last one if several, as on the cpu.
      if (value > best || value != value) {
        best = value;
        pick = ih * t.width + iw;
      }
    }
  }
  return best;
}

template <typename T>
__global__ void __launch_bounds__(kBlockSize)
    maxPoolTileKernel(const T *input, RowTiles t, int64_t tiles, T *output) {
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
    T *out = output + plane * outPlane + int64_t(oh0) * t.outWidth;
    const uint32_t count = uint32_t((oh1 - oh0) * t.outWidth);
    for (uint32_t j = threadIdx.x; j < count; j += blockDim.x) {
      const uint32_t r = t.byOutWidth.div(j);
      const int32_t ow = int32_t(j - r * uint32_t(t.outWidth));
      int32_t pick;
      out[j] = tileWindowMax(rows, firstRow, t, oh0 + int32_t(r), ow, pick);
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
      int32_t pick;
      tileWindowMax(rows, firstRow, t, oh0 + int32_t(r), ow, pick);
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
                        T *output) {
  RowTiles tiles;
  int64_t bytes;
  if (!planForwardTiles<T>(g, tiles, bytes))
    return false;
  const int64_t count = g.planes * tiles.tilesPerPlane;
  maxPoolTileKernel<<<tileBlocks(count), kBlockSize, size_t(bytes), stream>>>(
      input, tiles, count, output);
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
template <typename MakeGeometry>
PoolShape checkPool(const CheckedTensor &inputShaped, MakeGeometry &&make) {
  requireFloatDtype(inputShaped);
  const cpu::Pool2dGeometry g = make();
  return PoolShape{g.planes, Axis(g.rows), Axis(g.cols)};
}

/// Launches `kernel(Index)` with 32-bit indices when `count` allows.
template <typename Fn> void withIndex(int64_t count, Fn &&launch) {
  if (fitsNarrowIndex(count))
    launch(uint32_t{});
  else
    launch(uint64_t{});
}

template <typename T>
void launchMaxPool(cudaStream_t stream, const T *input, const PoolShape &g,
                   T *output) {
  if (launchMaxPoolTiles(stream, input, g, output))
    return;
  withIndex(g.outputs(), [&](auto zero) {
    using Index = decltype(zero);
    maxPoolKernel<<<gridSizeFor(g.outputs()), kBlockSize, 0, stream>>>(
        input, g, PlaneIndex<Index>(g.rows.outSize, g.cols.outSize),
        Index(g.outputs()), output, static_cast<int32_t *>(nullptr));
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
        Index(g.outputs()), static_cast<T *>(nullptr), picks);
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
    const PoolShape g = checkPool(input, [&] {
      cpu::Pool2dGeometry geometry = cpu::makePool2dGeometry(
          input, output, params->kernel, params->strides, params->padding,
          params->dilation, params->ceil_mode != 0);
      geometry.requireWindowsTouchInput();
      return geometry;
    });
    if (g.outputs() == 0)
      return;
    cpu::dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      launchMaxPool(stream, input.data<T>(), g, output.data<T>());
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
    const PoolShape g = checkPool(input, [&] {
      cpu::Pool2dGeometry geometry = cpu::makePool2dGeometry(
          input, gradOutput, params->kernel, params->strides, params->padding,
          params->dilation, params->ceil_mode != 0);
      cpu::requireDtype(gradInput, input);
      cpu::requireShape(gradInput, input.shape);
      geometry.requireWindowsTouchInput();
      return geometry;
    });
    if (g.inputs() == 0)
      return;
    cpu::dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if (launchMaxPoolGradTiles(stream, gradOutput.data<T>(), input.data<T>(),
                                 g, gradInput.data<T>()))
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
