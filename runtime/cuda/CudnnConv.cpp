//===- CudnnConv.cpp - conv2d and its gradients with cuDNN ----------------===//
//
// Each call checks its descriptors as the cpu kernels do (the same
// TensorChecks and SlidingWindow code), lowers the convolution to the
// problem cuDNN solves, picks the algorithm (cached per problem, see
// AlgorithmCache.h), sizes the workspace for that algorithm and enqueues
// cuDNN's legacy convolution call.
//
// Under a workspace limit (fluid_cuda_set_workspace_limit) an algorithm
// may use what the limit leaves beside the call's own part of the
// workspace (the padded input below): searches time only the algorithms
// that fit there, and a cached choice is used only where it is what such a
// search would choose (ConvAlgoChoice::validUnder).
//
// Asymmetric padding. cuDNN pads both sides of an axis by the same amount.
// Padding [before, after] along an axis is split into the symmetric part
// min(before, after), which cuDNN applies, and the rest, which lies on one
// side only and is made real: the input is copied into a zero-filled
// buffer at the front of the workspace, larger by the extra rows (columns)
// on that side, and cuDNN convolves the buffer. Every output then reads
// exactly the taps it reads in the cpu definition, with nothing to crop.
// The forward and the filter gradient read the padded copy; the input
// gradient is computed for the padded buffer and its interior copied out
// (the extra cells only ever held zeros, so their gradient is dropped).
// Both copies are cudnnTransformTensor calls between a dense tensor and a
// strided view of the buffer. Symmetric padding, the common case, takes
// none of this: cuDNN reads the caller's tensors directly.
//
// Channels last (channels_last = 1). The activations are described to
// cuDNN as CUDNN_TENSOR_NHWC tensors and the filter [O,KH,KW,C/groups] as
// an NHWC (KRSC) filter, so cuDNN reads and writes the caller's layout with
// no transposes; the padded buffer is NHWC too, and the bias is added over
// the output's last dimension. The layout is part of the algorithm cache's
// key (layout=nhwc in the file, which has always spelled it out, so the
// format is unchanged and older files load as they are).
//
// Depthwise convolutions channels last (groups == input channels ==
// output channels) take hand-written kernels instead (KernelsDepthwise.cu,
// Depthwise.h): cuDNN's NHWC kernels for them are several times slower
// than its NCHW ones. The filter gradient falls back to cuDNN only when
// the workspace cannot hold the kernels' partial sums.
//
//===----------------------------------------------------------------------===//

#include "AlgorithmCache.h"
#include "Context.h"
#include "Depthwise.h"

#include "../cpu/SlidingWindow.h"
#include "../cpu/TensorChecks.h"

#include "fluid/runtime/CpuMemory.h"
#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/CudaKernels.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;
using namespace fluid::rt::cuda;

namespace {

/// The most device memory an algorithm search may borrow for the
/// algorithms' workspaces (besides the operands): algorithms that need
/// more are not tried. The chosen one's workspace is what the context
/// keeps.
constexpr size_t kSearchWorkspaceLimit = size_t(1) << 30;

/// Offsets into the workspace are kept aligned for any cuDNN kernel.
constexpr size_t kWorkspaceAlignment = 256;

/// One conv2d as cuDNN computes it (see the file comment).
struct ConvLowering {
  Conv2dGeometry g;
  int32_t dtype;
  cudnnMathType_t mathType;
  bool explicitPadding;
  /// The input cuDNN reads: [N, C, paddedHeight, paddedWidth] (stored in
  /// the convolution's layout), the caller's input starting at row
  /// extraTop, column extraLeft.
  int64_t paddedHeight, paddedWidth, extraTop, extraLeft;
  /// What cuDNN pads on each side.
  int64_t padHeight, padWidth;

  int64_t elementSize() const { return fluid_dtype_size(dtype); }

  /// The activations' layout: CUDNN_TENSOR_NHWC for channels last.
  cudnnTensorFormat_t layout() const {
    return g.channelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  }

