//===- Transform.h - torchvision's ImageNet transforms, reproducibly ------===//
//
// Training: RandomResizedCrop(size, scale = (0.08, 1), ratio = (3/4, 4/3))
// then RandomHorizontalFlip(0.5); evaluation: Resize(round(size * 256 /
// 224)) then CenterCrop(size): the transforms of torchvision's ImageNet
// reference scripts, on PIL images (Resize.h does PIL's resampling). The
// random choices of a training sample are a pure function of (seed, epoch,
// index), documented in Data.h (fluid_random_resized_crop), so a batch is
// the same whichever thread prepares which sample, and a resumed run sees
// the crops the uninterrupted one would have.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_TRANSFORM_H
#define FLUID_RUNTIME_DATA_TRANSFORM_H

#include "Resize.h"

#include <cstdint>

namespace fluid::rt::data {

/// Where a training sample is cropped from its image, and whether the crop
/// is mirrored left to right.
struct RandomCrop {
  PixelBox box;
  bool flip = false;
};

/// RandomResizedCrop.get_params of an image of height x width, drawn from
/// the stream of sample `index` in `epoch` (see Data.h), and the flip.
RandomCrop randomCrop(uint64_t seed, uint64_t epoch, int64_t index,
                      int64_t height, int64_t width);

/// The evaluation geometry: the image is resized to resizedHeight x
/// resizedWidth (its short side to round(max(outHeight, outWidth) * 256 /
/// 224), the long side in proportion, rounded down, as torchvision's
/// Resize(int)), and `window` (outHeight x outWidth, centred as
/// torchvision's CenterCrop rounds) is kept.
struct CenterView {
  int64_t resizedHeight = 0, resizedWidth = 0;
  PixelBox window;
};

CenterView centerView(int64_t height, int64_t width, int64_t outHeight,
                      int64_t outWidth);

enum class ImageTransform { Train, Eval };

/// Transforms `image` into `planar`, [3, outHeight, outWidth] bytes (R, G,
/// B planes): the training transform of sample `index` in `epoch`, or the
/// evaluation transform (which ignores seed, epoch and index).
void transformImage(const RgbImage &image, ImageTransform transform,
                    uint64_t seed, uint64_t epoch, int64_t index,
                    int64_t outHeight, int64_t outWidth, uint8_t *planar);

} // namespace fluid::rt::data

#endif // FLUID_RUNTIME_DATA_TRANSFORM_H
