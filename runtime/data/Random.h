//===- Random.h - Bounded integers from Philox blocks ---------------------===//
//
// Shuffling, synthetic labels and random crops need integers uniform on
// [0, bound). They take a 64-bit word W of a Philox block (x0:x1, or x2:x3
// for a second draw) and scale it, floor(W * bound / 2^64): no rejection
// loop, so every draw is reproducible from its counter alone, at a bias of
// at most bound / 2^64.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_RANDOM_H
#define FLUID_RUNTIME_DATA_RANDOM_H

#include "../init/Philox.h"

#include <cstdint>

namespace fluid::rt::data {

/// floor(W * bound / 2^64) for W = (high << 32) | low.
inline uint64_t drawBelow(uint32_t high, uint32_t low, uint64_t bound) {
  uint64_t word = uint64_t(high) << 32 | low;
  return uint64_t((static_cast<unsigned __int128>(word) * bound) >> 64);
}

/// floor(W * bound / 2^64) for W = (block[0] << 32) | block[1].
inline uint64_t drawBelow(const PhiloxCounter &block, uint64_t bound) {
  return drawBelow(block[0], block[1], bound);
}

/// The key {lo32(seed), hi32(seed)}, as Init.h uses it.
inline PhiloxKey keyFromSeed(uint64_t seed) {
  return {uint32_t(seed), uint32_t(seed >> 32)};
}

} // namespace fluid::rt::data

#endif // FLUID_RUNTIME_DATA_RANDOM_H
