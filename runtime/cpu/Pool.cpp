//===- Pool.cpp - max, average and global average pooling on the cpu ------===//

#include "SlidingWindow.h"
#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuKernels.h"

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// Calls `visit(plane, o, window)` for every output, slice by slice
/// (Pool2dGeometry): `plane` is the PlaneView of the input plane the
/// output's window reads, `o` the output's offset in the output tensor.
template <typename T, typename Fn>
void forEachOutput(const T *input, const Pool2dGeometry &g, Fn &&visit) {
  for (int64_t s = 0; s < g.slices(); ++s) {
    const T *inSlice = input + s * g.inSliceSize();
    const int64_t outSlice = s * g.outSliceSize();
    g.forEachSliceWindow(
        [&](PlaneOffsets in, PlaneOffsets out, const PoolWindow &w) {
          visit(in.view(inSlice), outSlice + out[w.outputCell()], w);
        });
  }
}

template <typename T>
void maxPool2d(const T *input, T *output, const Pool2dGeometry &g) {
  forEachOutput(input, g,
                [&](PlaneView<const T> plane, int64_t o, const PoolWindow &w) {
                  output[o] = plane[w.maxCell(plane)];
                });
}

template <typename T>
void maxPool2dWithIndices(const T *input, T *output, uint8_t *indices,
                          const Pool2dGeometry &g) {
  forEachOutput(input, g,
                [&](PlaneView<const T> plane, int64_t o, const PoolWindow &w) {
                  int64_t ky, kx;
                  w.maxTap(plane, ky, kx);
                  output[o] = plane[w.cellOfTap(ky, kx)];
                  indices[o] = uint8_t(ky * g.cols.kernel + kx);
                });
}

template <typename T>
void avgPool2d(const T *input, T *output, const Pool2dGeometry &g,
               bool countIncludePad) {
  forEachOutput(input, g,
                [&](PlaneView<const T> plane, int64_t o, const PoolWindow &w) {
                  double sum = 0;
                  w.forEachCell([&](int64_t cell) { sum += plane[cell]; });
                  output[o] = T(sum / w.averageDivisor(countIncludePad));
                });
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
  if (auto status = throughF32("fluid_cpu_max_pool2d", fluid_cpu_max_pool2d,
                               inputDesc, outputDesc, params))
    return *status;
  return guard("fluid_cpu_max_pool2d", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireParams(params);
    Pool2dGeometry g = makeMaxPool2dGeometry(input, output, *params);
    g.requireWindowsTouchInput();
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      maxPool2d(input.data<T>(), output.data<T>(), g);
    });
  });
}

extern "C" fluid_status fluid_cpu_max_pool2d_with_indices(
    const fluid_tensor *inputDesc, fluid_tensor *outputDesc,
    fluid_tensor *indicesDesc, const fluid_max_pool2d_params *params) {
  if (auto status = throughF32("fluid_cpu_max_pool2d_with_indices",
                               fluid_cpu_max_pool2d_with_indices, inputDesc,
                               outputDesc, indicesDesc, params))
    return *status;
  return guard("fluid_cpu_max_pool2d_with_indices", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    CheckedTensor indices = checkTensor(indicesDesc, "indices");
    requireParams(params);
    Pool2dGeometry g = makeMaxPool2dGeometry(input, output, *params);
    requirePoolIndices(indices, output, params->kernel);
    g.requireWindowsTouchInput();
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      maxPool2dWithIndices(input.data<T>(), output.data<T>(),
                           indices.data<uint8_t>(), g);
    });
  });
}

extern "C" fluid_status
fluid_cpu_avg_pool2d(const fluid_tensor *inputDesc, fluid_tensor *outputDesc,
                     const fluid_avg_pool2d_params *params) {
  if (auto status = throughF32("fluid_cpu_avg_pool2d", fluid_cpu_avg_pool2d,
                               inputDesc, outputDesc, params))
    return *status;
  return guard("fluid_cpu_avg_pool2d", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireParams(params);
    const bool countIncludePad = params->count_include_pad != 0;
    Pool2dGeometry g = makeAvgPool2dGeometry(
        input, output, params->kernel, params->strides, params->padding,
        params->ceil_mode != 0, countIncludePad);
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      avgPool2d(input.data<T>(), output.data<T>(), g, countIncludePad);
    });
  });
}

extern "C" fluid_status fluid_cpu_global_avg_pool(const fluid_tensor *inputDesc,
                                                  fluid_tensor *outputDesc) {
  if (auto status =
          throughF32("fluid_cpu_global_avg_pool", fluid_cpu_global_avg_pool,
                     inputDesc, outputDesc))
    return *status;
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
