// Variants of the max-pool gradient from saved picks (issue 13, item 7),
// standalone: ResNet-50's stem at batch 128 (grad_output [128, 64, 56, 56]
// f32 and one byte of pick per window, grad_input [128, 64, 112, 112];
// kernel 3, stride 2, padding 1). Each variant is checked bitwise against
// a one-cell-per-thread gather that sums in double (the cpu's rounding),
// on picks from a forward pass over inputs with many ties (so that cells
// picked by three and four windows occur) and over normal inputs, and on
// odd geometries (padding 0 and 1, odd extents); then timed with CUDA
// events, median (min-max) of 30 after 5 warm-ups, against a 1 GiB
// device-to-device copy. The variants:
// - offsets: a thread per 2 x 4 cells checks each of its 2 x 3 windows'
//   offset and bounds for every cell (the runtime's kernel before);
// - row+col, cell number: each window's pick located once per thread, the
//   cells comparing two integers, or one, per window;
// - parity: with stride 2 a cell's covering windows and taps follow from
//   its parity, nine comparisons per 2 x 2 cells (the runtime's kernel now,
//   KernelsPool.cu's gatherBlock);
// - a block per plane: the plane's picks and gradients staged in shared
//   memory with coalesced loads, then the offsets gather.
// "capped" grids stop at 32 blocks of 256 per multiprocessor (a
// grid-stride loop), "full" ones take a thread per item.
//
//   usage: nvcc -O3 -std=c++17 -arch=sm_90 bench/pool-gather-probe.cu -o probe
//          ./probe            (checks, then the Markdown table)
//          ./probe profile    (each variant once, for Nsight Compute:
//                              ncu --kernel-name regex:Gather ./probe profile)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(e));                                     \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

constexpr int K = 3, S = 2;

struct Geometry {
  int planes, height, width, pad, outHeight, outWidth;
};

Geometry makeGeometry(int planes, int height, int width, int pad) {
  Geometry g{planes, height, width, pad, 0, 0};
  g.outHeight = (height + 2 * pad - K) / S + 1;
  g.outWidth = (width + 2 * pad - K) / S + 1;
  return g;
}

// The forward pass's picks: the first maximum in row-major tap order,
// taps outside the input skipped.
__global__ void forwardPicks(const float *in, Geometry g, uint8_t *picks,
                             float *out) {
  int64_t n = int64_t(g.planes) * g.outHeight * g.outWidth;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t p = i / (g.outHeight * g.outWidth);
    int r = int(i % (g.outHeight * g.outWidth));
    int oh = r / g.outWidth, ow = r % g.outWidth;
    float best = -INFINITY;
    int pick = -1;
    for (int ky = 0; ky < K; ++ky)
      for (int kx = 0; kx < K; ++kx) {
        int ih = oh * S - g.pad + ky, iw = ow * S - g.pad + kx;
        if (ih < 0 || iw < 0 || ih >= g.height || iw >= g.width)
          continue;
        float v = in[(p * g.height + ih) * g.width + iw];
        if (pick < 0 || v > best) {
          best = v;
          pick = ky * K + kx;
        }
      }
    picks[i] = uint8_t(pick);
    out[i] = best;
  }
}

// The oracle: a cell per thread, covering windows in row-major order,
// summed in double.
__global__ void referenceGather(const float *grad, const uint8_t *picks,
                                Geometry g, float *gradInput) {
  int64_t n = int64_t(g.planes) * g.height * g.width;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t p = i / (int64_t(g.height) * g.width);
    int r = int(i % (int64_t(g.height) * g.width));
    int ih = r / g.width, iw = r % g.width;
    double sum = 0;
    for (int oh = 0; oh < g.outHeight; ++oh) {
      int ky = ih + g.pad - oh * S;
      if (ky < 0 || ky >= K)
        continue;
      for (int ow = 0; ow < g.outWidth; ++ow) {
        int kx = iw + g.pad - ow * S;
        if (kx < 0 || kx >= K)
          continue;
        int64_t o = (p * g.outHeight + oh) * g.outWidth + ow;
        if (picks[o] == ky * K + kx)
          sum += double(grad[o]);
      }
    }
    gradInput[i] = float(sum);
  }
}

