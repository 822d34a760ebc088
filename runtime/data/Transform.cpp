//===- Transform.cpp - torchvision's ImageNet transforms, reproducibly ----===//
//
// randomCrop follows RandomResizedCrop.get_params: up to ten tries of an
// area fraction uniform on [0.08, 1) and a log aspect ratio uniform on
// [log 3/4, log 4/3), rounded half to even as Python's round; the first crop
// that fits the image is placed uniformly; if none fits, the image's centre
// is cropped to the nearest aspect ratio within [3/4, 4/3]. Each try reads
// its own Philox blocks, so a sample's choices depend on nothing but its
// stream.
//
//===----------------------------------------------------------------------===//

#include "Transform.h"

#include "Random.h"

#include <algorithm>
#include <cmath>

namespace fluid::rt::data {

namespace {

// Counter word 3 of the crop streams ("CROP"), apart from the synthetic
// data's "SYNT" and from the shuffle's epoch words.
constexpr uint32_t kCropTag = 0x43524F50;
constexpr int kTries = 10;
constexpr uint32_t kFlipBlock = 2 * kTries;
constexpr double kMinScale = 0.08, kMaxScale = 1.0;
constexpr double kMinRatio = 3.0 / 4.0, kMaxRatio = 4.0 / 3.0;

/// The Philox blocks of one sample: block b is philox({lo32(index),
/// hi32(index), b, "CROP"}, the epoch's key), and the epoch's key is x0, x1
/// of philox({lo32(epoch), hi32(epoch), 0, "CROP"}, the seed's key).
class SampleStream {
public:
  SampleStream(uint64_t seed, uint64_t epoch, int64_t index)
      : index_(uint64_t(index)) {
    PhiloxCounter epochBlock =
        philox4x32x10({uint32_t(epoch), uint32_t(epoch >> 32), 0, kCropTag},
                      keyFromSeed(seed));
    key_ = {epochBlock[0], epochBlock[1]};
  }

  PhiloxCounter block(uint32_t number) const {
    return philox4x32x10(
        {uint32_t(index_), uint32_t(index_ >> 32), number, kCropTag}, key_);
  }

private:
  uint64_t index_;
  PhiloxKey key_;
};

/// Python's round() of a double to an integer: half to even.
int64_t roundHalfEven(double value) { return int64_t(std::nearbyint(value)); }

/// Python's round(numerator / denominator) for positive integers.
int64_t roundQuotientHalfEven(int64_t numerator, int64_t denominator) {
  int64_t quotient = numerator / denominator;
  int64_t twice = 2 * (numerator % denominator);
  if (twice > denominator || (twice == denominator && quotient % 2 == 1))
    ++quotient;
  return quotient;
}

} // namespace

RandomCrop randomCrop(uint64_t seed, uint64_t epoch, int64_t index,
                      int64_t height, int64_t width) {
  SampleStream stream(seed, epoch, index);
  RandomCrop crop;
  crop.flip = stream.block(kFlipBlock)[0] >> 31;
  double area = double(height) * double(width);
  double logMin = std::log(kMinRatio), logMax = std::log(kMaxRatio);
  for (int t = 0; t < kTries; ++t) {
    PhiloxCounter draw = stream.block(uint32_t(2 * t));
    double targetArea =
        area * (kMinScale + (kMaxScale - kMinScale) *
                                unitIntervalFromBits(draw[0], draw[1]));
    double aspect = std::exp(
        logMin + (logMax - logMin) * unitIntervalFromBits(draw[2], draw[3]));
    int64_t w = roundHalfEven(std::sqrt(targetArea * aspect));
    int64_t h = roundHalfEven(std::sqrt(targetArea / aspect));
    if (0 < w && w <= width && 0 < h && h <= height) {
      PhiloxCounter place = stream.block(uint32_t(2 * t + 1));
      crop.box.top = int64_t(drawBelow(place[0], place[1], height - h + 1));
      crop.box.left = int64_t(drawBelow(place[2], place[3], width - w + 1));
      crop.box.height = h;
      crop.box.width = w;
      return crop;
    }
  }
  double ratio = double(width) / double(height);
  int64_t w = width, h = height;
  if (ratio < kMinRatio)
    h = roundHalfEven(double(w) / kMinRatio);
  else if (ratio > kMaxRatio)
    w = roundHalfEven(double(h) * kMaxRatio);
  crop.box = {(height - h) / 2, (width - w) / 2, h, w};
  return crop;
}

CenterView centerView(int64_t height, int64_t width, int64_t outHeight,
                      int64_t outWidth) {
  int64_t shortSide =
      roundQuotientHalfEven(std::max(outHeight, outWidth) * 256, 224);
  CenterView view;
  if (width <= height) {
    view.resizedWidth = shortSide;
    view.resizedHeight = shortSide * height / width;
  } else {
    view.resizedHeight = shortSide;
    view.resizedWidth = shortSide * width / height;
  }
  // CenterCrop's int(round((size - crop) / 2.0)): half to even.
  view.window.top = roundQuotientHalfEven(view.resizedHeight - outHeight, 2);
  view.window.left = roundQuotientHalfEven(view.resizedWidth - outWidth, 2);
  view.window.height = outHeight;
  view.window.width = outWidth;
  return view;
}

void transformImage(const RgbImage &image, ImageTransform transform,
                    uint64_t seed, uint64_t epoch, int64_t index,
                    int64_t outHeight, int64_t outWidth, uint8_t *planar) {
  std::vector<uint8_t> pixels(size_t(outHeight * outWidth * 3));
  bool flip = false;
  if (transform == ImageTransform::Train) {
    RandomCrop crop = randomCrop(seed, epoch, index, image.height, image.width);
    resizeBilinear(image, crop.box, outHeight, outWidth,
                   {0, 0, outHeight, outWidth}, pixels.data());
    flip = crop.flip;
  } else {
    CenterView view =
        centerView(image.height, image.width, outHeight, outWidth);
    resizeBilinear(image, {0, 0, image.height, image.width}, view.resizedHeight,
                   view.resizedWidth, view.window, pixels.data());
  }
  int64_t plane = outHeight * outWidth;
  for (int64_t y = 0; y < outHeight; ++y)
    for (int64_t x = 0; x < outWidth; ++x) {
      const uint8_t *rgb =
          &pixels[size_t((y * outWidth + (flip ? outWidth - 1 - x : x)) * 3)];
      for (int64_t c = 0; c < 3; ++c)
        planar[c * plane + y * outWidth + x] = rgb[c];
    }
}

} // namespace fluid::rt::data
