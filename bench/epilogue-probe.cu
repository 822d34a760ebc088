// epilogue-probe.cu - do library epilogues beat a separate elementwise kernel?
//
// Issue 13, item 4: elementwise epilogues fused into library calls where the
// library supports it, measured against the generated kernels. A standalone
// probe (no Fluid code), built and run by bench/epilogue-probe.sh:
//
//   P0  plain convolutions: a backend graph of one operation per pass,
//       CONVOLUTION_FORWARD (y = conv(x, w)), _BACKWARD_DATA (dx from dy, w)
//       and _BACKWARD_FILTER (dw from x, dy), against the legacy call with
//       the fastest algorithm of cudnnFindConvolution{Forward,BackwardData,
//       BackwardFilter}AlgorithmEx (CUDNN_TENSOR_OP_MATH) and with the
//       fastest of its CUDNN_DETERMINISTIC ones (the Fluid runtime prefers
//       those). Why: in NHWC fp16 P2's whole fused graph ran faster than the
//       legacy conv alone (e.g. [128,512,7,7] → [2048,512,1,1]: 59 against
//       137 µs), so the legacy API may pick slow kernels in NHWC 16-bit.
//       Graph plans needing over 1 GiB of workspace are dropped (counted in
//       the engines column); a pass where no plan runs is a row saying so.
//       The engine column gives the fastest plan's engine, whether it has
//       CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC, its knobs, and the fastest
//       deterministic plan when that is another. After the table, p0Summary
//       sums the passes over one ResNet-50 training step (P2's counts).
//   P1  cuDNN backend graph: conv fwd -> [mul scale] -> [add bias] -> ReLU
//       (ReLU alone, bias+ReLU, scale+bias+ReLU), against the fastest legacy
//       conv (cudnnFindConvolutionForwardAlgorithmEx, CUDNN_TENSOR_OP_MATH)
//       plus a hand-written epilogue kernel that reads and writes the conv
//       output once (a stand-in for Fluid's generated kernels).
//   P2  cuDNN ConvBNfprop-style graph: scale*x+bias, ReLU on the conv input,
//       conv, GEN_STATS (per-channel sum and sum of squares) on its output,
//       against prologue kernel + legacy conv + statistics kernel.
//   P3  cuBLASLt (TF32) classifier layer, 128x2048 * 2048x1000:
//       EPILOGUE_BIAS against cuBLAS GEMM + bias kernel (and + cudnnAddTensor,
//       what Fluid does today); BGRADB (dW GEMM + bias gradient) against
//       cuBLAS GEMM + column-sum kernel; BGRADA for the transposed dW.
//
// Each cuDNN case (P0, P1, P2) runs in (a) NCHW fp32 (Fluid's configuration,
// TF32 where an engine uses tensor cores), (b) NHWC fp32, (c) NHWC fp16,
// (d) NHWC bf16. In (c) and (d) x, w, y (P0: and dy, dx, dw) and P1/P2's
// scale and bias are fp16 / bf16, P2's statistics fp32; every compute type
// (convolution, pointwise, GEN_STATS, legacy convolution) is fp32.
// Heuristics CUDNN_HEUR_MODE_A and FALLBACK; every engine config tried (up
// to --max-try per mode) is finalized, and those that finalize are timed.
//
// The shapes (batch 128, stride 1): the eight where ResNet-50's batch norm +
// ReLU feeds a convolution (per bottleneck block bn1+ReLU -> 3x3 C->C and
// bn2+ReLU -> 1x1 C->4C, C = 64, 128, 256, 512) and two block-input 1x1
// convolutions. After the P1/P2 table, P2's times are summed over one
// ResNet-50 forward pass (see p2Summary): the estimated ms per forward pass
// the fused graph saves, per configuration. After the P0 table, P0's
// fprop, dgrad and wgrad are summed with the same counts (p0Summary): the ms
// per training step the graph API would save on those convolutions. The
// stride-2 convolutions are not among the shapes.
//
// Result check: every fused result is compared with the unfused one (y, and
// P2's sum and sum of squares; P0: the graph's output with the legacy
// fastest algorithm's): max |fused - unfused| and, in parentheses,
// that divided by max |unfused| of the same output. Inputs are scaled so
// that |y| < ~0.1 and P2's per-channel sums stay below ~2e4 (inside fp16's
// 65504; see runShape; the fp16 rows' old inf: see hash64). A ratio above 8 units of the data type's
// rounding (TF32 and fp16 2^-11, bf16 2^-8: 3.9e-3, 3.9e-3, 3.1e-2) is
// flagged "over tol"; NaN or inf in either result prints inf.
//
// Output: a Markdown table on stdout, progress and per-engine details on
// stderr. Exit status 0 when everything ran (unsupported patterns are rows),
// 2 on a setup failure (allocation, handle, a baseline that fails) or a bad
// option.
//
//   usage: epilogue-probe [--configs=LIST] [--patterns=LIST] [--budget=SECONDS]
//                         [--max-try=N] [--iters=N] [--help]
//     --configs=LIST   comma list of nchw-fp32, nhwc-fp32, nhwc-fp16,
//                      nhwc-bf16, run in that order (default: all, in this
//                      order)
//     --patterns=LIST  comma list of P0, P1, P2, P3 (default: all)
//     --budget=SECONDS the whole run (default 150); cuDNN cases past it are
//                      rows "skipped (time budget)"
//     --max-try=N      engine configs finalized per heuristic mode (default 6)
//     --iters=N        timed samples per measurement (default 20)
//   e.g. epilogue-probe --configs=nhwc-bf16,nhwc-fp16 --patterns=P2
//        epilogue-probe --configs=nhwc-bf16,nhwc-fp16,nhwc-fp32 --patterns=P0
//                       --max-try=4 --iters=10 --budget=110
//   (the second: P0 in three configurations, 90 passes, each a cudnnFind,
//   up to 2 x --max-try plans finalized and all timed; --budget bounds it.)

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

// ---------------------------------------------------------------- errors

[[noreturn]] void fatal(const std::string &message) {
  std::fprintf(stderr, "epilogue-probe: fatal: %s\n", message.c_str());
  std::fflush(stdout);
  std::exit(2);
}

std::string lastCudnnError() {
  char buffer[2048];
  buffer[0] = '\0';
  cudnnGetLastErrorString(buffer, sizeof buffer);
  buffer[sizeof buffer - 1] = '\0';
  return buffer;
}

#define CUDA_OK(call)                                                          \
  do {                                                                         \
    cudaError_t e_ = (call);                                                   \
    if (e_ != cudaSuccess)                                                     \
      fatal(std::string(#call) + ": " + cudaGetErrorString(e_) + " (line " +   \
            std::to_string(__LINE__) + ")");                                   \
  } while (0)

#define CUDNN_OK(call)                                                         \
  do {                                                                         \
    cudnnStatus_t s_ = (call);                                                 \
    if (s_ != CUDNN_STATUS_SUCCESS)                                            \
      fatal(std::string(#call) + ": " + cudnnGetErrorString(s_) + " (line " +  \
            std::to_string(__LINE__) + ") " + lastCudnnError());              \
  } while (0)

#define CUBLAS_OK(call)                                                        \
  do {                                                                         \
    cublasStatus_t s_ = (call);                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                           \
      fatal(std::string(#call) + ": " + cublasGetStatusString(s_) +           \
            " (line " + std::to_string(__LINE__) + ")");                       \
  } while (0)

/// A pattern, a stage of it or a library call that is not supported: a row
/// of the table, not a failure of the probe.
struct Unsupported {
  std::string stage;
  std::string status;
  std::string message;
  std::string text() const {
    std::string t = stage + ": " + status;
    if (!message.empty())
      t += " (" + message + ")";
    return t;
  }
};

#define CUDNN_TRY(stage, call)                                                 \
  do {                                                                         \
    lastCudnnError(); /* drop an older message */                             \
    cudnnStatus_t s_ = (call);                                                 \
    if (s_ != CUDNN_STATUS_SUCCESS)                                            \
      throw Unsupported{(stage), cudnnGetErrorString(s_), lastCudnnError()};   \
  } while (0)

#define CUBLAS_TRY(stage, call)                                                \
  do {                                                                         \
    cublasStatus_t s_ = (call);                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                           \
      throw Unsupported{(stage), cublasGetStatusString(s_), ""};               \
  } while (0)

double nowS() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// ---------------------------------------------------------------- options

struct Options {
  double budgetS = 150;  // whole run; later cuDNN cases are skipped past it
  int maxTry = 6;        // engine configs finalized per heuristic mode
  double caseFinalizeS = 8;  // finalize time per case before giving up
  int iters = 20;
  int warmups = 5;
  std::vector<std::string> configs;  // Config::key in run order; empty = all
  std::vector<std::string> patterns;  // "P1", "P2", "P3"; empty = all
  bool pattern(const std::string &key) const {
    return patterns.empty() || std::count(patterns.begin(), patterns.end(), key) > 0;
  }
};
Options opt;
double startS = 0;
bool overBudget() { return nowS() - startS > opt.budgetS; }

// ---------------------------------------------------------------- device memory

struct DeviceBuffer {
  void *p = nullptr;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t b) : bytes(b) {
    if (b) {
      cudaError_t e = cudaMalloc(&p, b);
      if (e != cudaSuccess)
        fatal("cudaMalloc(" + std::to_string(b) + "): " + cudaGetErrorString(e));
    }
  }
  ~DeviceBuffer() {
    if (p)
      cudaFree(p);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&o) noexcept : p(o.p), bytes(o.bytes) {
    o.p = nullptr;
    o.bytes = 0;
  }
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept {
    if (this != &o) {
      if (p)
        cudaFree(p);
      p = o.p;
      bytes = o.bytes;
      o.p = nullptr;
      o.bytes = 0;
    }
    return *this;
  }
  template <class T> T *as() const { return static_cast<T *>(p); }
};

/// The one workspace, shared by cudnnFind, the legacy convolutions, the
/// cuDNN plans and cuBLASLt. Grown (up to 4 GiB) when a plan needs more.
DeviceBuffer workspace;
void ensureWorkspace(size_t bytes) {
  if (bytes <= workspace.bytes)
    return;
  CUDA_OK(cudaDeviceSynchronize());
  workspace = DeviceBuffer();
  workspace = DeviceBuffer(bytes);
}

int smCount = 132;
int gridFor(int64_t items, int block = 256) {
  int64_t g = (items + block - 1) / block;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(g, smCount * 8)));
}

// ---------------------------------------------------------------- kernels

__device__ __forceinline__ float toF(float v) { return v; }
__device__ __forceinline__ float toF(__half v) { return __half2float(v); }
__device__ __forceinline__ float toF(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T> __device__ __forceinline__ T fromF(float v);
template <> __device__ __forceinline__ float fromF<float>(float v) { return v; }
template <> __device__ __forceinline__ __half fromF<__half>(float v) {
  return __float2half_rn(v);
}
template <> __device__ __forceinline__ __nv_bfloat16 fromF<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

__device__ __forceinline__ void load4(const float *p, float v[4]) {
  float4 r = *reinterpret_cast<const float4 *>(p);
  v[0] = r.x, v[1] = r.y, v[2] = r.z, v[3] = r.w;
}
__device__ __forceinline__ void store4(float *p, const float v[4]) {
  *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
}
__device__ __forceinline__ void load4(const __half *p, float v[4]) {
  uint2 r = *reinterpret_cast<const uint2 *>(p);
  __half2 a = *reinterpret_cast<__half2 *>(&r.x);
  __half2 b = *reinterpret_cast<__half2 *>(&r.y);
  float2 fa = __half22float2(a), fb = __half22float2(b);
  v[0] = fa.x, v[1] = fa.y, v[2] = fb.x, v[3] = fb.y;
}
__device__ __forceinline__ void store4(__half *p, const float v[4]) {
  __half2 a = __floats2half2_rn(v[0], v[1]);
  __half2 b = __floats2half2_rn(v[2], v[3]);
  uint2 r;
  r.x = *reinterpret_cast<unsigned *>(&a);
  r.y = *reinterpret_cast<unsigned *>(&b);
  *reinterpret_cast<uint2 *>(p) = r;
}
__device__ __forceinline__ void load4(const __nv_bfloat16 *p, float v[4]) {
  uint2 r = *reinterpret_cast<const uint2 *>(p);
  __nv_bfloat162 a = *reinterpret_cast<__nv_bfloat162 *>(&r.x);
  __nv_bfloat162 b = *reinterpret_cast<__nv_bfloat162 *>(&r.y);
  float2 fa = __bfloat1622float2(a), fb = __bfloat1622float2(b);
  v[0] = fa.x, v[1] = fa.y, v[2] = fb.x, v[3] = fb.y;
}
__device__ __forceinline__ void store4(__nv_bfloat16 *p, const float v[4]) {
  __nv_bfloat162 a = __floats2bfloat162_rn(v[0], v[1]);
  __nv_bfloat162 b = __floats2bfloat162_rn(v[2], v[3]);
  uint2 r;
  r.x = *reinterpret_cast<unsigned *>(&a);
  r.y = *reinterpret_cast<unsigned *>(&b);
  *reinterpret_cast<uint2 *>(p) = r;
}

/// 24 random bits (splitmix64's top ones). Until 2026-12 this kept bits
/// 8-39, so fillUniform's u reached 256 instead of 1: inputs up to 256x
/// their range (x up to 511), fp16's y and statistics overflowed (the inf).
__device__ __forceinline__ uint32_t hash64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>((x ^ (x >> 31)) >> 40);
}

template <class T>
__global__ void fillUniform(T *p, int64_t n, uint64_t seed, float lo, float hi) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float u = hash64(uint64_t(i) ^ (seed << 40)) * (1.0f / 16777216.0f);
    p[i] = fromF<T>(lo + (hi - lo) * u);
  }
}

template <class T> __global__ void fillValue(T *p, int64_t n, float v) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    p[i] = fromF<T>(v);
}

/// The epilogue (and P2's prologue): out = relu([x * scale[c]] [+ bias[c]]),
/// 4 elements per thread, one read and one write of x. mode 0: ReLU,
/// 1: bias + ReLU, 2: scale + bias + ReLU. NCHW: c = (i / hw) % C, the four
/// elements share it when hw % 4 == 0 (each its own at 7x7); NHWC:
/// c = i % C (C % 4 == 0). n4 * 4 elements (n % 4 == 0).
template <class T, int MODE, bool NHWC>
__global__ void epilogueKernel(const T *__restrict__ in, T *__restrict__ out,
                               const T *__restrict__ scale,
                               const T *__restrict__ bias, int64_t n4, int C,
                               int hw) {
  const bool shared = hw % 4 == 0;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < n4;
       v += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = v * 4;
    float x[4];
    load4(in + i, x);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int c = NHWC     ? int((i + j) % C)
                    : shared ? int((i / hw) % C)
                             : int(((i + j) / hw) % C);
      float y = x[j];
      if (MODE == 2)
        y = y * toF(scale[c]);
      if (MODE >= 1)
        y = y + toF(bias[c]);
      x[j] = fmaxf(y, 0.0f);
    }
    store4(out + i, x);
  }
}

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o /= 2)
    v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