  /// Bytes of the padded input buffer (0 without explicit padding).
  size_t paddedBytes() const {
    if (!explicitPadding)
      return 0;
    return static_cast<size_t>(g.batch * g.inChannels * paddedHeight *
                               paddedWidth * elementSize());
  }

  /// paddedBytes(), rounded up so that what follows stays aligned.
  size_t reservedBytes() const {
    return (paddedBytes() + kWorkspaceAlignment - 1) / kWorkspaceAlignment *
           kWorkspaceAlignment;
  }

  ConvAlgoKey key(ConvPass pass) const {
    ConvAlgoKey k;
    k.pass = pass;
    k.batch = g.batch;
    k.inChannels = g.inChannels;
    k.inHeight = paddedHeight;
    k.inWidth = paddedWidth;
    k.outChannels = g.outChannels;
    k.inChannelsPerGroup = g.inChannelsPerGroup();
    k.kernelHeight = g.rows.kernel;
    k.kernelWidth = g.cols.kernel;
    k.strideHeight = g.rows.stride;
    k.strideWidth = g.cols.stride;
    k.padHeight = padHeight;
    k.padWidth = padWidth;
    k.dilationHeight = g.rows.dilation;
    k.dilationWidth = g.cols.dilation;
    k.groups = g.groups;
    k.dtype = dtype;
    k.layout = layout();
    k.mathType = mathType;
    return k;
  }
};

ConvLowering lower(fluid_cuda_context *context, const Conv2dGeometry &g,
                   int32_t dtype) {
  ConvLowering l;
  l.g = g;
  l.dtype = dtype;
  // f32 honours the context's TF32 choice; FMA math keeps cuDNN off the
  // tensor cores, whose default for f32 on Ampere and later is TF32. f16
  // and bf16 run on the tensor cores, accumulating in f32.
  if (dtype == FLUID_F64)
    l.mathType = CUDNN_DEFAULT_MATH;
  else if (isFloat16Dtype(dtype))
    l.mathType = CUDNN_TENSOR_OP_MATH;
  else
    l.mathType = allowTf32(context) ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  l.padHeight = std::min(g.rows.padBefore, g.rows.padAfter);
  l.padWidth = std::min(g.cols.padBefore, g.cols.padAfter);
  l.extraTop = g.rows.padBefore - l.padHeight;
  l.extraLeft = g.cols.padBefore - l.padWidth;
  l.paddedHeight =
      g.rows.extent + g.rows.padBefore + g.rows.padAfter - 2 * l.padHeight;
  l.paddedWidth =
      g.cols.extent + g.cols.padBefore + g.cols.padAfter - 2 * l.padWidth;
  l.explicitPadding =
      l.paddedHeight != g.rows.extent || l.paddedWidth != g.cols.extent;
  return l;
}

/// The descriptors and data of one cuDNN convolution call. Which of x, w
/// and y is written depends on the pass.
struct ConvOperands {
  TensorDescriptor x;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
  TensorDescriptor y;
  const void *xData = nullptr, *wData = nullptr, *yData = nullptr;

  explicit ConvOperands(const ConvLowering &l) {
    const Conv2dGeometry &g = l.g;
    x.setDense(l.dtype, l.layout(), g.batch, g.inChannels, l.paddedHeight,
               l.paddedWidth);
    w.setDense(l.dtype, l.layout(), g.outChannels, g.inChannelsPerGroup(),
               g.rows.kernel, g.cols.kernel);
    y.setDense(l.dtype, l.layout(), g.batch, g.outChannels, g.rows.outSize,
               g.cols.outSize);
    FLUID_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
        conv.get(), cudnnInt(l.padHeight, "padding"),
        cudnnInt(l.padWidth, "padding"), cudnnInt(g.rows.stride, "stride"),
        cudnnInt(g.cols.stride, "stride"),
        cudnnInt(g.rows.dilation, "dilation"),
        cudnnInt(g.cols.dilation, "dilation"), CUDNN_CROSS_CORRELATION,
        cudnnComputeTypeOf(l.dtype)));
    FLUID_CUDNN_CHECK(cudnnSetConvolutionGroupCount(
        conv.get(), cudnnInt(g.groups, "groups")));
  }

  void setMathType(cudnnMathType_t mathType) {
    FLUID_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), mathType));
  }
};

