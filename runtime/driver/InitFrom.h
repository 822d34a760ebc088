//===- InitFrom.h - Starting a run from given parameter values ------------===//
//
// `--init-from FILE.safetensors` (the training executables and fluid-train)
// starts a new run from the values of a file: a PyTorch state dict, the
// parameter file fluid-import-onnx writes beside a program, or another
// run's checkpoint. Unlike --load, which resumes a run exactly (every model
// parameter, the optimizer state and the step counter), it takes the
// model's parameters only, batch-norm running statistics included, and the
// optimizer state and the step counter start afresh:
//
//   - every tensor of the file must name a parameter of the program, with
//     its dtype and shape (checkpoint order), and be finite; a tensor that
//     names none is an error naming it, except PyTorch's batch-norm counters
//     (`*.num_batches_tracked`, an integer scalar), which no fluid program
//     has and which are skipped;
//   - a tensor naming optimizer state (a checkpoint's momentum buffers,
//     step counter, learning rate) is skipped: that state starts afresh;
//   - a model parameter the file lacks keeps its initializer, and the run
//     says how many did.
//
// A program fluid-import-onnx made declares its parameters with all-zero
// placeholder initializers (and records the parameter file it wrote,
// kParamsFileAttrName in the compiler, fluid_program_info::params_file in
// an executable); a run that trains such placeholders warns, naming the
// file to pass.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_INITFROM_H
#define FLUID_RUNTIME_DRIVER_INITFROM_H

#include "fluid/runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fluid::rt::driver {

/// The help of --init-from, as both tools print it.
constexpr const char *kInitFromHelp =
    "start a new run from the parameters of a safetensors file (a PyTorch "
    "state dict, the weights fluid-import-onnx wrote, a checkpoint): each "
    "tensor sets the parameter of its name, batch-norm running statistics "
    "included, parameters it lacks keep their initializers, and the "
    "optimizer state and step counter start afresh; excludes --load";

/// The help of --load, as both tools print it.
constexpr const char *kLoadHelp =
    "resume exactly from a safetensors checkpoint (either tool's): every "
    "parameter, the optimizer state and the step counter";

/// The message for --init-from and --load given together.
std::string initFromAndLoad();

/// A parameter of the program as --init-from sees it.
struct InitFromParam {
  std::string name;
  /// dtype, rank and shape in the checkpoint's order (`data` unused).
  fluid_tensor type = {};
  bool optimizerState = false;
};

/// What --init-from took from its file.
struct InitFromResult {
  /// Per parameter: whether the file set it.
  std::vector<bool> loaded;
  int64_t loadedCount = 0;
  /// The model parameters (not optimizer state) the file lacks.
  std::vector<std::string> kept;
  /// Tensors of the file that were skipped: optimizer state, and PyTorch's
  /// num_batches_tracked counters.
  int64_t skippedState = 0, skippedCounters = 0;
};

/// Reads the model parameters among `params` from the safetensors file
/// `path` by the rules of the file comment: for each parameter the file
/// sets, its value (checkpoint order) is read to `destination(index)`,
/// which the caller provides (null: out of memory). The file is checked
/// whole before anything is read. Returns "" or the error, which names the
/// file and the tensor.
std::string initFrom(const std::string &path,
                     const std::vector<InitFromParam> &params,
                     const std::function<void *(size_t index)> &destination,
                     InitFromResult &result);

/// The line a run prints after --init-from: how many parameters were
/// loaded, how many kept their initializers (the first few named) and what
/// was skipped.
std::string initFromSummary(const std::string &path,
                            const InitFromResult &result);

/// The warning for `placeholders` of the program's `trainable` trainable
/// parameters left at the zero placeholders of an imported program, whose
/// weights are in `paramsFile`; `flag` is the flag that loads them.
std::string placeholderWarning(int64_t placeholders, int64_t trainable,
                               const std::string &paramsFile,
                               const std::string &flag);

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_INITFROM_H
