//===- Options.h - The training executable's command line -----------------===//
//
// Flags are `--name value` or `--name=value`; switches take no value. Every
// mistake (an unknown flag, a missing value, a value that is not a number or
// out of range) is a UsageError naming the flag, which the driver reports
// with exit code 2. `--help` prints usageText().
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_OPTIONS_H
#define FLUID_RUNTIME_DRIVER_OPTIONS_H

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace fluid::rt::driver {

/// A mistake on the command line (exit code 2).
class UsageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct Options {
  int64_t steps = 0; // 0: train until `epochs` are complete
  int64_t epochs = 1;
  std::string data = "synthetic";
  std::string testData; // "": the default for `data`; "none": no evaluation
  std::optional<double> learningRate;
  int64_t logEvery = 50;
  std::string savePath;
  std::string loadPath;
  std::optional<int64_t> batch;
  uint64_t seed = 0;
  double mean = 0.2860;
  double std = 0.3530;
  int64_t syntheticSize = 1024;
  bool graph = true;
  bool tf32 = true;
  int32_t device = 0;
  std::string algorithmCache; // "": the default file; "none": in memory
  int64_t warmup = 2;
  int64_t profileSteps = 0;
  std::string statsJson;
  int64_t prefetchThreads = 0; // set by parseOptions
  bool info = false;
  bool help = false;

  /// The evaluation data `testData` stands for: fashion-mnist's test split
  /// after --data fashion-mnist, synthetic data otherwise.
  std::string effectiveTestData() const;
};

/// Parses argv[1..argc); throws UsageError.
Options parseOptions(int argc, char **argv);

/// The --help text: every flag with its default.
std::string usageText(const std::string &program);

/// Where --algorithm-cache points by default: $XDG_CACHE_HOME/fluid or
/// ~/.cache/fluid, file conv-algorithms.txt; "" when neither is known.
std::string defaultAlgorithmCachePath();

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_OPTIONS_H