// The three passes differ only in which cuDNN functions they call; these
// traits let one search-and-cache routine serve all three.

struct ForwardPass {
  static constexpr ConvPass pass = ConvPass::Forward;
  static constexpr const char *name = "forward";
  static constexpr int algorithmCount = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  /// FFT and Winograd: they round differently from direct sums, by far
  /// more than f32 arithmetic does.
  static bool transforms(int algo) {
    return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT ||
           algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
           algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
           algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
  }
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;

  static int maxCount(cudnnHandle_t h) {
    int count = 0;
    FLUID_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &count));
    return count;
  }
  static cudnnStatus_t workspaceSize(cudnnHandle_t h, const ConvOperands &o,
                                     int algo, size_t *bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(
        h, o.x.get(), o.w.get(), o.conv.get(), o.y.get(), Algo(algo), bytes);
  }
  static void find(cudnnHandle_t h, const ConvOperands &o, int requested,
                   int *returned, Perf *perf, void *ws, size_t wsBytes) {
    FLUID_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithmEx(
        h, o.x.get(), o.xData, o.w.get(), o.wData, o.conv.get(), o.y.get(),
        const_cast<void *>(o.yData), requested, returned, perf, ws, wsBytes));
  }
  /// y = conv(x, w), or with `accumulate` y = conv(x, w) + y (blended in
  /// f32 before y is rounded to its type).
  static void run(cudnnHandle_t h, const ConvOperands &o, int32_t dtype,
                  int algo, void *ws, size_t wsBytes, bool accumulate = false) {
    FLUID_CUDNN_CHECK(cudnnConvolutionForward(
        h, scalarOne(dtype), o.x.get(), o.xData, o.w.get(), o.wData,
        o.conv.get(), Algo(algo), ws, wsBytes,
        accumulate ? scalarOne(dtype) : scalarZero(dtype), o.y.get(),
        const_cast<void *>(o.yData)));
  }
};

/// x is grad_input (written), y is grad_output.
struct BackwardDataPass {
  static constexpr ConvPass pass = ConvPass::BackwardData;
  static constexpr const char *name = "backward-data";
  static constexpr int algorithmCount = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  static bool transforms(int algo) {
    return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
           algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
           algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
           algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
  }
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;

  static int maxCount(cudnnHandle_t h) {
    int count = 0;
    FLUID_CUDNN_CHECK(
        cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &count));
    return count;
  }
  static cudnnStatus_t workspaceSize(cudnnHandle_t h, const ConvOperands &o,
                                     int algo, size_t *bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(
        h, o.w.get(), o.y.get(), o.conv.get(), o.x.get(), Algo(algo), bytes);
  }
  static void find(cudnnHandle_t h, const ConvOperands &o, int requested,
                   int *returned, Perf *perf, void *ws, size_t wsBytes) {
    FLUID_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithmEx(
        h, o.w.get(), o.wData, o.y.get(), o.yData, o.conv.get(), o.x.get(),
        const_cast<void *>(o.xData), requested, returned, perf, ws, wsBytes));
  }
  static void run(cudnnHandle_t h, const ConvOperands &o, int32_t dtype,
                  int algo, void *ws, size_t wsBytes) {
    FLUID_CUDNN_CHECK(cudnnConvolutionBackwardData(
        h, scalarOne(dtype), o.w.get(), o.wData, o.y.get(), o.yData,
        o.conv.get(), Algo(algo), ws, wsBytes, scalarZero(dtype), o.x.get(),
        const_cast<void *>(o.xData)));
  }
};

