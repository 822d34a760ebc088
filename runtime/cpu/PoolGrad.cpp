//===- PoolGrad.cpp - Gradients of max and average pooling on the cpu -----===//
//
// Windows are walked as in Pool.cpp (only the taps inside the input), and
// each output's gradient is added into a plane of double accumulators:
// into the one cell max pooling picked, or spread over the window's cells
// with the forward's divisor for average pooling. Overlapping windows add
// up; cells no window reads keep a zero gradient.
//
//===----------------------------------------------------------------------===//

#include "SlidingWindow.h"
#include "TensorChecks.h"

#include "fluid/runtime/CpuGradKernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// The validated shapes of one pooling gradient call.
struct PoolGradGeometry {
  int64_t planes; // N * C
  WindowAxis rows, cols;
};

/// Checks `inputShaped` (the forward input or its gradient) and grad_output
/// against the window attributes, and returns the geometry.
PoolGradGeometry checkPoolGrad(const CheckedTensor &gradOutput,
                               const CheckedTensor &inputShaped,
                               const int64_t kernel[2],
                               const int64_t strides[2],
                               const int64_t padding[4],
                               const int64_t dilation[2], bool ceilMode) {
  requireFloat(inputShaped);
  requireDtype(gradOutput, inputShaped);
  requireRank(inputShaped, 4);
  const Shape &in = inputShaped.shape;
  PoolGradGeometry g;
  g.planes = in[0] * in[1];
  g.rows = makeWindowAxis("height", in[2], padding[0], padding[2], kernel[0],
                          strides[0], dilation[0], ceilMode);
  g.cols = makeWindowAxis("width", in[3], padding[1], padding[3], kernel[1],
                          strides[1], dilation[1], ceilMode);
  requireShape(gradOutput, {in[0], in[1], g.rows.outSize, g.cols.outSize});
  return g;
}

/// Adds grad_output into the accumulators of one input plane at a time and
/// stores them: `scatter(plane, gradPlane, sums)` does one plane.
template <typename T, typename Fn>
void scatterPlanes(const T *gradOutput, T *gradInput, const PoolGradGeometry &g,
                   Fn &&scatter) {
  const int64_t inPlaneSize = g.rows.extent * g.cols.extent;
  const int64_t outPlaneSize = g.rows.outSize * g.cols.outSize;
  std::vector<double> sums(inPlaneSize);
  for (int64_t p = 0; p < g.planes; ++p) {
    std::fill(sums.begin(), sums.end(), 0.0);
    scatter(p, gradOutput + p * outPlaneSize, sums.data());
    std::copy(sums.begin(), sums.end(), gradInput + p * inPlaneSize);
  }
}

template <typename T>
void maxPool2dGrad(const T *gradOutput, const T *input, T *gradInput,
                   const PoolGradGeometry &g) {
  const int64_t inWidth = g.cols.extent;
  const int64_t inPlaneSize = g.rows.extent * inWidth;
  scatterPlanes(
      gradOutput, gradInput, g, [&](int64_t p, const T *grad, double *sums) {
        const T *inPlane = input + p * inPlaneSize;
        for (int64_t oh = 0; oh < g.rows.outSize; ++oh) {
          int64_t kyBegin, kyEnd;
          g.rows.tapsReadingInput(oh, kyBegin, kyEnd);
          for (int64_t ow = 0; ow < g.cols.outSize; ++ow) {
            int64_t kxBegin, kxEnd;
            g.cols.tapsReadingInput(ow, kxBegin, kxEnd);
            // PyTorch's cpu rule: the first maximum in row-major window order
            // (strict >), but every NaN replaces the pick, so the last NaN
            // wins.
            T best = -std::numeric_limits<T>::infinity();
            int64_t bestIndex = g.rows.inputIndex(oh, kyBegin) * inWidth +
                                g.cols.inputIndex(ow, kxBegin);
            for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
              const int64_t rowStart = g.rows.inputIndex(oh, ky) * inWidth;
              for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
                const int64_t index = rowStart + g.cols.inputIndex(ow, kx);
                const T value = inPlane[index];
                if (value > best || std::isnan(value)) {
                  best = value;
                  bestIndex = index;
                }
              }
            }
            sums[bestIndex] += grad[oh * g.cols.outSize + ow];
          }
        }
      });
}

template <typename T>
void avgPool2dGrad(const T *gradOutput, T *gradInput, const PoolGradGeometry &g,
                   bool countIncludePad) {
  const int64_t inWidth = g.cols.extent;
  scatterPlanes(
      gradOutput, gradInput, g, [&](int64_t, const T *grad, double *sums) {
        for (int64_t oh = 0; oh < g.rows.outSize; ++oh) {
          int64_t kyBegin, kyEnd;
          g.rows.tapsReadingInput(oh, kyBegin, kyEnd);
          for (int64_t ow = 0; ow < g.cols.outSize; ++ow) {
            int64_t kxBegin, kxEnd;
            g.cols.tapsReadingInput(ow, kxBegin, kxEnd);
            const double divisor =
                countIncludePad
                    ? double(g.rows.paddedWindowCells(oh)) *
                          double(g.cols.paddedWindowCells(ow))
                    : double(kyEnd - kyBegin) * double(kxEnd - kxBegin);
            const double share = grad[oh * g.cols.outSize + ow] / divisor;
            for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
              double *sumRow = sums + g.rows.inputIndex(oh, ky) * inWidth;
              for (int64_t kx = kxBegin; kx < kxEnd; ++kx)
                sumRow[g.cols.inputIndex(ow, kx)] += share;
            }
          }
        }
      });
}

} // namespace

extern "C" fluid_status fluid_cpu_max_pool2d_grad(
    const fluid_tensor *gradOutputDesc, const fluid_tensor *inputDesc,
    fluid_tensor *gradInputDesc, const fluid_max_pool2d_params *params) {
  return guard("fluid_cpu_max_pool2d_grad", [&] {
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor gradInput = checkTensor(gradInputDesc, "grad_input");
    requireParams(params);
    PoolGradGeometry g = checkPoolGrad(
        gradOutput, input, params->kernel, params->strides, params->padding,
        params->dilation, params->ceil_mode != 0);
    requireDtype(gradInput, input);
    requireShape(gradInput, input.shape);
    requireWindowsTouchInput(g.rows, "height");
    requireWindowsTouchInput(g.cols, "width");
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      maxPool2dGrad(gradOutput.data<T>(), input.data<T>(), gradInput.data<T>(),
                    g);
    });
  });
}

extern "C" fluid_status
fluid_cpu_avg_pool2d_grad(const fluid_tensor *gradOutputDesc,
                          fluid_tensor *gradInputDesc,
                          const fluid_avg_pool2d_params *params) {
  return guard("fluid_cpu_avg_pool2d_grad", [&] {
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor gradInput = checkTensor(gradInputDesc, "grad_input");
    requireParams(params);
    const int64_t noDilation[2] = {1, 1};
    PoolGradGeometry g =
        checkPoolGrad(gradOutput, gradInput, params->kernel, params->strides,
                      params->padding, noDilation, params->ceil_mode != 0);
    const bool countIncludePad = params->count_include_pad != 0;
    // As in the forward: without padded cells in the divisor, a window over
    // padding alone would divide by zero.
    if (!countIncludePad) {
      requireWindowsTouchInput(g.rows, "height");
      requireWindowsTouchInput(g.cols, "width");
    }
    dispatchFloat(gradInput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      avgPool2dGrad(gradOutput.data<T>(), gradInput.data<T>(), g,
                    countIncludePad);
    });
  });
}