/// Per-channel sum and sum of squares of an NCHW tensor (sums zeroed
/// first): block (c, split) covers images split, split + splits, ...;
/// vector loads when hw % 4 == 0, else (7x7) one element per thread over
/// the block's images flattened.
template <class T>
__global__ void statsNchw(const T *__restrict__ y, float *sum, float *sq, int N,
                          int C, int hw) {
  const int c = blockIdx.x;
  float s = 0, q = 0;
  if (hw % 4 == 0) {
    for (int n = blockIdx.y; n < N; n += gridDim.y) {
      const T *plane = y + (int64_t(n) * C + c) * hw;
      for (int v = threadIdx.x; v < hw / 4; v += blockDim.x) {
        float x[4];
        load4(plane + v * 4, x);
#pragma unroll
        for (int j = 0; j < 4; ++j)
          s += x[j], q += x[j] * x[j];
      }
    }
  } else {
    const int images = (N - int(blockIdx.y) + int(gridDim.y) - 1) / int(gridDim.y);
    for (int e = threadIdx.x; e < images * hw; e += blockDim.x) {
      const int n = int(blockIdx.y) + (e / hw) * int(gridDim.y);
      const float x = toF(y[(int64_t(n) * C + c) * hw + e % hw]);
      s += x, q += x * x;
    }
  }
  __shared__ float ss[32], sqs[32];
  s = warpSum(s);
  q = warpSum(q);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0)
    ss[warp] = s, sqs[warp] = q;
  __syncthreads();
  if (threadIdx.x == 0) {
    float ts = 0, tq = 0;
    for (int w = 0; w < int(blockDim.x / 32); ++w)
      ts += ss[w], tq += sqs[w];
    atomicAdd(sum + c, ts);
    atomicAdd(sq + c, tq);
  }
}

/// The same for NHWC, a [rows, C] matrix: 256 threads, C/4 vector columns,
/// of which block (x, y) covers cols = min(C/4, 256) from y * cols, in
/// 256/cols rows per step (needs 256 % cols == 0 and (C/4) % cols == 0).
template <class T>
__global__ void statsNhwc(const T *__restrict__ y, float *sum, float *sq,
                          int64_t rows, int C) {
  const int cols = min(C / 4, int(blockDim.x));
  const int col = int(blockIdx.y) * cols + int(threadIdx.x) % cols;
  const int rowOff = threadIdx.x / cols;
  const int rowsPerStep = blockDim.x / cols;
  float s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
  for (int64_t r = int64_t(blockIdx.x) * rowsPerStep + rowOff; r < rows;
       r += int64_t(gridDim.x) * rowsPerStep) {
    float x[4];
    load4(y + r * C + col * 4, x);
#pragma unroll
    for (int j = 0; j < 4; ++j)
      s[j] += x[j], q[j] += x[j] * x[j];
  }
  __shared__ float4 ss[256], sqs[256];
  ss[threadIdx.x] = make_float4(s[0], s[1], s[2], s[3]);
  sqs[threadIdx.x] = make_float4(q[0], q[1], q[2], q[3]);
  __syncthreads();
  if (threadIdx.x < cols) {
    float4 a = make_float4(0, 0, 0, 0), b = make_float4(0, 0, 0, 0);
    for (int t = threadIdx.x; t < int(blockDim.x); t += cols) {
      a.x += ss[t].x, a.y += ss[t].y, a.z += ss[t].z, a.w += ss[t].w;
      b.x += sqs[t].x, b.y += sqs[t].y, b.z += sqs[t].z, b.w += sqs[t].w;
    }
    float *ps = sum + col * 4, *pq = sq + col * 4;
    atomicAdd(ps + 0, a.x), atomicAdd(ps + 1, a.y);
    atomicAdd(ps + 2, a.z), atomicAdd(ps + 3, a.w);
    atomicAdd(pq + 0, b.x), atomicAdd(pq + 1, b.y);
    atomicAdd(pq + 2, b.z), atomicAdd(pq + 3, b.w);
  }
}

/// y[r, j] += bias[j] for a row-major [rows, cols] matrix (cols % 4 == 0).
__global__ void biasAddRows(float *y, const float *__restrict__ bias, int64_t n4,
                            int cols) {
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < n4;
       v += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = v * 4;
    float x[4];
    load4(y + i, x);
    const int j = int(i % cols);
    x[0] += bias[j], x[1] += bias[j + 1], x[2] += bias[j + 2], x[3] += bias[j + 3];
    store4(y + i, x);
  }
}

/// db[j] = sum_r dy[r, j] of a row-major [rows, cols] matrix: a block of
/// 32 columns x 8 row groups, reduced in shared memory.
__global__ void columnSums(const float *__restrict__ dy, float *db, int rows,
                           int cols) {
  const int j = blockIdx.x * 32 + threadIdx.x;
  float s = 0;
  if (j < cols)
    for (int r = threadIdx.y; r < rows; r += blockDim.y)
      s += dy[int64_t(r) * cols + j];
  __shared__ float part[8][33];
  part[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && j < cols) {
    float t = 0;
    for (int g = 0; g < int(blockDim.y); ++g)
      t += part[g][threadIdx.x];
    db[j] = t;
  }
}

/// max |a - ref| and max |ref| (NaN and inf count as inf), as float bits.
template <class T>
__global__ void compareKernel(const T *a, const T *ref, int64_t n,
                              unsigned *out) {
  float d = 0, m = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float x = toF(a[i]), r = toF(ref[i]);
    float e = fabsf(x - r);
    if (!(e <= 3.0e38f))
      e = INFINITY;
    float ar = fabsf(r);
    if (!(ar <= 3.0e38f))
      ar = INFINITY;
    d = fmaxf(d, e);
    m = fmaxf(m, ar);
  }
#pragma unroll
  for (int o = 16; o > 0; o /= 2) {
    d = fmaxf(d, __shfl_down_sync(0xffffffffu, d, o));
    m = fmaxf(m, __shfl_down_sync(0xffffffffu, m, o));
  }
  if (threadIdx.x % 32 == 0) {
    atomicMax(out, __float_as_uint(d));
    atomicMax(out + 1, __float_as_uint(m));
  }
}

// ---------------------------------------------------------------- host helpers

template <class T>
void fill(void *p, int64_t n, uint64_t seed, float lo, float hi) {
  fillUniform<T><<<gridFor(n), 256>>>(static_cast<T *>(p), n, seed, lo, hi);
  CUDA_OK(cudaGetLastError());
}

struct Diff {
  float maxAbs = 0, maxRef = 0;
  std::string text() const {
    if (!(maxAbs <= 3.0e38f) || !(maxRef <= 3.0e38f))
      return "inf (NaN or inf in a result)";
    char b[96];
    std::snprintf(b, sizeof b, "%.2e (%.1e of max)", maxAbs,
                  maxRef > 0 ? maxAbs / maxRef : maxAbs);
    return b;
  }
  float rel() const { return maxRef > 0 ? maxAbs / maxRef : maxAbs; }
};

template <class T> Diff compare(const void *a, const void *ref, int64_t n) {
  static DeviceBuffer bits(2 * sizeof(unsigned));
  CUDA_OK(cudaMemset(bits.p, 0, bits.bytes));
  compareKernel<T><<<gridFor(n), 256>>>(static_cast<const T *>(a),
                                        static_cast<const T *>(ref), n,
                                        bits.as<unsigned>());
  CUDA_OK(cudaGetLastError());
  unsigned h[2];
  CUDA_OK(cudaMemcpy(h, bits.p, sizeof h, cudaMemcpyDeviceToHost));
  Diff d;
  std::memcpy(&d.maxAbs, &h[0], 4);
  std::memcpy(&d.maxRef, &h[1], 4);
  return d;
}

struct Stat {
  double med = 0, mn = 0, mx = 0;  // microseconds
  std::string text() const {
    char b[96];
    std::snprintf(b, sizeof b, "%.1f (%.1f–%.1f)", med, mn, mx);
    return b;
  }
};

cudaEvent_t evStart, evStop;

/// Keeps the GPU busy for about `cycles` clock cycles.
__global__ void spinFor(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

/// Median and range of opt.iters samples after opt.warmups, each sample
/// `reps` back-to-back calls of f divided by reps, timed with CUDA events
/// on the legacy default stream (every library here uses it). Each sample
/// starts behind a ~3 ms spin kernel, so that the calls are enqueued
/// before the GPU reaches the start event: the time is the GPU's, not the
/// host's (cuDNN's legacy calls spend long on the host, which a training
/// step's CUDA graph does not replay; without the spin that host time was
/// counted while the GPU waited).
Stat timeIt(const std::function<void()> &f, int reps = 1) {
  for (int i = 0; i < opt.warmups; ++i)
    for (int r = 0; r < reps; ++r)
      f();
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int i = 0; i < opt.iters; ++i) {
    spinFor<<<1, 1>>>(6000000);
    CUDA_OK(cudaEventRecord(evStart, 0));
    for (int r = 0; r < reps; ++r)
      f();
    CUDA_OK(cudaEventRecord(evStop, 0));
    CUDA_OK(cudaEventSynchronize(evStop));
    float ms = 0;
    CUDA_OK(cudaEventElapsedTime(&ms, evStart, evStop));
    t.push_back(1000.0 * ms / reps);
  }
  CUDA_OK(cudaGetLastError());
  std::sort(t.begin(), t.end());
  Stat s;
  s.med = t.size() % 2 ? t[t.size() / 2]
                       : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  s.mn = t.front();
  s.mx = t.back();
  return s;
}

/// Footnotes: each distinct reason once, numbered in order of appearance.
std::vector<std::string> footnotes;
std::string footnote(const std::string &reason) {
  std::string r = reason;
  for (char &ch : r)
    if (ch == '\n' || ch == '|')
      ch = ' ';
  if (r.size() > 400)
    r = r.substr(0, 400) + "...";
  auto it = std::find(footnotes.begin(), footnotes.end(), r);
  size_t k = it - footnotes.begin();
  if (it == footnotes.end())
    footnotes.push_back(r);
  return "[" + std::to_string(k + 1) + "]";
}

void row(const std::vector<std::string> &cells) {
  std::string line = "|";
  for (const auto &c : cells)
    line += " " + c + " |";
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

std::string fmt(const char *f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// ---------------------------------------------------------------- cuDNN backend

class BDesc {
public:
  BDesc() = default;
  BDesc(cudnnBackendDescriptorType_t type, std::string what)
      : what_(std::move(what)) {
    CUDNN_TRY(what_ + ": create", cudnnBackendCreateDescriptor(type, &d_));
  }
  ~BDesc() {
    if (d_)
      cudnnBackendDestroyDescriptor(d_);
  }
  BDesc(const BDesc &) = delete;
  BDesc &operator=(const BDesc &) = delete;
  BDesc(BDesc &&o) noexcept : d_(o.d_), what_(std::move(o.what_)) {
    o.d_ = nullptr;
  }
  BDesc &operator=(BDesc &&o) noexcept {
    if (this != &o) {
      if (d_)
        cudnnBackendDestroyDescriptor(d_);
      d_ = o.d_;
      what_ = std::move(o.what_);
      o.d_ = nullptr;
    }
    return *this;
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  template <class T>
  BDesc &set(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t,
             const T *v, int64_t n = 1) {
    CUDNN_TRY(what_ + ": set attribute " + std::to_string(int(a)),
              cudnnBackendSetAttribute(d_, a, t, n, v));
    return *this;
  }
  BDesc &setDesc(cudnnBackendAttributeName_t a, cudnnBackendDescriptor_t v) {
    return set(a, CUDNN_TYPE_BACKEND_DESCRIPTOR, &v);
  }
  void finalize() { CUDNN_TRY(what_ + ": finalize", cudnnBackendFinalize(d_)); }

private:
  cudnnBackendDescriptor_t d_ = nullptr;
  std::string what_;
};

enum class Layout { NCHW, NHWC };

struct Config {
  const char *key;  // for --configs
  const char *name;
  Layout layout;
  cudnnDataType_t dtype;
  size_t esize;
  double tol;  // result check: 8 units of the data type's rounding
};

const char *dtypeName(cudnnDataType_t t) {
  return t == CUDNN_DATA_HALF       ? "fp16"
         : t == CUDNN_DATA_BFLOAT16 ? "bf16"
                                    : "fp32";
}

struct ConvShape {
  const char *name;
  int n, c, h, w, k, r, s, pad;
  int resnet;  // occurrences in one ResNet-50 forward pass with BN+ReLU as input
  int p() const { return h + 2 * pad - r + 1; }
  int q() const { return w + 2 * pad - s + 1; }
  int64_t xNumel() const { return int64_t(n) * c * h * w; }
  int64_t wNumel() const { return int64_t(k) * c * r * s; }
  int64_t yNumel() const { return int64_t(n) * k * p() * q(); }
};

/// Strides of logical [N, C, H, W] dimensions in the layout.
std::vector<int64_t> stridesOf(Layout l, const std::vector<int64_t> &d) {
  const int64_t C = d[1], H = d[2], W = d[3];
  if (l == Layout::NCHW)
    return {C * H * W, H * W, W, 1};
  return {H * W * C, 1, W * C, C};
}

/// An operation graph and every descriptor it refers to.
struct Graph {
  std::vector<BDesc> keep;
  BDesc graph;
  cudnnBackendDescriptor_t add(BDesc &&d) {
    keep.push_back(std::move(d));
    return keep.back().get();
  }
};

cudnnBackendDescriptor_t tensor(Graph &g, int64_t uid, cudnnDataType_t dt,
                                std::vector<int64_t> dims, Layout l,
                                bool isVirtual) {
  BDesc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor " + std::to_string(uid));
  std::vector<int64_t> strides = stridesOf(l, dims);
  int64_t alignment = 16;
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4)
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment)
      .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &isVirtual);
  t.finalize();
  return g.add(std::move(t));
}

/// The convolution of a shape: cross-correlation, stride and dilation 1,
/// fp32 compute.
cudnnBackendDescriptor_t convDesc(Graph &g, const ConvShape &sh) {
  BDesc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, "convolution");
  int64_t dims = 2;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int64_t pad[2] = {sh.pad, sh.pad}, one[2] = {1, 1};
  conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &dims)
      .set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pad, 2)
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, pad, 2)
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, one, 2)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, one, 2);
  conv.finalize();
  return g.add(std::move(conv));
}

cudnnBackendDescriptor_t convOp(Graph &g, const ConvShape &sh,
                                cudnnBackendDescriptor_t x,
                                cudnnBackendDescriptor_t w,
                                cudnnBackendDescriptor_t y) {
  cudnnBackendDescriptor_t c = convDesc(g, sh);
  BDesc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, "conv fwd op");
  float alpha = 1, beta = 0;
  op.setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, c)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta);
  op.finalize();
  return g.add(std::move(op));
}

