//===- KernelsSoftmax.cu - softmax, log_softmax, cross-entropy, gradients -===//
//
// A tensor is seen as [outer, length, inner] around the softmax axis.
//
//  - inner == 1 (the last axis, and cross-entropy's rows): each slice is a
//    contiguous row, reduced by a warp (rows up to kWarpRowLimit) or by a
//    block of kBlockSize threads, with warp shuffles and a fixed tree;
//  - inner > 1: a thread per (outer, inner) pair walks its slice, so the
//    threads of a warp read consecutive elements.
//
// Every slice is read in passes (maximum, sum of exponentials, write), all
// sums are taken in double as on the cpu backend, and exponentials are
// taken after subtracting the slice's maximum, in the element type. Each
// slice's sums are complete before any element of it is written, so the
// gradients' grad_input may share the buffer of grad_output or output.
//
// Cross-entropy reads its labels on the device. A label outside [0, C)
// cannot fail the call; its row's loss (or gradient row) becomes NaN and
// the label is flagged for fluid_cuda_check_errors (KernelsCommon.cu).
// The mean and sum over rows go through per-row losses in the workspace
// and one block that adds them in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.cuh"
#include "KernelUtils.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <algorithm>
#include <cmath>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

constexpr int64_t kWarpRowLimit = 1024;

template <typename T> __device__ inline T negativeInfinity() {
  return T(-INFINITY);
}

template <typename T> __device__ inline T quietNaN() { return T(NAN); }

/// Blocks for `rows` rows, `rowsPerBlock` per block: enough to fill the
/// device, the rest by the grid-stride loop of forEachRow.
int rowBlocks(int64_t rows, int rowsPerBlock) {
  return int(std::clamp<int64_t>(ceilDiv(rows, rowsPerBlock), 1,
                                 int64_t(multiprocessorCount()) * 8));
}

/// Rows (contiguous slices) are handled by groups of kGroup threads: a
/// warp (blockDim = 32 x 8, eight rows per block) or the whole block.
/// The group's sum and maximum over its threads' values:
template <int kGroup> struct RowGroup {
  double *sumScratch;
  void *maxScratch;

  __device__ double sum(double value) const {
    if constexpr (kGroup == 32)
      return warpSum(value);
    else
      return blockSum<kGroup>(value, sumScratch);
  }
  template <typename T> __device__ T max(T value) const {
    if constexpr (kGroup == 32)
      return warpMax(value);
    else
      return blockMax<kGroup>(value, static_cast<T *>(maxScratch));
  }
};

/// Runs `body(row, group)` for every row assigned to this thread's group;
/// every thread of a group runs the same rows, so group reductions inside
/// `body` are safe.
template <int kGroup, typename Fn>
__device__ inline void forEachRow(int64_t rows, Fn &&body) {
  __shared__ double sumScratch[kBlockSize / 32];
  __shared__ double maxScratch[kBlockSize / 32];
  const RowGroup<kGroup> group{sumScratch, maxScratch};
  const int64_t groupsPerBlock = blockDim.y;
  for (int64_t base = int64_t(blockIdx.x) * groupsPerBlock; base < rows;
       base += int64_t(gridDim.x) * groupsPerBlock) {
    const int64_t row = base + threadIdx.y;
    if constexpr (kGroup == 32) {
      // Whole warps skip a missing row together.
      if (row < rows)
        body(row, group);
    } else {
      body(row, group);
    }
  }
}

/// The maximum of a row, and the sum of its exponentials after subtracting
/// it; the value of every thread of the group.
template <int kGroup, typename T>
__device__ inline void rowStats(const T *x, int64_t length,
                                const RowGroup<kGroup> &group, T &max,
                                double &sumExp) {
  T best = negativeInfinity<T>();
  for (int64_t i = threadIdx.x; i < length; i += kGroup) {
    const T value = x[i];
    best = maxOf(best, value);
  }
  max = group.max(best);
  double sum = 0;
  for (int64_t i = threadIdx.x; i < length; i += kGroup)
    sum += double(math::exp(x[i] - max));
  sumExp = group.sum(sum);
}

