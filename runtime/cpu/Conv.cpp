//===- Conv.cpp - conv2d on the cpu ---------------------------------------===//
//
// A direct convolution. For each output plane the loops run over input
// channels and filter taps, and the innermost loop sweeps one output row,
// so the input plane being read and the accumulator plane stay in cache.
// The taps that fall into the zero padding are skipped by computing, per
// tap, the range of outputs that read inside the input.
//
// Channels-last operands (NHWC, filter [O,KH,KW,C/groups]) are transposed
// into channels-first copies, convolved as above and the output transposed
// back, so both layouts give the same bits.
//
//===----------------------------------------------------------------------===//

#include "SlidingWindow.h"
#include "TensorChecks.h"
#include "Transpose.h"
#include "Widen.h"

#include "fluid/runtime/CpuKernels.h"

#include <algorithm>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

template <typename T>
void conv2d(const T *input, const T *filter, const T *bias, T *output,
            const Conv2dGeometry &g) {
  const int64_t inPerGroup = g.inChannelsPerGroup();
  const int64_t outPerGroup = g.outChannelsPerGroup();
  const int64_t inPlaneSize = g.rows.extent * g.cols.extent;
  const int64_t outPlaneSize = g.rows.outSize * g.cols.outSize;
  const int64_t kh = g.rows.kernel, kw = g.cols.kernel;
  // Sums are kept in double so that f32 results are rounded once.
  std::vector<double> sums(outPlaneSize);

  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t oc = 0; oc < g.outChannels; ++oc) {
      std::fill(sums.begin(), sums.end(), bias ? double(bias[oc]) : 0.0);
      const int64_t firstInChannel = (oc / outPerGroup) * inPerGroup;
      for (int64_t icg = 0; icg < inPerGroup; ++icg) {
        const T *inPlane =
            input + (n * g.inChannels + firstInChannel + icg) * inPlaneSize;
        const T *taps = filter + (oc * inPerGroup + icg) * kh * kw;
        for (int64_t ky = 0; ky < kh; ++ky) {
          for (int64_t kx = 0; kx < kw; ++kx) {
            const double weight = taps[ky * kw + kx];
            g.tapReads(ky, kx).forEach([&, weight](int64_t out, int64_t in) {
              sums[out] += weight * inPlane[in];
            });
          }
        }
      }
      T *outPlane = output + (n * g.outChannels + oc) * outPlaneSize;
      std::copy(sums.begin(), sums.end(), outPlane);
    }
  }
}

/// conv2d in the layout of `g`.
template <typename T>
void conv2dInLayout(const T *input, const T *filter, const T *bias, T *output,
                    const Conv2dGeometry &g) {
  if (!g.channelsLast)
    return conv2d(input, filter, bias, output, g);
  const Conv2dGeometry nchw = g.channelsFirst();
  const std::vector<T> x =
      transposedCopy(input, g.inputShape(), kToChannelsFirst);
  const std::vector<T> w =
      transposedCopy(filter, g.filterShape(), kToChannelsFirst);
  std::vector<T> y(static_cast<size_t>(g.batch * g.outChannels *
                                       g.rows.outSize * g.cols.outSize));
  conv2d(x.data(), w.data(), bias, y.data(), nchw);
  transposeData(y.data(), nchw.outputShape(), kToChannelsLast, sizeof(T),
                output);
}

} // namespace

extern "C" fluid_status fluid_cpu_conv2d(const fluid_tensor *inputDesc,
                                         const fluid_tensor *filterDesc,
                                         const fluid_tensor *biasDesc,
                                         fluid_tensor *outputDesc,
                                         const fluid_conv2d_params *params) {
  if (auto status = throughF32("fluid_cpu_conv2d", fluid_cpu_conv2d, inputDesc,
                               filterDesc, biasDesc, outputDesc, params))
    return *status;
  return guard("fluid_cpu_conv2d", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor filter = checkTensor(filterDesc, "filter");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireParams(params);
    requireFloat(input);
    requireDtype(filter, input);
    requireDtype(output, input);
    requireRank(input, 4);
    requireRank(filter, 4);

    // The forward words indivisible input channels without naming the
    // tensor (makeConv2dGeometry adds "(input dimension 1)", 3 channels
    // last), and callers match that wording: checking first keeps it.
    const int64_t channelDim = conv2dChannelDim(*params);
    if (params->groups >= 1 && input.dim(channelDim) % params->groups != 0)
      fail("input channels " + std::to_string(input.dim(channelDim)) +
           " are not divisible by groups " + std::to_string(params->groups));
    Conv2dGeometry g = makeConv2dGeometry(input, filter, *params);

    checkOptionalBias(biasDesc, input, g.outChannels);
    requireShape(output, g.outputShape());

    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      conv2dInLayout(input.data<T>(), filter.data<T>(),
                     biasDesc ? static_cast<const T *>(biasDesc->data)
                              : nullptr,
                     output.data<T>(), g);
    });
  });
}