/// w is grad_filter (written), y is grad_output.
struct BackwardFilterPass {
  static constexpr ConvPass pass = ConvPass::BackwardFilter;
  static constexpr const char *name = "backward-filter";
  static constexpr int algorithmCount = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  static bool transforms(int algo) {
    return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
           algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
           algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD ||
           algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
  }
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;

  static int maxCount(cudnnHandle_t h) {
    int count = 0;
    FLUID_CUDNN_CHECK(
        cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &count));
    return count;
  }
  static cudnnStatus_t workspaceSize(cudnnHandle_t h, const ConvOperands &o,
                                     int algo, size_t *bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(
        h, o.x.get(), o.y.get(), o.conv.get(), o.w.get(), Algo(algo), bytes);
  }
  static void find(cudnnHandle_t h, const ConvOperands &o, int requested,
                   int *returned, Perf *perf, void *ws, size_t wsBytes) {
    FLUID_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithmEx(
        h, o.x.get(), o.xData, o.y.get(), o.yData, o.conv.get(), o.w.get(),
        const_cast<void *>(o.wData), requested, returned, perf, ws, wsBytes));
  }
  static void run(cudnnHandle_t h, const ConvOperands &o, int32_t dtype,
                  int algo, void *ws, size_t wsBytes) {
    FLUID_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
        h, scalarOne(dtype), o.x.get(), o.xData, o.y.get(), o.yData,
        o.conv.get(), Algo(algo), ws, wsBytes, scalarZero(dtype), o.w.get(),
        const_cast<void *>(o.wData)));
  }
};

/// Device memory borrowed for one algorithm search: as much as the
/// hungriest algorithm wants (of those within the workspace limit), within
/// kSearchWorkspaceLimit and half the free memory, halved until cudaMalloc
/// succeeds (possibly to nothing: algorithms without workspace are still
/// tried).
class SearchBuffer {
public:
  explicit SearchBuffer(size_t wanted) {
    size_t freeBytes = 0, totalBytes = 0;
    FLUID_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    size_t bytes = std::min({wanted, kSearchWorkspaceLimit, freeBytes / 2});
    while (bytes > 0) {
      cudaError_t status = cudaMalloc(&data_, bytes);
      if (status == cudaSuccess) {
        bytes_ = bytes;
        return;
      }
      data_ = nullptr;
      if (status != cudaErrorMemoryAllocation)
        FLUID_CUDA_CHECK(status);
      (void)cudaGetLastError();
      bytes /= 2;
    }
  }
  ~SearchBuffer() { cudaFree(data_); }
  SearchBuffer(const SearchBuffer &) = delete;
  SearchBuffer &operator=(const SearchBuffer &) = delete;

  void *data() const { return data_; }
  size_t bytes() const { return bytes_; }

private:
  void *data_ = nullptr;
  size_t bytes_ = 0;
};

