//===- Init.cpp - Deterministic parameter initializers --------------------===//
//
// Every value is a pure function of (spec, seed, stream, element index), built
// only from IEEE-754 +, -, *, / and sqrt, which are correctly rounded
// everywhere. log and cos come from the series below rather than libm, whose
// results differ between C libraries (and between glibc's FMA and non-FMA
// variants), and this file is compiled with -ffp-contract=off so no compiler
// fuses a multiply-add differently. That makes the output bitwise identical
// across platforms, compilers and thread counts.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Init.h"

#include "Philox.h"
#include "fluid/runtime/Error.h"

#include <array>
#include <cfloat>
#include <cmath>
#include <string>

using fluid::rt::fail;

namespace {

constexpr double ln2 = 0.693147180559945309417232121458176568;
constexpr double twoPi = 6.283185307179586476925286766559005768;
constexpr double sqrtHalf = 0.707106781186547524400844362104849039;

/// `count` coefficients sign^k / (2k + offset)! for k = 0, 1, ...: the Taylor
/// coefficients of cos (offset 0) and sin(x)/x (offset 1).
template <int count>
constexpr std::array<double, count> alternatingInverseFactorials(int offset) {
  std::array<double, count> coefficients{};
  double factorial = 1; // exact: n! up to 22! fits in a double's mantissa
  for (int n = 2; n <= offset; ++n)
    factorial *= n;
  for (int k = 0; k < count; ++k) {
    coefficients[k] = (k % 2 == 0 ? 1.0 : -1.0) / factorial;
    factorial *= double(2 * k + offset + 1) * double(2 * k + offset + 2);
  }
  return coefficients;
}

// Ten terms reach double precision for |x| <= pi/4: the first omitted term
// of cos is x^20/20! < 4e-21.
constexpr auto cosCoefficients = alternatingInverseFactorials<10>(0);
constexpr auto sinOverXCoefficients = alternatingInverseFactorials<10>(1);

double evaluatePolynomial(const std::array<double, 10> &coefficients,
                          double x) {
  double sum = 0;
  for (auto it = coefficients.rbegin(); it != coefficients.rend(); ++it)
    sum = sum * x + *it;
  return sum;
}

/// cos(2 pi turns) for turns in [0, 1). The reduction works on `turns`, where
/// each subtraction is exact (Sterbenz), so only |x| <= pi/4 reaches a series.
double cosTwoPi(double turns) {
  if (turns > 0.5)
    turns = 1 - turns; // cos(2 pi t) = cos(2 pi (1 - t))
  double sign = 1;
  if (turns > 0.25) {
    turns = 0.5 - turns; // cos(2 pi t) = -cos(2 pi (1/2 - t))
    sign = -1;
  }
  if (turns > 0.125) {
    double x = twoPi * (0.25 - turns); // cos(2 pi t) = sin(2 pi (1/4 - t))
    return sign * x * evaluatePolynomial(sinOverXCoefficients, x * x);
  }
  double x = twoPi * turns;
  return sign * evaluatePolynomial(cosCoefficients, x * x);
}

/// Natural logarithm of x in (0, 1]: x = m * 2^e with m in [sqrt(1/2),
/// sqrt(2)), log m = 2 atanh(s) with s = (m - 1) / (m + 1), |s| <= 0.172,
/// whose odd series s + s^3/3 + ... reaches double precision in 12 terms.
double logUnitInterval(double x) {
  int exponent;
  double mantissa = std::frexp(x, &exponent);
  if (mantissa < sqrtHalf) {
    mantissa *= 2;
    --exponent;
  }
  double s = (mantissa - 1) / (mantissa + 1);
  double s2 = s * s;
  double sum = 0;
  for (int k = 23; k >= 1; k -= 2)
    sum = sum * s2 + 1.0 / k;
  return exponent * ln2 + 2 * s * sum;
}

/// The two uniforms in [0, 1) that element `index` of stream `stream` reads.
std::array<double, 2> uniformPair(uint64_t seed, uint64_t stream,
                                  uint64_t index) {
  auto block =
      fluid::rt::philox4x32x10({uint32_t(index), uint32_t(index >> 32),
                                uint32_t(stream), uint32_t(stream >> 32)},
                               {uint32_t(seed), uint32_t(seed >> 32)});
  return {fluid::rt::unitIntervalFromBits(block[0], block[1]),
          fluid::rt::unitIntervalFromBits(block[2], block[3])};
}

/// What a spec resolves to once fans are known.
struct Distribution {
  enum Shape { Constant, Uniform, Normal } shape;
  double first;  // value, low or mean
  double second; // unused, high or std
};

std::string formatShape(int32_t rank, const int64_t *shape) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Validates rank and dimensions; returns the element count.
int64_t checkedNumel(int32_t rank, const int64_t *shape) {
  if (rank < 0 || rank > FLUID_MAX_RANK)
    fail("rank " + std::to_string(rank) + " is outside [0, " +
         std::to_string(FLUID_MAX_RANK) + "]");
  int64_t numel = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      fail("negative dimension in shape " + formatShape(rank, shape));
    if (__builtin_mul_overflow(numel, shape[i], &numel))
      fail("element count of shape " + formatShape(rank, shape) +
           " overflows int64");
  }
  return numel;
}