__device__ inline int firstWindowCovering(int i, int pad) {
  int reach = i + pad - K + 1;
  return reach <= 0 ? 0 : (reach + S - 1) / S;
}

// Stores cells [col0, col0 + C) of one input row (those inside it), 16
// bytes at a time where aligned.
template <int C>
__device__ inline void storeRow(float *row, int col0, int width,
                                const float (&cells)[C]) {
#pragma unroll
  for (int c = 0; c < C; c += 4) {
    const int iw = col0 + c;
    bool vector = false;
    if constexpr (C % 4 == 0)
      vector = iw >= 0 && iw + 4 <= width &&
               reinterpret_cast<uintptr_t>(row + iw) % 16 == 0;
    if (vector) {
      if constexpr (C % 4 == 0)
        *reinterpret_cast<float4 *>(row + iw) =
            make_float4(cells[c], cells[c + 1], cells[c + 2], cells[c + 3]);
    } else {
#pragma unroll
      for (int k = 0; k < 4 && c + k < C; ++k)
        if (uint32_t(iw + k) < uint32_t(width))
          row[iw + k] = cells[c + k];
    }
  }
}

enum class Match { kOffsets, kRowCol, kCell };

// A thread per R x C cells. kOffsets: main's kernel (each cell checks each
// window's offset and bounds); kRowCol: the branch's (each window's pick as
// a row and column among the thread's cells); kCell: each window's pick as
// one cell number, f32 sums of selects, double only where a bitmask says
// three or more windows picked one cell.
template <int R, int C, Match M, bool kCapGrid>
__global__ void __launch_bounds__(256)
    gatherKernel(const float *__restrict__ grad,
                 const uint8_t *__restrict__ picks, Geometry g, int groupRows,
                 int groupCols, int64_t items, float *__restrict__ gradInput) {
  constexpr int WR = (R + K - 2) / S + 1, WC = (C + K - 2) / S + 1;
  const int64_t inPlane = int64_t(g.height) * g.width;
  const int64_t outPlane = int64_t(g.outHeight) * g.outWidth;
  const int64_t step = kCapGrid ? int64_t(gridDim.x) * blockDim.x : items;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < items;
       i += step) {
    const uint32_t perPlane = uint32_t(groupRows) * uint32_t(groupCols);
    const uint32_t ii = uint32_t(i);
    const uint32_t p = ii / perPlane, rest = ii % perPlane;
    const int row0 = int(rest / uint32_t(groupCols)) * R;
    const int col0 = int(rest % uint32_t(groupCols)) * C;
    const int oh0 = firstWindowCovering(row0, g.pad);
    const int ow0 = firstWindowCovering(col0, g.pad);
    int taps[WR][WC];
    float grads[WR][WC];
    const uint8_t *pp = picks + p * outPlane;
    const float *gp = grad + p * outPlane;
#pragma unroll
    for (int a = 0; a < WR; ++a)
#pragma unroll
      for (int b = 0; b < WC; ++b) {
        const int oh = oh0 + a, ow = ow0 + b;
        const bool inside = oh < g.outHeight && ow < g.outWidth;
        const int o = inside ? oh * g.outWidth + ow : 0;
        taps[a][b] = inside ? int(pp[o]) : -1;
        grads[a][b] = inside ? gp[o] : 0.0f;
      }
    float cells[R][C];
    const int baseRow = row0 + g.pad - oh0 * S;
    const int baseCol = col0 + g.pad - ow0 * S;
    if constexpr (M == Match::kOffsets || M == Match::kRowCol) {
      int pr[WR][WC], pc[WR][WC];
      if constexpr (M == Match::kRowCol) {
#pragma unroll
        for (int a = 0; a < WR; ++a)
#pragma unroll
          for (int b = 0; b < WC; ++b) {
            const int t = taps[a][b];
            const bool valid = t >= 0 && t < K * K;
            pr[a][b] = valid ? t / K + a * S - baseRow : -1;
            pc[a][b] = valid ? t % K + b * S - baseCol : -1;
          }
      }
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c) {
          bool picked[WR][WC];
          int count = 0;
#pragma unroll
          for (int a = 0; a < WR; ++a)
#pragma unroll
            for (int b = 0; b < WC; ++b) {
              if constexpr (M == Match::kOffsets) {
                const int dy = baseRow + r - a * S, dx = baseCol + c - b * S;
                picked[a][b] = dy >= 0 && dy < K && dx >= 0 && dx < K &&
                               taps[a][b] == dy * K + dx;
              } else {
                picked[a][b] = pr[a][b] == r && pc[a][b] == c;
              }
              count += int(picked[a][b]);
            }
          if (count <= 2) {
            float sum = 0.0f;
#pragma unroll
            for (int a = 0; a < WR; ++a)
#pragma unroll
              for (int b = 0; b < WC; ++b)
                if (picked[a][b])
                  sum += grads[a][b];
            cells[r][c] = sum;
          } else {
            double sum = 0;
#pragma unroll
            for (int a = 0; a < WR; ++a)
#pragma unroll
              for (int b = 0; b < WC; ++b)
                if (picked[a][b])
                  sum += double(grads[a][b]);
            cells[r][c] = float(sum);
          }
        }
    } else {
      int cell[WR][WC];
      uint32_t once = 0, twice = 0, thrice = 0;
#pragma unroll
      for (int a = 0; a < WR; ++a)
#pragma unroll
        for (int b = 0; b < WC; ++b) {
          const int t = taps[a][b];
          const int y = t / K + a * S - baseRow, x = t % K + b * S - baseCol;
          const bool valid = t >= 0 && t < K * K && uint32_t(y) < uint32_t(R) &&
                             uint32_t(x) < uint32_t(C);
          cell[a][b] = valid ? y * C + x : -1;
          const uint32_t bit = valid ? 1u << (y * C + x) : 0u;
          thrice |= twice & bit;
          twice |= once & bit;
          once |= bit;
        }
      if (thrice == 0) {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int c = 0; c < C; ++c) {
            float sum = 0.0f;
#pragma unroll
            for (int a = 0; a < WR; ++a)
#pragma unroll
              for (int b = 0; b < WC; ++b)
                sum += cell[a][b] == r * C + c ? grads[a][b] : 0.0f;
            cells[r][c] = sum;
          }
      } else {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int c = 0; c < C; ++c) {
            double sum = 0;
#pragma unroll
            for (int a = 0; a < WR; ++a)
#pragma unroll
              for (int b = 0; b < WC; ++b)
                if (cell[a][b] == r * C + c)
                  sum += double(grads[a][b]);
            cells[r][c] = float(sum);
          }
      }
    }
    float *plane = gradInput + p * inPlane;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int ih = row0 + r;
      if (ih >= g.height)
        break;
      storeRow(plane + int64_t(ih) * g.width, col0, g.width, cells[r]);
    }
  }
}