/// Times every algorithm with cudnnFind*Ex on the call's own operands and
/// returns the fastest usable one whose workspace is at most `limit`
/// (none: any), preferring deterministic algorithms (those that add with
/// atomics give results that differ from run to run, which training then
/// amplifies) to any other, and with FMA math direct sums to FFT and
/// Winograd (whose rounding is far from f32 arithmetic's). With FMA math
/// requested (f32 without TF32) a tensor-core result is not usable, and the
/// choice runs with FMA math whatever cuDNN reported.
template <typename Pass>
ConvAlgoChoice search(cudnnHandle_t h, ConvOperands &ops,
                      const ConvAlgoKey &key, std::optional<size_t> limit) {
  ops.setMathType(key.mathType);
  size_t wanted = 0;
  bool leftOut = false; // an algorithm needs more than the limit
  for (int algo = 0; algo < Pass::algorithmCount; ++algo) {
    size_t bytes = 0;
    if (Pass::workspaceSize(h, ops, algo, &bytes) != CUDNN_STATUS_SUCCESS)
      continue;
    if (limit && bytes > *limit)
      leftOut = true;
    else
      wanted = std::max(wanted, bytes);
  }
  std::vector<typename Pass::Perf> perf(std::max(Pass::maxCount(h), 1));
  int returned = 0;
  {
    // An algorithm needing more than the buffer cannot run in the search;
    // the loop below skips those over the limit whatever cuDNN reports.
    SearchBuffer scratch(wanted);
    Pass::find(h, ops, static_cast<int>(perf.size()), &returned, perf.data(),
               scratch.data(), scratch.bytes());
  }
  // In order of preference. With f32 math (no TF32): deterministic direct
  // sums, then direct sums, then deterministic FFT or Winograd, then any;
  // otherwise deterministic, then any.
  const bool fmaOnly = key.mathType == CUDNN_FMA_MATH;
  struct Tier {
    bool deterministic, direct;
  };
  std::vector<Tier> tiers = {{true, false}, {false, false}};
  if (fmaOnly)
    tiers = {{true, true}, {false, true}, {true, false}, {false, false}};
  for (const Tier &tier : tiers) {
    for (int i = 0; i < returned; ++i) {
      const typename Pass::Perf &p = perf[i];
      if (p.status != CUDNN_STATUS_SUCCESS ||
          (tier.deterministic && p.determinism != CUDNN_DETERMINISTIC) ||
          (tier.direct && Pass::transforms(static_cast<int>(p.algo))))
        continue;
      if (fmaOnly && p.mathType != CUDNN_FMA_MATH &&
          p.mathType != CUDNN_DEFAULT_MATH)
        continue;
      ConvAlgoChoice choice;
      choice.algorithm = static_cast<int>(p.algo);
      choice.mathType = fmaOnly ? CUDNN_FMA_MATH : p.mathType;
      ops.setMathType(choice.mathType);
      size_t bytes = 0;
      if (Pass::workspaceSize(h, ops, choice.algorithm, &bytes) !=
              CUDNN_STATUS_SUCCESS ||
          (limit && bytes > *limit))
        continue;
      choice.workspaceBytes = bytes;
      if (leftOut)
        choice.searchLimit = limit;
      return choice;
    }
  }
  throw Error(
      FLUID_ERROR_UNSUPPORTED,
      std::string("cuDNN has no usable ") + Pass::name +
          " convolution algorithm for " + key.toString() +
          (limit ? " within a workspace of " + std::to_string(*limit) + " bytes"
                 : std::string()) +
          (returned > 0 ? std::string(" (the fastest failed with ") +
                              cudnnGetErrorString(perf[0].status) + ")"
                        : std::string()));
}

/// The algorithm to run and the workspace to run it with.
struct PreparedAlgorithm {
  int algorithm;
  void *workspace;
  size_t workspaceBytes;
};

