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
#include <vector>

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

/// What a value of --data or --test-data names.
enum class DataKind {
  Synthetic,    // "synthetic"
  FashionMnist, // "fashion-mnist": Debian's dataset-fashion-mnist files
  None,         // "none" (--test-data only)
  IdxFiles,     // IMAGES,LABELS
  NpyFiles,     // IMAGES,LABELS where IMAGES ends in .npy
  ImageFolder,  // an existing folder: a folder of class folders
  ImageList,    // an existing file: a list file of "PATH LABEL" lines
  Invalid,
};

/// The kind of `spec`; a folder or file (tried before IMAGES,LABELS, so
/// that a name with a comma in it works) must exist.
DataKind dataKind(const std::string &spec);

/// ImageNet's per-channel normalization, the default for image folders, list
/// files and .npy files of 3 channels.
constexpr double kImageNetMean[3] = {0.485, 0.456, 0.406};
constexpr double kImageNetStd[3] = {0.229, 0.224, 0.225};

struct Options {
  int64_t steps = kStepsFlag.defaultValue; // 0: until `epochs` are complete
  int64_t epochs = kEpochsFlag.defaultValue;
  std::string data = "synthetic";
  std::string testData; // "": the default for `data`; "none": no evaluation
  std::optional<double> learningRate;
  int64_t logEvery = kLogEveryFlag.defaultValue;
  std::string savePath;
  std::string loadPath;
  std::string initFromPath; // --init-from; excludes loadPath
  std::optional<int64_t> batch;
  uint64_t seed = kDefaultSeed;
  /// One value for every channel, or one per channel; empty: the default
  /// of the training data (see normalization()).
  std::vector<double> mean, std;
  /// Replace images that cannot be decoded instead of stopping.
  bool skipBadImages = false;
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

  /// --mean and --std for images of `channels` channels, one value per
  /// channel: as given (one value repeated), else ImageNet's for image
  /// folders, list files and .npy files of 3 channels and Fashion-MNIST's
  /// (0.2860, 0.3530) for the rest. Throws UsageError when a flag's count of
  /// values is neither 1 nor `channels`.
  void normalization(int64_t channels, std::vector<double> &meanOut,
                     std::vector<double> &stdOut) const;
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
