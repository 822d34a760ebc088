//===- ImageDataset.cpp - Datasets of JPEG and PNG files ------------------===//
//
// An image dataset holds the list of its files and labels (ImageList.h) and
// nothing else: each item is read, decoded (ImageDecoder.h) and transformed
// (Transform.h) when a batch asks for it, on whichever thread fills that
// part of the batch. With skip_bad_images, a file that cannot be decoded is
// remembered and its item becomes the next decodable one (its pixels and
// its label), transformed with the random choices of the item asked for, so
// the replacement depends only on the files.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Data.h"

#include "Dataset.h"
#include "FileReader.h"
#include "ImageDecoder.h"
#include "ImageList.h"
#include "Transform.h"
#include "fluid/runtime/Error.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <vector>

using fluid::rt::fail;
namespace data = fluid::rt::data;

namespace {

// The largest image side a batch may ask for: far past any model's input,
// small enough that no size computed from it overflows.
constexpr int64_t kMaxOutputSide = 1 << 15;

class ImageDataset final : public fluid_dataset {
public:
  ImageDataset(std::string source, data::ImageList list,
               const fluid_image_options &options)
      : fluid_dataset(int64_t(list.paths.size()), 3, options.height,
                      options.width, list.classes),
        source_(std::move(source)), list_(std::move(list)),
        transform_(options.transform == FLUID_IMAGE_TRAIN
                       ? data::ImageTransform::Train
                       : data::ImageTransform::Eval),
        seed_(options.seed), skipBad_(options.skip_bad_images != 0),
        bad_(skipBad_ ? list_.paths.size() : 0, false) {}

  Item item(int64_t index, uint64_t epoch, uint8_t *scratch) const override {
    for (int64_t step = 0; step < count; ++step) {
      int64_t candidate = (index + step) % count;
      if (skipBad_ && isKnownBad(candidate))
        continue;
      data::RgbImage image;
      try {
        image = data::decodeImageFile(list_.paths[size_t(candidate)]);
      } catch (const fluid::rt::Error &error) {
        if (!skipBad_)
          throw;
        markBad(candidate, error.what());
        continue;
      }
      data::transformImage(image, transform_, seed_, epoch, index, height,
                           width, scratch);
      Item item;
      item.pixels = scratch;
      item.label = list_.labels[size_t(candidate)];
      return item;
    }
    std::string latest;
    badImages(latest);
    fail(source_ + ": every image is unreadable (the latest: " + latest + ")");
  }

  int64_t badImages(std::string &latest) const override {
    std::lock_guard<std::mutex> lock(mutex_);
    latest = latest_;
    return badCount_;
  }

private:
  bool isKnownBad(int64_t index) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return bad_[size_t(index)];
  }

  void markBad(int64_t index, const std::string &message) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bad_[size_t(index)])
      return; // another thread found it first
    bad_[size_t(index)] = true;
    ++badCount_;
    latest_ = message;
  }

  const std::string source_;
  const data::ImageList list_;
  const data::ImageTransform transform_;
  const uint64_t seed_;
  const bool skipBad_;
  mutable std::mutex mutex_;
  mutable std::vector<bool> bad_;
  mutable int64_t badCount_ = 0;
  mutable std::string latest_;
};

void requireSide(const char *name, int64_t value) {
  if (value < 1 || value > kMaxOutputSide)
    fail(std::string(name) + " must be from 1 to " +
         std::to_string(kMaxOutputSide) + ", got " + std::to_string(value));
}

} // namespace

extern "C" fluid_status
fluid_dataset_open_images(const char *path, const fluid_image_options *options,
                          fluid_dataset **out) {
  return fluid::rt::guard("fluid_dataset_open_images", [&] {
    if (!path || !options || !out)
      fail("path, options and out must not be null");
    requireSide("options->height", options->height);
    requireSide("options->width", options->width);
    if (options->transform != FLUID_IMAGE_TRAIN &&
        options->transform != FLUID_IMAGE_EVAL)
      fail("options->transform must be FLUID_IMAGE_TRAIN (0) or "
           "FLUID_IMAGE_EVAL (1), got " +
           std::to_string(options->transform));
    struct stat status;
    if (stat(path, &status) != 0)
      data::failIo(path, std::string("cannot open: ") + std::strerror(errno));
    data::ImageList list = S_ISDIR(status.st_mode) ? data::listImageFolder(path)
                                                   : data::readImageList(path);
    *out = std::make_unique<ImageDataset>(path, std::move(list), *options)
               .release();
  });
}

extern "C" fluid_status fluid_image_decode(const char *path, uint8_t *rgb,
                                           int64_t capacity, int64_t *height,
                                           int64_t *width) {
  return fluid::rt::guard("fluid_image_decode", [&] {
    if (!path || !height || !width)
      fail("path, height and width must not be null");
    data::RgbImage image = data::decodeImageFile(path);
    auto bytes = int64_t(image.pixels.size());
    if (rgb && capacity < bytes)
      fail(std::string(path) + ": the image needs " + std::to_string(bytes) +
           " bytes, but rgb holds " + std::to_string(capacity));
    if (rgb)
      std::memcpy(rgb, image.pixels.data(), size_t(bytes));
    *height = image.height;
    *width = image.width;
  });
}

extern "C" fluid_status fluid_image_resize(const uint8_t *rgb, int64_t height,
                                           int64_t width, uint8_t *out,
                                           int64_t out_height,
                                           int64_t out_width) {
  return fluid::rt::guard("fluid_image_resize", [&] {
    if (!rgb || !out)
      fail("rgb and out must not be null");
    requireSide("height", height);
    requireSide("width", width);
    requireSide("out_height", out_height);
    requireSide("out_width", out_width);
    data::RgbImage image;
    image.height = height;
    image.width = width;
    image.pixels.assign(rgb, rgb + height * width * 3);
    data::resizeBilinear(image, {0, 0, height, width}, out_height, out_width,
                         {0, 0, out_height, out_width}, out);
  });
}

extern "C" fluid_status fluid_random_resized_crop(uint64_t seed, uint64_t epoch,
                                                  int64_t index, int64_t height,
                                                  int64_t width, int64_t box[4],
                                                  int32_t *flip) {
  return fluid::rt::guard("fluid_random_resized_crop", [&] {
    if (!box || !flip)
      fail("box and flip must not be null");
    if (index < 0)
      fail("index must be >= 0, got " + std::to_string(index));
    if (height < 1 || width < 1 || height > data::kMaxImagePixels / width)
      fail("an image of " + std::to_string(width) + "x" +
           std::to_string(height) + " pixels is empty or past PIL's limit");
    data::RandomCrop crop = data::randomCrop(seed, epoch, index, height, width);
    box[0] = crop.box.top;
    box[1] = crop.box.left;
    box[2] = crop.box.height;
    box[3] = crop.box.width;
    *flip = crop.flip ? 1 : 0;
  });
}