/// Picks the algorithm for `ops` (from the cache, or by a search that is
/// then cached), sets its math type on ops.conv and sizes the context's
/// workspace for it: the front `lowering.reservedBytes()` hold the padded
/// input, the rest the algorithm's workspace. `bindReserved` is called
/// with the reserved front each time the workspace is handed out (it
/// points the operands at the padded buffer, and fills it if it is an
/// input), since growing the workspace moves it.
template <typename Pass>
PreparedAlgorithm
prepare(fluid_cuda_context *context, ConvOperands &ops,
        const ConvLowering &lowering,
        const std::function<void(char *reserved)> &bindReserved) {
  cudnnHandle_t h = cudnnOf(context);
  ConvAlgoCache &cache = convAlgoCache(context);
  const ConvAlgoKey key = lowering.key(Pass::pass);
  const size_t reserved = lowering.reservedBytes();

  // What the workspace limit leaves for the algorithm.
  std::optional<size_t> algorithmLimit = workspaceLimit(context);
  if (algorithmLimit) {
    if (reserved > *algorithmLimit)
      throw Error(FLUID_ERROR_OUT_OF_MEMORY,
                  std::string("the ") + Pass::name +
                      " convolution's explicitly padded input needs " +
                      std::to_string(reserved) +
                      " bytes of workspace, more than the context's "
                      "workspace limit of " +
                      std::to_string(*algorithmLimit) +
                      " bytes (fluid_cuda_set_workspace_limit)");
    *algorithmLimit -= reserved;
  }

  ConvAlgoChoice *choice = cache.lookup(key);
  if (choice && !choice->workspaceBytes) {
    // Loaded from the file: cuDNN must still accept it for this problem.
    ops.setMathType(choice->mathType);
    size_t bytes = 0;
    if (Pass::workspaceSize(h, ops, choice->algorithm, &bytes) ==
        CUDNN_STATUS_SUCCESS) {
      choice->workspaceBytes = bytes;
    } else {
      cache.erase(key);
      choice = nullptr;
    }
  }
  if (choice && choice->validUnder(algorithmLimit)) {
    cache.recordHit();
  } else {
    bindReserved(static_cast<char *>(workspace(context, reserved)));
    choice = &cache.insert(key, search<Pass>(h, ops, key, algorithmLimit));
  }

  ops.setMathType(choice->mathType);
  const size_t algorithmBytes = *choice->workspaceBytes;
  char *buffer =
      static_cast<char *>(workspace(context, reserved + algorithmBytes));
  bindReserved(buffer);
  // FLUID_POISON_MEMORY=1: the algorithm's part holds 0xFF bytes (a NaN in
  // every float type) before each call, so that an algorithm reading
  // workspace it did not write in this call shows in the results.
  if (algorithmBytes && poisonMemory())
    FLUID_CUDA_CHECK(cudaMemsetAsync(buffer + reserved, kPoisonByte,
                                     algorithmBytes, streamOf(context)));
  return {choice->algorithm, algorithmBytes ? buffer + reserved : nullptr,
          algorithmBytes};
}

/// A dense input [N,C,H,W] and its place inside the padded buffer, as two
/// descriptors of the same dimensions for cudnnTransformTensor, both in the
/// convolution's layout.
struct PaddedView {
  TensorDescriptor dense;
  TensorDescriptor inBuffer;
  int64_t offsetBytes;

  explicit PaddedView(const ConvLowering &l) {
    const Conv2dGeometry &g = l.g;
    const int64_t dims[4] = {g.batch, g.inChannels, g.rows.extent,
                             g.cols.extent};
    const int64_t plane = l.paddedHeight * l.paddedWidth;
    dense.setDense(l.dtype, l.layout(), dims[0], dims[1], dims[2], dims[3]);
    if (g.channelsLast) {
      // [N, paddedHeight, paddedWidth, C] in memory.
      const int64_t c = g.inChannels;
      const int64_t strides[4] = {plane * c, 1, l.paddedWidth * c, c};
      inBuffer.setNchwStrided(l.dtype, dims, strides);
      offsetBytes =
          (l.extraTop * l.paddedWidth + l.extraLeft) * c * l.elementSize();
    } else {
      const int64_t strides[4] = {g.inChannels * plane, plane, l.paddedWidth,
                                  1};
      inBuffer.setNchwStrided(l.dtype, dims, strides);
      offsetBytes =
          (l.extraTop * l.paddedWidth + l.extraLeft) * l.elementSize();
    }
  }
};

/// Zero-fills the padded buffer and copies the input into its interior.
void padInput(fluid_cuda_context *context, const ConvLowering &l,
              const void *input, char *padded) {
  FLUID_CUDA_CHECK(
      cudaMemsetAsync(padded, 0, l.paddedBytes(), streamOf(context)));
  PaddedView view(l);
  FLUID_CUDNN_CHECK(cudnnTransformTensor(
      cudnnOf(context), scalarOne(l.dtype), view.dense.get(), input,
      scalarZero(l.dtype), view.inBuffer.get(), padded + view.offsetBytes));
}