struct Fans {
  int64_t in;
  int64_t out;
};

Fans computeFans(int32_t rank, const int64_t *shape) {
  checkedNumel(rank, shape);
  if (rank < 2)
    fail("fan-based initializers need a weight of rank >= 2, got shape " +
         formatShape(rank, shape) +
         " (fan_in = shape[1] * prod(shape[2:]) is undefined)");
  int64_t receptiveField = 1;
  for (int32_t i = 2; i < rank; ++i)
    receptiveField *= shape[i]; // cannot overflow: checkedNumel passed
  return {shape[1] * receptiveField, shape[0] * receptiveField};
}

void requireFinite(const char *kind, const char *field, double value) {
  if (!std::isfinite(value))
    fail(std::string(kind) + ": " + field + " must be finite, got " +
         std::to_string(value));
}

void requireGain(const char *kind, double gain) {
  requireFinite(kind, "gain", gain);
  if (gain < 0)
    fail(std::string(kind) + ": gain must be >= 0, got " +
         std::to_string(gain));
}

Distribution resolve(const fluid_init_spec &spec, const fluid_tensor &t) {
  switch (spec.kind) {
  case FLUID_INIT_ZEROS:
    return {Distribution::Constant, 0, 0};
  case FLUID_INIT_ONES:
    return {Distribution::Constant, 1, 0};
  case FLUID_INIT_CONSTANT:
    requireFinite("CONSTANT", "value", spec.value);
    return {Distribution::Constant, spec.value, 0};
  case FLUID_INIT_NORMAL:
    requireFinite("NORMAL", "mean", spec.mean);
    requireFinite("NORMAL", "std", spec.std);
    if (spec.std < 0)
      fail("NORMAL: std must be >= 0, got " + std::to_string(spec.std));
    return {Distribution::Normal, spec.mean, spec.std};
  case FLUID_INIT_UNIFORM:
    requireFinite("UNIFORM", "low", spec.low);
    requireFinite("UNIFORM", "high", spec.high);
    if (spec.low > spec.high)
      fail("UNIFORM: low must be <= high, got low " + std::to_string(spec.low) +
           ", high " + std::to_string(spec.high));
    return {Distribution::Uniform, spec.low, spec.high};
  case FLUID_INIT_KAIMING_NORMAL:
  case FLUID_INIT_KAIMING_UNIFORM: {
    bool isNormal = spec.kind == FLUID_INIT_KAIMING_NORMAL;
    const char *kind = isNormal ? "KAIMING_NORMAL" : "KAIMING_UNIFORM";
    if (spec.fan_mode != FLUID_FAN_IN && spec.fan_mode != FLUID_FAN_OUT)
      fail(std::string(kind) + ": fan_mode must be FLUID_FAN_IN (0) or " +
           "FLUID_FAN_OUT (1), got " + std::to_string(spec.fan_mode));
    requireGain(kind, spec.gain);
    Fans fans = computeFans(t.rank, t.shape);
    double fan = double(spec.fan_mode == FLUID_FAN_IN ? fans.in : fans.out);
    if (isNormal)
      return {Distribution::Normal, 0, spec.gain / std::sqrt(fan)};
    double bound = spec.gain * std::sqrt(3.0 / fan);
    return {Distribution::Uniform, -bound, bound};
  }
  case FLUID_INIT_XAVIER_UNIFORM: {
    requireGain("XAVIER_UNIFORM", spec.gain);
    Fans fans = computeFans(t.rank, t.shape);
    double bound =
        spec.gain * std::sqrt(6.0 / (double(fans.in) + double(fans.out)));
    return {Distribution::Uniform, -bound, bound};
  }
  default:
    fail("unknown initializer kind " + std::to_string(spec.kind));
  }
}