/// dx = the data gradient of the convolution, from dy and w.
cudnnBackendDescriptor_t convBwdDataOp(Graph &g, const ConvShape &sh,
                                       cudnnBackendDescriptor_t w,
                                       cudnnBackendDescriptor_t dy,
                                       cudnnBackendDescriptor_t dx) {
  cudnnBackendDescriptor_t c = convDesc(g, sh);
  BDesc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, "conv dgrad op");
  float alpha = 1, beta = 0;
  op.setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, dy)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, dx)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, c)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA, CUDNN_TYPE_FLOAT, &alpha)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_TYPE_FLOAT, &beta);
  op.finalize();
  return g.add(std::move(op));
}

/// dw = the filter gradient of the convolution, from x and dy.
cudnnBackendDescriptor_t convBwdFilterOp(Graph &g, const ConvShape &sh,
                                         cudnnBackendDescriptor_t x,
                                         cudnnBackendDescriptor_t dy,
                                         cudnnBackendDescriptor_t dw) {
  cudnnBackendDescriptor_t c = convDesc(g, sh);
  BDesc op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
           "conv wgrad op");
  float alpha = 1, beta = 0;
  op.setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, x)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, dy)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, dw)
      .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, c)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_TYPE_FLOAT, &alpha)
      .set(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_TYPE_FLOAT, &beta);
  op.finalize();
  return g.add(std::move(op));
}

cudnnBackendDescriptor_t pointwiseOp(Graph &g, cudnnPointwiseMode_t mode,
                                     cudnnBackendDescriptor_t x,
                                     cudnnBackendDescriptor_t b,
                                     cudnnBackendDescriptor_t y) {
  BDesc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise");
  cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
      .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec);
  pw.finalize();
  cudnnBackendDescriptor_t p = g.add(std::move(pw));
  BDesc op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, "pointwise op");
  op.setDesc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, p)
      .setDesc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b)
    op.setDesc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
  op.setDesc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  op.finalize();
  return g.add(std::move(op));
}

cudnnBackendDescriptor_t genStatsOp(Graph &g, cudnnBackendDescriptor_t x,
                                    cudnnBackendDescriptor_t sum,
                                    cudnnBackendDescriptor_t sq) {
  BDesc op(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR, "gen stats op");
  cudnnGenStatsMode_t mode = CUDNN_GENSTATS_SUM_SQSUM;
  cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  op.set(CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE, &mode)
      .set(CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec)
      .setDesc(CUDNN_ATTR_OPERATION_GENSTATS_XDESC, x)
      .setDesc(CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, sum)
      .setDesc(CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, sq);
  op.finalize();
  return g.add(std::move(op));
}

void finishGraph(Graph &g, cudnnHandle_t handle,
                 const std::vector<cudnnBackendDescriptor_t> &ops) {
  g.graph = BDesc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
  g.graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
              ops.data(), int64_t(ops.size()))
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle);
  g.graph.finalize();
}

// Unique ids of the graphs' tensors.
enum : int64_t {
  kX = 1, kW = 2, kY = 3, kScale = 4, kBias = 5, kSum = 6, kSq = 7,
  kV1 = 101, kV2 = 102, kV3 = 103,
};

/// P0's three passes of a plain convolution.
enum class Pass { Fprop, Dgrad, Wgrad };
const Pass kPasses[] = {Pass::Fprop, Pass::Dgrad, Pass::Wgrad};
const char *passName(Pass p) {
  return p == Pass::Fprop ? "fprop" : p == Pass::Dgrad ? "dgrad" : "wgrad";
}

/// P0: one convolution operation. The unique ids name the tensors' roles,
/// so that x, w and y/dy keep theirs in every pass: fprop y (kY) = conv(x
/// (kX), w (kW)); dgrad dx (kX) from dy (kY) and w (kW); wgrad dw (kW)
/// from x (kX) and dy (kY).
void buildP0(Graph &g, cudnnHandle_t h, const ConvShape &sh, const Config &cf,
             Pass pass) {
  const Layout L = cf.layout;
  const cudnnDataType_t io = cf.dtype;
  auto x = tensor(g, kX, io, {sh.n, sh.c, sh.h, sh.w}, L, false);
  auto w = tensor(g, kW, io, {sh.k, sh.c, sh.r, sh.s}, L, false);
  auto y = tensor(g, kY, io, {sh.n, sh.k, sh.p(), sh.q()}, L, false);
  cudnnBackendDescriptor_t op = pass == Pass::Fprop   ? convOp(g, sh, x, w, y)
                                : pass == Pass::Dgrad ? convBwdDataOp(g, sh, w, y, x)
                                                      : convBwdFilterOp(g, sh, x, y, w);
  finishGraph(g, h, {op});
}

/// P1: conv -> [mul scale] -> [add bias] -> ReLU. mode 0/1/2 as the kernel.
void buildP1(Graph &g, cudnnHandle_t h, const ConvShape &sh, const Config &cf,
             int mode) {
  const Layout L = cf.layout;
  const cudnnDataType_t io = cf.dtype, f32 = CUDNN_DATA_FLOAT;
  auto x = tensor(g, kX, io, {sh.n, sh.c, sh.h, sh.w}, L, false);
  auto w = tensor(g, kW, io, {sh.k, sh.c, sh.r, sh.s}, L, false);
  std::vector<int64_t> yd = {sh.n, sh.k, sh.p(), sh.q()};
  std::vector<int64_t> cd = {1, sh.k, 1, 1};
  auto y = tensor(g, kY, io, yd, L, false);
  std::vector<cudnnBackendDescriptor_t> ops;
  auto v1 = tensor(g, kV1, f32, yd, L, true);
  ops.push_back(convOp(g, sh, x, w, v1));
  auto last = v1;
  if (mode == 2) {
    auto s = tensor(g, kScale, io, cd, L, false);
    auto v2 = tensor(g, kV2, f32, yd, L, true);
    ops.push_back(pointwiseOp(g, CUDNN_POINTWISE_MUL, last, s, v2));
    last = v2;
  }
  if (mode >= 1) {
    auto b = tensor(g, kBias, io, cd, L, false);
    auto v3 = tensor(g, kV3, f32, yd, L, true);
    ops.push_back(pointwiseOp(g, CUDNN_POINTWISE_ADD, last, b, v3));
    last = v3;
  }
  ops.push_back(pointwiseOp(g, CUDNN_POINTWISE_RELU_FWD, last, nullptr, y));
  finishGraph(g, h, ops);
}

/// P2: relu(x * scale + bias) -> conv -> y, GEN_STATS(y) -> sum, sqsum.
/// `virt` is the data type of the virtual tensors of the prologue.
void buildP2(Graph &g, cudnnHandle_t h, const ConvShape &sh, const Config &cf,
             cudnnDataType_t virt) {
  const Layout L = cf.layout;
  const cudnnDataType_t io = cf.dtype, f32 = CUDNN_DATA_FLOAT;
  std::vector<int64_t> xd = {sh.n, sh.c, sh.h, sh.w};
  std::vector<int64_t> cin = {1, sh.c, 1, 1}, cout = {1, sh.k, 1, 1};
  auto x = tensor(g, kX, io, xd, L, false);
  auto s = tensor(g, kScale, io, cin, L, false);
  auto b = tensor(g, kBias, io, cin, L, false);
  auto w = tensor(g, kW, io, {sh.k, sh.c, sh.r, sh.s}, L, false);
  auto y = tensor(g, kY, io, {sh.n, sh.k, sh.p(), sh.q()}, L, false);
  auto sum = tensor(g, kSum, f32, cout, L, false);
  auto sq = tensor(g, kSq, f32, cout, L, false);
  auto v1 = tensor(g, kV1, virt, xd, L, true);
  auto v2 = tensor(g, kV2, virt, xd, L, true);
  auto v3 = tensor(g, kV3, virt, xd, L, true);
  std::vector<cudnnBackendDescriptor_t> ops;
  ops.push_back(pointwiseOp(g, CUDNN_POINTWISE_MUL, x, s, v1));
  ops.push_back(pointwiseOp(g, CUDNN_POINTWISE_ADD, v1, b, v2));
  ops.push_back(pointwiseOp(g, CUDNN_POINTWISE_RELU_FWD, v2, nullptr, v3));
  ops.push_back(convOp(g, sh, v3, w, y));
  ops.push_back(genStatsOp(g, y, sum, sq));
  finishGraph(g, h, ops);
}

struct EngineInfo {
  int64_t index = -1;
  bool rtc = false, tensorCore = false;
  bool notesRead = false;  // the numerical notes could be queried
  bool nondet = false;     // CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC
  std::string knobs;       // "type=value,..." (cudnnBackendKnobType_t numbers)
  std::string label() const {
    std::string l = "eng" + std::to_string(index);
    if (rtc)
      l += " rtc";
    if (tensorCore)
      l += " TC";
    return l;
  }
  /// "nondet" (the engine's NONDETERMINISTIC note), "det" (notes read, no
  /// such note) or "det?" (no notes).
  std::string determinism() const {
    return nondet ? "nondet" : notesRead ? "det" : "det?";
  }
};

/// The knob choices of an engine config, "type=value,..." ("" when none or
/// the query fails).
std::string knobChoices(cudnnBackendDescriptor_t cfg) {
  constexpr int kMax = 32;
  std::vector<cudnnBackendDescriptor_t> choices;
  for (int i = 0; i < kMax; ++i) {
    cudnnBackendDescriptor_t d = nullptr;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &d) !=
        CUDNN_STATUS_SUCCESS)
      break;
    choices.push_back(d);
  }
  std::string text;
  int64_t n = 0;
  if (!choices.empty() &&
      cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, int64_t(choices.size()),
                               &n, choices.data()) == CUDNN_STATUS_SUCCESS)
    for (int64_t i = 0; i < n && i < int64_t(choices.size()); ++i) {
      cudnnBackendKnobType_t type{};
      int64_t value = 0, got = 0;
      if (cudnnBackendGetAttribute(choices[size_t(i)], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                   CUDNN_TYPE_KNOB_TYPE, 1, &got, &type) !=
              CUDNN_STATUS_SUCCESS ||
          cudnnBackendGetAttribute(choices[size_t(i)], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                   CUDNN_TYPE_INT64, 1, &got, &value) !=
              CUDNN_STATUS_SUCCESS)
        continue;
      text += (text.empty() ? "" : ",") + std::to_string(int(type)) + "=" +
              std::to_string(value);
    }
  for (cudnnBackendDescriptor_t d : choices)
    cudnnBackendDestroyDescriptor(d);
  lastCudnnError();
  return text;
}

EngineInfo engineInfo(cudnnBackendDescriptor_t cfg) {
  EngineInfo info;
  cudnnBackendDescriptor_t eng = nullptr;
  if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) !=
      CUDNN_STATUS_SUCCESS)
    return info;
  int64_t n = 0;
  if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &eng) ==
      CUDNN_STATUS_SUCCESS) {
    cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                             CUDNN_TYPE_INT64, 1, &n, &info.index);
    cudnnBackendBehaviorNote_t notes[16];
    n = 0;
    if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                 CUDNN_TYPE_BEHAVIOR_NOTE, 16, &n, notes) ==
        CUDNN_STATUS_SUCCESS)
      for (int64_t i = 0; i < n && i < 16; ++i)
        if (notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION)
          info.rtc = true;
    cudnnBackendNumericalNote_t num[16];
    n = 0;
    if (cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                 CUDNN_TYPE_NUMERICAL_NOTE, 16, &n, num) ==
        CUDNN_STATUS_SUCCESS) {
      info.notesRead = true;
      for (int64_t i = 0; i < n && i < 16; ++i) {
        if (num[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE)
          info.tensorCore = true;
        if (num[i] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC)
          info.nondet = true;
      }
    }
  }
  cudnnBackendDestroyDescriptor(eng);
  lastCudnnError();
  info.knobs = knobChoices(cfg);
  return info;
}

/// The engine configs of one heuristic mode (throws when the query fails).
std::vector<BDesc> heuristics(const Graph &g, cudnnBackendHeurMode_t mode) {
  const std::string name = mode == CUDNN_HEUR_MODE_A ? "heuristics A"
                                                     : "heuristics fallback";
  BDesc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, name);
  cudnnBackendDescriptor_t graph = g.graph.get();
  heur.setDesc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
  heur.finalize();
  int64_t count = 0;
  CUDNN_TRY(name + ": result count",
            cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                     nullptr));
  std::vector<BDesc> cfgs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    cfgs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config");
    raw.push_back(cfgs.back().get());
  }
  if (count > 0) {
    int64_t got = 0;
    CUDNN_TRY(name + ": results",
              cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                       &got, raw.data()));
    cfgs.resize(size_t(std::max<int64_t>(0, std::min(got, count))));
  }
  return cfgs;
}

struct Candidate {
  BDesc cfg;  // kept alive as long as the plan
  BDesc plan;
  BDesc pack;
  EngineInfo engine;
  int64_t workspaceBytes = 0;
  double finalizeMs = 0;
  Stat time;
  bool timed = false;
};

struct FusedOutcome {
  std::string engines;  // "A ok/tried/total; fb ok/tried/total"
  std::string reason;   // first reason seen, when nothing ran
  std::vector<Candidate> candidates;
  int best = -1;
  int bestDet = -1;  // the fastest without CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC
  int overWs = 0;    // finalized plans dropped for needing over wsCap
  bool ok() const { return best >= 0; }
};

void execute(cudnnHandle_t h, const Candidate &c) {
  CUDNN_TRY("execute", cudnnBackendExecute(h, c.plan.get(), c.pack.get()));
}

