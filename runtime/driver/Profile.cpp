//===- Profile.cpp - Time per op class, and the run's summary figures -----===//

#include "Profile.h"

#include "Text.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

/// `name` is `stem` or starts with `stem` followed by '_' ("relu_grad").
bool hasStem(const std::string &name, const char *stem) {
  size_t n = std::strlen(stem);
  return name.compare(0, n, stem) == 0 && (name.size() == n || name[n] == '_');
}

bool hasAnyStem(const std::string &name,
                std::initializer_list<const char *> stems) {
  for (const char *stem : stems)
    if (hasStem(name, stem))
      return true;
  return false;
}

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += std::string("\\") + static_cast<char>(c);
    else if (c < 0x20)
      out += format("\\u%04x", c);
    else
      out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string jsonSpread(const Spread &s) {
  return format("{\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}", s.median,
                s.min, s.max);
}

} // namespace

const char *driver::opClassOf(const char *kernel) {
  std::string name = kernel ? kernel : "";
  // Generated kernels (fused regions), with and without per-channel sums.
  if (name == "fused_sums")
    return "fused sums";
  if (name == "fused_elementwise")
    return "fused elementwise";
  if (hasStem(name, "conv2d"))
    return "convolution";
  if (hasAnyStem(name, {"matmul", "linear"}))
    return "matmul";
  if (hasStem(name, "batch_norm"))
    return "batch norm";
  if (name.find("pool") != std::string::npos)
    return "pooling";
  if (hasAnyStem(name, {"softmax", "log_softmax"}))
    return "softmax+loss";
  if (hasAnyStem(name, {"mean", "reduce_sum", "sum_to"}))
    return "reductions";
  if (name.find("sgd") != std::string::npos ||
      name.find("momentum") != std::string::npos ||
      name.find("adam") != std::string::npos)
    return "optimizer";
  if (hasAnyStem(name, {"relu", "sigmoid", "tanh"}))
    return "activations";
  if (hasAnyStem(name, {"add", "sub", "mul", "div", "neg", "exp", "log", "cos",
                        "sqrt", "floor", "pow", "minimum", "maximum",
                        "greater_equal", "select", "cast", "fused"}))
    return "elementwise";
  if (hasAnyStem(name, {"reshape", "concat", "slice", "broadcast_to", "copy",
                        "transpose", "pad", "gather"}))
    return "data movement";
  return "other";
}

std::vector<OpClassTime>
driver::profileByClass(const fluid_program_function &function,
                       const std::vector<double> &launchMs, int64_t steps) {
  std::map<std::string, OpClassTime> byClass;
  for (int64_t l = 0; l < function.num_launches; ++l) {
    const char *opClass = opClassOf(function.launches[l].kernel);
    OpClassTime &entry = byClass[opClass];
    entry.opClass = opClass;
    entry.launches += 1;
    if (l < static_cast<int64_t>(launchMs.size()) && steps > 0)
      entry.msPerStep += launchMs[l] / static_cast<double>(steps);
  }
  std::vector<OpClassTime> classes;
  for (auto &entry : byClass)
    classes.push_back(entry.second);
  // Slowest first, equal times by name (the map's order): a total order, so
  // std::sort is as stable as std::stable_sort, whose temporary buffer
  // clang with libstdc++ 12 warns about.
  std::sort(classes.begin(), classes.end(),
            [](const OpClassTime &a, const OpClassTime &b) {
              if (a.msPerStep != b.msPerStep)
                return a.msPerStep > b.msPerStep;
              return a.opClass < b.opClass;
            });
  return classes;
}

void driver::printProfile(std::FILE *out,
                          const std::vector<OpClassTime> &classes,
                          int64_t steps) {
  double total = 0;
  int64_t launches = 0;
  for (const OpClassTime &c : classes) {
    total += c.msPerStep;
    launches += c.launches;
  }
  std::fprintf(out,
               "profile: %lld steps, each launch timed (no graph; these steps "
               "trained after the last --save)\n",
               static_cast<long long>(steps));
  std::fprintf(out, "%-14s | %9s | %6s | %8s\n", "op class", "ms/step", "%",
               "launches");
  for (const OpClassTime &c : classes)
    std::fprintf(out, "%-14s | %9.3f | %5.1f%% | %8lld\n", c.opClass.c_str(),
                 c.msPerStep, total > 0 ? 100.0 * c.msPerStep / total : 0.0,
                 static_cast<long long>(c.launches));
  std::fprintf(out, "%-14s | %9.3f | %5.1f%% | %8lld\n", "total", total,
               total > 0 ? 100.0 : 0.0, static_cast<long long>(launches));
}

Spread driver::spreadOf(std::vector<double> values) {
  Spread s;
  if (values.empty())
    return s;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  return s;
}

void driver::writeStatsJson(const std::string &path, const RunStats &stats) {
  std::string text = "{\n";
  text += "  \"program\": " + jsonString(stats.program) + ",\n";
  text += "  \"backend\": " + jsonString(stats.backend) + ",\n";
  text += format("  \"batch\": %lld,\n", static_cast<long long>(stats.batch));
  text += format("  \"timed_steps\": %lld,\n",
                 static_cast<long long>(stats.timedSteps));
  text += "  \"images_per_s\": " + jsonSpread(stats.imagesPerSecond) + ",\n";
  text += "  \"step_ms\": " + jsonSpread(stats.stepMs) + ",\n";
  text += format("  \"peak_memory_bytes\": %lld,\n",
                 static_cast<long long>(stats.peakMemoryBytes));
  text += format("  \"param_bytes\": %lld,\n",
                 static_cast<long long>(stats.paramBytes));
  text += format("  \"buffer_bytes\": %lld,\n",
                 static_cast<long long>(stats.bufferBytes));
  text += format("  \"workspace_bytes\": %lld,\n",
                 static_cast<long long>(stats.workspaceBytes));
  text +=
      std::string("  \"graph\": ") + (stats.graph ? "true" : "false") + ",\n";
  text += std::string("  \"tf32\": ") + (stats.tf32 ? "true" : "false") + ",\n";
  text += "  \"profile\": [";
  for (size_t i = 0; i < stats.profile.size(); ++i) {
    const OpClassTime &c = stats.profile[i];
    text += format("%s\n    {\"class\": %s, \"ms_per_step\": %.6g, "
                   "\"launches\": %lld}",
                   i ? "," : "", jsonString(c.opClass).c_str(), c.msPerStep,
                   static_cast<long long>(c.launches));
  }
  text += stats.profile.empty() ? "]\n}\n" : "\n  ]\n}\n";

  std::FILE *file = std::fopen(path.c_str(), "w");
  if (!file)
    fail("cannot write " + path + ": " + std::strerror(errno));
  bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  written = std::fclose(file) == 0 && written;
  if (!written)
    fail("cannot write " + path + ": " + std::strerror(errno));
}
