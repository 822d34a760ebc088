//===- SlidingWindow.h - Geometry of convolution and pooling windows ------===//
//
// Convolution and pooling slide a (dilated, strided) window over a padded
// spatial axis; this computes the output size the way the fluid dialect and
// PyTorch define it, with overflow-checked arithmetic, and the ranges of
// outputs whose window taps fall inside the input.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPU_SLIDINGWINDOW_H
#define FLUID_RUNTIME_CPU_SLIDINGWINDOW_H

#include "TensorChecks.h"

#include <cstdint>
#include <string>

namespace fluid::rt::cpu {

/// A window sliding along one spatial axis of the input.
struct WindowAxis {
  int64_t extent;
  int64_t padBefore;
  int64_t padAfter;
  int64_t kernel;
  int64_t stride;
  int64_t dilation;
  int64_t outSize;

  /// The input position read by tap `k` of output `o` (negative or past
  /// the extent inside the padding).
  int64_t inputIndex(int64_t o, int64_t k) const {
    return o * stride - padBefore + k * dilation;
  }

  /// The outputs [begin, end) whose tap `k` reads inside [0, extent).
  void outputsReadingInput(int64_t k, int64_t &begin, int64_t &end) const;

  /// The taps [begin, end) of output `o` that read inside [0, extent);
  /// empty when its window covers only padding.
  void tapsReadingInput(int64_t o, int64_t &begin, int64_t &end) const;

  /// The number of window cells of output `o` inside the padded extent
  /// [-padBefore, extent + padAfter), for dilation 1: average pooling's
  /// divisor with count_include_pad.
  int64_t paddedWindowCells(int64_t o) const;
};

/// Validates the window attributes along the axis called `axisName`
/// ("height" or "width") and computes the output size: (extent + padBefore +
/// padAfter - dilation*(kernel-1) - 1)/stride + 1, rounded down, or up with
/// `ceilMode`, in which case a last window starting at or after extent +
/// padBefore is dropped (as PyTorch does).
WindowAxis makeWindowAxis(const std::string &axisName, int64_t extent,
                          int64_t padBefore, int64_t padAfter, int64_t kernel,
                          int64_t stride, int64_t dilation, bool ceilMode);

/// Fails unless every output's window along `axis` has a tap inside the
/// input (a window over padding alone has no maximum and no cells to
/// average).
void requireWindowsTouchInput(const WindowAxis &axis,
                              const std::string &axisName);

/// The validated geometry of a conv2d and of its gradients: an input of
/// shape [batch, inChannels, rows.extent, cols.extent] and a filter of shape
/// [outChannels, inChannels / groups, rows.kernel, cols.kernel].
struct Conv2dGeometry {
  int64_t batch, inChannels, outChannels, groups;
  WindowAxis rows, cols;

  int64_t inChannelsPerGroup() const { return inChannels / groups; }
  int64_t outChannelsPerGroup() const { return outChannels / groups; }
  /// [batch, outChannels, rows.outSize, cols.outSize].
  Shape outputShape() const;
};

/// Checks that `input` and `filter` (rank 4, already checked) make a conv2d
/// with these attributes: groups divides both channel counts, the filter
/// has inChannels / groups channels, and the window attributes are valid.
Conv2dGeometry makeConv2dGeometry(const CheckedTensor &input,
                                  const CheckedTensor &filter,
                                  const int64_t strides[2],
                                  const int64_t padding[4],
                                  const int64_t dilation[2], int64_t groups);

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_SLIDINGWINDOW_H
