//===- SlidingWindow.h - Geometry of convolution and pooling windows ------===//
//
// Convolution and pooling slide a (dilated, strided) window over a padded
// spatial axis; this computes the output size the way the fluid dialect and
// PyTorch define it, with overflow-checked arithmetic, and the ranges of
// outputs whose window taps fall inside the input. The cpu convolution and
// pooling kernels and their gradients all walk their windows with TapReads
// and PoolWindow, so the skipping of padding is written once.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPU_SLIDINGWINDOW_H
#define FLUID_RUNTIME_CPU_SLIDINGWINDOW_H

#include "TensorChecks.h"

#include "fluid/runtime/CpuKernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace fluid::rt::cpu {

namespace detail {
/// a / b rounded up, for a >= 0 and b > 0.
inline int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }
} // namespace detail

/// A window sliding along one spatial axis of the input. The per-output and
/// per-tap helpers are inline, so that the kernels' loops around them keep
/// their accumulators in registers.
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
  void outputsReadingInput(int64_t k, int64_t &begin, int64_t &end) const {
    int64_t offset = k * dilation - padBefore;
    begin = offset >= 0 ? 0 : detail::ceilDiv(-offset, stride);
    end = extent - offset <= 0 ? 0 : detail::ceilDiv(extent - offset, stride);
    end = std::min(end, outSize);
    begin = std::min(begin, end);
  }

  /// The taps [begin, end) of output `o` that read inside [0, extent);
  /// empty when its window covers only padding.
  void tapsReadingInput(int64_t o, int64_t &begin, int64_t &end) const {
    int64_t start = o * stride - padBefore;
    begin = start >= 0 ? 0 : detail::ceilDiv(-start, dilation);
    end = start >= extent ? 0 : detail::ceilDiv(extent - start, dilation);
    end = std::min(end, kernel);
    begin = std::min(begin, end);
  }

  /// The number of window cells of output `o` inside the padded extent
  /// [-padBefore, extent + padAfter), for dilation 1: average pooling's
  /// divisor with count_include_pad.
  int64_t paddedWindowCells(int64_t o) const {
    int64_t start = o * stride - padBefore;
    return std::min(kernel, extent + padAfter - start);
  }
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

/// The reads of one filter tap (ky, kx) over a plane: the outputs
/// [ohBegin, ohEnd) by [owBegin, owEnd) whose tap reads inside the input.
struct TapReads {
  const WindowAxis &rows, &cols;
  int64_t ky, kx;
  int64_t ohBegin, ohEnd, owBegin, owEnd;

  /// Calls `visit(outputCell, inputCell)` for each of them in row-major
  /// order: the output's offset in its plane and that of the input cell it
  /// reads.
  template <typename Fn> void forEach(Fn &&visit) const {
    for (int64_t oh = ohBegin; oh < ohEnd; ++oh) {
      const int64_t outRow = oh * cols.outSize;
      int64_t in =
          rows.inputIndex(oh, ky) * cols.extent + cols.inputIndex(owBegin, kx);
      for (int64_t ow = owBegin; ow < owEnd; ++ow, in += cols.stride)
        visit(outRow + ow, in);
    }
  }
};

/// The validated geometry of a conv2d and of its gradients: an input of
/// shape [batch, inChannels, rows.extent, cols.extent] and a filter of shape
/// [outChannels, inChannels / groups, rows.kernel, cols.kernel], or with
/// channelsLast the input [batch, rows.extent, cols.extent, inChannels] and
/// the filter [outChannels, rows.kernel, cols.kernel, inChannels / groups]
/// (and the output channels last as well).
struct Conv2dGeometry {
  int64_t batch, inChannels, outChannels, groups;
  WindowAxis rows, cols;
  bool channelsLast = false;

  int64_t inChannelsPerGroup() const { return inChannels / groups; }
  int64_t outChannelsPerGroup() const { return outChannels / groups; }
  /// The shapes of the operands in the geometry's layout: [batch,
  /// inChannels, rows.extent, cols.extent], [outChannels, inChannels /
  /// groups, rows.kernel, cols.kernel] and [batch, outChannels,
  /// rows.outSize, cols.outSize], each with its channels moved last under
  /// channelsLast.
  Shape inputShape() const;
  Shape filterShape() const;
  Shape outputShape() const;
  /// The same convolution with channels-first operands.
  Conv2dGeometry channelsFirst() const {
    Conv2dGeometry g = *this;
    g.channelsLast = false;
    return g;
  }

