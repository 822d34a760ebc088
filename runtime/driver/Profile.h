//===- Profile.h - Time per op class, and the run's summary figures -------===//
//
// --profile N times every launch of N training steps (cudaEvents around
// each launch on cuda, steady_clock on cpu) and reports the time per op
// class, by kernel name: convolution, matmul, batch norm, pooling,
// softmax+loss, reductions, optimizer, activations, elementwise, data
// movement, other. The summary of a run (median, min and max of per-step
// throughput) and --stats-json are written from here too.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_PROFILE_H
#define FLUID_RUNTIME_DRIVER_PROFILE_H

#include "fluid/runtime/Program.h"

#include <cstdio>
#include <string>
#include <vector>

namespace fluid::rt::driver {

/// The op class of a kernel, e.g. "convolution" for "conv2d_grad_filter".
const char *opClassOf(const char *kernel);

struct OpClassTime {
  std::string opClass;
  double msPerStep = 0;
  int64_t launches = 0; // per step
};

/// Sums `launchMs` (one entry per launch of `function`, over `steps` steps)
/// by op class, slowest first.
std::vector<OpClassTime> profileByClass(const fluid_program_function &function,
                                        const std::vector<double> &launchMs,
                                        int64_t steps);

/// Prints the table "op class | ms/step | % | launches".
void printProfile(std::FILE *out, const std::vector<OpClassTime> &classes,
                  int64_t steps);

/// Median, min and max.
struct Spread {
  double median = 0, min = 0, max = 0;
};
Spread spreadOf(std::vector<double> values);

/// What --stats-json writes.
struct RunStats {
  std::string program, backend;
  int64_t batch = 0;
  int64_t timedSteps = 0;
  Spread imagesPerSecond, stepMs;
  int64_t peakMemoryBytes = 0, paramBytes = 0, bufferBytes = 0,
          workspaceBytes = 0;
  bool graph = false, tf32 = false;
  std::vector<OpClassTime> profile;
};

/// Writes `stats` as JSON to `path`; throws Error.
void writeStatsJson(const std::string &path, const RunStats &stats);

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_PROFILE_H
