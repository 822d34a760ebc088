//===- Random.h - Bounded integers from Philox blocks ---------------------===//
//
// Shuffling and synthetic labels both need integers uniform on [0, bound).
// They take the 64-bit word W = x0:x1 of a Philox block and scale it,
// floor(W * bound / 2^64): no rejection loop, so every draw costs exactly
// one block and is reproducible from its counter alone, at a bias of at most
// bound / 2^64.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_RANDOM_H
#define FLUID_RUNTIME_DATA_RANDOM_H

#include "../init/Philox.h"

#include <cstdint>

namespace fluid::rt::data {

/// floor(W * bound / 2^64) for W = (block[0] << 32) | block[1].
inline uint64_t drawBelow(const PhiloxCounter &block, uint64_t bound) {
  uint64_t word = uint64_t(block[0]) << 32 | block[1];
  return uint64_t((static_cast<unsigned __int128>(word) * bound) >> 64);
}

/// The key {lo32(seed), hi32(seed)}, as Init.h uses it.
inline PhiloxKey keyFromSeed(uint64_t seed) {
  return {uint32_t(seed), uint32_t(seed >> 32)};
}

} // namespace fluid::rt::data

#endif // FLUID_RUNTIME_DATA_RANDOM_H
