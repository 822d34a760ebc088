//===- Philox.h - Counter-based random numbers ----------------------------===//
//
// Philox4x32-10 from "Parallel random numbers: as easy as 1, 2, 3" (Salmon,
// Moraes, Dror, Shaw; SC'11), the generator cuRAND and PyTorch's CUDA backend
// use. It is a keyed bijection of a 128-bit counter, so any element of a
// random stream can be computed independently of all the others: no state,
// no dependence on thread count or evaluation order.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_INIT_PHILOX_H
#define FLUID_RUNTIME_INIT_PHILOX_H

#include <array>
#include <cstdint>

namespace fluid::rt {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// One Philox4x32-10 block. Matches the Random123 known-answer vectors.
inline PhiloxCounter philox4x32x10(PhiloxCounter counter, PhiloxKey key) {
  constexpr uint32_t multiplier0 = 0xD2511F53u, multiplier1 = 0xCD9E8D57u;
  constexpr uint32_t weyl0 = 0x9E3779B9u, weyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    uint64_t product0 = uint64_t(multiplier0) * counter[0];
    uint64_t product1 = uint64_t(multiplier1) * counter[2];
    counter = {
        uint32_t(product1 >> 32) ^ counter[1] ^ key[0], uint32_t(product1),
        uint32_t(product0 >> 32) ^ counter[3] ^ key[1], uint32_t(product0)};
    key = {key[0] + weyl0, key[1] + weyl1};
  }
  return counter;
}

/// A double in [0, 1) from the top 53 bits of the 64-bit word (high:low).
inline double unitIntervalFromBits(uint32_t high, uint32_t low) {
  uint64_t bits = (uint64_t(high) << 32) | low;
  return double(bits >> 11) * 0x1.0p-53;
}

} // namespace fluid::rt

#endif // FLUID_RUNTIME_INIT_PHILOX_H