/// One element of softmax (or log_softmax) from its slice's statistics.
template <typename T>
__device__ inline T softmaxOf(T x, T max, double sumExp, double logSum,
                              bool log) {
  return log ? T(double(x) - double(max) - logSum)
             : T(double(math::exp(x - max)) / sumExp);
}

template <int kGroup, typename T>
__global__ void __launch_bounds__(kBlockSize)
    softmaxRowsKernel(const T *input, T *output, int64_t rows, int64_t length,
                      bool log) {
  forEachRow<kGroup>(rows, [&](int64_t row, const RowGroup<kGroup> &group) {
    const T *x = input + row * length;
    T *y = output + row * length;
    T max;
    double sumExp;
    rowStats(x, length, group, max, sumExp);
    const double logSum = ::log(sumExp);
    for (int64_t i = threadIdx.x; i < length; i += kGroup)
      y[i] = softmaxOf(x[i], max, sumExp, logSum, log);
  });
}

template <typename T>
__global__ void __launch_bounds__(kBlockSize)
    softmaxColumnsKernel(const T *input, T *output, int64_t outer,
                         int64_t length, int64_t inner, bool log) {
  const int64_t slices = outer * inner;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < slices;
       s += stride) {
    const int64_t base = (s / inner) * length * inner + s % inner;
    const T *x = input + base;
    T *y = output + base;
    T max = negativeInfinity<T>();
    for (int64_t i = 0; i < length; ++i) {
      const T value = x[i * inner];
      max = maxOf(max, value);
    }
    double sumExp = 0;
    for (int64_t i = 0; i < length; ++i)
      sumExp += double(math::exp(x[i * inner] - max));
    const double logSum = ::log(sumExp);
    for (int64_t i = 0; i < length; ++i)
      y[i * inner] = softmaxOf(x[i * inner], max, sumExp, logSum, log);
  }
}

/// softmax: grad_input = y * (g - sum(g * y)); log_softmax: grad_input =
/// g - exp(y) * sum(g).
template <typename T>
__device__ inline T softmaxGradOf(double g, double y, double sum, bool log) {
  return T(log ? g - ::exp(y) * sum : y * (g - sum));
}

template <int kGroup, typename T>
__global__ void __launch_bounds__(kBlockSize)
    softmaxGradRowsKernel(const T *gradOutput, const T *output, T *gradInput,
                          int64_t rows, int64_t length, bool log) {
  forEachRow<kGroup>(rows, [&](int64_t row, const RowGroup<kGroup> &group) {
    const T *g = gradOutput + row * length;
    const T *y = output + row * length;
    T *result = gradInput + row * length;
    double partial = 0;
    for (int64_t i = threadIdx.x; i < length; i += kGroup)
      partial += log ? double(g[i]) : double(g[i]) * double(y[i]);
    const double sum = group.sum(partial);
    for (int64_t i = threadIdx.x; i < length; i += kGroup)
      result[i] = softmaxGradOf<T>(g[i], y[i], sum, log);
  });
}

template <typename T>
__global__ void __launch_bounds__(kBlockSize)
    softmaxGradColumnsKernel(const T *gradOutput, const T *output, T *gradInput,
                             int64_t outer, int64_t length, int64_t inner,
                             bool log) {
  const int64_t slices = outer * inner;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < slices;
       s += stride) {
    const int64_t base = (s / inner) * length * inner + s % inner;
    const T *g = gradOutput + base;
    const T *y = output + base;
    T *result = gradInput + base;
    double sum = 0;
    for (int64_t i = 0; i < length; ++i)
      sum += log ? double(g[i * inner])
                 : double(g[i * inner]) * double(y[i * inner]);
    for (int64_t i = 0; i < length; ++i)
      result[i * inner] =
          softmaxGradOf<T>(g[i * inner], y[i * inner], sum, log);
  }
}

