//===- Float16.h - f16 and bf16 storage on the cpu backend ----*- C++ -*-===//
//
// The cpu backend stores FLUID_F16 (IEEE binary16) and FLUID_BF16 (bfloat16:
// f32's sign and exponent, 7 mantissa bits) as their bits and computes in
// f32, the way the GPU's 16-bit paths do. A value rounds to a 16-bit type
// once, to nearest with ties to even (overflow to infinity, NaN stays NaN
// and becomes quiet, f16's subnormals kept); from f64 too, with no double
// rounding through f32 (the f32 step rounds to odd, which is exact enough
// for the final rounding to be correct). Widening to f32 is exact. Header
// only, and public: the cpu loops fluid-compile emits for fused regions
// convert through it too, so they round as the cpu kernels do.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_FLOAT16_H
#define FLUID_RUNTIME_FLOAT16_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace fluid::rt::cpu {

namespace detail {

inline uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

inline float floatOf(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

/// `x` rounded to f32 toward zero, with the last mantissa bit set where
/// that was inexact ("round to odd"): rounding the result to any format
/// with at least two fewer mantissa bits gives the correctly rounded `x`.
inline float roundToOdd(double x) {
  float f = static_cast<float>(x);
  if (std::isnan(x) || static_cast<double>(f) == x)
    return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(x))
    f = std::nextafter(f, 0.0f);
  // Beyond f32's range the truncation is its largest finite value, which
  // is odd and rounds to infinity in both 16-bit types, as x does.
  return floatOf(bitsOf(f) | 1u);
}

/// IEEE binary16 bits of `x`, rounded to nearest even.
inline uint16_t halfBits(float x) {
  uint32_t bits = bitsOf(x);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  bits &= 0x7FFFFFFFu;
  if (bits >= 0x7F800000u) // infinity, or NaN made quiet
    return sign | (bits > 0x7F800000u ? 0x7E00u : 0x7C00u);
  if (bits >= 0x477FF000u) // 65520 and above round to infinity
    return sign | 0x7C00u;
  if (bits < 0x38800000u) { // below 2^-14: a subnormal or zero
    // |x| * 2^24 is exact; nearbyint rounds it to nearest even.
    const float units = std::nearbyint(floatOf(bits) * 16777216.0f);
    return sign | static_cast<uint16_t>(units);
  }
  // Rebias the exponent (127 - 15) and round away 13 mantissa bits; a
  // carry out of the mantissa correctly bumps the exponent.
  const uint32_t rounded = bits - 0x38000000u + 0xFFFu + ((bits >> 13) & 1u);
  return sign | static_cast<uint16_t>(rounded >> 13);
}

inline float halfValue(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
  if (exponent == 0x1F)
    return floatOf(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) { // subnormal or zero: mantissa * 2^-24, exact
    const float magnitude = static_cast<float>(mantissa) / 16777216.0f;
    return sign ? -magnitude : magnitude;
  }
  return floatOf(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// bfloat16 bits of `x`, rounded to nearest even.
inline uint16_t bfloatBits(float x) {
  const uint32_t bits = bitsOf(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) // NaN, made quiet
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  // Overflow rounds into the infinity encoding.
  return static_cast<uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

} // namespace detail

/// An f16 element: its bits, converted through f32.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float x) : bits(detail::halfBits(x)) {}
  explicit Half(double x) : bits(detail::halfBits(detail::roundToOdd(x))) {}
  static Half fromBits(uint16_t bits) {
    Half h;
    h.bits = bits;
    return h;
  }
  explicit operator float() const { return detail::halfValue(bits); }
};

/// A bf16 element: its bits, converted through f32.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  explicit BFloat16(float x) : bits(detail::bfloatBits(x)) {}
  explicit BFloat16(double x)
      : bits(detail::bfloatBits(detail::roundToOdd(x))) {}
  static BFloat16 fromBits(uint16_t bits) {
    BFloat16 b;
    b.bits = bits;
    return b;
  }
  explicit operator float() const {
    return detail::floatOf(static_cast<uint32_t>(bits) << 16);
  }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2,
              "16-bit elements are stored as their bits");

template <typename T>
constexpr bool isFloat16 =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_FLOAT16_H