/// Heuristics, finalization and timing of every candidate of one graph.
/// `io`: unique id -> device pointer. `pre` runs before each execution
/// (zeroing accumulated outputs) when set. Plans needing more than wsCap
/// bytes of workspace are dropped (counted in overWs); finalization stops
/// after finalizeS seconds of the case.
FusedOutcome runFused(cudnnHandle_t h, const Graph &g,
                      const std::vector<std::pair<int64_t, void *>> &io,
                      const std::function<void()> &pre,
                      int64_t wsCap = int64_t(4) << 30,
                      double finalizeS = opt.caseFinalizeS) {
  FusedOutcome out;
  const double caseStart = nowS();
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    const char *tag = mode == CUDNN_HEUR_MODE_A ? "A" : "fb";
    std::vector<BDesc> cfgs;
    try {
      cfgs = heuristics(g, mode);
    } catch (const Unsupported &u) {
      if (out.reason.empty())
        out.reason = u.text();
      std::fprintf(stderr, "    %s: %s\n", tag, u.text().c_str());
      out.engines += std::string(out.engines.empty() ? "" : "; ") + tag + " err";
      continue;
    }
    int tried = 0, ok = 0, overWs = 0;
    for (auto &cfg : cfgs) {
      if (tried >= opt.maxTry || nowS() - caseStart > finalizeS || overBudget())
        break;
      ++tried;
      EngineInfo info = engineInfo(cfg.get());
      const double t0 = nowS();
      try {
        Candidate c;
        c.engine = info;
        c.plan = BDesc(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
        cudnnBackendDescriptor_t raw = cfg.get();
        c.plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h)
            .setDesc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, raw);
        c.plan.finalize();
        c.finalizeMs = 1000 * (nowS() - t0);
        int64_t n = 0;
        CUDNN_TRY("plan workspace size",
                  cudnnBackendGetAttribute(c.plan.get(),
                                           CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                           CUDNN_TYPE_INT64, 1, &n,
                                           &c.workspaceBytes));
        if (c.workspaceBytes > wsCap) {
          ++overWs;
          std::fprintf(stderr, "    %s cfg %d %s: finalized in %.0f ms, ws %lld: over "
                       "the %lld-byte cap, dropped\n", tag, tried, info.label().c_str(),
                       c.finalizeMs, (long long)c.workspaceBytes, (long long)wsCap);
          continue;
        }
        c.cfg = std::move(cfg);
        ++ok;
        std::fprintf(stderr, "    %s cfg %d %s %s [%s]: finalized in %.0f ms, ws %lld\n",
                     tag, tried, info.label().c_str(), info.determinism().c_str(),
                     info.knobs.c_str(), c.finalizeMs, (long long)c.workspaceBytes);
        out.candidates.push_back(std::move(c));
      } catch (const Unsupported &u) {
        if (out.reason.empty())
          out.reason = u.text();
        std::fprintf(stderr, "    %s cfg %d %s: %s (%.0f ms)\n", tag, tried,
                     info.label().c_str(), u.text().c_str(), 1000 * (nowS() - t0));
      }
    }
    out.engines += std::string(out.engines.empty() ? "" : "; ") + tag + " " +
                   std::to_string(ok) + "/" + std::to_string(tried) + "/" +
                   std::to_string(cfgs.size());
    if (overWs > 0)
      out.engines += " (" + std::to_string(overWs) + " over ws cap)";
    out.overWs += overWs;
  }
  if (out.candidates.empty()) {
    if (out.overWs > 0)
      out.reason = "every finalized plan needs over " + std::to_string(wsCap >> 20) +
                   " MiB of workspace";
    if (out.reason.empty())
      out.reason = "no engine config returned by the heuristics";
    return out;
  }
  // One workspace for all: grow it before the variant packs take its address.
  int64_t maxWs = 0;
  for (auto &c : out.candidates)
    maxWs = std::max(maxWs, c.workspaceBytes);
  ensureWorkspace(size_t(maxWs));
  std::vector<int64_t> uids;
  std::vector<void *> ptrs;
  for (auto &p : io)
    uids.push_back(p.first), ptrs.push_back(p.second);
  double bestMed = 1e300;
  for (size_t i = 0; i < out.candidates.size(); ++i) {
    Candidate &c = out.candidates[i];
    try {
      c.pack = BDesc(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
      void *ws = workspace.p;
      c.pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(),
                 int64_t(uids.size()))
          .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
               ptrs.data(), int64_t(ptrs.size()))
          .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &ws);
      c.pack.finalize();
      if (pre)
        pre();
      execute(h, c);  // the first run, checked, outside the timing
      CUDA_OK(cudaDeviceSynchronize());
      c.time = timeIt([&] {
        if (pre)
          pre();
        execute(h, c);
      });
      c.timed = true;
      std::fprintf(stderr, "    %s: %s us\n", c.engine.label().c_str(),
                   c.time.text().c_str());
      if (c.time.med < bestMed)
        bestMed = c.time.med, out.best = int(i);
      if (!c.engine.nondet && (out.bestDet < 0 ||
                               c.time.med < out.candidates[size_t(out.bestDet)].time.med))
        out.bestDet = int(i);
    } catch (const Unsupported &u) {
      if (out.reason.empty())
        out.reason = u.text();
      std::fprintf(stderr, "    %s: %s\n", c.engine.label().c_str(),
                   u.text().c_str());
      CUDA_OK(cudaDeviceSynchronize());
    }
  }
  return out;
}

// ---------------------------------------------------------------- legacy conv

struct LegacyConv {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  cudnnMathType_t math{};
  size_t wsBytes = 0;
  float findMs = 0;

  /// The fastest algorithm by cudnnFindConvolutionForwardAlgorithmEx with
  /// CUDNN_TENSOR_OP_MATH (Fluid's setting with allow_tf32).
  void setup(cudnnHandle_t h, const ConvShape &sh, const Config &cf,
             const void *xd, const void *wd, void *yd) {
    const cudnnTensorFormat_t fmt =
        cf.layout == Layout::NCHW ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    CUDNN_OK(cudnnCreateTensorDescriptor(&x));
    CUDNN_OK(cudnnCreateTensorDescriptor(&y));
    CUDNN_OK(cudnnCreateFilterDescriptor(&w));
    CUDNN_OK(cudnnCreateConvolutionDescriptor(&conv));
    CUDNN_OK(cudnnSetTensor4dDescriptor(x, fmt, cf.dtype, sh.n, sh.c, sh.h, sh.w));
    CUDNN_OK(cudnnSetTensor4dDescriptor(y, fmt, cf.dtype, sh.n, sh.k, sh.p(), sh.q()));
    CUDNN_OK(cudnnSetFilter4dDescriptor(w, cf.dtype, fmt, sh.k, sh.c, sh.r, sh.s));
    CUDNN_OK(cudnnSetConvolution2dDescriptor(conv, sh.pad, sh.pad, 1, 1, 1, 1,
                                             CUDNN_CROSS_CORRELATION,
                                             CUDNN_DATA_FLOAT));
    CUDNN_OK(cudnnSetConvolutionMathType(conv, CUDNN_TENSOR_OP_MATH));
    int count = 0, returned = 0;
    CUDNN_OK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(size_t(std::max(count, 1)));
    CUDNN_OK(cudnnFindConvolutionForwardAlgorithmEx(
        h, x, xd, w, wd, conv, y, yd, count, &returned, perf.data(), workspace.p,
        workspace.bytes));
    for (int i = 0; i < returned; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS) {
        algo = perf[i].algo;
        math = perf[i].mathType;
        wsBytes = perf[i].memory;
        findMs = perf[i].time;
        CUDNN_OK(cudnnSetConvolutionMathType(conv, math));
        return;
      }
    fatal(std::string("no legacy forward algorithm for ") + sh.name + " " + cf.name);
  }
  void run(cudnnHandle_t h, const void *xd, const void *wd, void *yd) const {
    const float one = 1, zero = 0;
    CUDNN_OK(cudnnConvolutionForward(h, &one, x, xd, w, wd, conv, algo,
                                     workspace.p, wsBytes, &zero, y, yd));
  }
  std::string label() const {
    return "algo " + std::to_string(int(algo)) +
           (math == CUDNN_TENSOR_OP_MATH ? " TC"
            : math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? " TC-conv"
                                                            : " fma");
  }
  ~LegacyConv() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (conv) cudnnDestroyConvolutionDescriptor(conv);
  }
};

/// P0's workspace cap, for the graph plans (those needing more are dropped
/// and counted) and cudnnFind alike, and its finalization time per pass.
constexpr int64_t kP0WsCap = int64_t(1) << 30;
constexpr double kP0FinalizeS = 3;

/// One pass of a legacy convolution (P0): the fastest algorithm by
/// cudnnFindConvolution{Forward,BackwardData,BackwardFilter}AlgorithmEx with
/// CUDNN_TENSOR_OP_MATH, and the fastest of its CUDNN_DETERMINISTIC results
/// (Fluid's runtime prefers those), each with its own convolution
/// descriptor set to the result's math type; cudnnFind gets at most
/// kP0WsCap of workspace. A failure throws Unsupported.
struct LegacyPass {
  struct Pick {
    bool ok = false;
    int algo = 0;
    cudnnMathType_t math{};
    size_t wsBytes = 0;
    float findMs = 0;
    std::string label() const {
      return "algo " + std::to_string(algo) +
             (math == CUDNN_TENSOR_OP_MATH ? " TC"
              : math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? " TC-conv"
              : math == CUDNN_FMA_MATH ? " fma"
                                       : " default");
    }
    bool same(const Pick &o) const { return algo == o.algo && math == o.math; }
  };
  Pass pass = Pass::Fprop;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;  // y: dy in the backward passes
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t convAny = nullptr, convDet = nullptr;
  Pick any, det;
  int returned = 0, succeeded = 0;
  const void *xd = nullptr, *wd = nullptr, *dyd = nullptr;  // the pass reads two
  size_t wsLimit = 0;

  LegacyPass() = default;
  LegacyPass(const LegacyPass &) = delete;
  LegacyPass &operator=(const LegacyPass &) = delete;

