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