// A block per plane: the plane's picks and gradients staged in shared
// memory with coalesced loads, then the kOffsets gather from there.
template <int R, int C>
__global__ void __launch_bounds__(256)
    planeGatherKernel(const float *__restrict__ grad,
                      const uint8_t *__restrict__ picks, Geometry g,
                      int groupRows, int groupCols,
                      float *__restrict__ gradInput) {
  extern __shared__ float staged[];
  constexpr int WR = (R + K - 2) / S + 1, WC = (C + K - 2) / S + 1;
  const int outPlane = g.outHeight * g.outWidth;
  float *sg = staged;
  uint8_t *sp = reinterpret_cast<uint8_t *>(staged + outPlane);
  const int64_t p = blockIdx.x;
  const float *gp = grad + p * outPlane;
  const uint8_t *pp = picks + p * outPlane;
  if (outPlane % 4 == 0) {
    for (int i = threadIdx.x; i < outPlane / 4; i += blockDim.x) {
      reinterpret_cast<float4 *>(sg)[i] =
          reinterpret_cast<const float4 *>(gp)[i];
      reinterpret_cast<uint32_t *>(sp)[i] =
          reinterpret_cast<const uint32_t *>(pp)[i];
    }
  } else {
    for (int i = threadIdx.x; i < outPlane; i += blockDim.x) {
      sg[i] = gp[i];
      sp[i] = pp[i];
    }
  }
  __syncthreads();
  float *plane = gradInput + p * int64_t(g.height) * g.width;
  for (int item = threadIdx.x; item < groupRows * groupCols;
       item += blockDim.x) {
    const int row0 = item / groupCols * R, col0 = item % groupCols * C;
    const int oh0 = firstWindowCovering(row0, g.pad);
    const int ow0 = firstWindowCovering(col0, g.pad);
    int taps[WR][WC];
    float grads[WR][WC];
#pragma unroll
    for (int a = 0; a < WR; ++a)
#pragma unroll
      for (int b = 0; b < WC; ++b) {
        const int oh = oh0 + a, ow = ow0 + b;
        const bool inside = oh < g.outHeight && ow < g.outWidth;
        const int o = inside ? oh * g.outWidth + ow : 0;
        taps[a][b] = inside ? int(sp[o]) : -1;
        grads[a][b] = inside ? sg[o] : 0.0f;
      }
    const int baseRow = row0 + g.pad - oh0 * S;
    const int baseCol = col0 + g.pad - ow0 * S;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int ih = row0 + r;
      if (ih >= g.height)
        break;
      float cells[C];
#pragma unroll
      for (int c = 0; c < C; ++c) {
        bool picked[WR][WC];
        int count = 0;
#pragma unroll
        for (int a = 0; a < WR; ++a)
#pragma unroll
          for (int b = 0; b < WC; ++b) {
            const int dy = baseRow + r - a * S, dx = baseCol + c - b * S;
            picked[a][b] = dy >= 0 && dy < K && dx >= 0 && dx < K &&
                           taps[a][b] == dy * K + dx;
            count += int(picked[a][b]);
          }
        if (count <= 2) {
          float sum = 0.0f;
#pragma unroll
          for (int a = 0; a < WR; ++a)
#pragma unroll
            for (int b = 0; b < WC; ++b)
              if (picked[a][b])
                sum += grads[a][b];
          cells[c] = sum;
        } else {
          double sum = 0;
#pragma unroll
          for (int a = 0; a < WR; ++a)
#pragma unroll
            for (int b = 0; b < WC; ++b)
              if (picked[a][b])
                sum += double(grads[a][b]);
          cells[c] = float(sum);
        }
      }
      storeRow(plane + int64_t(ih) * g.width, col0, g.width, cells);
    }
  }
}