/// Launches a rows kernel with a warp or a block per row.
template <typename WarpKernel, typename BlockKernel, typename... Args>
void launchRows(cudaStream_t stream, int64_t rows, int64_t length,
                WarpKernel warpKernel, BlockKernel blockKernel, Args... args) {
  if (length <= kWarpRowLimit)
    warpKernel<<<rowBlocks(rows, kBlockSize / 32), dim3(32, kBlockSize / 32), 0,
                 stream>>>(args...);
  else
    blockKernel<<<rowBlocks(rows, 1), kBlockSize, 0, stream>>>(args...);
  checkLaunch();
}

fluid_status softmaxEntry(const char *entryPoint, fluid_cuda_context *context,
                          const fluid_tensor *inputDesc,
                          fluid_tensor *outputDesc, int64_t axis, bool log) {
  return guard(entryPoint, [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    requireFloatDtype(input);
    cpu::requireDtype(output, input);
    cpu::requireShape(output, input.shape);
    const cpu::AxisSplit split = cpu::splitAtAxis(input, axis);
    if (input.numel == 0)
      return;
    cpu::dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T *in = input.data<T>();
      T *out = output.data<T>();
      if (split.inner == 1) {
        launchRows(stream, split.outer, split.length, softmaxRowsKernel<32, T>,
                   softmaxRowsKernel<kBlockSize, T>, in, out, split.outer,
                   split.length, log);
      } else {
        softmaxColumnsKernel<<<gridSizeFor(split.outer * split.inner),
                               kBlockSize, 0, stream>>>(
            in, out, split.outer, split.length, split.inner, log);
        checkLaunch();
      }
    });
  });
}

fluid_status softmaxGradEntry(const char *entryPoint,
                              fluid_cuda_context *context,
                              const fluid_tensor *gradOutputDesc,
                              const fluid_tensor *outputDesc,
                              fluid_tensor *gradInputDesc, int64_t axis,
                              bool log) {
  return guard(entryPoint, [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor gradOutput =
        checkTensor(context, gradOutputDesc, "grad_output");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    CheckedTensor gradInput = checkTensor(context, gradInputDesc, "grad_input");
    requireFloatDtype(output);
    cpu::requireDtype(gradOutput, output);
    cpu::requireDtype(gradInput, output);
    cpu::requireShape(gradOutput, output.shape);
    cpu::requireShape(gradInput, output.shape);
    const cpu::AxisSplit split = cpu::splitAtAxis(output, axis);
    if (output.numel == 0)
      return;
    cpu::dispatchFloat(output.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T *g = gradOutput.data<T>();
      const T *y = output.data<T>();
      T *result = gradInput.data<T>();
      if (split.inner == 1) {
        launchRows(stream, split.outer, split.length,
                   softmaxGradRowsKernel<32, T>,
                   softmaxGradRowsKernel<kBlockSize, T>, g, y, result,
                   split.outer, split.length, log);
      } else {
        softmaxGradColumnsKernel<<<gridSizeFor(split.outer * split.inner),
                                   kBlockSize, 0, stream>>>(
            g, y, result, split.outer, split.length, split.inner, log);
        checkLaunch();
      }
    });
  });
}

//===----------------------------------------------------------------------===//
// Cross-entropy
//===----------------------------------------------------------------------===//

/// The label of `row`, or -1 (after flagging it) when outside [0, classes).
template <typename Label>
__device__ inline int64_t checkedLabel(const Label *labels, int64_t row,
                                       int64_t classes, uint32_t source,
                                       DeviceErrorRecord *errors) {
  const int64_t label = int64_t(labels[row]);
  if (label >= 0 && label < classes)
    return label;
  if (threadIdx.x == 0) {
    DeviceErrorRecord error{};
    error.kind = kLabelOutOfRange;
    error.source = source;
    error.index = row;
    error.value = label;
    error.bound = classes;
    raiseDeviceError(errors, error);
  }
  return -1;
}

