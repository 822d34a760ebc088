//===- Interpreter.h - Run fluid functions on the cpu backend -------------===//
//
// A tensor-level interpreter: walks a function of the fluid dialect op by
// op and runs each on the cpu reference kernels of the runtime. It is the
// oracle the rest of the compiler is checked against, so it does the
// obvious thing: every result gets fresh memory, and a value is released
// after its last use. At the buffer level it runs the memory as the
// program says: memref.alloc, memref.dealloc and views of an arena
// (memref.view at a constant offset), optionally poisoning memory that is
// freed or reused.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_INTERPRETER_INTERPRETER_H
#define FLUID_INTERPRETER_INTERPRETER_H

#include "fluid/Interpreter/HostTensor.h"
#include "fluid/Interpreter/ParamStore.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::fluid {

class Interpreter {
public:
  explicit Interpreter(ParamStore &params) : params(params) {}

  /// Poison memory that is freed or reused (0xFF bytes, NaN as floats): a
  /// buffer's bytes when it is allocated, when a memref.dealloc frees it
  /// and when a view of an arena starts a new buffer there, so that a
  /// program that reads memory out of its lifetime computes NaN.
  void setPoisonMemory(bool poison) { poisonMemory = poison; }

  /// Runs `func` on `args` (one per argument, of the argument's type).
  /// `fluid.set_param` updates the store. On failure a diagnostic at the
  /// failing op says why (a runtime error, an unsupported op or type).
  FailureOr<SmallVector<HostTensor>> run(func::FuncOp func,
                                         ArrayRef<HostTensor> args);

private:
  ParamStore &params;
  bool poisonMemory = false;
};

} // namespace mlir::fluid

#endif // FLUID_INTERPRETER_INTERPRETER_H