// Kernel 3, stride 2: a cell's covering windows and their taps follow
// from its parity alone. Blocks of 2x2 cells start where (row + pad) is
// odd; block (j, i) of a thread has its top-left window (q, r) and:
//   cell (0,0): window (q,r) tap 4
//   cell (0,1): (q,r) tap 5, (q,r+1) tap 3
//   cell (1,0): (q,r) tap 7, (q+1,r) tap 1
//   cell (1,1): (q,r) tap 8, (q,r+1) tap 6, (q+1,r) tap 2, (q+1,r+1) tap 0
// nine comparisons per four cells. A thread takes BR x BC blocks.
template <int BR, int BC>
__global__ void __launch_bounds__(256)
    parityGatherKernel(const float *__restrict__ grad,
                       const uint8_t *__restrict__ picks, Geometry g,
                       int groupRows, int groupCols, int64_t items,
                       float *__restrict__ gradInput) {
  constexpr int WR = BR + 1, WC = BC + 1, R = 2 * BR, C = 2 * BC;
  const int64_t inPlane = int64_t(g.height) * g.width;
  const int64_t outPlane = int64_t(g.outHeight) * g.outWidth;
  const int shift = (g.pad + 1) & 1;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < items;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t perPlane = uint32_t(groupRows) * uint32_t(groupCols);
    const uint32_t ii = uint32_t(i);
    const uint32_t p = ii / perPlane, rest = ii % perPlane;
    const int row0 = int(rest / uint32_t(groupCols)) * R - shift;
    const int col0 = int(rest % uint32_t(groupCols)) * C - shift;
    const int q = (row0 + g.pad - 1) >> 1, r = (col0 + g.pad - 1) >> 1;
    int taps[WR][WC];
    float grads[WR][WC];
    const uint8_t *pp = picks + p * outPlane;
    const float *gp = grad + p * outPlane;
#pragma unroll
    for (int a = 0; a < WR; ++a)
#pragma unroll
      for (int b = 0; b < WC; ++b) {
        const int oh = q + a, ow = r + b;
        const bool inside = uint32_t(oh) < uint32_t(g.outHeight) &&
                            uint32_t(ow) < uint32_t(g.outWidth);
        const int o = inside ? oh * g.outWidth + ow : 0;
        taps[a][b] = inside ? int(pp[o]) : -1;
        grads[a][b] = inside ? gp[o] : 0.0f;
      }
    float cells[R][C];
#pragma unroll
    for (int y = 0; y < BR; ++y)
#pragma unroll
      for (int x = 0; x < BC; ++x) {
        const int t00 = taps[y][x], t01 = taps[y][x + 1];
        const int t10 = taps[y + 1][x], t11 = taps[y + 1][x + 1];
        const float g00 = grads[y][x], g01 = grads[y][x + 1];
        const float g10 = grads[y + 1][x], g11 = grads[y + 1][x + 1];
        cells[2 * y][2 * x] = 0.0f + (t00 == 4 ? g00 : 0.0f);
        cells[2 * y][2 * x + 1] =
            (t00 == 5 ? g00 : 0.0f) + (t01 == 3 ? g01 : 0.0f);
        cells[2 * y + 1][2 * x] =
            (t00 == 7 ? g00 : 0.0f) + (t10 == 1 ? g10 : 0.0f);
        const bool m0 = t00 == 8, m1 = t01 == 6, m2 = t10 == 2, m3 = t11 == 0;
        if (int(m0) + int(m1) + int(m2) + int(m3) <= 2) {
          cells[2 * y + 1][2 * x + 1] =
              ((m0 ? g00 : 0.0f) + (m1 ? g01 : 0.0f)) +
              ((m2 ? g10 : 0.0f) + (m3 ? g11 : 0.0f));
        } else {
          double sum = 0;
          if (m0)
            sum += double(g00);
          if (m1)
            sum += double(g01);
          if (m2)
            sum += double(g10);
          if (m3)
            sum += double(g11);
          cells[2 * y + 1][2 * x + 1] = float(sum);
        }
      }
    float *plane = gradInput + p * inPlane;
#pragma unroll
    for (int y = 0; y < R; ++y) {
      const int ih = row0 + y;
      if (uint32_t(ih) >= uint32_t(g.height))
        continue;
      storeRow(plane + int64_t(ih) * g.width, col0, g.width, cells[y]);
    }
  }
}

