//===- EmitProgram.h - Emit a bufferized program as C++ -------------------===//
//
// The last step of fluid-compile: a module at the buffer level (after
// --fluid-bufferize) becomes one C++ translation unit that describes the
// program with the plain data of runtime/include/fluid/runtime/Program.h
// and runs each function as one checked runtime call per launch, in
// program order. The file compiles with any C++17 compiler against the
// runtime's headers and links with libfluid_runtime (which holds the
// kernels and the driver); docs/COMPILE.md shows an example.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_TARGET_EMITPROGRAM_H
#define FLUID_TARGET_EMITPROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::fluid {

/// The backend whose kernels emitted code calls.
enum class EmitBackend { Cpu, Cuda };

struct EmitOptions {
  EmitBackend backend = EmitBackend::Cuda;
  /// The model file, recorded in the program (and its first comment).
  std::string source;
  /// The training options the program was built with, recorded likewise.
  std::string trainingOptions;
  /// Whether to define main() calling the runtime's driver.
  bool withMain = true;
  /// The executable's default for f32 convolutions and products on cuda:
  /// TF32 tensor cores (true) or full f32 (false: --precision fp32).
  bool tf32 = true;
};

/// Writes `module` (bufferized) as C++ to `os`. Fails with a diagnostic at
/// the first op that has no emission (e.g. a tensor-level op: the module
/// was not bufferized).
LogicalResult emitProgram(ModuleOp module, const EmitOptions &options,
                          raw_ostream &os);

} // namespace mlir::fluid

#endif // FLUID_TARGET_EMITPROGRAM_H
