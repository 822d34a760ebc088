//===- ConvGrad.cpp - Gradients of conv2d on the cpu ----------------------===//
//
// Both gradients walk the same (tap, output range) loops as the forward
// convolution in Conv.cpp, so every product the forward formed is formed
// once here: the input gradient scatters grad_output through each tap into
// a plane of double accumulators, the filter gradient sums, per tap, the
// products of grad_output with the input cells that tap read.
//
// Channels-last operands are transposed into channels-first copies and the
// gradient transposed back, as in Conv.cpp.
//
//===----------------------------------------------------------------------===//

#include "SlidingWindow.h"
#include "TensorChecks.h"
#include "Transpose.h"
#include "Widen.h"

#include "fluid/runtime/CpuGradKernels.h"

#include <algorithm>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

template <typename T>
void conv2dGradInput(const T *gradOutput, const T *filter, T *gradInput,
                     const Conv2dGeometry &g) {
  const int64_t inPerGroup = g.inChannelsPerGroup();
  const int64_t outPerGroup = g.outChannelsPerGroup();
  const int64_t inPlaneSize = g.rows.extent * g.cols.extent;
  const int64_t outPlaneSize = g.rows.outSize * g.cols.outSize;
  const int64_t kh = g.rows.kernel, kw = g.cols.kernel;
  std::vector<double> sums(inPlaneSize);

  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t ic = 0; ic < g.inChannels; ++ic) {
      std::fill(sums.begin(), sums.end(), 0.0);
      const int64_t group = ic / inPerGroup, icg = ic % inPerGroup;
      for (int64_t ocg = 0; ocg < outPerGroup; ++ocg) {
        const int64_t oc = group * outPerGroup + ocg;
        const T *gradPlane =
            gradOutput + (n * g.outChannels + oc) * outPlaneSize;
        const T *taps = filter + (oc * inPerGroup + icg) * kh * kw;
        for (int64_t ky = 0; ky < kh; ++ky) {
          for (int64_t kx = 0; kx < kw; ++kx) {
            const double weight = taps[ky * kw + kx];
            g.tapReads(ky, kx).forEach([&, weight](int64_t out, int64_t in) {
              sums[in] += weight * gradPlane[out];
            });
          }
        }
      }
      std::copy(sums.begin(), sums.end(),
                gradInput + (n * g.inChannels + ic) * inPlaneSize);
    }
  }
}

template <typename T>
void conv2dGradFilter(const T *gradOutput, const T *input, T *gradFilter,
                      const Conv2dGeometry &g) {
  const int64_t inPerGroup = g.inChannelsPerGroup();
  const int64_t outPerGroup = g.outChannelsPerGroup();
  const int64_t inPlaneSize = g.rows.extent * g.cols.extent;
  const int64_t outPlaneSize = g.rows.outSize * g.cols.outSize;
  const int64_t kh = g.rows.kernel, kw = g.cols.kernel;

  for (int64_t oc = 0; oc < g.outChannels; ++oc) {
    const int64_t firstInChannel = (oc / outPerGroup) * inPerGroup;
    for (int64_t icg = 0; icg < inPerGroup; ++icg) {
      T *taps = gradFilter + (oc * inPerGroup + icg) * kh * kw;
      for (int64_t ky = 0; ky < kh; ++ky) {
        for (int64_t kx = 0; kx < kw; ++kx) {
          const TapReads reads = g.tapReads(ky, kx);
          double sum = 0;
          for (int64_t n = 0; n < g.batch; ++n) {
            const T *inPlane =
                input + (n * g.inChannels + firstInChannel + icg) * inPlaneSize;
            const T *gradPlane =
                gradOutput + (n * g.outChannels + oc) * outPlaneSize;
            reads.forEach([&](int64_t out, int64_t in) {
              sum += double(gradPlane[out]) * inPlane[in];
            });
          }
          taps[ky * kw + kx] = T(sum);
        }
      }
    }
  }
}

