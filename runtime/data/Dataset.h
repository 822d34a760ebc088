//===- Dataset.h - The object behind a fluid_dataset handle ---------------===//
//
// fluid_dataset is an abstract class: IDX and .npy files keep their pixels
// in memory, synthetic data makes them on demand, image folders and list
// files decode and transform a file per item. Batching, info and free
// (Batch.cpp) see only this interface. A dataset never changes after
// construction (but for its count of bad images), so its const members may
// run on many threads at once.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_DATASET_H
#define FLUID_RUNTIME_DATA_DATASET_H

#include "fluid/runtime/Data.h"

#include <cstdint>
#include <string>

struct fluid_dataset {
  fluid_dataset(int64_t count, int64_t channels, int64_t height, int64_t width,
                int64_t classes)
      : count(count), channels(channels), height(height), width(width),
        classes(classes) {}
  virtual ~fluid_dataset() = default;
  fluid_dataset(const fluid_dataset &) = delete;
  fluid_dataset &operator=(const fluid_dataset &) = delete;

  /// One item as a batch reads it: imageSize() pixels, row-major [C, H, W],
  /// either u8 `pixels` to normalize or f32 `values` to write as they are
  /// (the other null), and the label, in [0, classes).
  struct Item {
    const uint8_t *pixels = nullptr;
    const float *values = nullptr;
    int64_t label = 0;
  };

  /// Item `index` (0 <= index < count) as the random transforms of `epoch`
  /// see it (a dataset without them ignores `epoch`). The pixels lie either
  /// in the dataset or in `scratch` (imageSize() bytes), which they fill.
  virtual Item item(int64_t index, uint64_t epoch, uint8_t *scratch) const = 0;

  /// How many images were found unreadable and replaced by others so far
  /// (fluid_dataset_bad_images), and the message of the latest in `latest`.
  virtual int64_t badImages(std::string &latest) const {
    latest.clear();
    return 0;
  }

  /// Pixels per image; the constructors of the subclasses check that it fits.
  int64_t imageSize() const { return channels * height * width; }

  const int64_t count, channels, height, width, classes;
};

#endif // FLUID_RUNTIME_DATA_DATASET_H
