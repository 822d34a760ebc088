//===- Synthetic.cpp - Random images and labels made on demand ------------===//
//
// Nothing is stored: item i's label and pixels are computed from Philox
// blocks addressed by (i, block number) whenever a batch asks for them (the
// layout is documented in Data.h). A synthetic dataset therefore costs no
// memory whatever its count, and measures a training loop's speed without
// a file system in the way.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Data.h"

#include "Dataset.h"
#include "Random.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

using fluid::rt::fail;

namespace {

// Counter word 3 of every synthetic block ("SYNT"): keeps these blocks apart
// from fluid_shuffle's, whose word 3 is the high half of an epoch number, and
// from the initializers', whose words 2-3 hold a hashed stream id.
constexpr uint32_t syntheticTag = 0x53594E54;
constexpr int64_t pixelsPerBlock = 16;
// Block numbers are one counter word; block 0 is the label's.
constexpr int64_t maxImageSize =
    pixelsPerBlock * int64_t(std::numeric_limits<uint32_t>::max());

class SyntheticDataset final : public fluid_dataset {
public:
  SyntheticDataset(int64_t count, int64_t channels, int64_t height,
                   int64_t width, int64_t classes, uint64_t seed)
      : fluid_dataset(count, channels, height, width, classes),
        key_(fluid::rt::data::keyFromSeed(seed)) {}

  Item item(int64_t index, uint64_t, uint8_t *scratch) const override {
    int64_t size = imageSize();
    uint32_t blockNumber = 1;
    for (int64_t offset = 0; offset < size;
         offset += pixelsPerBlock, ++blockNumber) {
      fluid::rt::PhiloxCounter block = blockAt(index, blockNumber);
      uint8_t bytes[pixelsPerBlock];
      for (int word = 0; word < 4; ++word)
        for (int byte = 0; byte < 4; ++byte)
          bytes[4 * word + byte] = uint8_t(block[word] >> (8 * byte));
      std::memcpy(scratch + offset, bytes,
                  size_t(std::min(pixelsPerBlock, size - offset)));
    }
    Item item;
    item.pixels = scratch;
    item.label = int64_t(
        fluid::rt::data::drawBelow(blockAt(index, 0), uint64_t(classes)));
    return item;
  }

private:
  fluid::rt::PhiloxCounter blockAt(int64_t index, uint32_t blockNumber) const {
    auto position = uint64_t(index);
    return fluid::rt::philox4x32x10({uint32_t(position),
                                     uint32_t(position >> 32), blockNumber,
                                     syntheticTag},
                                    key_);
  }

  fluid::rt::PhiloxKey key_;
};

void requirePositive(const char *name, int64_t value) {
  if (value < 1)
    fail(std::string(name) + " must be >= 1, got " + std::to_string(value));
}

} // namespace

extern "C" fluid_status fluid_dataset_synthetic(int64_t count, int64_t channels,
                                                int64_t height, int64_t width,
                                                int64_t classes, uint64_t seed,
                                                fluid_dataset **out) {
  return fluid::rt::guard("fluid_dataset_synthetic", [&] {
    if (!out)
      fail("out must not be null");
    requirePositive("count", count);
    requirePositive("channels", channels);
    requirePositive("height", height);
    requirePositive("width", width);
    requirePositive("classes", classes);
    if (classes > std::numeric_limits<int32_t>::max())
      fail("classes must be at most 2147483647 (labels fit I32), got " +
           std::to_string(classes));
    int64_t imageSize;
    std::string shape = "[" + std::to_string(channels) + ", " +
                        std::to_string(height) + ", " + std::to_string(width) +
                        "]";
    if (__builtin_mul_overflow(channels, height, &imageSize) ||
        __builtin_mul_overflow(imageSize, width, &imageSize) ||
        imageSize > maxImageSize)
      fail("an image of shape " + shape + " exceeds the " +
           std::to_string(maxImageSize) + " pixels a synthetic image can hold");
    *out = std::make_unique<SyntheticDataset>(count, channels, height, width,
                                              classes, seed)
               .release();
  });
}