  /// Finds the algorithms; `out` is the pass's output (y, dx or dw), which
  /// cudnnFind overwrites.
  void setup(cudnnHandle_t h, const ConvShape &sh, const Config &cf, Pass p,
             const void *X, const void *W, const void *DY, void *out) {
    pass = p;
    xd = X, wd = W, dyd = DY;
    wsLimit = std::min(workspace.bytes, size_t(kP0WsCap));
    const cudnnTensorFormat_t fmt =
        cf.layout == Layout::NCHW ? CUDNN_TENSOR_NCHW : CUDNN_TENSOR_NHWC;
    CUDNN_TRY("legacy descriptors", cudnnCreateTensorDescriptor(&x));
    CUDNN_TRY("legacy descriptors", cudnnCreateTensorDescriptor(&y));
    CUDNN_TRY("legacy descriptors", cudnnCreateFilterDescriptor(&w));
    CUDNN_TRY("legacy descriptors", cudnnCreateConvolutionDescriptor(&convAny));
    CUDNN_TRY("legacy descriptors", cudnnCreateConvolutionDescriptor(&convDet));
    CUDNN_TRY("legacy x", cudnnSetTensor4dDescriptor(x, fmt, cf.dtype, sh.n, sh.c, sh.h,
                                                     sh.w));
    CUDNN_TRY("legacy y", cudnnSetTensor4dDescriptor(y, fmt, cf.dtype, sh.n, sh.k, sh.p(),
                                                     sh.q()));
    CUDNN_TRY("legacy w", cudnnSetFilter4dDescriptor(w, cf.dtype, fmt, sh.k, sh.c, sh.r,
                                                     sh.s));
    for (cudnnConvolutionDescriptor_t conv : {convAny, convDet}) {
      CUDNN_TRY("legacy conv",
                cudnnSetConvolution2dDescriptor(conv, sh.pad, sh.pad, 1, 1, 1, 1,
                                                CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
      CUDNN_TRY("legacy conv math", cudnnSetConvolutionMathType(conv, CUDNN_TENSOR_OP_MATH));
    }
    int count = 0;
    if (pass == Pass::Fprop) {
      CUDNN_TRY("cudnnGetConvolutionForwardAlgorithmMaxCount",
                cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(size_t(std::max(count, 1)));
      CUDNN_TRY("cudnnFindConvolutionForwardAlgorithmEx",
                cudnnFindConvolutionForwardAlgorithmEx(
                    h, x, xd, w, wd, convAny, y, out, int(perf.size()), &returned,
                    perf.data(), workspace.p, wsLimit));
      choose(perf);
    } else if (pass == Pass::Dgrad) {
      CUDNN_TRY("cudnnGetConvolutionBackwardDataAlgorithmMaxCount",
                cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(size_t(std::max(count, 1)));
      CUDNN_TRY("cudnnFindConvolutionBackwardDataAlgorithmEx",
                cudnnFindConvolutionBackwardDataAlgorithmEx(
                    h, w, wd, y, dyd, convAny, x, out, int(perf.size()), &returned,
                    perf.data(), workspace.p, wsLimit));
      choose(perf);
    } else {
      CUDNN_TRY("cudnnGetConvolutionBackwardFilterAlgorithmMaxCount",
                cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
      std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(size_t(std::max(count, 1)));
      CUDNN_TRY("cudnnFindConvolutionBackwardFilterAlgorithmEx",
                cudnnFindConvolutionBackwardFilterAlgorithmEx(
                    h, x, xd, y, dyd, convAny, w, out, int(perf.size()), &returned,
                    perf.data(), workspace.p, wsLimit));
      choose(perf);
    }
    if (!any.ok)
      throw Unsupported{std::string("legacy ") + passName(pass),
                        "no algorithm succeeded",
                        std::to_string(returned) + " returned by cudnnFind"};
    CUDNN_TRY("legacy conv math", cudnnSetConvolutionMathType(convAny, any.math));
    if (det.ok)
      CUDNN_TRY("legacy conv math", cudnnSetConvolutionMathType(convDet, det.math));
  }

  /// cudnnFind's results, fastest first: the first that succeeded, and the
  /// first deterministic one that did.
  template <class Perf> void choose(const std::vector<Perf> &perf) {
    for (int i = 0; i < returned && i < int(perf.size()); ++i) {
      const Perf &r = perf[size_t(i)];
      if (r.status != CUDNN_STATUS_SUCCESS || r.memory > wsLimit)
        continue;
      ++succeeded;
      Pick pk;
      pk.ok = true;
      pk.algo = int(r.algo);
      pk.math = r.mathType;
      pk.wsBytes = r.memory;
      pk.findMs = r.time;
      if (!any.ok)
        any = pk;
      if (!det.ok && r.determinism == CUDNN_DETERMINISTIC)
        det = pk;
    }
  }

  /// The pass with the fastest (deterministic = false) or the fastest
  /// deterministic algorithm, into `out`.
  void run(cudnnHandle_t h, bool deterministic, void *out) const {
    const Pick &pk = deterministic ? det : any;
    const cudnnConvolutionDescriptor_t conv = deterministic ? convDet : convAny;
    const float one = 1, zero = 0;
    if (pass == Pass::Fprop)
      CUDNN_TRY("cudnnConvolutionForward",
                cudnnConvolutionForward(h, &one, x, xd, w, wd, conv,
                                        cudnnConvolutionFwdAlgo_t(pk.algo), workspace.p,
                                        pk.wsBytes, &zero, y, out));
    else if (pass == Pass::Dgrad)
      CUDNN_TRY("cudnnConvolutionBackwardData",
                cudnnConvolutionBackwardData(h, &one, w, wd, y, dyd, conv,
                                             cudnnConvolutionBwdDataAlgo_t(pk.algo),
                                             workspace.p, pk.wsBytes, &zero, x, out));
    else
      CUDNN_TRY("cudnnConvolutionBackwardFilter",
                cudnnConvolutionBackwardFilter(h, &one, x, xd, y, dyd, conv,
                                               cudnnConvolutionBwdFilterAlgo_t(pk.algo),
                                               workspace.p, pk.wsBytes, &zero, w, out));
  }

  ~LegacyPass() {
    if (x) cudnnDestroyTensorDescriptor(x);
    if (y) cudnnDestroyTensorDescriptor(y);
    if (w) cudnnDestroyFilterDescriptor(w);
    if (convAny) cudnnDestroyConvolutionDescriptor(convAny);
    if (convDet) cudnnDestroyConvolutionDescriptor(convDet);
  }
};

// ---------------------------------------------------------------- the cuDNN cases

template <class T>
void launchEpilogue(int mode, Layout l, const void *in, void *out,
                    const void *scale, const void *bias, int64_t n, int C, int hw) {
  const int64_t n4 = n / 4;
  const int g = gridFor(n4);
  auto i = static_cast<const T *>(in);
  auto o = static_cast<T *>(out);
  auto s = static_cast<const T *>(scale);
  auto b = static_cast<const T *>(bias);
  const bool nhwc = l == Layout::NHWC;
#define EPI(M, NH) epilogueKernel<T, M, NH><<<g, 256>>>(i, o, s, b, n4, C, hw)
  if (mode == 0) { if (nhwc) EPI(0, true); else EPI(0, false); }
  else if (mode == 1) { if (nhwc) EPI(1, true); else EPI(1, false); }
  else { if (nhwc) EPI(2, true); else EPI(2, false); }
#undef EPI
  CUDA_OK(cudaGetLastError());
}

template <class T>
void launchStats(Layout l, const void *y, float *sum, float *sq, const ConvShape &sh) {
  const int hw = sh.p() * sh.q();
  CUDA_OK(cudaMemsetAsync(sum, 0, sizeof(float) * sh.k, 0));
  CUDA_OK(cudaMemsetAsync(sq, 0, sizeof(float) * sh.k, 0));
  if (l == Layout::NCHW) {
    const int splits = std::max(1, std::min(sh.n, (smCount * 8) / sh.k));
    statsNchw<T><<<dim3(sh.k, splits), 256>>>(static_cast<const T *>(y), sum, sq,
                                              sh.n, sh.k, hw);
  } else {
    // statsNhwc's column blocks: C/4 vector columns, at most 256 per block.
    const int cols = sh.k / 4, perBlock = std::min(cols, 256);
    if (sh.k % 4 != 0 || 256 % perBlock != 0 || cols % perBlock != 0)
      fatal(std::string("statsNhwc: unsupported channel count in ") + sh.name);
    const int chunks = cols / perBlock;
    statsNhwc<T><<<dim3(std::max(1, smCount * 8 / chunks), chunks), 256>>>(
        static_cast<const T *>(y), sum, sq, int64_t(sh.n) * hw, sh.k);
  }
  CUDA_OK(cudaGetLastError());
}

const char *p1Name[3] = {"P1 conv+ReLU", "P1 conv+bias+ReLU", "P1 conv+scale+bias+ReLU"};

/// P2's times of one shape in one configuration, for p2Summary.
struct P2Time {
  bool ran = false;      // the unfused path was timed
  bool fused = false;    // and a fused plan ran
  bool overTol = false;  // whose result is over the tolerance
  double fusedUs = 0, convUs = 0, unfusedUs = 0;
  std::string why;  // why the shape is not counted
};

/// The patterns of runShape selected by --patterns, for the skipped rows.
std::string cudnnPatterns() {
  const bool p1 = opt.pattern("P1"), p2 = opt.pattern("P2");
  return p1 && p2 ? "P1, P2" : p1 ? "P1" : "P2";
}

/// P1 (three epilogues) and P2 of one shape in one configuration, as
/// selected by --patterns; P2's times also go to *p2.
template <class T>
void runShape(cudnnHandle_t h, const ConvShape &sh, const Config &cf, P2Time *p2rec) {
  const int64_t nx = sh.xNumel(), nw = sh.wNumel(), ny = sh.yNumel();
  const size_t es = sizeof(T);
  DeviceBuffer X(nx * es), Xa(nx * es), W(nw * es), Yc(ny * es), Yu(ny * es),
      Yf(ny * es);
  DeviceBuffer Sk(sh.k * es), Bk(sh.k * es), Sc(sh.c * es), Bc(sh.c * es);
  DeviceBuffer sums(4 * sizeof(float) * sh.k);  // unfused sum, sq; fused sum, sq
  float *uSum = sums.as<float>(), *uSq = uSum + sh.k, *fSum = uSq + sh.k,
        *fSq = fSum + sh.k;
  // Inputs small enough for fp16 everywhere (see hash64 for the old inf):
  // w = U[-1, 1] * 0.04 / sqrt(f) + 0.1 / f, f = C*R*S.
  // P1's y = conv(x in U[-1, 1]): mean 0, std ~0.04 / 3 = 0.013 whatever f.
  // P2's y = conv(relu(scale*x+bias), mean ~0.27): per-channel mean
  // 0.027 +- 0.006 (positive, so that the sums are far from 0), |y| < ~0.1,
  // per-channel sum < ~0.05 * N*P*Q (< 2.1e4 at 128x56x56) and sum of
  // squares < ~1e3: inside fp16's 65504 even for an engine that rounds its
  // statistics to the data type. P1's bias is of the order of its y.
  const float f = float(sh.c * sh.r * sh.s);
  const float wMean = 0.1f / f, wHalfRange = 0.04f / std::sqrt(f);
  fill<T>(X.p, nx, 1, -1.0f, 1.0f);
  fill<T>(W.p, nw, 2, wMean - wHalfRange, wMean + wHalfRange);
  fill<T>(Sk.p, sh.k, 3, 0.5f, 1.5f);
  fill<T>(Bk.p, sh.k, 4, -0.02f, 0.02f);
  fill<T>(Sc.p, sh.c, 5, 0.5f, 1.5f);
  fill<T>(Bc.p, sh.c, 6, -0.5f, 0.5f);
  CUDA_OK(cudaDeviceSynchronize());

  const std::string convName = sh.name;
  const int hwOut = sh.p() * sh.q(), hwIn = sh.h * sh.w;

  LegacyConv legacy;
  legacy.setup(h, sh, cf, X.p, W.p, Yc.p);
  ensureWorkspace(legacy.wsBytes);
  const Stat tConv = timeIt([&] { legacy.run(h, X.p, W.p, Yc.p); });
  const double gflop = 2.0 * ny * sh.c * sh.r * sh.s * 1e-9;
  std::fprintf(stderr, "  %s %s: legacy %s %s us (%.0f TFLOP/s)\n", sh.name, cf.name,
               legacy.label().c_str(), tConv.text().c_str(),
               gflop / tConv.med * 1e3);

  for (int mode = 0; mode < 4; ++mode) {
    const bool p2 = mode == 3;
    if (!opt.pattern(p2 ? "P2" : "P1"))
      continue;
    const std::string pattern = p2 ? "P2 relu(scale·x+bias)→conv→GEN_STATS" : p1Name[mode];
    if (overBudget()) {
      row({pattern, convName, cf.name, "—", "skipped (time budget)", "", "", "", "",
           "", "", ""});
      if (p2)
        p2rec->why = "skipped (time budget)";
      continue;
    }
    std::fprintf(stderr, "  %s %s: %s\n", sh.name, cf.name, pattern.c_str());
    // The unfused pipeline and its result.
    Stat tEpi, tStats, tUnfused;
    if (!p2) {
      legacy.run(h, X.p, W.p, Yc.p);
      launchEpilogue<T>(mode, cf.layout, Yc.p, Yu.p, Sk.p, Bk.p, ny, sh.k, hwOut);
      tEpi = timeIt([&] {
        launchEpilogue<T>(mode, cf.layout, Yc.p, Yu.p, Sk.p, Bk.p, ny, sh.k, hwOut);
      });
      tUnfused = timeIt([&] {
        legacy.run(h, X.p, W.p, Yc.p);
        launchEpilogue<T>(mode, cf.layout, Yc.p, Yu.p, Sk.p, Bk.p, ny, sh.k, hwOut);
      });
      std::fprintf(stderr, "    epilogue kernel %s us, %.0f GB/s\n", tEpi.text().c_str(),
                   2.0 * ny * es / tEpi.med * 1e-3);
    } else {
      launchEpilogue<T>(2, cf.layout, X.p, Xa.p, Sc.p, Bc.p, nx, sh.c, hwIn);
      legacy.run(h, Xa.p, W.p, Yc.p);
      launchStats<T>(cf.layout, Yc.p, uSum, uSq, sh);
      tEpi = timeIt([&] {
        launchEpilogue<T>(2, cf.layout, X.p, Xa.p, Sc.p, Bc.p, nx, sh.c, hwIn);
      });
      tStats = timeIt([&] { launchStats<T>(cf.layout, Yc.p, uSum, uSq, sh); });
      tUnfused = timeIt([&] {
        launchEpilogue<T>(2, cf.layout, X.p, Xa.p, Sc.p, Bc.p, nx, sh.c, hwIn);
        legacy.run(h, Xa.p, W.p, Yc.p);
        launchStats<T>(cf.layout, Yc.p, uSum, uSq, sh);
      });
      std::fprintf(stderr, "    prologue kernel %s us (%.0f GB/s), stats kernel %s us (%.0f GB/s)\n",
                   tEpi.text().c_str(), 2.0 * nx * es / tEpi.med * 1e-3,
                   tStats.text().c_str(), 1.0 * ny * es / tStats.med * 1e-3);
    }
    CUDA_OK(cudaDeviceSynchronize());
    if (p2) {
      p2rec->ran = true;
      p2rec->convUs = tConv.med;
      p2rec->unfusedUs = tUnfused.med;
    }
    const std::string kernelsUs =
        p2 ? fmt("%.1f", tEpi.med) + " + " + fmt("%.1f", tStats.med) : fmt("%.1f", tEpi.med);

    // The fused graph.
    FusedOutcome fused;
    std::string graphNote;
    std::vector<cudnnDataType_t> virts = {CUDNN_DATA_FLOAT};
    if (p2 && cf.dtype != CUDNN_DATA_FLOAT)
      virts.push_back(cf.dtype);
    std::function<void()> pre;
    std::vector<std::unique_ptr<Graph>> graphs;  // alive as long as the plans
    for (cudnnDataType_t virt : virts) {
      graphs.push_back(std::make_unique<Graph>());
      Graph &g = *graphs.back();
      try {
        if (p2)
          buildP2(g, h, sh, cf, virt);
        else
          buildP1(g, h, sh, cf, mode);
      } catch (const Unsupported &u) {
        fused = FusedOutcome();
        fused.engines = "graph err";
        fused.reason = u.text();
        std::fprintf(stderr, "    graph: %s\n", u.text().c_str());
        continue;
      }
      std::vector<std::pair<int64_t, void *>> io = {{kX, X.p}, {kW, W.p}, {kY, Yf.p}};
      if (p2) {
        io.push_back({kScale, Sc.p});
        io.push_back({kBias, Bc.p});
        io.push_back({kSum, fSum});
        io.push_back({kSq, fSq});
      } else {
        if (mode == 2)
          io.push_back({kScale, Sk.p});
        if (mode >= 1)
          io.push_back({kBias, Bk.p});
      }
      fused = runFused(h, g, io, pre);
      if (fused.ok()) {
        if (virt != CUDNN_DATA_FLOAT)
          graphNote = std::string(" (") + dtypeName(virt) + " virtuals)";
        break;
      }
    }
    if (!fused.ok()) {
      row({pattern, convName, cf.name, fused.engines, "unsupported " + footnote(fused.reason),
           "", "", fmt("%.1f", tConv.med), kernelsUs, tUnfused.text(), "—", ""});
      if (p2)
        p2rec->why = "no fused plan ran";
      continue;
    }
    Candidate &best = fused.candidates[size_t(fused.best)];
    // The check: each output's max |fused - unfused| / max |unfused| against
    // the configuration's tolerance (NaN compares false: flagged too).
    bool overTol = false;
    auto checked = [&](const Diff &d) {
      const bool ok = d.rel() <= cf.tol;
      overTol = overTol || !ok;
      return d.text() + (ok ? "" : " over tol");
    };
    std::string diff;
    if (!p2) {
      fillValue<T><<<gridFor(ny), 256>>>(Yf.as<T>(), ny, -7.0f);
      CUDA_OK(cudaGetLastError());
      execute(h, best);
      CUDA_OK(cudaDeviceSynchronize());
      diff = checked(compare<T>(Yf.p, Yu.p, ny));
    } else {
      // Does GEN_STATS overwrite its outputs or accumulate into them?
      fillValue<float><<<1, 256>>>(fSum, 2 * sh.k, 1.0e6f);
      CUDA_OK(cudaGetLastError());
      execute(h, best);
      CUDA_OK(cudaDeviceSynchronize());
      Diff ds = compare<float>(fSum, uSum, sh.k);
      bool accumulates = !(ds.rel() < 1e-2);
      if (accumulates) {
        CUDA_OK(cudaMemset(fSum, 0, 2 * sizeof(float) * sh.k));
        execute(h, best);
        CUDA_OK(cudaDeviceSynchronize());
        ds = compare<float>(fSum, uSum, sh.k);
      }
      Diff dy = compare<T>(Yf.p, Yc.p, ny), dq = compare<float>(fSq, uSq, sh.k);
      diff = "y " + checked(dy) + ", sum " + checked(ds) + ", sq " + checked(dq) +
             (accumulates ? " (accumulates: needs zeroing, timed without it)" : "");
      p2rec->fused = true;
      p2rec->fusedUs = best.time.med;
      p2rec->overTol = overTol;
    }
    std::string eng = best.engine.label() + graphNote;
    row({pattern, convName, cf.name, fused.engines, best.time.text(), eng,
         fmt("%.0f", best.finalizeMs), fmt("%.1f", tConv.med), kernelsUs,
         tUnfused.text(), fmt("%.2f×", tUnfused.med / best.time.med), diff});
  }
  CUDA_OK(cudaDeviceSynchronize());
}

// ---------------------------------------------------------------- P0: plain convolutions

/// P0's times of one shape, pass and configuration, for p0Summary.
struct P0Time {
  bool graph = false, graphDet = false, legacy = false, legacyDet = false;
  bool overTol = false;  // a graph result over the tolerance
  double graphUs = 0, graphDetUs = 0, legacyUs = 0, legacyDetUs = 0;
  std::string why;  // why the shape is not counted
};
using P0Times = std::array<P0Time, 3>;  // fprop, dgrad, wgrad

/// One pass of P0: the legacy calls (Ref = the fastest one's result), then
/// the one-operation graph, whose fastest plan (and fastest deterministic
/// one, when another) is checked against Ref.
template <class T>
void runP0Pass(cudnnHandle_t h, const ConvShape &sh, const Config &cf, Pass pass,
               const DeviceBuffer &X, const DeviceBuffer &W, const DeviceBuffer &DY,
               P0Time &rec) {
  const std::string pattern = std::string("P0 ") + passName(pass);
  const int64_t nOut = pass == Pass::Fprop   ? sh.yNumel()
                       : pass == Pass::Dgrad ? sh.xNumel()
                                             : sh.wNumel();
  DeviceBuffer Ref(nOut * sizeof(T)), Out(nOut * sizeof(T));
  const double gflop = 2.0 * sh.yNumel() * sh.c * sh.r * sh.s * 1e-9;
  std::fprintf(stderr, "  %s %s: %s\n", sh.name, cf.name, pattern.c_str());

  // The legacy calls.
  LegacyPass legacy;
  Stat tAny, tDet;
  bool haveRef = false;
  std::string legacyCell = "—", legacyDetCell = "—", algos = "—";
  try {
    legacy.setup(h, sh, cf, pass, X.p, W.p, DY.p, Ref.p);
    algos = legacy.any.label();
    if (!legacy.det.ok)
      algos += "; no det";
    else if (legacy.det.same(legacy.any))
      algos += " (det)";
    else
      algos += "; det " + legacy.det.label();
    tAny = timeIt([&] { legacy.run(h, false, Ref.p); });
    rec.legacy = true;
    rec.legacyUs = tAny.med;
    legacyCell = tAny.text();
    std::fprintf(stderr, "    legacy %s (%d of %d succeeded in cudnnFind): %s us "
                 "(%.0f TFLOP/s), ws %zu\n", legacy.any.label().c_str(),
                 legacy.succeeded, legacy.returned, tAny.text().c_str(),
                 gflop / tAny.med * 1e3, legacy.any.wsBytes);
    if (legacy.det.ok) {
      tDet = legacy.det.same(legacy.any) ? tAny
                                          : timeIt([&] { legacy.run(h, true, Out.p); });
      rec.legacyDet = true;
      rec.legacyDetUs = tDet.med;
      legacyDetCell = tDet.text();
      std::fprintf(stderr, "    legacy det %s: %s us, ws %zu\n",
                   legacy.det.label().c_str(), tDet.text().c_str(), legacy.det.wsBytes);
    }
    legacy.run(h, false, Ref.p);
    CUDA_OK(cudaDeviceSynchronize());
    haveRef = true;
  } catch (const Unsupported &u) {
    std::fprintf(stderr, "    legacy: %s\n", u.text().c_str());
    if (!rec.legacy)
      legacyCell = "err " + footnote(u.text());
    else if (!rec.legacyDet)
      legacyDetCell = "err " + footnote(u.text());
    CUDA_OK(cudaDeviceSynchronize());
  }

  // The graph.
  Graph g;
  FusedOutcome fused;
  try {
    buildP0(g, h, sh, cf, pass);
    std::vector<std::pair<int64_t, void *>> io;
    if (pass == Pass::Fprop)
      io = {{kX, X.p}, {kW, W.p}, {kY, Out.p}};
    else if (pass == Pass::Dgrad)
      io = {{kX, Out.p}, {kW, W.p}, {kY, DY.p}};
    else
      io = {{kX, X.p}, {kW, Out.p}, {kY, DY.p}};
    fused = runFused(h, g, io, nullptr, kP0WsCap, kP0FinalizeS);
  } catch (const Unsupported &u) {
    fused = FusedOutcome();
    fused.engines = "graph err";
    fused.reason = u.text();
    std::fprintf(stderr, "    graph: %s\n", u.text().c_str());
  }
  if (!fused.ok()) {
    const std::string what = fused.candidates.empty() ? "no engine finalized "
                                                      : "no plan ran ";
    row({pattern, sh.name, cf.name, fused.engines, what + footnote(fused.reason), "", "",
         legacyCell, legacyDetCell, algos, "—", ""});
    rec.why = "no graph plan ran";
    return;
  }
  const Candidate &best = fused.candidates[size_t(fused.best)];
  const Candidate *bestDet =
      fused.bestDet >= 0 ? &fused.candidates[size_t(fused.bestDet)] : nullptr;
  rec.graph = true;
  rec.graphUs = best.time.med;
  if (bestDet) {
    rec.graphDet = true;
    rec.graphDetUs = bestDet->time.med;
  }
  std::fprintf(stderr, "    graph best %s %s: %s us (%.0f TFLOP/s)\n",
               best.engine.label().c_str(), best.engine.determinism().c_str(),
               best.time.text().c_str(), gflop / best.time.med * 1e3);

  // The check: max |graph - legacy| / max |legacy| against the tolerance.
  std::string diff = "— (no legacy result)";
  if (haveRef) {
    auto check = [&](const Candidate &c) {
      fillValue<T><<<gridFor(nOut), 256>>>(Out.as<T>(), nOut, -7.0f);
      CUDA_OK(cudaGetLastError());
      execute(h, c);
      CUDA_OK(cudaDeviceSynchronize());
      const Diff d = compare<T>(Out.p, Ref.p, nOut);
      const bool ok = d.rel() <= cf.tol;
      rec.overTol = rec.overTol || !ok;
      return d.text() + (ok ? "" : " over tol");
    };
    try {
      diff = check(best);
      if (bestDet && bestDet != &best)
        diff += "; fastest det: " + check(*bestDet);
    } catch (const Unsupported &u) {
      diff = "check failed " + footnote(u.text());
      rec.overTol = true;
      CUDA_OK(cudaDeviceSynchronize());
    }
  }
  std::string eng = best.engine.label() + " " + best.engine.determinism();
  if (!best.engine.knobs.empty())
    eng += " knobs " + best.engine.knobs;
  if (!bestDet)
    eng += "; no det plan ran";
  else if (bestDet != &best)
    eng += "; fastest det: " + bestDet->engine.label() + " " +
           fmt("%.1f", bestDet->time.med) + " µs";
  row({pattern, sh.name, cf.name, fused.engines, best.time.text(), eng,
       fmt("%.0f", best.finalizeMs), legacyCell, legacyDetCell, algos,
       rec.legacyDet ? fmt("%.2f×", tDet.med / best.time.med) : "—", diff});
}

/// P0's three passes of one shape in one configuration. Inputs: x in
/// U[-1, 1], w as runShape's (|y| < ~0.1), dy in U[-0.5, 0.5]: dx's std
/// ~0.008 sqrt(K/C) (~0.004-0.015), dw = a sum of N*P*Q products, std
/// ~sqrt(NPQ)/6 (~110 at 128x56x56, max ~5x that): inside fp16.
template <class T>
void runP0Shape(cudnnHandle_t h, const ConvShape &sh, const Config &cf, P0Times &rec) {
  if (overBudget()) {
    for (int i = 0; i < 3; ++i) {
      row({std::string("P0 ") + passName(kPasses[i]), sh.name, cf.name, "—",
           "skipped (time budget)", "", "", "", "", "", "", ""});
      rec[size_t(i)].why = "skipped (time budget)";
    }
    return;
  }
  const int64_t nx = sh.xNumel(), nw = sh.wNumel(), ny = sh.yNumel();
  const size_t es = sizeof(T);
  DeviceBuffer X(nx * es), W(nw * es), DY(ny * es);
  const float f = float(sh.c * sh.r * sh.s);
  const float wMean = 0.1f / f, wHalfRange = 0.04f / std::sqrt(f);
  fill<T>(X.p, nx, 21, -1.0f, 1.0f);
  fill<T>(W.p, nw, 22, wMean - wHalfRange, wMean + wHalfRange);
  fill<T>(DY.p, ny, 23, -0.5f, 0.5f);
  CUDA_OK(cudaDeviceSynchronize());
  for (int i = 0; i < 3; ++i) {
    if (overBudget()) {
      row({std::string("P0 ") + passName(kPasses[i]), sh.name, cf.name, "—",
           "skipped (time budget)", "", "", "", "", "", "", ""});
      rec[size_t(i)].why = "skipped (time budget)";
      continue;
    }
    runP0Pass<T>(h, sh, cf, kPasses[i], X, W, DY, rec[size_t(i)]);
  }
  CUDA_OK(cudaDeviceSynchronize());
}

// ---------------------------------------------------------------- P3: cuBLASLt

struct LtCase {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  ~LtCase() {
    if (op) cublasLtMatmulDescDestroy(op);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
  }
};

/// A column-major D[m,n] = op(A)[m,k] op(B)[k,n] with TF32, an epilogue and
/// its bias pointer; the heuristic's algorithms (throws when none).
void ltSetup(LtCase &c, cublasLtHandle_t lt, cublasOperation_t ta,
             cublasOperation_t tb, int64_t m, int64_t n, int64_t k,
             cublasLtEpilogue_t epi, void *bias, size_t wsBytes) {
  CUBLAS_TRY("matmul desc", cublasLtMatmulDescCreate(&c.op, CUBLAS_COMPUTE_32F_FAST_TF32,
                                                     CUDA_R_32F));
  CUBLAS_TRY("transa", cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                      &ta, sizeof ta));
  CUBLAS_TRY("transb", cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSB,
                                                      &tb, sizeof tb));
  CUBLAS_TRY("epilogue", cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                        &epi, sizeof epi));
  if (bias)
    CUBLAS_TRY("bias pointer",
               cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                              &bias, sizeof bias));
  const int64_t ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
  const int64_t br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
  CUBLAS_TRY("layout A", cublasLtMatrixLayoutCreate(&c.a, CUDA_R_32F, ar, ac, ar));
  CUBLAS_TRY("layout B", cublasLtMatrixLayoutCreate(&c.b, CUDA_R_32F, br, bc, br));
  CUBLAS_TRY("layout D", cublasLtMatrixLayoutCreate(&c.d, CUDA_R_32F, m, n, m));
  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_TRY("preference", cublasLtMatmulPreferenceCreate(&pref));
  uint64_t ws = wsBytes;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  c.algos.resize(8);
  int got = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(lt, c.op, c.a, c.b, c.d, c.d, pref, 8,
                                        c.algos.data(), &got);
  cublasLtMatmulPreferenceDestroy(pref);
  CUBLAS_TRY("cublasLtMatmulAlgoGetHeuristic", st);
  c.algos.resize(size_t(std::max(got, 0)));
  if (c.algos.empty())
    throw Unsupported{"cublasLtMatmulAlgoGetHeuristic", "no algorithm", ""};
}

/// The fastest heuristic algorithm of c; returns its time, sets *bestIdx.
Stat ltBest(cublasLtHandle_t lt, LtCase &c, const void *A, const void *B, void *D,
            int *bestIdx, int reps) {
  const float one = 1, zero = 0;
  Stat best;
  best.med = 1e300;
  for (size_t i = 0; i < c.algos.size(); ++i) {
    if (c.algos[i].state != CUBLAS_STATUS_SUCCESS ||
        c.algos[i].workspaceSize > workspace.bytes)
      continue;
    auto run = [&] {
      CUBLAS_TRY("cublasLtMatmul",
                 cublasLtMatmul(lt, c.op, &one, A, c.a, B, c.b, &zero, D, c.d, D, c.d,
                                &c.algos[i].algo, workspace.p, workspace.bytes, 0));
    };
    try {
      run();
      CUDA_OK(cudaDeviceSynchronize());
      Stat s = timeIt(run, reps);
      if (s.med < best.med)
        best = s, *bestIdx = int(i);
    } catch (const Unsupported &u) {
      std::fprintf(stderr, "    Lt algo %zu: %s\n", i, u.text().c_str());
    }
  }
  if (*bestIdx < 0)
    throw Unsupported{"cublasLtMatmul", "no algorithm ran", ""};
  return best;
}

void ltRun(cublasLtHandle_t lt, LtCase &c, int idx, const void *A, const void *B,
           void *D) {
  const float one = 1, zero = 0;
  CUBLAS_OK(cublasLtMatmul(lt, c.op, &one, A, c.a, B, c.b, &zero, D, c.d, D, c.d,
                           &c.algos[size_t(idx)].algo, workspace.p, workspace.bytes, 0));
}

void runP3(cublasHandle_t blas, cublasLtHandle_t lt, cudnnHandle_t dnn) {
  const int B = 128, IN = 2048, OUT = 1000;
  const int reps = 10;
  DeviceBuffer X(sizeof(float) * B * IN), Wt(sizeof(float) * OUT * IN),
      bias(sizeof(float) * OUT), Yu(sizeof(float) * B * OUT), Yf(sizeof(float) * B * OUT),
      dY(sizeof(float) * B * OUT), dWu(sizeof(float) * OUT * IN),
      dWf(sizeof(float) * OUT * IN), dbU(sizeof(float) * OUT), dbF(sizeof(float) * OUT);
  fill<float>(X.p, int64_t(B) * IN, 11, -1, 1);
  fill<float>(Wt.p, int64_t(OUT) * IN, 12, -0.03f, 0.03f);
  fill<float>(bias.p, OUT, 13, -1, 1);
  fill<float>(dY.p, int64_t(B) * OUT, 14, -0.5f, 1.0f);
  CUDA_OK(cudaDeviceSynchronize());
  const float one = 1, zero = 0;

  std::printf("\n### P3: classifier layer, cuBLASLt epilogues (fp32 data, "
              "CUBLAS_COMPUTE_32F_FAST_TF32; µs, median (min–max) of %d samples of "
              "%d back-to-back calls each, after %d warm-ups)\n\n",
              opt.iters, reps, opt.warmups);
  row({"case", "fused (Lt epilogue)", "unfused: GEMM + kernel", "GEMM alone: cuBLAS; Lt",
       "kernel alone", "speedup (unfused/fused)", "max diff fused vs unfused"});
  row({"---", "---", "---", "---", "---", "---", "---"});

  // Forward. Row-major Y[128,1000] = X[128,2048] W^T (W [1000,2048], Fluid's
  // linear) = column-major D[1000,128] = op_T(W) X, m=1000 n=128 k=2048; the
  // bias is per row of D.
  auto gemmFwd = [&](void *y) {
    CUBLAS_OK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, OUT, B, IN, &one, Wt.p,
                           CUDA_R_32F, IN, X.p, CUDA_R_32F, IN, &zero, y, CUDA_R_32F,
                           OUT, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
  };
  auto biasKernel = [&] {
    biasAddRows<<<gridFor(int64_t(B) * OUT / 4), 256>>>(Yu.as<float>(), bias.as<float>(),
                                                        int64_t(B) * OUT / 4, OUT);
    CUDA_OK(cudaGetLastError());
  };
  cudnnTensorDescriptor_t bdesc, ydesc;
  CUDNN_OK(cudnnCreateTensorDescriptor(&bdesc));
  CUDNN_OK(cudnnCreateTensorDescriptor(&ydesc));
  CUDNN_OK(cudnnSetTensor4dDescriptor(bdesc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, OUT, 1, 1));
  CUDNN_OK(cudnnSetTensor4dDescriptor(ydesc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, B, OUT, 1, 1));
  auto addTensor = [&] {
    CUDNN_OK(cudnnAddTensor(dnn, &one, bdesc, bias.p, &one, ydesc, Yu.p));
  };
  const Stat tGemmFwd = timeIt([&] { gemmFwd(Yu.p); }, reps);
  const Stat tBias = timeIt(biasKernel, reps);
  const Stat tAdd = timeIt(addTensor, reps);
  const Stat tUnfusedFwd = timeIt([&] { gemmFwd(Yu.p); biasKernel(); }, reps);
  const Stat tUnfusedAdd = timeIt([&] { gemmFwd(Yu.p); addTensor(); }, reps);
  gemmFwd(Yu.p);
  biasKernel();
  CUDA_OK(cudaDeviceSynchronize());
  {
    std::string ltPlain = "—";
    try {
      LtCase plain;
      ltSetup(plain, lt, CUBLAS_OP_T, CUBLAS_OP_N, OUT, B, IN, CUBLASLT_EPILOGUE_DEFAULT,
              nullptr, workspace.bytes);
      int idx = -1;
      ltPlain = fmt("%.1f", ltBest(lt, plain, Wt.p, X.p, Yf.p, &idx, reps).med);
    } catch (const Unsupported &u) {
      ltPlain = "err " + footnote("Lt plain forward: " + u.text());
    }
    const std::string gemms = fmt("%.1f", tGemmFwd.med) + "; " + ltPlain;
    try {
      LtCase c;
      ltSetup(c, lt, CUBLAS_OP_T, CUBLAS_OP_N, OUT, B, IN, CUBLASLT_EPILOGUE_BIAS, bias.p,
              workspace.bytes);
      int idx = -1;
      Stat t = ltBest(lt, c, Wt.p, X.p, Yf.p, &idx, reps);
      fillValue<float><<<gridFor(B * OUT), 256>>>(Yf.as<float>(), int64_t(B) * OUT, -7);
      ltRun(lt, c, idx, Wt.p, X.p, Yf.p);
      CUDA_OK(cudaDeviceSynchronize());
      std::string d = compare<float>(Yf.p, Yu.p, int64_t(B) * OUT).text();
      row({"fwd Y=XWᵀ+b, EPILOGUE_BIAS vs cuBLAS + bias kernel", t.text(),
           tUnfusedFwd.text(), gemms, fmt("%.1f", tBias.med),
           fmt("%.2f×", tUnfusedFwd.med / t.med), d});
      row({"fwd, EPILOGUE_BIAS vs cuBLAS + cudnnAddTensor (Fluid today)", t.text(),
           tUnfusedAdd.text(), gemms, fmt("%.1f", tAdd.med),
           fmt("%.2f×", tUnfusedAdd.med / t.med), d});
    } catch (const Unsupported &u) {
      row({"fwd, EPILOGUE_BIAS", "unsupported " + footnote("EPILOGUE_BIAS: " + u.text()),
           tUnfusedFwd.text(), gemms, fmt("%.1f", tBias.med), "—", ""});
    }
  }

  // Backward. dW[1000,2048] = dY^T X (row-major) = column-major D[2048,1000] =
  // X_col[2048,128] op_T(dY_col[1000,128]): m=2048 n=1000 k=128; db = the
  // sum over k of op(B): BGRADB. The transposed dW^T[2048,1000] (row-major)
  // = column-major D[1000,2048] = dY_col op_T(X_col): m=1000 n=2048 k=128,
  // db the sum over k of A: BGRADA.
  for (int variant = 0; variant < 2; ++variant) {
    const bool bgradb = variant == 0;
    const int m = bgradb ? IN : OUT, n = bgradb ? OUT : IN;
    const void *A = bgradb ? X.p : dY.p;
    const void *Bm = bgradb ? dY.p : X.p;
    const int lda = bgradb ? IN : OUT, ldb = bgradb ? OUT : IN;
    auto gemmBwd = [&](void *d) {
      CUBLAS_OK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_T, m, n, B, &one, A, CUDA_R_32F,
                             lda, Bm, CUDA_R_32F, ldb, &zero, d, CUDA_R_32F, m,
                             CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    };
    auto dbKernel = [&] {
      columnSums<<<(OUT + 31) / 32, dim3(32, 8)>>>(dY.as<float>(), dbU.as<float>(), B, OUT);
      CUDA_OK(cudaGetLastError());
    };
    const Stat tG = timeIt([&] { gemmBwd(dWu.p); }, reps);
    const Stat tK = timeIt(dbKernel, reps);
    const Stat tU = timeIt([&] { gemmBwd(dWu.p); dbKernel(); }, reps);
    gemmBwd(dWu.p);
    dbKernel();
    CUDA_OK(cudaDeviceSynchronize());
    const std::string name = bgradb ? "bwd dW=dYᵀX + db, BGRADB vs cuBLAS + column-sum kernel"
                                    : "bwd dWᵀ=XᵀdY + db, BGRADA vs cuBLAS + column-sum kernel";
    std::string ltPlain = "—";
    try {
      LtCase plain;
      ltSetup(plain, lt, CUBLAS_OP_N, CUBLAS_OP_T, m, n, B, CUBLASLT_EPILOGUE_DEFAULT,
              nullptr, workspace.bytes);
      int idx = -1;
      ltPlain = fmt("%.1f", ltBest(lt, plain, A, Bm, dWf.p, &idx, reps).med);
    } catch (const Unsupported &u) {
      ltPlain = "err " + footnote("Lt plain backward: " + u.text());
    }
    const std::string gemms = fmt("%.1f", tG.med) + "; " + ltPlain;
    try {
      LtCase c;
      ltSetup(c, lt, CUBLAS_OP_N, CUBLAS_OP_T, m, n, B,
              bgradb ? CUBLASLT_EPILOGUE_BGRADB : CUBLASLT_EPILOGUE_BGRADA, dbF.p,
              workspace.bytes);
      int idx = -1;
      Stat t = ltBest(lt, c, A, Bm, dWf.p, &idx, reps);
      fillValue<float><<<gridFor(int64_t(IN) * OUT), 256>>>(dWf.as<float>(), int64_t(IN) * OUT, -7);
      fillValue<float><<<gridFor(OUT), 256>>>(dbF.as<float>(), OUT, -7);
      ltRun(lt, c, idx, A, Bm, dWf.p);
      CUDA_OK(cudaDeviceSynchronize());
      std::string d = "dW " + compare<float>(dWf.p, dWu.p, int64_t(IN) * OUT).text() +
                      ", db " + compare<float>(dbF.p, dbU.p, OUT).text();
      row({name, t.text(), tU.text(), gemms, fmt("%.1f", tK.med), fmt("%.2f×", tU.med / t.med),
           d});
    } catch (const Unsupported &u) {
      row({name, "unsupported " + footnote((bgradb ? "BGRADB: " : "BGRADA: ") + u.text()),
           tU.text(), gemms, fmt("%.1f", tK.med), "—", ""});
    }
  }
  cudnnDestroyTensorDescriptor(bdesc);
  cudnnDestroyTensorDescriptor(ydesc);
}

// ---------------------------------------------------------------- shapes, configs

/// The cuDNN cases' configurations (--configs selects by key).
const Config kConfigs[] = {
    {"nchw-fp32", "NCHW fp32 (TF32)", Layout::NCHW, CUDNN_DATA_FLOAT, 4, 3.9e-3},
    {"nhwc-fp32", "NHWC fp32 (TF32)", Layout::NHWC, CUDNN_DATA_FLOAT, 4, 3.9e-3},
    {"nhwc-fp16", "NHWC fp16", Layout::NHWC, CUDNN_DATA_HALF, 2, 3.9e-3},
    {"nhwc-bf16", "NHWC bf16", Layout::NHWC, CUDNN_DATA_BFLOAT16, 2, 3.1e-2},
};

/// ResNet-50 (batch 128), stride 1. The last field: how often the shape has
/// a batch norm + ReLU as its input in one forward pass (see p2Summary):
/// per bottleneck block bn1+ReLU -> 3x3 C->C, bn2+ReLU -> 1x1 C->4C; 3, 4,
/// 6, 3 blocks for C = 64, 128, 256, 512. The last two, block-input 1x1
/// convolutions (input relu(bn + residual)), count 0.
const ConvShape kShapes[] = {
    {"[128,64,56,56] → [64,64,3,3] p1", 128, 64, 56, 56, 64, 3, 3, 1, 3},
    {"[128,64,56,56] → [256,64,1,1]", 128, 64, 56, 56, 256, 1, 1, 0, 3},
    {"[128,128,28,28] → [128,128,3,3] p1", 128, 128, 28, 28, 128, 3, 3, 1, 4},
    {"[128,128,28,28] → [512,128,1,1]", 128, 128, 28, 28, 512, 1, 1, 0, 4},
    {"[128,256,14,14] → [256,256,3,3] p1", 128, 256, 14, 14, 256, 3, 3, 1, 6},
    {"[128,256,14,14] → [1024,256,1,1]", 128, 256, 14, 14, 1024, 1, 1, 0, 6},
    {"[128,512,7,7] → [512,512,3,3] p1", 128, 512, 7, 7, 512, 3, 3, 1, 3},
    {"[128,512,7,7] → [2048,512,1,1]", 128, 512, 7, 7, 2048, 1, 1, 0, 3},
    {"[128,256,56,56] → [64,256,1,1]", 128, 256, 56, 56, 64, 1, 1, 0, 0},
    {"[128,512,28,28] → [128,512,1,1]", 128, 512, 28, 28, 128, 1, 1, 0, 0},
};
constexpr size_t kShapeCount = sizeof kShapes / sizeof kShapes[0];

/// The configurations to run, in --configs' order (default: kConfigs').
std::vector<const Config *> selectedConfigs() {
  std::vector<const Config *> out;
  if (opt.configs.empty()) {
    for (const Config &cf : kConfigs)
      out.push_back(&cf);
    return out;
  }
  for (const std::string &key : opt.configs)
    for (const Config &cf : kConfigs)
      if (key == cf.key)
        out.push_back(&cf);
  return out;
}

/// P2 summed over one ResNet-50 forward pass, a line per configuration:
/// sum over shapes of resnet x µs / 1000 of the fused graph, the legacy conv
/// alone and the unfused path, and their difference (ms per forward pass).
void p2Summary(const std::map<std::string, std::vector<P2Time>> &results) {
  int total = 0;
  for (const ConvShape &sh : kShapes)
    total += sh.resnet;
  std::printf(
      "\n### P2 over one ResNet-50 forward pass (batch 128)\n\n"
      "ms per forward pass = sum over the shapes of count × µs / 1000, count = "
      "how often the shape's convolution has a batch norm + ReLU as its input in "
      "one forward pass: per bottleneck block bn1+ReLU → 3x3 C→C and bn2+ReLU → "
      "1x1 C→4C, 3, 4, 6 and 3 blocks for C = 64, 128, 256, 512 (%d convolutions; "
      "the block-input 1x1 convolutions, whose input is relu(bn + residual), and "
      "the stem are not counted). The first block of stages 2-4 has its 3x3 at "
      "stride 2 in torchvision (input twice the height and width, same output and "
      "FLOPs): counted at the stride-1 shape, so the prologue of those 3 "
      "convolutions is a quarter of its real size. A shape counts only where both "
      "paths ran. fused = the graph prologue + conv + GEN_STATS; legacy conv = "
      "the cudnnFind convolution alone; unfused = prologue kernel + legacy conv + "
      "statistics kernel; fused − legacy conv < 0: the fused graph beats even the "
      "legacy convolution alone.\n\n",
      total);
  row({"config", "convs counted", "fused ms", "legacy conv ms", "unfused ms",
       "saved ms (unfused − fused)", "unfused / fused", "fused − legacy conv ms",
       "not counted / notes"});
  row({"---", "---", "---", "---", "---", "---", "---", "---", "---"});
  for (const Config *cfp : selectedConfigs()) {
    const Config &cf = *cfp;
    auto it = results.find(cf.key);
    if (it == results.end())
      continue;
    double fused = 0, conv = 0, unfused = 0;
    int counted = 0;
    std::string notes, over;
    for (size_t i = 0; i < kShapeCount; ++i) {
      const ConvShape &sh = kShapes[i];
      const P2Time &t = it->second[i];
      if (sh.resnet == 0)
        continue;
      if (!t.ran || !t.fused) {
        notes += std::string(notes.empty() ? "" : "; ") + sh.name + " ×" +
                 std::to_string(sh.resnet) + ": " +
                 (t.why.empty() ? std::string("not run") : t.why);
        continue;
      }
      counted += sh.resnet;
      fused += sh.resnet * t.fusedUs * 1e-3;
      conv += sh.resnet * t.convUs * 1e-3;
      unfused += sh.resnet * t.unfusedUs * 1e-3;
      if (t.overTol)
        over += std::string(over.empty() ? "" : ", ") + sh.name;
    }
    if (!over.empty())
      notes += std::string(notes.empty() ? "" : "; ") + "fused result over tol: " + over;
    if (counted == 0) {
      row({cf.name, "0 of " + std::to_string(total), "—", "—", "—", "—", "—", "—",
           notes.empty() ? "—" : notes});
      continue;
    }
    row({cf.name, std::to_string(counted) + " of " + std::to_string(total),
         fmt("%.2f", fused), fmt("%.2f", conv), fmt("%.2f", unfused),
         fmt("%.2f", unfused - fused), fmt("%.2f×", unfused / fused),
         fmt("%+.2f", fused - conv), notes.empty() ? "—" : notes});
  }
}

/// P0 summed over one ResNet-50 training step: per configuration and pass
/// (and the three together), sum over shapes of resnet x µs / 1000 of the
/// graph's fastest plan, its fastest deterministic plan, the legacy fastest
/// and the legacy fastest deterministic algorithm.
void p0Summary(const std::map<std::string, std::vector<P0Times>> &results) {
  int total = 0;
  for (const ConvShape &sh : kShapes)
    total += sh.resnet;
  std::printf(
      "\n### P0 over one ResNet-50 training step (batch 128)\n\n"
      "ms per step = sum over the shapes of count × µs / 1000, per pass, with P2's "
      "counts (%d convolutions: per bottleneck block the 3x3 C→C and the 1x1 C→4C, "
      "3, 4, 6 and 3 blocks for C = 64, 128, 256, 512; the 3x3 of the first block of "
      "stages 2-4, stride 2 in torchvision, counted at the stride-1 shape; the "
      "block-input 1x1 convolutions, the downsampling ones and the stem not "
      "counted). A shape counts in a pass only where the graph, the legacy fastest "
      "and the legacy fastest deterministic algorithm all ran. graph = the fastest "
      "plan; graph det = the fastest plan whose engine has no "
      "CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC (\"—\" when a counted shape has none); "
      "legacy = cudnnFind's fastest; legacy det = its fastest deterministic one "
      "(what the Fluid runtime prefers). all = fprop + dgrad + wgrad.\n\n",
      total);
  row({"config", "pass", "convs counted", "graph ms", "graph det ms", "legacy ms",
       "legacy det ms", "legacy det − graph ms", "legacy det / graph",
       "legacy det − graph det ms", "not counted / notes"});
  row({"---", "---", "---", "---", "---", "---", "---", "---", "---", "---", "---"});
  for (const Config *cfp : selectedConfigs()) {
    const Config &cf = *cfp;
    auto it = results.find(cf.key);
    if (it == results.end())
      continue;
    double allGraph = 0, allGraphDet = 0, allLegacy = 0, allLegacyDet = 0;
    int allCounted = 0, allNoDet = 0;
    bool allPartial = false;  // a pass left shapes out or has a result over tol
    for (int pi = 0; pi <= 3; ++pi) {
      const bool all = pi == 3;
      double graph = 0, graphDet = 0, legacy = 0, legacyDet = 0;
      int counted = 0, noDet = 0;
      std::string notes, over;
      if (all) {
        graph = allGraph, graphDet = allGraphDet, legacy = allLegacy;
        legacyDet = allLegacyDet, counted = allCounted, noDet = allNoDet;
      } else {
        for (size_t i = 0; i < kShapeCount; ++i) {
          const ConvShape &sh = kShapes[i];
          const P0Time &t = it->second[i][size_t(pi)];
          if (sh.resnet == 0)
            continue;
          if (!t.graph || !t.legacy || !t.legacyDet) {
            const std::string why = !t.why.empty() ? t.why
                                    : !t.legacy    ? std::string("legacy failed")
                                    : !t.legacyDet ? std::string("no legacy det algorithm")
                                                   : std::string("not run");
            notes += std::string(notes.empty() ? "" : "; ") + sh.name + " ×" +
                     std::to_string(sh.resnet) + ": " + why;
            continue;
          }
          counted += sh.resnet;
          graph += sh.resnet * t.graphUs * 1e-3;
          legacy += sh.resnet * t.legacyUs * 1e-3;
          legacyDet += sh.resnet * t.legacyDetUs * 1e-3;
          if (t.graphDet)
            graphDet += sh.resnet * t.graphDetUs * 1e-3;
          else
            noDet += sh.resnet;
          if (t.overTol)
            over += std::string(over.empty() ? "" : ", ") + sh.name;
        }
        allGraph += graph, allGraphDet += graphDet, allLegacy += legacy;
        allLegacyDet += legacyDet, allCounted += counted, allNoDet += noDet;
        allPartial = allPartial || !notes.empty() || !over.empty();
      }
      if (all && allPartial)
        notes = "see the passes";
      if (noDet > 0)
        notes += std::string(notes.empty() ? "" : "; ") + std::to_string(noDet) +
                 " counted convs without a deterministic graph plan";
      if (!over.empty())
        notes += std::string(notes.empty() ? "" : "; ") + "graph result over tol: " + over;
      const std::string pass = all ? "all" : passName(kPasses[pi]);
      const std::string of = std::to_string(counted) + " of " +
                             std::to_string(all ? 3 * total : total);
      if (counted == 0) {
        row({cf.name, pass, of, "—", "—", "—", "—", "—", "—", "—",
             notes.empty() ? "—" : notes});
        continue;
      }
      row({cf.name, pass, of, fmt("%.2f", graph), noDet ? "—" : fmt("%.2f", graphDet),
           fmt("%.2f", legacy), fmt("%.2f", legacyDet), fmt("%+.2f", legacyDet - graph),
           fmt("%.2f×", legacyDet / graph),
           noDet ? "—" : fmt("%+.2f", legacyDet - graphDet), notes.empty() ? "—" : notes});
    }
  }
}

// ---------------------------------------------------------------- command line

const char *kUsage =
    "usage: epilogue-probe [--configs=LIST] [--patterns=LIST] [--budget=SECONDS]\n"
    "                      [--max-try=N] [--iters=N] [--help]\n"
    "  --configs=LIST   comma list of nchw-fp32, nhwc-fp32, nhwc-fp16, nhwc-bf16,\n"
    "                   run in that order (default: all, in this order)\n"
    "  --patterns=LIST  comma list of P0, P1, P2, P3 (default: all)\n"
    "  --budget=SECONDS the whole run (default 150); cuDNN cases past it are rows\n"
    "                   \"skipped (time budget)\"\n"
    "  --max-try=N      engine configs finalized per heuristic mode (default 6)\n"
    "  --iters=N        timed samples per measurement (default 20)\n"
    "  e.g. epilogue-probe --configs=nhwc-bf16,nhwc-fp16 --patterns=P2\n"
    "       epilogue-probe --configs=nhwc-bf16,nhwc-fp16,nhwc-fp32 --patterns=P0\n"
    "                      --max-try=4 --iters=10 --budget=110\n";

[[noreturn]] void badOption(const std::string &message) {
  std::fprintf(stderr, "epilogue-probe: %s\n%s", message.c_str(), kUsage);
  std::exit(2);
}

/// The items of a comma list in their order, without repeats, each one of
/// `known` (case-insensitive, stored as spelled in `known`); exits 2 on an
/// unknown or empty item.
std::vector<std::string> parseList(const std::string &option, const std::string &list,
                                   const std::vector<std::string> &known) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::string match;
    for (const std::string &k : known)
      if (k.size() == item.size() &&
          std::equal(k.begin(), k.end(), item.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) ==
                   std::tolower(static_cast<unsigned char>(b));
          }))
        match = k;
    if (item.empty())
      badOption("an empty item in " + option + "=" + list);
    if (match.empty()) {
      std::string all;
      for (const std::string &k : known)
        all += (all.empty() ? "" : ", ") + k;
      badOption("unknown value '" + item + "' in " + option + " (one of " + all + ")");
    }
    if (std::count(out.begin(), out.end(), match) == 0)
      out.push_back(match);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  std::vector<std::string> configKeys;
  for (const Config &cf : kConfigs)
    configKeys.push_back(cf.key);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&](const char *key) -> const char * {
      size_t n = std::strlen(key);
      return a.compare(0, n, key) == 0 ? a.c_str() + n : nullptr;
    };
    if (a == "--help" || a == "-h") {
      std::printf("%s", kUsage);
      return 0;
    } else if (const char *v = val("--budget="))
      opt.budgetS = std::atof(v);
    else if (const char *v2 = val("--max-try="))
      opt.maxTry = std::atoi(v2);
    else if (const char *v3 = val("--iters="))
      opt.iters = std::max(1, std::atoi(v3));
    else if (const char *v4 = val("--configs="))
      opt.configs = parseList("--configs", v4, configKeys);
    else if (const char *v5 = val("--patterns="))
      opt.patterns = parseList("--patterns", v5, {"P0", "P1", "P2", "P3"});
    else
      badOption("unknown option '" + a + "'");
  }
  startS = nowS();
  int devices = 0;
  CUDA_OK(cudaGetDeviceCount(&devices));
  if (devices < 1)
    fatal("no CUDA device");
  CUDA_OK(cudaSetDevice(0));
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  smCount = prop.multiProcessorCount;
  CUDA_OK(cudaEventCreate(&evStart));
  CUDA_OK(cudaEventCreate(&evStop));

  cudnnHandle_t dnn;
  CUDNN_OK(cudnnCreate(&dnn));
  cublasHandle_t blas;
  CUBLAS_OK(cublasCreate(&blas));
  cublasLtHandle_t lt;
  CUBLAS_OK(cublasLtCreate(&lt));
  int blasVersion = 0;
  CUBLAS_OK(cublasGetVersion(blas, &blasVersion));
  workspace = DeviceBuffer(size_t(1) << 30);

  // The device copy, the ceiling of the elementwise kernels.
  double copyGBs = 0;
  {
    const size_t bytes = size_t(1) << 30;
    DeviceBuffer a(bytes), b(bytes);
    CUDA_OK(cudaMemset(a.p, 0, bytes));
    Stat t = timeIt([&] { CUDA_OK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, 0)); });
    copyGBs = 2.0 * bytes / t.med * 1e-3;
  }

  std::printf("## Library epilogues against separate kernels (bench/epilogue-probe.cu)\n\n");
  std::printf("%s, %d SMs; cuDNN %zu (headers %d), cuBLAS %d, cuBLASLt %zu, CUDA runtime "
              "%d; device copy %.0f GB/s (1 GiB, read + write).\n",
              prop.name, smCount, cudnnGetVersion(), CUDNN_VERSION, blasVersion,
              cublasLtGetVersion(), CUDART_VERSION, copyGBs);
  std::fflush(stdout);

  std::string selection;
  for (const Config *cf : selectedConfigs())
    selection += std::string(selection.empty() ? "" : ", ") + cf->key;
  std::string patterns;
  for (const char *pt : {"P0", "P1", "P2", "P3"})
    if (opt.pattern(pt))
      patterns += std::string(patterns.empty() ? "" : ", ") + pt;
  std::printf("Patterns %s; cuDNN configurations %s; time budget %.0f s.\n", patterns.c_str(),
              selection.c_str(), opt.budgetS);
  std::fflush(stdout);

  if (opt.pattern("P3"))
    runP3(blas, lt, dnn);

  std::map<std::string, std::vector<P2Time>> p2Results;  // config key -> per shape
  if (opt.pattern("P1") || opt.pattern("P2")) {
    std::printf(
        "\n### %s: cuDNN backend graphs against the legacy conv + a hand-written "
        "kernel\n\n"
        "µs, median (min–max) of %d runs after %d warm-ups. engines: ok/tried/returned "
        "engine configs of CUDNN_HEUR_MODE_A and FALLBACK (ok = the execution plan "
        "finalized; at most %d tried per mode); fused = the fastest plan that ran; "
        "plan ms = its finalization (rtc = runtime-compiled); conv = legacy "
        "cudnnFind best with CUDNN_TENSOR_OP_MATH; kernels = the hand-written epilogue "
        "(P2: prologue + statistics) alone; unfused = conv + kernels timed together; "
        "speedup = unfused / fused. max diff = max |fused − unfused| (and that / max "
        "|unfused|) of y (P2: y, then the per-channel sum and sum of squares); "
        "\"over tol\" = the ratio above 8 units of the data type's rounding "
        "(TF32 and fp16 3.9e-3, bf16 3.1e-2); inf = NaN or inf in a result. Data "
        "types: x, w, y, scale, bias of the layout's type, P2's statistics fp32, all "
        "compute types fp32.\n\n",
        cudnnPatterns().c_str(), opt.iters, opt.warmups, opt.maxTry);
    row({"pattern", "conv (x → w)", "layout", "engines", "fused µs", "engine", "plan ms",
         "conv µs", "kernels µs", "unfused µs", "speedup", "max diff fused vs unfused"});
    row({"---", "---", "---", "---", "---", "---", "---", "---", "---", "---", "---", "---"});

    for (const Config *cfp : selectedConfigs()) {
      const Config &cf = *cfp;
      std::vector<P2Time> &rec = p2Results[cf.key];
      rec.resize(kShapeCount);
      for (size_t i = 0; i < kShapeCount; ++i) {
        const ConvShape &sh = kShapes[i];
        if (overBudget()) {
          row({cudnnPatterns(), sh.name, cf.name, "—", "skipped (time budget)", "", "", "",
               "", "", "", ""});
          rec[i].why = "skipped (time budget)";
          continue;
        }
        if (cf.dtype == CUDNN_DATA_HALF)
          runShape<__half>(dnn, sh, cf, &rec[i]);
        else if (cf.dtype == CUDNN_DATA_BFLOAT16)
          runShape<__nv_bfloat16>(dnn, sh, cf, &rec[i]);
        else
          runShape<float>(dnn, sh, cf, &rec[i]);
      }
    }
    if (opt.pattern("P2"))
      p2Summary(p2Results);
  }

  // P0 after P1/P2, so that a run of every pattern keeps their budget.
  std::map<std::string, std::vector<P0Times>> p0Results;  // config key -> per shape
  if (opt.pattern("P0")) {
    std::printf(
        "\n### P0: plain convolutions, a one-operation backend graph against the "
        "legacy API\n\n"
        "Per pass: fprop y = conv(x, w), dgrad dx from dy and w, wgrad dw from x and "
        "dy; x, w, dy and the output of the layout's type, compute type fp32. µs, "
        "median (min–max) of %d runs after %d warm-ups. engines: ok/tried/returned "
        "engine configs of CUDNN_HEUR_MODE_A and FALLBACK (ok = the execution plan "
        "finalized and needs at most %lld MiB of workspace; at most %d tried per "
        "mode); graph = the fastest plan that ran; engine: its global index, rtc = "
        "runtime-compiled, TC = tensor cores, nondet = the engine's "
        "CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC (det = notes read, no such note; det? = "
        "no notes), its knob choices as cudnnBackendKnobType_t=value, and the "
        "fastest deterministic plan when another; plan ms = its finalization; legacy "
        "= the fastest of cudnnFindConvolution{Forward,BackwardData,BackwardFilter}"
        "AlgorithmEx with CUDNN_TENSOR_OP_MATH, legacy det = the fastest of its "
        "CUDNN_DETERMINISTIC results (what the Fluid runtime prefers), cudnnFind "
        "given the same workspace cap, both timed here; legacy algos = their algorithm numbers and math types; speedup = "
        "legacy det / graph. max diff = max |graph − legacy| (and that / max "
        "|legacy|) of the output, for the fastest plan (and the fastest "
        "deterministic one); \"over tol\" as in the P1/P2 table.\n\n",
        opt.iters, opt.warmups, (long long)(kP0WsCap >> 20), opt.maxTry);
    row({"pattern", "conv (x → w)", "layout", "engines", "graph µs", "engine", "plan ms",
         "legacy µs", "legacy det µs", "legacy algos", "speedup (legacy det / graph)",
         "max diff graph vs legacy"});
    row({"---", "---", "---", "---", "---", "---", "---", "---", "---", "---", "---", "---"});
    for (const Config *cfp : selectedConfigs()) {
      const Config &cf = *cfp;
      std::vector<P0Times> &rec = p0Results[cf.key];
      rec.resize(kShapeCount);
      for (size_t i = 0; i < kShapeCount; ++i) {
        const ConvShape &sh = kShapes[i];
        if (cf.dtype == CUDNN_DATA_HALF)
          runP0Shape<__half>(dnn, sh, cf, rec[i]);
        else if (cf.dtype == CUDNN_DATA_BFLOAT16)
          runP0Shape<__nv_bfloat16>(dnn, sh, cf, rec[i]);
        else
          runP0Shape<float>(dnn, sh, cf, rec[i]);
      }
    }
    p0Summary(p0Results);
  }

  if (!footnotes.empty()) {
    std::printf("\nReasons (cudnnGetErrorString / cublasGetStatusString, then "
                "cudnnGetLastErrorString):\n\n");
    for (size_t i = 0; i < footnotes.size(); ++i)
      std::printf("[%zu] %s\n", i + 1, footnotes[i].c_str());
  }
  std::printf("\nTotal %.0f s.\n", nowS() - startS);
  CUDA_OK(cudaDeviceSynchronize());
  cublasLtDestroy(lt);
  cublasDestroy(blas);
  cudnnDestroy(dnn);
  return 0;
}