double sample(const Distribution &distribution, uint64_t seed, uint64_t stream,
              uint64_t index) {
  if (distribution.shape == Distribution::Constant)
    return distribution.first;
  auto [u1, u2] = uniformPair(seed, stream, index);
  if (distribution.shape == Distribution::Uniform)
    return distribution.first + (distribution.second - distribution.first) * u1;
  // Box-Muller; 1 - u1 is exact and lies in (0, 1], so the log is finite.
  double radius = std::sqrt(-2 * logUnitInterval(1 - u1));
  return distribution.first + distribution.second * radius * cosTwoPi(u2);
}

/// The largest magnitude `distribution` can produce (Box-Muller's radius is at
/// most sqrt(-2 log 2^-53) < 9).
double largestMagnitude(const Distribution &distribution) {
  switch (distribution.shape) {
  case Distribution::Constant:
    return std::fabs(distribution.first);
  case Distribution::Uniform:
    return std::fmax(std::fabs(distribution.first),
                     std::fabs(distribution.second));
  case Distribution::Normal:
    return std::fabs(distribution.first) + 9 * distribution.second;
  }
  return 0;
}

template <typename T>
void fill(T *data, int64_t numel, const Distribution &distribution,
          uint64_t seed, uint64_t stream) {
  for (int64_t i = 0; i < numel; ++i)
    data[i] = static_cast<T>(sample(distribution, seed, stream, uint64_t(i)));
}

} // namespace

extern "C" fluid_status fluid_init_tensor(fluid_tensor *t,
                                          const fluid_init_spec *spec,
                                          uint64_t seed, uint64_t stream) {
  return fluid::rt::guard("fluid_init_tensor", [&] {
    if (!t || !spec)
      fail("tensor and spec must not be null");
    if (t->dtype != FLUID_F32 && t->dtype != FLUID_F64)
      throw fluid::rt::Error(
          FLUID_ERROR_UNSUPPORTED,
          "initializers fill F32 or F64 tensors, got dtype " +
              std::to_string(t->dtype));
    int64_t numel = checkedNumel(t->rank, t->shape);
    Distribution distribution = resolve(*spec, *t);
    // Converting an out-of-range double to float is undefined behavior.
    double largest = largestMagnitude(distribution);
    double limit = t->dtype == FLUID_F32 ? FLT_MAX : DBL_MAX;
    if (!(largest <= limit))
      fail("initializer values reach magnitude " + std::to_string(largest) +
           ", beyond the range of " + (t->dtype == FLUID_F32 ? "F32" : "F64"));
    if (numel == 0)
      return;
    if (!t->data)
      fail("tensor data is null but shape " + formatShape(t->rank, t->shape) +
           " has " + std::to_string(numel) + " elements");
    if (t->dtype == FLUID_F32)
      fill(static_cast<float *>(t->data), numel, distribution, seed, stream);
    else
      fill(static_cast<double *>(t->data), numel, distribution, seed, stream);
  });
}

extern "C" fluid_status fluid_init_fans(int32_t rank, const int64_t *shape,
                                        int64_t *fan_in, int64_t *fan_out) {
  return fluid::rt::guard("fluid_init_fans", [&] {
    if (!shape || !fan_in || !fan_out)
      fail("shape, fan_in and fan_out must not be null");
    Fans fans = computeFans(rank, shape);
    *fan_in = fans.in;
    *fan_out = fans.out;
  });
}

extern "C" uint64_t fluid_hash_name(const char *name) {
  uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a 64 offset basis
  for (const char *c = name; c && *c; ++c) {
    hash ^= static_cast<unsigned char>(*c);
    hash *= 0x100000001b3ull; // FNV 64 prime
  }
  return hash;
}
