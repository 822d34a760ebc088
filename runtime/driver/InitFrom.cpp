//===- InitFrom.cpp - Starting a run from given parameter values ----------===//

#include "InitFrom.h"

#include "Text.h"
#include "TrainingRules.h"
#include "fluid/runtime/Error.h"
#include "fluid/runtime/Safetensors.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

struct ReaderCloser {
  void operator()(fluid_safetensors_reader *r) const {
    fluid_safetensors_close(r);
  }
};

/// PyTorch's batch-norm counter: an integer scalar
/// "<module>.num_batches_tracked".
bool isBatchCounter(const std::string &name, const fluid_tensor &info) {
  const std::string suffix = "num_batches_tracked";
  bool named =
      name == suffix || (name.size() > suffix.size() &&
                         name.compare(name.size() - suffix.size() - 1,
                                      std::string::npos, "." + suffix) == 0);
  return named && info.rank == 0 &&
         (info.dtype == FLUID_I64 || info.dtype == FLUID_I32);
}

std::string plural(int64_t count, const char *one, const char *many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

} // namespace

std::string driver::initFromAndLoad() {
  return "--init-from and --load exclude each other: --load resumes a run "
         "(parameters, optimizer state, step counter), --init-from starts a "
         "new one from given parameters";
}

std::string
driver::initFrom(const std::string &path,
                 const std::vector<InitFromParam> &params,
                 const std::function<void *(size_t index)> &destination,
                 InitFromResult &result) {
  result = InitFromResult();
  result.loaded.assign(params.size(), false);
  fluid_safetensors_reader *rawReader = nullptr;
  if (fluid_safetensors_open(path.c_str(), &rawReader) != FLUID_OK)
    return std::string("--init-from: ") + fluid_last_error();
  std::unique_ptr<fluid_safetensors_reader, ReaderCloser> reader(rawReader);

  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < params.size(); ++i)
    byName.emplace(params[i].name, i);

  // Every tensor of the file is checked before any is read.
  int64_t count = 0;
  if (fluid_safetensors_count(reader.get(), &count) != FLUID_OK)
    return "cannot list the tensors of " + path + ": " + fluid_last_error();
  std::vector<std::pair<size_t, std::string>> toRead;
  for (int64_t t = 0; t < count; ++t) {
    const char *rawName = nullptr;
    fluid_tensor info = {};
    if (fluid_safetensors_name(reader.get(), t, &rawName) != FLUID_OK ||
        fluid_safetensors_info(reader.get(), rawName, &info) != FLUID_OK)
      return "cannot list the tensors of " + path + ": " + fluid_last_error();
    std::string name = rawName;
    auto found = byName.find(name);
    if (found == byName.end()) {
      if (isBatchCounter(name, info)) {
        ++result.skippedCounters;
        continue;
      }
      return format("%s: tensor '%s' (%s) is no parameter of the program; "
                    "--init-from takes the program's parameters by their "
                    "names (PyTorch's state-dict names)",
                    path.c_str(), name.c_str(),
                    describe(info.dtype, info.rank, info.shape).c_str());
    }
    const InitFromParam &param = params[found->second];
    if (param.optimizerState) {
      ++result.skippedState;
      continue;
    }
    const fluid_tensor &type = param.type;
    bool sameShape = info.rank == type.rank &&
                     std::equal(info.shape, info.shape + info.rank, type.shape);
    if (info.dtype != type.dtype || !sameShape)
      return format(
          "%s: tensor '%s' is %s but parameter @%s is %s", path.c_str(),
          name.c_str(), describe(info.dtype, info.rank, info.shape).c_str(),
          name.c_str(), describe(type.dtype, type.rank, type.shape).c_str());
    toRead.emplace_back(found->second, name);
  }

  for (const auto &[index, name] : toRead) {
    fluid_tensor value = params[index].type;
    value.data = destination(index);
    if (!value.data)
      return "cannot allocate memory for parameter @" + name;
    if (fluid_safetensors_read(reader.get(), name.c_str(), &value) != FLUID_OK)
      return "cannot load parameter @" + name + ": " + fluid_last_error();
    std::string problem = checkFinite(path, name, value);
    if (!problem.empty())
      return problem;
    result.loaded[index] = true;
    ++result.loadedCount;
  }
  for (size_t i = 0; i < params.size(); ++i)
    if (!result.loaded[i] && !params[i].optimizerState)
      result.kept.push_back(params[i].name);
  return "";
}

std::string driver::initFromSummary(const std::string &path,
                                    const InitFromResult &result) {
  std::string text = "--init-from " + path + ": " +
                     plural(result.loadedCount, "parameter", "parameters") +
                     " loaded, " + std::to_string(result.kept.size()) +
                     " left at their initializers";
  if (!result.kept.empty()) {
    constexpr size_t kNamed = 4;
    text += " (";
    for (size_t i = 0; i < result.kept.size() && i < kNamed; ++i)
      text += (i ? ", " : "") + result.kept[i];
    if (result.kept.size() > kNamed)
      text += format(" and %zu more", result.kept.size() - kNamed);
    text += ")";
  }
  text += "; optimizer state and step counter start afresh";
  if (result.skippedState > 0)
    text += " (" +
            plural(result.skippedState, "optimizer-state tensor",
                   "optimizer-state tensors") +
            " of the file skipped)";
  if (result.skippedCounters > 0)
    text += "; " +
            plural(result.skippedCounters, "num_batches_tracked counter",
                   "num_batches_tracked counters") +
            " skipped";
  return text;
}

std::string driver::placeholderWarning(int64_t placeholders, int64_t trainable,
                                       const std::string &paramsFile,
                                       const std::string &flag) {
  return format("%lld of the %lld trainable parameters are still the "
                "all-zero placeholders fluid-import-onnx declared; the "
                "exported weights are in %s: pass %s %s",
                static_cast<long long>(placeholders),
                static_cast<long long>(trainable), paramsFile.c_str(),
                flag.c_str(), paramsFile.c_str());
}
