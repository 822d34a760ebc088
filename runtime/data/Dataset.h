//===- Dataset.h - The object behind a fluid_dataset handle ---------------===//
//
// fluid_dataset is an abstract class: IDX files keep their pixels in memory,
// synthetic data makes them on demand. Batching, info and free (Batch.cpp)
// see only this interface. A dataset never changes after construction, so
// its const members may run on many threads at once.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_DATASET_H
#define FLUID_RUNTIME_DATA_DATASET_H

#include "fluid/runtime/Data.h"

#include <cstdint>

struct fluid_dataset {
  fluid_dataset(int64_t count, int64_t channels, int64_t height, int64_t width,
                int64_t classes)
      : count(count), channels(channels), height(height), width(width),
        classes(classes) {}
  virtual ~fluid_dataset() = default;
  fluid_dataset(const fluid_dataset &) = delete;
  fluid_dataset &operator=(const fluid_dataset &) = delete;

  /// The imageSize() pixels of item `index` (0 <= index < count), row-major
  /// [C, H, W]: either a pointer into the dataset or `scratch` (imageSize()
  /// bytes) filled with them.
  virtual const uint8_t *pixels(int64_t index, uint8_t *scratch) const = 0;

  /// The label of item `index` (0 <= index < count), in [0, classes).
  virtual int64_t label(int64_t index) const = 0;

  /// Pixels per image; the constructors of the subclasses check that it fits.
  int64_t imageSize() const { return channels * height * width; }

  const int64_t count, channels, height, width, classes;
};

#endif // FLUID_RUNTIME_DATA_DATASET_H