/// Copies the interior of the padded buffer out to a dense tensor.
void cropInput(fluid_cuda_context *context, const ConvLowering &l,
               const char *padded, void *output) {
  PaddedView view(l);
  FLUID_CUDNN_CHECK(
      cudnnTransformTensor(cudnnOf(context), scalarOne(l.dtype),
                           view.inBuffer.get(), padded + view.offsetBytes,
                           scalarZero(l.dtype), view.dense.get(), output));
}

/// output += bias broadcast over N, OH and OW, or with `replace` output =
/// bias, in the layout of `g`.
void addBias(fluid_cuda_context *context, int32_t dtype, const void *bias,
             void *output, const Conv2dGeometry &g, bool replace = false) {
  addChannelBias(context, dtype, bias, output,
                 g.channelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                 g.batch, g.outChannels, g.rows.outSize, g.cols.outSize,
                 replace);
}

void zeroFill(fluid_cuda_context *context, const CheckedTensor &t) {
  FLUID_CUDA_CHECK(cudaMemsetAsync(
      t.desc->data, 0,
      static_cast<size_t>(t.numel * fluid_dtype_size(t.dtype())),
      streamOf(context)));
}

/// Checks the operands of conv2d or of one of its gradients, as
/// ConvGrad.cpp does: grad_output (or output) of shape [N,O,OH,OW], the
/// tensor of the input's shape and the one of the filter's shape (in the
/// layout params->channels_last names).
Conv2dGeometry checkConv(fluid_cuda_context *context,
                         const CheckedTensor &output,
                         const CheckedTensor &input,
                         const CheckedTensor &filter,
                         const fluid_conv2d_params *params) {
  requireParams(params);
  requireLibraryFloat(input);
  requireDtype(filter, input);
  requireDtype(output, input);
  requireRank(input, 4);
  requireRank(filter, 4);
  requireRank(output, 4);
  Conv2dGeometry g = makeConv2dGeometry(input, filter, *params);
  requireShape(output, g.outputShape());
  requireDeviceMemory(context, output);
  requireDeviceMemory(context, input);
  requireDeviceMemory(context, filter);
  return g;
}

} // namespace

extern "C" fluid_status
fluid_cuda_conv2d(fluid_cuda_context *context, const fluid_tensor *inputDesc,
                  const fluid_tensor *filterDesc, const fluid_tensor *biasDesc,
                  fluid_tensor *outputDesc, const fluid_conv2d_params *params) {
  return guard("fluid_cuda_conv2d", [&] {
    requireContext(context);
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor filter = checkTensor(filterDesc, "filter");
    CheckedTensor output = checkTensor(outputDesc, "output");
    Conv2dGeometry g = checkConv(context, output, input, filter, params);
    if (biasDesc) {
      CheckedTensor bias = checkTensor(biasDesc, "bias");
      requireDtype(bias, input);
      requireShape(bias, {g.outChannels});
      requireDeviceMemory(context, bias);
    }
    if (output.numel == 0)
      return;
    const int32_t dtype = input.dtype();
    if (input.numel == 0 || filter.numel == 0) {
      // No products to sum: cuDNN takes no empty tensors.
      zeroFill(context, output);
    } else if (isDepthwiseChannelsLast(g)) {
      // The bias is added inside, before the sum is rounded.
      depthwiseConv2d(context, dtype, input.desc->data, filter.desc->data,
                      biasDesc ? biasDesc->data : nullptr, output.desc->data,
                      g);
      return;
    } else {
      ConvLowering lowering = lower(context, g, dtype);
      ConvOperands ops(lowering);
      ops.xData = input.desc->data;
      ops.wData = filter.desc->data;
      ops.yData = output.desc->data;
      PreparedAlgorithm algo =
          prepare<ForwardPass>(context, ops, lowering, [&](char *reserved) {
            if (!lowering.explicitPadding)
              return;
            padInput(context, lowering, input.desc->data, reserved);
            ops.xData = reserved;
          });
      // A 16-bit output with a bias: the bias first (exact), then the
      // convolution blended onto it in f32, so that the sum is rounded to
      // 16 bits once, as the cpu backend rounds it (after the search, which
      // writes the output).
      const bool biasFirst = biasDesc && isFloat16Dtype(dtype);
      if (biasFirst)
        addBias(context, dtype, biasDesc->data, output.desc->data, g,
                /*replace=*/true);
      ForwardPass::run(cudnnOf(context), ops, dtype, algo.algorithm,
                       algo.workspace, algo.workspaceBytes, biasFirst);
      if (biasFirst)
        return;
    }
    if (biasDesc)
      addBias(context, dtype, biasDesc->data, output.desc->data, g);
  });
}

