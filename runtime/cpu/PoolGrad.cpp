//===- PoolGrad.cpp - Gradients of max and average pooling on the cpu -----===//
//
// Windows are walked as in Pool.cpp (only the taps inside the input), and
// each output's gradient is added into double accumulators of a slice of
// the input (a plane in NCHW, an image in NHWC): into the one cell max
// pooling picked, or spread over the window's cells with the forward's
// divisor for average pooling. Overlapping windows add up, in row-major
// window order in both layouts; cells no window reads keep a zero
// gradient.
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

/// Adds grad_output into the accumulators of one input slice at a time
/// (Pool2dGeometry: a plane in NCHW, an image in NHWC) and stores them:
/// `send(in, o, window, sums)` adds what output `o` (its offset in
/// grad_output) sends into `sums`, its plane of the slice's accumulators;
/// `in` locates that plane in the input tensor.
template <typename T, typename Fn>
void scatterSlices(T *gradInput, const Pool2dGeometry &g, Fn &&send) {
  std::vector<double> sums(g.inSliceSize());
  for (int64_t s = 0; s < g.slices(); ++s) {
    std::fill(sums.begin(), sums.end(), 0.0);
    const int64_t inSlice = s * g.inSliceSize();
    const int64_t outSlice = s * g.outSliceSize();
    g.forEachSliceWindow(
        [&](PlaneOffsets in, PlaneOffsets out, const PoolWindow &w) {
          send(PlaneOffsets{inSlice + in.first, in.stride},
               outSlice + out[w.outputCell()], w, in.view(sums.data()));
        });
    std::copy(sums.begin(), sums.end(), gradInput + inSlice);
  }
}

template <typename T>
void maxPool2dGrad(const T *gradOutput, const T *input, T *gradInput,
                   const Pool2dGeometry &g) {
  scatterSlices(gradInput, g,
                [&](PlaneOffsets in, int64_t o, const PoolWindow &w,
                    PlaneView<double> sums) {
                  sums[w.maxCell(in.view(input))] += gradOutput[o];
                });
}

/// maxPool2dGrad with the picks read from `indices` (offsets in the window)
/// instead of found in the input: the same sums, added in the same order.
/// An index of a tap outside the input (or past the kernel) sends nothing.
template <typename T>
void maxPool2dGradIndices(const T *gradOutput, const uint8_t *indices,
                          T *gradInput, const Pool2dGeometry &g) {
  const int64_t kernelW = g.cols.kernel;
  scatterSlices(gradInput, g,
                [&](PlaneOffsets, int64_t o, const PoolWindow &w,
                    PlaneView<double> sums) {
                  const int64_t index = indices[o];
                  const int64_t ky = index / kernelW, kx = index % kernelW;
                  if (w.readsInput(ky, kx))
                    sums[w.cellOfTap(ky, kx)] += gradOutput[o];
                });
}

template <typename T>
void avgPool2dGrad(const T *gradOutput, T *gradInput, const Pool2dGeometry &g,
                   bool countIncludePad) {
  scatterSlices(gradInput, g,
                [&](PlaneOffsets, int64_t o, const PoolWindow &w,
                    PlaneView<double> sums) {
                  const double share =
                      gradOutput[o] / w.averageDivisor(countIncludePad);
                  w.forEachCell([&](int64_t cell) { sums[cell] += share; });
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
    Pool2dGeometry g = makeMaxPool2dGeometry(input, gradOutput, *params);
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
    Pool2dGeometry g = makeMaxPool2dGeometry(gradInput, gradOutput, *params);
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