int smCount() {
  int d, n;
  CHECK(cudaGetDevice(&d));
  CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d));
  return n;
}

struct Variant {
  std::string name;
  std::function<void(const float *, const uint8_t *, const Geometry &, float *)>
      launch;
};

template <int R, int C, Match M, bool kCap>
Variant makeVariant(const char *name) {
  return {name, [](const float *grad, const uint8_t *picks, const Geometry &g,
                   float *out) {
            const int groupRows = (g.height + R - 1) / R;
            const int groupCols = (g.width + C - 1) / C;
            const int64_t items = int64_t(g.planes) * groupRows * groupCols;
            int64_t blocks = (items + 255) / 256;
            if (kCap)
              blocks = std::min<int64_t>(blocks, int64_t(smCount()) * 32);
            gatherKernel<R, C, M, kCap><<<int(blocks), 256>>>(
                grad, picks, g, groupRows, groupCols, items, out);
            CHECK(cudaGetLastError());
          }};
}

template <int R, int C> Variant makePlaneVariant(const char *name) {
  return {name, [](const float *grad, const uint8_t *picks, const Geometry &g,
                   float *out) {
            const int groupRows = (g.height + R - 1) / R;
            const int groupCols = (g.width + C - 1) / C;
            const size_t bytes = size_t(g.outHeight) * g.outWidth * 5 + 16;
            planeGatherKernel<R, C><<<g.planes, 256, bytes>>>(
                grad, picks, g, groupRows, groupCols, out);
            CHECK(cudaGetLastError());
          }};
}