extern "C" fluid_status fluid_cuda_conv2d_grad_input(
    fluid_cuda_context *context, const fluid_tensor *gradOutputDesc,
    const fluid_tensor *filterDesc, fluid_tensor *gradInputDesc,
    const fluid_conv2d_params *params) {
  return guard("fluid_cuda_conv2d_grad_input", [&] {
    requireContext(context);
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor filter = checkTensor(filterDesc, "filter");
    CheckedTensor gradInput = checkTensor(gradInputDesc, "grad_input");
    Conv2dGeometry g =
        checkConv(context, gradOutput, gradInput, filter, params);
    if (gradInput.numel == 0)
      return;
    if (gradOutput.numel == 0 || filter.numel == 0) {
      zeroFill(context, gradInput);
      return;
    }
    const int32_t dtype = gradOutput.dtype();
    if (isDepthwiseChannelsLast(g)) {
      depthwiseConv2dGradInput(context, dtype, gradOutput.desc->data,
                               filter.desc->data, gradInput.desc->data, g);
      return;
    }
    ConvLowering lowering = lower(context, g, dtype);
    ConvOperands ops(lowering);
    ops.xData = gradInput.desc->data;
    ops.wData = filter.desc->data;
    ops.yData = gradOutput.desc->data;
    char *padded = nullptr;
    PreparedAlgorithm algo =
        prepare<BackwardDataPass>(context, ops, lowering, [&](char *reserved) {
          if (!lowering.explicitPadding)
            return;
          padded = reserved;
          ops.xData = reserved;
        });
    BackwardDataPass::run(cudnnOf(context), ops, dtype, algo.algorithm,
                          algo.workspace, algo.workspaceBytes);
    if (lowering.explicitPadding)
      cropInput(context, lowering, padded, gradInput.desc->data);
  });
}

extern "C" fluid_status fluid_cuda_conv2d_grad_filter(
    fluid_cuda_context *context, const fluid_tensor *gradOutputDesc,
    const fluid_tensor *inputDesc, fluid_tensor *gradFilterDesc,
    const fluid_conv2d_params *params) {
  return guard("fluid_cuda_conv2d_grad_filter", [&] {
    requireContext(context);
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor gradFilter = checkTensor(gradFilterDesc, "grad_filter");
    Conv2dGeometry g =
        checkConv(context, gradOutput, input, gradFilter, params);
    if (gradFilter.numel == 0)
      return;
    if (gradOutput.numel == 0 || input.numel == 0) {
      zeroFill(context, gradFilter);
      return;
    }
    const int32_t dtype = gradOutput.dtype();
    if (isDepthwiseChannelsLast(g) &&
        depthwiseConv2dGradFilter(context, dtype, gradOutput.desc->data,
                                  input.desc->data, gradFilter.desc->data, g))
      return;
    ConvLowering lowering = lower(context, g, dtype);
    ConvOperands ops(lowering);
    ops.xData = input.desc->data;
    ops.wData = gradFilter.desc->data;
    ops.yData = gradOutput.desc->data;
    PreparedAlgorithm algo = prepare<BackwardFilterPass>(
        context, ops, lowering, [&](char *reserved) {
          if (!lowering.explicitPadding)
            return;
          padInput(context, lowering, input.desc->data, reserved);
          ops.xData = reserved;
        });
    BackwardFilterPass::run(cudnnOf(context), ops, dtype, algo.algorithm,
                            algo.workspace, algo.workspaceBytes);
  });
}
