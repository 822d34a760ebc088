//===- Pool.cpp - max, average and global average pooling on the cpu ------===//

#include "SlidingWindow.h"
#include "TensorChecks.h"

#include "fluid/runtime/CpuKernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// The validated shapes of one pooling call.
struct PoolGeometry {
  int64_t planes; // N * C
  WindowAxis rows, cols;
};

/// Checks the input and output of a 2-d pooling op and returns its geometry.
PoolGeometry checkPool(const CheckedTensor &input, const CheckedTensor &output,
                       const int64_t kernel[2], const int64_t strides[2],
                       const int64_t padding[4], const int64_t dilation[2],
                       bool ceilMode) {
  requireFloat(input);
  requireDtype(output, input);
  requireRank(input, 4);
  PoolGeometry g;
  g.planes = input.dim(0) * input.dim(1);
  g.rows = makeWindowAxis("height", input.dim(2), padding[0], padding[2],
                          kernel[0], strides[0], dilation[0], ceilMode);
  g.cols = makeWindowAxis("width", input.dim(3), padding[1], padding[3],
                          kernel[1], strides[1], dilation[1], ceilMode);
  requireShape(output,
               {input.dim(0), input.dim(1), g.rows.outSize, g.cols.outSize});
  return g;
}

template <typename T>
void maxPool2d(const T *input, T *output, const PoolGeometry &g) {
  const int64_t inWidth = g.cols.extent;
  const int64_t inPlaneSize = g.rows.extent * inWidth;
  for (int64_t p = 0; p < g.planes; ++p) {
    const T *inPlane = input + p * inPlaneSize;
    for (int64_t oh = 0; oh < g.rows.outSize; ++oh) {
      int64_t kyBegin, kyEnd;
      g.rows.tapsReadingInput(oh, kyBegin, kyEnd);
      for (int64_t ow = 0; ow < g.cols.outSize; ++ow) {
        int64_t kxBegin, kxEnd;
        g.cols.tapsReadingInput(ow, kxBegin, kxEnd);
        T best = -std::numeric_limits<T>::infinity();
        for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
          const T *inRow = inPlane + g.rows.inputIndex(oh, ky) * inWidth;
          for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
            T value = inRow[g.cols.inputIndex(ow, kx)];
            // A NaN wins, as in PyTorch.
            if (value > best || std::isnan(value))
              best = value;
          }
        }
        *output++ = best;
      }
    }
  }
}

/// The number of window cells of output `o` inside [-padBefore,
/// extent + padAfter): the divisor with count_include_pad.
int64_t cellsInPaddedExtent(const WindowAxis &axis, int64_t o) {
  int64_t start = o * axis.stride - axis.padBefore;
  return std::min(axis.kernel, axis.extent + axis.padAfter - start);
}

template <typename T>
void avgPool2d(const T *input, T *output, const PoolGeometry &g,
               bool countIncludePad) {
  const int64_t inWidth = g.cols.extent;
  const int64_t inPlaneSize = g.rows.extent * inWidth;
  for (int64_t p = 0; p < g.planes; ++p) {
    const T *inPlane = input + p * inPlaneSize;
    for (int64_t oh = 0; oh < g.rows.outSize; ++oh) {
      int64_t kyBegin, kyEnd;
      g.rows.tapsReadingInput(oh, kyBegin, kyEnd);
      for (int64_t ow = 0; ow < g.cols.outSize; ++ow) {
        int64_t kxBegin, kxEnd;
        g.cols.tapsReadingInput(ow, kxBegin, kxEnd);
        double sum = 0;
        for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
          const T *inRow = inPlane + g.rows.inputIndex(oh, ky) * inWidth;
          for (int64_t kx = kxBegin; kx < kxEnd; ++kx)
            sum += inRow[g.cols.inputIndex(ow, kx)];
        }
        double divisor =
            countIncludePad ? double(cellsInPaddedExtent(g.rows, oh)) *
                                  double(cellsInPaddedExtent(g.cols, ow))
                            : double(kyEnd - kyBegin) * double(kxEnd - kxBegin);
        *output++ = T(sum / divisor);
      }
    }
  }
}

template <typename T>
void globalAvgPool(const T *input, T *output, int64_t planes,
                   int64_t planeSize) {
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (int64_t i = 0; i < planeSize; ++i)
      sum += input[p * planeSize + i];
    output[p] = T(sum / double(planeSize));
  }
}

} // namespace

extern "C" fluid_status
fluid_cpu_max_pool2d(const fluid_tensor *inputDesc, fluid_tensor *outputDesc,
                     const fluid_max_pool2d_params *params) {
  return guard("fluid_cpu_max_pool2d", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireParams(params);
    PoolGeometry g =
        checkPool(input, output, params->kernel, params->strides,
                  params->padding, params->dilation, params->ceil_mode != 0);
    requireWindowsTouchInput(g.rows, "height");
    requireWindowsTouchInput(g.cols, "width");
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      maxPool2d(input.data<T>(), output.data<T>(), g);
    });
  });
}

extern "C" fluid_status
fluid_cpu_avg_pool2d(const fluid_tensor *inputDesc, fluid_tensor *outputDesc,
                     const fluid_avg_pool2d_params *params) {
  return guard("fluid_cpu_avg_pool2d", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireParams(params);
    const int64_t noDilation[2] = {1, 1};
    PoolGeometry g =
        checkPool(input, output, params->kernel, params->strides,
                  params->padding, noDilation, params->ceil_mode != 0);
    const bool countIncludePad = params->count_include_pad != 0;
    // Without padded cells in the divisor, a window over padding alone
    // would divide by zero.
    if (!countIncludePad) {
      requireWindowsTouchInput(g.rows, "height");
      requireWindowsTouchInput(g.cols, "width");
    }
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      avgPool2d(input.data<T>(), output.data<T>(), g, countIncludePad);
    });
  });
}

extern "C" fluid_status fluid_cpu_global_avg_pool(const fluid_tensor *inputDesc,
                                                  fluid_tensor *outputDesc) {
  return guard("fluid_cpu_global_avg_pool", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireFloat(input);
    requireDtype(output, input);
    requireRank(input, 4);
    requireShape(output, {input.dim(0), input.dim(1), 1, 1});
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      globalAvgPool(input.data<T>(), output.data<T>(),
                    input.dim(0) * input.dim(1), input.dim(2) * input.dim(3));
    });
  });
}