/// Per row: loss = logsumexp(logits) - logits[label], to `out` (reduction
/// none) or to `rowLosses` in double.
template <int kGroup, typename T, typename Label>
__global__ void __launch_bounds__(kBlockSize)
    crossEntropyRowsKernel(const T *logits, const Label *labels, int64_t rows,
                           int64_t classes, T *out, double *rowLosses,
                           DeviceErrorRecord *errors) {
  forEachRow<kGroup>(rows, [&](int64_t row, const RowGroup<kGroup> &group) {
    const T *x = logits + row * classes;
    T max;
    double sumExp;
    rowStats(x, classes, group, max, sumExp);
    if (threadIdx.x == 0) {
      const int64_t label =
          checkedLabel(labels, row, classes, kFromSoftmaxCrossEntropy, errors);
      const double loss = label < 0
                              ? quietNaN<double>()
                              : double(max) + ::log(sumExp) - double(x[label]);
      if (rowLosses)
        rowLosses[row] = loss;
      else
        out[row] = T(loss);
    }
  });
}

/// out[0] = the sum (or mean) of rowLosses[0..rows), by one block.
template <typename T>
__global__ void __launch_bounds__(kBlockSize)
    sumRowLossesKernel(const double *rowLosses, int64_t rows, bool mean,
                       T *out) {
  __shared__ double scratch[kBlockSize / 32];
  double sum = 0;
  for (int64_t r = threadIdx.x; r < rows; r += kBlockSize)
    sum += rowLosses[r];
  sum = blockSum<kBlockSize>(sum, scratch);
  if (threadIdx.x == 0)
    out[0] = T(mean ? sum / double(rows) : sum);
}

template <int kGroup, typename T, typename Label>
__global__ void __launch_bounds__(kBlockSize)
    crossEntropyGradRowsKernel(const T *gradLoss, const T *logits,
                               const Label *labels, int64_t rows,
                               int64_t classes, int32_t reduction,
                               T *gradLogits, DeviceErrorRecord *errors) {
  forEachRow<kGroup>(rows, [&](int64_t row, const RowGroup<kGroup> &group) {
    const T *x = logits + row * classes;
    T *result = gradLogits + row * classes;
    T max;
    double sumExp;
    rowStats(x, classes, group, max, sumExp);
    const double scale =
        reduction == FLUID_REDUCTION_NONE  ? double(gradLoss[row])
        : reduction == FLUID_REDUCTION_SUM ? double(gradLoss[0])
                                           : double(gradLoss[0]) / double(rows);
    // Every thread reads the label; thread 0 alone flags a bad one.
    const int64_t label = checkedLabel(labels, row, classes,
                                       kFromSoftmaxCrossEntropyGrad, errors);
    for (int64_t c = threadIdx.x; c < classes; c += kGroup) {
      const double probability = double(math::exp(x[c] - max)) / sumExp;
      result[c] = label < 0
                      ? quietNaN<T>()
                      : T((probability - (c == label ? 1.0 : 0.0)) * scale);
    }
  });
}

/// Calls `body(Label{})` with the C++ type of the (checked) label dtype.
template <typename Fn> void dispatchLabel(int32_t dtype, Fn &&body) {
  if (dtype == FLUID_I64)
    body(int64_t{});
  else
    body(int32_t{});
}

} // namespace

extern "C" fluid_status fluid_cuda_softmax(fluid_cuda_context *context,
                                           const fluid_tensor *input,
                                           fluid_tensor *output, int64_t axis) {
  return softmaxEntry("fluid_cuda_softmax", context, input, output, axis,
                      /*log=*/false);
}

extern "C" fluid_status fluid_cuda_log_softmax(fluid_cuda_context *context,
                                               const fluid_tensor *input,
                                               fluid_tensor *output,
                                               int64_t axis) {
  return softmaxEntry("fluid_cuda_log_softmax", context, input, output, axis,
                      /*log=*/true);
}

extern "C" fluid_status fluid_cuda_softmax_grad(fluid_cuda_context *context,
                                                const fluid_tensor *gradOutput,
                                                const fluid_tensor *output,
                                                fluid_tensor *gradInput,
                                                int64_t axis) {
  return softmaxGradEntry("fluid_cuda_softmax_grad", context, gradOutput,
                          output, gradInput, axis, /*log=*/false);
}