template <int BR, int BC, bool kCap>
Variant makeParityVariant(const char *name) {
  return {name, [](const float *grad, const uint8_t *picks, const Geometry &g,
                   float *out) {
            const int shift = (g.pad + 1) & 1;
            const int groupRows = (g.height + shift + 2 * BR - 1) / (2 * BR);
            const int groupCols = (g.width + shift + 2 * BC - 1) / (2 * BC);
            const int64_t items = int64_t(g.planes) * groupRows * groupCols;
            int64_t blocks = (items + 255) / 256;
            if (kCap)
              blocks = std::min<int64_t>(blocks, int64_t(smCount()) * 32);
            parityGatherKernel<BR, BC><<<int(blocks), 256>>>(
                grad, picks, g, groupRows, groupCols, items, out);
            CHECK(cudaGetLastError());
          }};
}

struct Buffers {
  Geometry g;
  float *input = nullptr, *output = nullptr, *grad = nullptr;
  float *reference = nullptr, *result = nullptr;
  uint8_t *picks = nullptr;
  int64_t inputs() const { return int64_t(g.planes) * g.height * g.width; }
  int64_t outputs() const {
    return int64_t(g.planes) * g.outHeight * g.outWidth;
  }
};

Buffers makeBuffers(Geometry g, bool ties, unsigned seed) {
  Buffers b;
  b.g = g;
  std::vector<float> in(b.inputs()), grad(b.outputs());
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> small(-3, 3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float &v : in)
    v = ties ? float(std::max(0, small(rng))) : normal(rng);
  for (float &v : grad)
    v = normal(rng) * (1.0f + float(rng() % 1000));
  CHECK(cudaMalloc(&b.input, in.size() * 4));
  CHECK(cudaMalloc(&b.output, grad.size() * 4));
  CHECK(cudaMalloc(&b.grad, grad.size() * 4));
  CHECK(cudaMalloc(&b.reference, in.size() * 4));
  CHECK(cudaMalloc(&b.result, in.size() * 4));
  CHECK(cudaMalloc(&b.picks, grad.size()));
  CHECK(cudaMemcpy(b.input, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  CHECK(
      cudaMemcpy(b.grad, grad.data(), grad.size() * 4, cudaMemcpyHostToDevice));
  forwardPicks<<<4096, 256>>>(b.input, g, b.picks, b.output);
  referenceGather<<<4096, 256>>>(b.grad, b.picks, g, b.reference);
  CHECK(cudaDeviceSynchronize());
  return b;
}

void freeBuffers(Buffers &b) {
  for (void *p : {(void *)b.input, (void *)b.output, (void *)b.grad,
                  (void *)b.reference, (void *)b.result, (void *)b.picks})
    CHECK(cudaFree(p));
}

bool matches(const Variant &v, Buffers &b) {
  CHECK(cudaMemset(b.result, 0xff, b.inputs() * 4));
  v.launch(b.grad, b.picks, b.g, b.result);
  CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> want(b.inputs()), got(b.inputs());
  CHECK(cudaMemcpy(want.data(), b.reference, want.size() * 4,
                   cudaMemcpyDeviceToHost));
  CHECK(
      cudaMemcpy(got.data(), b.result, got.size() * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i]) {
      std::printf("MISMATCH %s [%d,%d,%d pad %d] at %zu\n", v.name.c_str(),
                  b.g.planes, b.g.height, b.g.width, b.g.pad, i);
      return false;
    }
  return true;
}

template <typename Fn> std::vector<float> timeIt(Fn &&fn) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < 35; ++i) {
    CHECK(cudaEventRecord(start));
    fn();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    if (i >= 5)
      ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

int main(int argc, char **argv) {
  const bool profile = argc > 1 && std::string(argv[1]) == "profile";
  std::vector<Variant> variants = {
      makeVariant<2, 4, Match::kOffsets, true>(
          "2x4 offsets, capped grid (main)"),
      makeVariant<2, 4, Match::kRowCol, true>("2x4 row+col, capped (branch)"),
      makeVariant<2, 4, Match::kCell, true>("2x4 cell number, capped"),
      makeParityVariant<1, 2, true>("2x4 parity, capped"),
      makeParityVariant<1, 2, false>("2x4 parity, full grid"),
      makeParityVariant<1, 4, true>("2x8 parity, capped"),
      makeParityVariant<2, 2, true>("4x4 parity, capped"),
      makeParityVariant<1, 1, false>("2x2 parity, full grid"),
      makePlaneVariant<2, 4>("2x4 offsets, a block per plane in shared memory"),
      makePlaneVariant<2, 2>("2x2 offsets, a block per plane in shared memory"),
  };
  if (profile) {
    Buffers b = makeBuffers(makeGeometry(128 * 64, 112, 112, 1), false, 11);
    for (const Variant &v : variants)
      v.launch(b.grad, b.picks, b.g, b.result);
    CHECK(cudaDeviceSynchronize());
    return 0;
  }
  bool ok = true;
  const Geometry odd[] = {makeGeometry(3, 113, 113, 1),
                          makeGeometry(5, 9, 7, 0), makeGeometry(2, 6, 30, 1),
                          makeGeometry(4, 57, 61, 0)};
  for (const Geometry &g : odd)
    for (bool ties : {true, false}) {
      Buffers b = makeBuffers(g, ties, 7);
      for (const Variant &v : variants)
        ok = matches(v, b) && ok;
      freeBuffers(b);
    }
  Buffers stem = makeBuffers(makeGeometry(128 * 64, 112, 112, 1), true, 11);
  for (const Variant &v : variants)
    ok = matches(v, stem) && ok;
  Buffers normal = makeBuffers(makeGeometry(128 * 64, 112, 112, 1), false, 12);
  for (const Variant &v : variants)
    ok = matches(v, normal) && ok;
  std::printf("bitwise against the double gather: %s\n",
              ok ? "all equal" : "MISMATCH");

  const size_t copyBytes = size_t(1) << 30;
  void *src, *dst;
  CHECK(cudaMalloc(&src, copyBytes));
  CHECK(cudaMalloc(&dst, copyBytes));
  std::vector<float> copy = timeIt([&] {
    CHECK(cudaMemcpyAsync(dst, src, copyBytes, cudaMemcpyDeviceToDevice));
  });
  const double copyBw = 2.0 * copyBytes / (copy[copy.size() / 2] * 1e-3);
  std::printf(
      "| variant | picks | time (ms) median (min-max) | GB/s | of copy BW |\n");
  std::printf("| --- | --- | ---: | ---: | ---: |\n");
  std::printf("| 1 GiB device copy | | %.4f (%.4f-%.4f) | %.0f | 100%% |\n",
              copy[copy.size() / 2], copy.front(), copy.back(), copyBw / 1e9);
  const double bytes = stem.inputs() * 4.0 + stem.outputs() * 5.0;
  for (Buffers *b : {&normal, &stem})
    for (const Variant &v : variants) {
      std::vector<float> ms =
          timeIt([&] { v.launch(b->grad, b->picks, b->g, b->result); });
      const double bw = bytes / (ms[ms.size() / 2] * 1e-3);
      std::printf("| %s | %s | %.4f (%.4f-%.4f) | %.0f | %.1f%% |\n",
                  v.name.c_str(), b == &stem ? "ties" : "normal",
                  ms[ms.size() / 2], ms.front(), ms.back(), bw / 1e9,
                  100.0 * bw / copyBw);
    }
  std::printf("bytes moved: %.1f MB\n", bytes / 1e6);
  return ok ? 0 : 1;
}
