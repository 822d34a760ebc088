//===- Shuffle.cpp - Reproducible permutations of a dataset's indices -----===//
//
// The permutation of an epoch is a pure function of (seed, epoch, n): each
// swap reads its own Philox block, addressed by its position, so there is no
// generator state to save in a checkpoint, and a resumed run shuffles its
// next epoch exactly as the uninterrupted run would have.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Data.h"

#include "Random.h"
#include "fluid/runtime/Error.h"

#include <string>
#include <utility>

using fluid::rt::fail;

extern "C" fluid_status fluid_shuffle(int64_t *indices, int64_t n,
                                      uint64_t seed, uint64_t epoch) {
  return fluid::rt::guard("fluid_shuffle", [&] {
    if (n < 0)
      fail("n must be >= 0, got " + std::to_string(n));
    if (n > 0 && !indices)
      fail("indices must not be null when n > 0");
    for (int64_t i = 0; i < n; ++i)
      indices[i] = i;
    fluid::rt::PhiloxKey key = fluid::rt::data::keyFromSeed(seed);
    for (int64_t i = n - 1; i > 0; --i) {
      uint64_t position = uint64_t(i);
      auto block = fluid::rt::philox4x32x10(
          {uint32_t(position), uint32_t(position >> 32), uint32_t(epoch),
           uint32_t(epoch >> 32)},
          key);
      auto j = int64_t(fluid::rt::data::drawBelow(block, position + 1));
      std::swap(indices[i], indices[j]);
    }
  });
}
