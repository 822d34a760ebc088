//===- Resize.h - PIL's bilinear resampling of 8-bit RGB images -----------===//
//
// torchvision's Resize and RandomResizedCrop resize PIL images with PIL's
// Image.resize(size, BILINEAR), which filters as well as interpolates: each
// output pixel is a weighted sum of the source pixels under a triangle whose
// half-width is one output pixel's extent in the source (at least one source
// pixel), so shrinking averages every source pixel instead of sampling a few
// (antialiasing). PIL filters rows first, rounding to 8 bits, then columns,
// with 22-bit fixed-point weights; resizeBilinear does the same arithmetic in
// the same order, so its pixels are PIL's exactly.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_RESIZE_H
#define FLUID_RUNTIME_DATA_RESIZE_H

#include <cstdint>
#include <vector>

namespace fluid::rt::data {

/// An 8-bit RGB image: `height` rows of `width` pixels of 3 bytes (R, G, B),
/// top to bottom, without padding.
struct RgbImage {
  int64_t height = 0, width = 0;
  std::vector<uint8_t> pixels;
};

/// Rows [top, top + height) and columns [left, left + width) of an image.
struct PixelBox {
  int64_t top = 0, left = 0, height = 0, width = 0;
};

/// Resizes the part `box` of `source` to outHeight x outWidth pixels as
/// PIL's source.crop(box).resize((outWidth, outHeight), BILINEAR) does, and
/// writes the part `window` of the result to `destination` ([window.height,
/// window.width, 3]). Only the pixels of `window` are computed; they equal
/// those of the whole result. A dimension whose size does not change is
/// copied, as PIL does. `box` must lie within `source` and `window` within
/// the result, each at least one pixel.
void resizeBilinear(const RgbImage &source, const PixelBox &box,
                    int64_t outHeight, int64_t outWidth, const PixelBox &window,
                    uint8_t *destination);

} // namespace fluid::rt::data

#endif // FLUID_RUNTIME_DATA_RESIZE_H