  /// The reads of filter tap (ky, kx) over a plane.
  TapReads tapReads(int64_t ky, int64_t kx) const {
    TapReads reads{rows, cols, ky, kx, 0, 0, 0, 0};
    rows.outputsReadingInput(ky, reads.ohBegin, reads.ohEnd);
    cols.outputsReadingInput(kx, reads.owBegin, reads.owEnd);
    return reads;
  }
};

/// The channel dimension of conv2d's input and output under `params`: 1
/// for channels_last 0 (NCHW), 3 for 1 (NHWC); fails on any other value.
int64_t conv2dChannelDim(const fluid_conv2d_params &params);

/// Checks that `input` and `filter` (rank 4, already checked) make a conv2d
/// with these attributes, in the layout params.channels_last names:
/// channels_last is 0 or 1, groups divides both channel counts, the filter
/// has inChannels / groups channels, and the window attributes are valid.
Conv2dGeometry makeConv2dGeometry(const CheckedTensor &input,
                                  const CheckedTensor &filter,
                                  const fluid_conv2d_params &params);

/// One channel of a pooling operand as a plane of cells (row-major over
/// its height and width): cell i is element i * stride, stride 1 in NCHW
/// and the channel count in NHWC.
template <typename T> struct PlaneView {
  T *data;
  int64_t stride;

  T &operator[](int64_t cell) const { return data[cell * stride]; }
};

/// Where one channel plane lies in a slice of an operand (see
/// Pool2dGeometry): cell i is element first + i * stride.
struct PlaneOffsets {
  int64_t first, stride;

  int64_t operator[](int64_t cell) const { return first + cell * stride; }
  template <typename T> PlaneView<T> view(T *slice) const {
    return {slice + first, stride};
  }
};

/// The window of one pooling output (oh, ow): its taps inside the input,
/// rows [kyBegin, kyEnd) by columns [kxBegin, kxEnd).
struct PoolWindow {
  const WindowAxis &rows, &cols;
  int64_t oh, ow;
  int64_t kyBegin, kyEnd, kxBegin, kxEnd;

  /// The output's offset in its plane.
  int64_t outputCell() const { return oh * cols.outSize + ow; }

  /// Calls `visit(inputCell)` with the offset in its plane of every input
  /// cell the window reads, in row-major window order.
  template <typename Fn> void forEachCell(Fn &&visit) const {
    for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
      const int64_t rowStart = rows.inputIndex(oh, ky) * cols.extent;
      for (int64_t kx = kxBegin; kx < kxEnd; ++kx)
        visit(rowStart + cols.inputIndex(ow, kx));
    }
  }

  /// The offset in its plane of the cell that tap (ky, kx) reads.
  int64_t cellOfTap(int64_t ky, int64_t kx) const {
    return rows.inputIndex(oh, ky) * cols.extent + cols.inputIndex(ow, kx);
  }

  /// The tap (ky, kx) of `plane` (a PlaneView) that max pooling picks, by
  /// PyTorch's cpu rule: the first maximum in row-major window order
  /// (strict >), but every NaN replaces the pick, so the last NaN wins; a
  /// window of -inf only picks its first tap inside the input. The window
  /// must read at least one cell.
  template <typename Plane>
  void maxTap(const Plane &plane, int64_t &bestKy, int64_t &bestKx) const {
    using T = std::remove_cv_t<std::remove_reference_t<decltype(plane[0])>>;
    T best = -std::numeric_limits<T>::infinity();
    bestKy = kyBegin;
    bestKx = kxBegin;
    for (int64_t ky = kyBegin; ky < kyEnd; ++ky) {
      const int64_t rowStart = rows.inputIndex(oh, ky) * cols.extent;
      for (int64_t kx = kxBegin; kx < kxEnd; ++kx) {
        const T value = plane[rowStart + cols.inputIndex(ow, kx)];
        if (value > best || std::isnan(value)) {
          best = value;
          bestKy = ky;
          bestKx = kx;
        }
      }
    }
  }

  /// The cell of `plane` that max pooling picks (maxTap's).
  template <typename Plane> int64_t maxCell(const Plane &plane) const {
    int64_t ky, kx;
    maxTap(plane, ky, kx);
    return cellOfTap(ky, kx);
  }

  /// Whether tap (ky, kx) reads inside the input.
  bool readsInput(int64_t ky, int64_t kx) const {
    return ky >= kyBegin && ky < kyEnd && kx >= kxBegin && kx < kxEnd;
  }

  /// Average pooling's divisor: the window's cells inside the padded
  /// extent with count_include_pad, inside the input without it.
  double averageDivisor(bool countIncludePad) const {
    return countIncludePad ? double(rows.paddedWindowCells(oh)) *
                                 double(cols.paddedWindowCells(ow))
                           : double(kyEnd - kyBegin) * double(kxEnd - kxBegin);
  }
};

