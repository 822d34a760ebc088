//===- Options.h - The training executable's command line -----------------===//
//
// Flags are `--name value` or `--name=value`; switches take no value. Every
// mistake (an unknown flag, a missing value, a flag given twice, a value
// that is not a number or out of range) is a UsageError naming the flag,
// which the driver reports with exit code 2. The flags fluid-train shares
// follow the rules of TrainingRules.h. `--help` prints usageText().
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_OPTIONS_H
#define FLUID_RUNTIME_DRIVER_OPTIONS_H

#include "TrainingRules.h"

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

/// The count flags only the executables have (the shared ones are in
/// TrainingRules.h).
constexpr CountFlag
    kWarmupFlag("warmup", 0, kMaxCount,
                "steps before timing starts and the CUDA graph is captured", 2,
                nullptr);
constexpr CountFlag kProfileFlag(
    "profile", 0, kMaxCount,
    "after training, run N more training steps without a graph and print "
    "the time per op class (these steps train, but come after the last "
    "--save)",
    0, "0 (off)");
constexpr CountFlag kPrefetchThreadsFlag("prefetch-threads", 1, 256,
                                         "host threads that prepare each batch",
                                         0, "min(8, hardware threads)");
constexpr CountFlag kDeviceFlag("device", 0, 2147483647,
                                "cuda: the CUDA device ordinal", 0, nullptr);

struct Options {
  int64_t steps = kStepsFlag.defaultValue; // 0: until `epochs` are complete
  int64_t epochs = kEpochsFlag.defaultValue;
  std::string data = "synthetic";
  std::string testData; // "": the default for `data`; "none": no evaluation
  std::optional<double> learningRate;
  int64_t logEvery = kLogEveryFlag.defaultValue;
  std::string savePath;
  std::string loadPath;
  std::optional<int64_t> batch;
  uint64_t seed = kDefaultSeed;
  double mean = kDefaultMean;
  double std = kDefaultStd;
  int64_t syntheticSize = kSyntheticSizeFlag.defaultValue;
  bool graph = true;
  bool tf32 = true;
  /// Whether --tf32 or --no-tf32 was given (otherwise the program's
  /// default, fluid_program_info::tf32, applies).
  bool tf32Given = false;
  int32_t device = static_cast<int32_t>(kDeviceFlag.defaultValue);
  std::string algorithmCache; // "": the default file; "none": in memory
  int64_t warmup = kWarmupFlag.defaultValue;
  int64_t profileSteps = kProfileFlag.defaultValue;
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
