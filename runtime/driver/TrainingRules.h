//===- TrainingRules.h - What fluid-train and the executables check alike -===//
//
// fluid-train (tools/fluid-train, LLVM's command line, no exceptions) and the
// training executables (Options.cpp, Driver.cpp) take the same flags and
// load the same checkpoints. The rules for both live here, once: the
// bounds, help and messages of the shared flags, how the last step of a run
// follows from them, and what a loaded checkpoint must hold. Every check
// returns "" or the error message, which names the flag, the file or the
// tensor at fault; the caller reports it in its own way.
//
// Counts: every count flag takes a decimal integer within its bounds,
// [1, 2^31 - 1] unless its entry below says otherwise; anything else (a
// sign, a fraction, 0 where the minimum is 1, a number past the maximum) is
// "--NAME must be an integer from MIN to MAX, got 'TEXT'". A flag given
// twice is an error too, and --steps and --epochs exclude each other.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_TRAININGRULES_H
#define FLUID_RUNTIME_DRIVER_TRAININGRULES_H

#include "fluid/runtime/Tensor.h"

#include <cstdint>
#include <string>

namespace fluid::rt::driver {

/// The largest value of a count flag: far past any real run, and small
/// enough that the product of two counts cannot overflow int64.
constexpr int64_t kMaxCount = 2147483647;

/// A flag whose value is a count.
struct CountFlag {
  constexpr CountFlag(const char *name, int64_t minimum, int64_t maximum,
                      const char *help, int64_t defaultValue,
                      const char *defaultText)
      : name(name), minimum(minimum), maximum(maximum), help(help),
        defaultValue(defaultValue), defaultText(defaultText) {}

  const char *name; // without the leading "--"
  int64_t minimum, maximum;
  const char *help; // what N means, one line
  /// The value when the flag is not given, and how --help says it (nullptr:
  /// the number itself).
  int64_t defaultValue;
  const char *defaultText;
};

constexpr CountFlag kStepsFlag(
    "steps", 1, kMaxCount,
    "train N steps from where the checkpoint stopped, instead of --epochs", 0,
    "until --epochs are complete");
constexpr CountFlag
    kEpochsFlag("epochs", 1, kMaxCount,
                "train until N epochs are complete, counted from step 0", 1,
                nullptr);
constexpr CountFlag kLogEveryFlag("log-every", 1, kMaxCount,
                                  "print the mean loss every N steps", 50,
                                  nullptr);
constexpr CountFlag kBatchFlag(
    "batch", 1, kMaxCount,
    "check that the program takes batches of N (the batch is fixed when "
    "the program is built)",
    0, "no check");
constexpr CountFlag kSyntheticSizeFlag(
    "synthetic-size", 1, kMaxCount,
    "examples in a synthetic dataset (each holds 8 bytes of host memory: "
    "its place in the shuffled order)",
    1024, nullptr);

/// --seed, --mean and --std.
constexpr uint64_t kDefaultSeed = 0;
constexpr double kDefaultMean = 0.2860, kDefaultStd = 0.3530;
constexpr const char *kSeedHelp =
    "seed of the initializers, the shuffling and synthetic data; N from 0 "
    "to 2^64 - 1";
constexpr const char *kMeanHelp =
    "normalization: (pixel / 255 - mean) / std; a finite number";
constexpr const char *kStdHelp = "see --mean; a positive number";

/// "N from 1 to 2147483647": the bounds as --help states them.
std::string countBounds(const CountFlag &flag);

/// The help line of `flag`: its help and its bounds, without the default.
std::string countHelp(const CountFlag &flag);

/// The default of `flag` as --help states it.
std::string countDefault(const CountFlag &flag);

/// "0.2860": a default of --mean or --std as --help states it.
std::string numberDefault(double value);

/// Parses `text`, the value of `flag`, into `value`.
std::string parseCount(const CountFlag &flag, const std::string &text,
                       int64_t &value);

/// Parses a value of --seed: a decimal integer in [0, 2^64 - 1].
std::string parseSeed(const std::string &text, uint64_t &value);

/// Parses a finite number (strtod's syntax, no leading space) for `flag`
/// ("--mean").
std::string parseNumber(const std::string &flag, const std::string &text,
                        double &value);

/// Parses a value of --std: a finite number above 0.
std::string parseStd(const std::string &text, double &value);

/// The message for a flag given `times` (more than once) times, in the
/// words of the other Fluid tools.
std::string repeatedFlag(const std::string &flag, int64_t times);

/// The message for --steps and --epochs given together.
std::string stepsAndEpochs();

/// Checks that a synthetic dataset of `count` examples fits in the host
/// memory that is still available (fluid_available_host_memory): the run
/// holds 8 bytes per example.
std::string checkSyntheticSize(int64_t count);

/// Checks --batch `batch` against the batch `programBatch` of the program.
std::string checkBatch(int64_t batch, int64_t programBatch);

/// Checks the step counter `name` = `value` that a run starts from, read
/// from `source` (a checkpoint, or "the program" for its initial value).
std::string checkStepCounter(const std::string &source, const std::string &name,
                             int64_t value);

/// Sets `target`, the step a run stops before: `done + steps` with --steps
/// (`steps` > 0), else `epochs * stepsPerEpoch`, but never before `done`.
std::string planSteps(int64_t done, int64_t steps, int64_t epochs,
                      int64_t stepsPerEpoch, int64_t &target);

/// Checks that every element of `tensor` is finite, when its dtype is a
/// floating one (f16, bf16, f32, f64): `tensor` is the value of tensor
/// `name` loaded from the checkpoint `path`.
std::string checkFinite(const std::string &path, const std::string &name,
                        const fluid_tensor &tensor);

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_TRAININGRULES_H