/// Checks the operands of a conv2d gradient: grad_output, the tensor of the
/// input's shape (`input`) and the one of the filter's shape (`filter`),
/// one of which is the output, and returns the convolution's geometry.
Conv2dGeometry checkConvGrad(const CheckedTensor &gradOutput,
                             const CheckedTensor &input,
                             const CheckedTensor &filter,
                             const fluid_conv2d_params *params) {
  requireParams(params);
  requireFloat(gradOutput);
  requireDtype(input, gradOutput);
  requireDtype(filter, gradOutput);
  requireRank(gradOutput, 4);
  requireRank(input, 4);
  requireRank(filter, 4);
  Conv2dGeometry g = makeConv2dGeometry(input, filter, *params);
  requireShape(gradOutput, g.outputShape());
  return g;
}

/// conv2dGradInput in the layout of `g`.
template <typename T>
void conv2dGradInputInLayout(const T *gradOutput, const T *filter, T *gradInput,
                             const Conv2dGeometry &g) {
  if (!g.channelsLast)
    return conv2dGradInput(gradOutput, filter, gradInput, g);
  const Conv2dGeometry nchw = g.channelsFirst();
  const std::vector<T> dy =
      transposedCopy(gradOutput, g.outputShape(), kToChannelsFirst);
  const std::vector<T> w =
      transposedCopy(filter, g.filterShape(), kToChannelsFirst);
  std::vector<T> dx(static_cast<size_t>(g.batch * g.inChannels * g.rows.extent *
                                        g.cols.extent));
  conv2dGradInput(dy.data(), w.data(), dx.data(), nchw);
  transposeData(dx.data(), nchw.inputShape(), kToChannelsLast, sizeof(T),
                gradInput);
}

/// conv2dGradFilter in the layout of `g`.
template <typename T>
void conv2dGradFilterInLayout(const T *gradOutput, const T *input,
                              T *gradFilter, const Conv2dGeometry &g) {
  if (!g.channelsLast)
    return conv2dGradFilter(gradOutput, input, gradFilter, g);
  const Conv2dGeometry nchw = g.channelsFirst();
  const std::vector<T> dy =
      transposedCopy(gradOutput, g.outputShape(), kToChannelsFirst);
  const std::vector<T> x =
      transposedCopy(input, g.inputShape(), kToChannelsFirst);
  std::vector<T> dw(static_cast<size_t>(g.outChannels * g.inChannelsPerGroup() *
                                        g.rows.kernel * g.cols.kernel));
  conv2dGradFilter(dy.data(), x.data(), dw.data(), nchw);
  transposeData(dw.data(), nchw.filterShape(), kToChannelsLast, sizeof(T),
                gradFilter);
}

} // namespace

extern "C" fluid_status fluid_cpu_conv2d_grad_input(
    const fluid_tensor *gradOutputDesc, const fluid_tensor *filterDesc,
    fluid_tensor *gradInputDesc, const fluid_conv2d_params *params) {
  if (auto status =
          throughF32("fluid_cpu_conv2d_grad_input", fluid_cpu_conv2d_grad_input,
                     gradOutputDesc, filterDesc, gradInputDesc, params))
    return *status;
  return guard("fluid_cpu_conv2d_grad_input", [&] {
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor filter = checkTensor(filterDesc, "filter");
    CheckedTensor gradInput = checkTensor(gradInputDesc, "grad_input");
    Conv2dGeometry g = checkConvGrad(gradOutput, gradInput, filter, params);
    dispatchFloat(gradOutput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      conv2dGradInputInLayout(gradOutput.data<T>(), filter.data<T>(),
                              gradInput.data<T>(), g);
    });
  });
}

extern "C" fluid_status fluid_cpu_conv2d_grad_filter(
    const fluid_tensor *gradOutputDesc, const fluid_tensor *inputDesc,
    fluid_tensor *gradFilterDesc, const fluid_conv2d_params *params) {
  if (auto status = throughF32("fluid_cpu_conv2d_grad_filter",
                               fluid_cpu_conv2d_grad_filter, gradOutputDesc,
                               inputDesc, gradFilterDesc, params))
    return *status;
  return guard("fluid_cpu_conv2d_grad_filter", [&] {
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor gradFilter = checkTensor(gradFilterDesc, "grad_filter");
    Conv2dGeometry g = checkConvGrad(gradOutput, input, gradFilter, params);
    dispatchFloat(gradOutput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      conv2dGradFilterInLayout(gradOutput.data<T>(), input.data<T>(),
                               gradFilter.data<T>(), g);
    });
  });
}
