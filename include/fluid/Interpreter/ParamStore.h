//===- ParamStore.h - The values of a program's parameters ----------------===//
//
// Holds the current value of every `fluid.param` of a module: drawn from
// its initializer (seeded and deterministic: the same seed gives the same
// bits on any machine), or loaded from a safetensors checkpoint whose names
// are the parameters' symbol names, so PyTorch state dicts load directly.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_INTERPRETER_PARAMSTORE_H
#define FLUID_INTERPRETER_PARAMSTORE_H

#include "fluid/Interpreter/HostTensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::fluid {

class ParamStore {
public:
  /// Draws every parameter of `module` from its initializer. The random
  /// stream of a parameter is keyed by `seed` and its name, so adding a
  /// parameter leaves the others' values unchanged.
  static llvm::Expected<ParamStore> initialize(ModuleOp module, uint64_t seed);

  /// Replaces the values of the parameters found in the safetensors file
  /// `path`. Every model parameter must be in the file with its exact dtype
  /// and shape; optimizer state (marked fluid.optimizer_state) absent from
  /// it keeps its value, so a PyTorch state dict starts a training run.
  /// Tensors of the file that are no parameter are ignored; their names are
  /// appended to `ignored`.
  llvm::Error load(StringRef path, SmallVectorImpl<std::string> &ignored);

  /// Writes every parameter to `path` (safetensors, written atomically).
  llvm::Error save(StringRef path) const;

  /// The current value of `name` (null if there is no such parameter).
  HostTensor lookup(StringRef name) const { return values.lookup(name); }
  void set(StringRef name, HostTensor value) { values[name] = value; }
  /// Parameter names in declaration order.
  ArrayRef<std::string> names() const { return order; }

private:
  llvm::StringMap<HostTensor> values;
  std::vector<std::string> order;
  llvm::StringSet<> optimizerState;
};

} // namespace mlir::fluid

#endif // FLUID_INTERPRETER_PARAMSTORE_H
