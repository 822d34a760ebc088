//===- TrainingRules.cpp - Rules fluid-train and the executables share ----===//

#include "TrainingRules.h"

#include "Text.h"
#include "fluid/runtime/HostMemory.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

/// Host memory a run holds per training example: its index in the order
/// the epoch is shuffled into.
constexpr int64_t kBytesPerExample = sizeof(int64_t);

/// Whether `text` is a non-empty run of decimal digits.
bool isDigits(const std::string &text) {
  if (text.empty())
    return false;
  for (char c : text)
    if (c < '0' || c > '9')
      return false;
  return true;
}

const char *nonFiniteName(double value) {
  return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

/// The first element of `count` 16-bit floats whose exponent bits
/// (`exponent`) are all set, or -1; `kind` tells nan from an infinity.
int64_t firstNonFinite16(const uint16_t *bits, int64_t count, uint16_t exponent,
                         const char *&kind) {
  for (int64_t i = 0; i < count; ++i)
    if ((bits[i] & exponent) == exponent) {
      bool nan = (bits[i] & static_cast<uint16_t>(~exponent & 0x7fff)) != 0;
      kind = nan ? "nan" : (bits[i] & 0x8000) ? "-inf" : "inf";
      return i;
    }
  return -1;
}

template <typename T>
int64_t firstNonFinite(const T *values, int64_t count, const char *&kind) {
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(values[i])) {
      kind = nonFiniteName(static_cast<double>(values[i]));
      return i;
    }
  return -1;
}

} // namespace

std::string driver::countBounds(const CountFlag &flag) {
  return format("N from %lld to %lld", static_cast<long long>(flag.minimum),
                static_cast<long long>(flag.maximum));
}

std::string driver::countHelp(const CountFlag &flag) {
  return std::string(flag.help) + "; " + countBounds(flag);
}

std::string driver::countDefault(const CountFlag &flag) {
  return flag.defaultText ? flag.defaultText
                          : std::to_string(flag.defaultValue);
}

std::string driver::numberDefault(double value) {
  return format("%.4f", value);
}

std::string driver::parseCount(const CountFlag &flag, const std::string &text,
                               int64_t &value) {
  // Digits only: strtoll would also take a sign, spaces and "0x".
  errno = 0;
  long long parsed =
      isDigits(text) ? std::strtoll(text.c_str(), nullptr, 10) : -1;
  if (!isDigits(text) || errno == ERANGE || parsed < flag.minimum ||
      parsed > flag.maximum)
    return format("--%s must be an integer from %lld to %lld, got '%s'",
                  flag.name, static_cast<long long>(flag.minimum),
                  static_cast<long long>(flag.maximum), text.c_str());
  value = parsed;
  return "";
}

std::string driver::parseSeed(const std::string &text, uint64_t &value) {
  errno = 0;
  unsigned long long parsed =
      isDigits(text) ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!isDigits(text) || errno == ERANGE)
    return "--seed must be an integer from 0 to 18446744073709551615, got '" +
           text + "'";
  value = parsed;
  return "";
}

std::string driver::parseNumber(const std::string &flag,
                                const std::string &text, double &value) {
  const char *begin = text.c_str();
  char *end = nullptr;
  double parsed = std::strtod(begin, &end);
  if (text.empty() || end == begin || *end != '\0' ||
      std::isspace(static_cast<unsigned char>(text[0])))
    return flag + " expects a number, got '" + text + "'";
  if (!std::isfinite(parsed))
    return flag + " must be a finite number, got '" + text + "'";
  value = parsed;
  return "";
}

std::string driver::parseStd(const std::string &text, double &value) {
  double parsed = 0;
  std::string problem = parseNumber("--std", text, parsed);
  if (!problem.empty())
    return problem;
  if (!(parsed > 0))
    return "--std must be positive, got '" + text + "'";
  value = parsed;
  return "";
}

std::string driver::repeatedFlag(const std::string &flag, int64_t times) {
  return format("%s given %lld times; give it once", flag.c_str(),
                static_cast<long long>(times));
}

std::string driver::stepsAndEpochs() {
  return "--steps and --epochs exclude each other; give one of them";
}

std::string driver::checkSyntheticSize(int64_t count) {
  // kMaxCount * kBytesPerExample fits int64.
  int64_t bytes = count * kBytesPerExample;
  int64_t available = fluid_available_host_memory();
  if (bytes > available)
    return format("--synthetic-size %lld needs %lld bytes of host memory (%lld "
                  "per example), but %lld bytes are available",
                  static_cast<long long>(count), static_cast<long long>(bytes),
                  static_cast<long long>(kBytesPerExample),
                  static_cast<long long>(available));
  return "";
}

std::string driver::checkBatch(int64_t batch, int64_t programBatch) {
  if (batch == programBatch)
    return "";
  return format("--batch %lld: the batch is fixed when the program is built, "
                "and this program takes batches of %lld",
                static_cast<long long>(batch),
                static_cast<long long>(programBatch));
}

std::string driver::checkStepCounter(const std::string &source,
                                     const std::string &name, int64_t value) {
  if (value >= 0)
    return "";
  return format("%s: the step counter '%s' is %lld; it must not be negative",
                source.c_str(), name.c_str(), static_cast<long long>(value));
}

std::string driver::planSteps(int64_t done, int64_t steps, int64_t epochs,
                              int64_t stepsPerEpoch, int64_t &target) {
  if (steps > 0) {
    if (__builtin_add_overflow(done, steps, &target))
      return format("--steps %lld from step %lld ends past step 2^63 - 1",
                    static_cast<long long>(steps),
                    static_cast<long long>(done));
    return "";
  }
  if (__builtin_mul_overflow(epochs, stepsPerEpoch, &target))
    return format("--epochs %lld of %lld steps each ends past step 2^63 - 1",
                  static_cast<long long>(epochs),
                  static_cast<long long>(stepsPerEpoch));
  if (target < done)
    target = done;
  return "";
}

std::string driver::checkFinite(const std::string &path,
                                const std::string &name,
                                const fluid_tensor &tensor) {
  int64_t count = fluid_tensor_numel(&tensor);
  const char *kind = "";
  int64_t at = -1;
  switch (tensor.dtype) {
  case FLUID_F32:
    at = firstNonFinite(static_cast<const float *>(tensor.data), count, kind);
    break;
  case FLUID_F64:
    at = firstNonFinite(static_cast<const double *>(tensor.data), count, kind);
    break;
  case FLUID_F16:
    at = firstNonFinite16(static_cast<const uint16_t *>(tensor.data), count,
                          0x7c00, kind);
    break;
  case FLUID_BF16:
    at = firstNonFinite16(static_cast<const uint16_t *>(tensor.data), count,
                          0x7f80, kind);
    break;
  default:
    break;
  }
  if (at < 0)
    return "";
  return format("%s: tensor '%s' (%s) holds %s at element %lld; a "
                "checkpoint's parameters and optimizer state must be finite",
                path.c_str(), name.c_str(),
                describe(tensor.dtype, tensor.rank, tensor.shape).c_str(), kind,
                static_cast<long long>(at));
}