extern "C" fluid_status fluid_cuda_log_softmax_grad(
    fluid_cuda_context *context, const fluid_tensor *gradOutput,
    const fluid_tensor *output, fluid_tensor *gradInput, int64_t axis) {
  return softmaxGradEntry("fluid_cuda_log_softmax_grad", context, gradOutput,
                          output, gradInput, axis, /*log=*/true);
}

extern "C" fluid_status
fluid_cuda_softmax_cross_entropy(fluid_cuda_context *context,
                                 const fluid_tensor *logitsDesc,
                                 const fluid_tensor *labelsDesc,
                                 fluid_tensor *outputDesc, int32_t reduction) {
  return guard("fluid_cuda_softmax_cross_entropy", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor logits = checkTensor(context, logitsDesc, "logits");
    CheckedTensor labels = checkTensor(context, labelsDesc, "labels");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    requireFloatDtype(logits);
    cpu::requireRank(logits, 2);
    cpu::requireClassLabelDtype(labels);
    const int64_t rows = logits.dim(0), classes = logits.dim(1);
    cpu::requireShape(labels, {rows});
    cpu::requireDtype(output, logits);
    cpu::requireLossShape(output, rows, reduction);
    DeviceErrorRecord *errors = deviceErrorRecord(context);

    cpu::dispatchFloat(logits.dtype(), [&](auto zero) {
      using T = decltype(zero);
      T *out = output.data<T>();
      dispatchLabel(labels.dtype(), [&](auto label) {
        using Label = decltype(label);
        const bool reduce = reduction != FLUID_REDUCTION_NONE;
        double *rowLosses = nullptr;
        if (reduce && rows > 0)
          rowLosses =
              static_cast<double *>(workspace(context, sizeof(double) * rows));
        if (rows > 0)
          launchRows(
              stream, rows, classes, crossEntropyRowsKernel<32, T, Label>,
              crossEntropyRowsKernel<kBlockSize, T, Label>, logits.data<T>(),
              labels.data<Label>(), rows, classes, out, rowLosses, errors);
        if (reduce) {
          sumRowLossesKernel<<<1, kBlockSize, 0, stream>>>(
              rowLosses, rows, reduction == FLUID_REDUCTION_MEAN, out);
          checkLaunch();
        }
      });
    });
  });
}

extern "C" fluid_status fluid_cuda_softmax_cross_entropy_grad(
    fluid_cuda_context *context, const fluid_tensor *gradLossDesc,
    const fluid_tensor *logitsDesc, const fluid_tensor *labelsDesc,
    fluid_tensor *gradLogitsDesc, int32_t reduction) {
  return guard("fluid_cuda_softmax_cross_entropy_grad", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor gradLoss = checkTensor(context, gradLossDesc, "grad_loss");
    CheckedTensor logits = checkTensor(context, logitsDesc, "logits");
    CheckedTensor labels = checkTensor(context, labelsDesc, "labels");
    CheckedTensor gradLogits =
        checkTensor(context, gradLogitsDesc, "grad_logits");
    requireFloatDtype(logits);
    cpu::requireRank(logits, 2);
    const int64_t rows = logits.dim(0), classes = logits.dim(1);
    cpu::requireShape(labels, {rows});
    cpu::requireDtype(gradLoss, logits);
    cpu::requireLossShape(gradLoss, rows, reduction);
    cpu::requireDtype(gradLogits, logits);
    cpu::requireShape(gradLogits, logits.shape);
    cpu::requireClassLabelDtype(labels);
    DeviceErrorRecord *errors = deviceErrorRecord(context);
    if (rows == 0)
      return;

    cpu::dispatchFloat(logits.dtype(), [&](auto zero) {
      using T = decltype(zero);
      dispatchLabel(labels.dtype(), [&](auto label) {
        using Label = decltype(label);
        launchRows(stream, rows, classes,
                   crossEntropyGradRowsKernel<32, T, Label>,
                   crossEntropyGradRowsKernel<kBlockSize, T, Label>,
                   gradLoss.data<T>(), logits.data<T>(), labels.data<Label>(),
                   rows, classes, reduction, gradLogits.data<T>(), errors);
      });
    });
  });
}