/// The validated geometry of a 2-d pooling op and of its gradients: the
/// planes = batch * channels channel planes of an input of shape [batch,
/// channels, rows.extent, cols.extent], or with channelsLast [batch,
/// rows.extent, cols.extent, channels].
///
/// The cpu kernels take an operand a slice at a time: a channel plane in
/// NCHW, an image (all its channels, interleaved) in NHWC. Either way each
/// plane's windows are visited in row-major order, so that a gradient adds
/// into each cell in the same order in both layouts.
struct Pool2dGeometry {
  int64_t batch, channels, planes;
  WindowAxis rows, cols;
  bool channelsLast = false;

  /// requireWindowsTouchInput along both axes.
  void requireWindowsTouchInput() const;

  int64_t slices() const { return channelsLast ? batch : planes; }
  int64_t planesPerSlice() const { return channelsLast ? channels : 1; }
  /// Elements of a slice of the input (or its gradient) and of the output
  /// (or its gradient, or the indices).
  int64_t inSliceSize() const {
    return rows.extent * cols.extent * planesPerSlice();
  }
  int64_t outSliceSize() const {
    return rows.outSize * cols.outSize * planesPerSlice();
  }

  /// Calls `visit(in, out, window)` for every output of a slice, in the
  /// output's memory order: `in` and `out` are the PlaneOffsets of the
  /// output's plane in the input slice and in the output slice.
  template <typename Fn> void forEachSliceWindow(Fn &&visit) const {
    const int64_t stride = planesPerSlice();
    forEachWindow([&](const PoolWindow &w) {
      for (int64_t c = 0; c < stride; ++c)
        visit(PlaneOffsets{c, stride}, PlaneOffsets{c, stride}, w);
    });
  }

  /// Calls `visit(window)` for the PoolWindow of every output of a plane, in
  /// row-major output order.
  template <typename Fn> void forEachWindow(Fn &&visit) const {
    for (int64_t oh = 0; oh < rows.outSize; ++oh) {
      int64_t kyBegin, kyEnd;
      rows.tapsReadingInput(oh, kyBegin, kyEnd);
      for (int64_t ow = 0; ow < cols.outSize; ++ow) {
        int64_t kxBegin, kxEnd;
        cols.tapsReadingInput(ow, kxBegin, kxEnd);
        visit(PoolWindow{rows, cols, oh, ow, kyBegin, kyEnd, kxBegin, kxEnd});
      }
    }
  }
};

/// Checks `inputShaped` (the input or its gradient: float, rank 4) and
/// `outputShaped` (the output or its gradient: the same dtype and the pooled
/// shape) against the window attributes of a 2-d pooling op, in NCHW or
/// with `channelsLast` NHWC.
Pool2dGeometry
makePool2dGeometry(const CheckedTensor &inputShaped,
                   const CheckedTensor &outputShaped, const int64_t kernel[2],
                   const int64_t strides[2], const int64_t padding[4],
                   const int64_t dilation[2], bool ceilMode, bool channelsLast);

/// makePool2dGeometry with the attributes of max pooling's `params`, in
/// the layout its channels_last names (0 or 1; any other value fails).
Pool2dGeometry makeMaxPool2dGeometry(const CheckedTensor &inputShaped,
                                     const CheckedTensor &outputShaped,
                                     const fluid_max_pool2d_params &params);

/// The most cells of a max-pooling kernel whose picks are stored as indices
/// (FLUID_U8 offsets in the window).
constexpr int64_t kMaxPoolIndexCells = 256;

/// Checks the indices of fluid_cpu_max_pool2d_with_indices and its
/// gradient: FLUID_U8, of `outputShaped`'s shape (the output or its
/// gradient, already checked), for a kernel of at most kMaxPoolIndexCells
/// cells.
void requirePoolIndices(const CheckedTensor &indices,
                        const CheckedTensor &outputShaped,
                        const int64_t kernel[2]);

/// makePool2dGeometry for average pooling (no dilation), which also fails
/// without `countIncludePad` unless every window has a cell inside the
/// input: without padded cells in the divisor, a window over padding alone
/// would divide by zero.
Pool2dGeometry makeAvgPool2dGeometry(const CheckedTensor &inputShaped,
                                     const CheckedTensor &outputShaped,
                                     const int64_t kernel[2],
                                     const int64_t strides[2],
                                     const int64_t padding[4], bool ceilMode,
                                     bool countIncludePad);

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_SLIDINGWINDOW_H
