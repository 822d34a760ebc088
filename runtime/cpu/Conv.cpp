//===- Conv.cpp - conv2d on the cpu ---------------------------------------===//
//
// A direct convolution. For each output plane the loops run over input
// channels and filter taps, and the innermost loop sweeps one output row,
// so the input plane being read and the accumulator plane stay in cache.
// The taps that fall into the zero padding are skipped by computing, per
// tap, the range of outputs that read inside the input.
//
//===----------------------------------------------------------------------===//

#include "SlidingWindow.h"
#include "TensorChecks.h"

#include "fluid/runtime/CpuKernels.h"

#include <algorithm>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// The validated shapes of one conv2d call.
struct ConvGeometry {
  int64_t batch, inChannels, outChannels, groups;
  int64_t inHeight, inWidth;
  WindowAxis rows, cols;
};

template <typename T>
void conv2d(const T *input, const T *filter, const T *bias, T *output,
            const ConvGeometry &g) {
  const int64_t inPerGroup = g.inChannels / g.groups;
  const int64_t outPerGroup = g.outChannels / g.groups;
  const int64_t inPlaneSize = g.inHeight * g.inWidth;
  const int64_t outHeight = g.rows.outSize, outWidth = g.cols.outSize;
  const int64_t outPlaneSize = outHeight * outWidth;
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
          int64_t ohBegin, ohEnd;
          g.rows.outputsReadingInput(ky, ohBegin, ohEnd);
          for (int64_t kx = 0; kx < kw; ++kx) {
            int64_t owBegin, owEnd;
            g.cols.outputsReadingInput(kx, owBegin, owEnd);
            const double weight = taps[ky * kw + kx];
            for (int64_t oh = ohBegin; oh < ohEnd; ++oh) {
              const T *inRow = inPlane + g.rows.inputIndex(oh, ky) * g.inWidth;
              double *sumRow = sums.data() + oh * outWidth;
              for (int64_t ow = owBegin; ow < owEnd; ++ow)
                sumRow[ow] += weight * inRow[g.cols.inputIndex(ow, kx)];
            }
          }
        }
      }
      T *outPlane = output + (n * g.outChannels + oc) * outPlaneSize;
      std::copy(sums.begin(), sums.end(), outPlane);
    }
  }
}

} // namespace

extern "C" fluid_status fluid_cpu_conv2d(const fluid_tensor *inputDesc,
                                         const fluid_tensor *filterDesc,
                                         const fluid_tensor *biasDesc,
                                         fluid_tensor *outputDesc,
                                         const fluid_conv2d_params *params) {
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

    ConvGeometry g;
    g.batch = input.dim(0);
    g.inChannels = input.dim(1);
    g.inHeight = input.dim(2);
    g.inWidth = input.dim(3);
    g.outChannels = filter.dim(0);
    g.groups = params->groups;
    if (g.groups < 1)
      fail("groups must be >= 1, got " + std::to_string(g.groups));
    if (g.inChannels % g.groups != 0)
      fail("input channels " + std::to_string(g.inChannels) +
           " are not divisible by groups " + std::to_string(g.groups));
    if (g.outChannels % g.groups != 0)
      fail("output channels " + std::to_string(g.outChannels) +
           " (filter dimension 0) are not divisible by groups " +
           std::to_string(g.groups));
    if (filter.dim(1) != g.inChannels / g.groups)
      fail("filter shape " + formatShape(filter.shape) +
           " needs dimension 1 = " + "input channels / groups = " +
           std::to_string(g.inChannels / g.groups));

    const int64_t *pad = params->padding;
    g.rows = makeWindowAxis("height", g.inHeight, pad[0], pad[2], filter.dim(2),
                            params->strides[0], params->dilation[0],
                            /*ceilMode=*/false);
    g.cols = makeWindowAxis("width", g.inWidth, pad[1], pad[3], filter.dim(3),
                            params->strides[1], params->dilation[1],
                            /*ceilMode=*/false);

    if (biasDesc) {
      CheckedTensor bias = checkTensor(biasDesc, "bias");
      requireDtype(bias, input);
      requireShape(bias, {g.outChannels});
    }
    requireShape(output,
                 {g.batch, g.outChannels, g.rows.outSize, g.cols.outSize});

    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      conv2d(input.data<T>(), filter.data<T>(),
             biasDesc ? static_cast<const T *>(biasDesc->data) : nullptr,
             output.data<T>(), g);
    });
  });
}
