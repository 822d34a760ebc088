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
#include "Widen.h"

#include "fluid/runtime/CpuGradKernels.h"

#include <algorithm>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// Adds grad_output into the accumulators of one input plane at a time and
/// stores them: `scatter(plane, gradPlane, sums)` does one plane.
template <typename T, typename Fn>
void scatterPlanes(const T *gradOutput, T *gradInput, const Pool2dGeometry &g,
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
                   const Pool2dGeometry &g) {
  const int64_t inPlaneSize = g.rows.extent * g.cols.extent;
  scatterPlanes(gradOutput, gradInput, g,
                [&](int64_t p, const T *grad, double *sums) {
                  const T *inPlane = input + p * inPlaneSize;
                  g.forEachWindow([&](const PoolWindow &w) {
                    sums[w.maxCell(inPlane)] += grad[w.outputCell()];
                  });
                });
}

/// maxPool2dGrad with the picks read from `indices` (offsets in the window)
/// instead of found in the input: the same sums, added in the same order.
/// An index of a tap outside the input (or past the kernel) sends nothing.
template <typename T>
void maxPool2dGradIndices(const T *gradOutput, const uint8_t *indices,
                          T *gradInput, const Pool2dGeometry &g) {
  const int64_t outPlaneSize = g.rows.outSize * g.cols.outSize;
  const int64_t kernelW = g.cols.kernel;
  scatterPlanes(gradOutput, gradInput, g,
                [&](int64_t p, const T *grad, double *sums) {
                  const uint8_t *planeIndices = indices + p * outPlaneSize;
                  g.forEachWindow([&](const PoolWindow &w) {
                    const int64_t index = planeIndices[w.outputCell()];
                    const int64_t ky = index / kernelW, kx = index % kernelW;
                    if (w.readsInput(ky, kx))
                      sums[w.cellOfTap(ky, kx)] += grad[w.outputCell()];
                  });
                });
}

template <typename T>
void avgPool2dGrad(const T *gradOutput, T *gradInput, const Pool2dGeometry &g,
                   bool countIncludePad) {
  scatterPlanes(gradOutput, gradInput, g,
                [&](int64_t, const T *grad, double *sums) {
                  g.forEachWindow([&](const PoolWindow &w) {
                    const double share = grad[w.outputCell()] /
                                         w.averageDivisor(countIncludePad);
                    w.forEachCell([&](int64_t cell) { sums[cell] += share; });
                  });
                });
}

} // namespace

extern "C" fluid_status fluid_cpu_max_pool2d_grad(
    const fluid_tensor *gradOutputDesc, const fluid_tensor *inputDesc,
    fluid_tensor *gradInputDesc, const fluid_max_pool2d_params *params) {
  if (auto status =
          throughF32("fluid_cpu_max_pool2d_grad", fluid_cpu_max_pool2d_grad,
                     gradOutputDesc, inputDesc, gradInputDesc, params))
    return *status;
  return guard("fluid_cpu_max_pool2d_grad", [&] {
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor gradInput = checkTensor(gradInputDesc, "grad_input");
    requireParams(params);
    Pool2dGeometry g = makePool2dGeometry(
        input, gradOutput, params->kernel, params->strides, params->padding,
        params->dilation, params->ceil_mode != 0);
    requireDtype(gradInput, input);
    requireShape(gradInput, input.shape);
    g.requireWindowsTouchInput();
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      maxPool2dGrad(gradOutput.data<T>(), input.data<T>(), gradInput.data<T>(),
                    g);
    });
  });
}

extern "C" fluid_status fluid_cpu_max_pool2d_grad_indices(
    const fluid_tensor *gradOutputDesc, const fluid_tensor *indicesDesc,
    fluid_tensor *gradInputDesc, const fluid_max_pool2d_params *params) {
  if (auto status =
          throughF32("fluid_cpu_max_pool2d_grad_indices",
                     fluid_cpu_max_pool2d_grad_indices, gradOutputDesc,
                     indicesDesc, gradInputDesc, params))
    return *status;
  return guard("fluid_cpu_max_pool2d_grad_indices", [&] {
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor indices = checkTensor(indicesDesc, "indices");
    CheckedTensor gradInput = checkTensor(gradInputDesc, "grad_input");
    requireParams(params);
    Pool2dGeometry g = makePool2dGeometry(
        gradInput, gradOutput, params->kernel, params->strides, params->padding,
        params->dilation, params->ceil_mode != 0);
    requirePoolIndices(indices, gradOutput, params->kernel);
    g.requireWindowsTouchInput();
    dispatchFloat(gradInput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      maxPool2dGradIndices(gradOutput.data<T>(), indices.data<uint8_t>(),
                           gradInput.data<T>(), g);
    });
  });
}

extern "C" fluid_status
fluid_cpu_avg_pool2d_grad(const fluid_tensor *gradOutputDesc,
                          fluid_tensor *gradInputDesc,
                          const fluid_avg_pool2d_params *params) {
  if (auto status =
          throughF32("fluid_cpu_avg_pool2d_grad", fluid_cpu_avg_pool2d_grad,
                     gradOutputDesc, gradInputDesc, params))
    return *status;
  return guard("fluid_cpu_avg_pool2d_grad", [&] {
    CheckedTensor gradOutput = checkTensor(gradOutputDesc, "grad_output");
    CheckedTensor gradInput = checkTensor(gradInputDesc, "grad_input");
    requireParams(params);
    const bool countIncludePad = params->count_include_pad != 0;
    Pool2dGeometry g = makeAvgPool2dGeometry(
        gradInput, gradOutput, params->kernel, params->strides, params->padding,
        params->ceil_mode != 0, countIncludePad);
    dispatchFloat(gradInput.dtype(), [&](auto zero) {
      using T = decltype(zero);
      avgPool2dGrad(gradOutput.data<T>(), gradInput.data<T>(), g,
                    countIncludePad);
    });
  });
}
