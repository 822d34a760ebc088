//===- EntryPoint.h - Which function of a program is the model ------------===//

#ifndef FLUID_DIALECT_FLUID_IR_ENTRYPOINT_H
#define FLUID_DIALECT_FLUID_IR_ENTRYPOINT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::fluid {

/// The unit attribute that marks a program's entry function.
constexpr StringLiteral kEntryAttrName = "fluid.entry";

/// The unit attribute of parameters that hold optimizer state (step
/// counter, momentum buffers, Adam moments) rather than the model.
constexpr StringLiteral kOptimizerStateAttrName = "fluid.optimizer_state";

/// The result attribute of a training step's learning rate
/// (--fluid-append-optimizer), which marks the function as a training step.
constexpr StringLiteral kLearningRateResultAttrName = "fluid.learning_rate";

/// The string attribute naming an entry function's argument ("images",
/// "labels"), as data files and checkpoints name it.
constexpr StringLiteral kNameAttrName = "fluid.name";

/// The result attribute of the loss of a function built by
/// --fluid-append-backward.
constexpr StringLiteral kLossAttrName = "fluid.loss";

/// The result attribute of a gradient: the parameter it is the gradient of.
constexpr StringLiteral kGradOfAttrName = "fluid.grad_of";

/// Whether `func` is a training step: it returns its learning rate.
bool isTrainingStep(func::FuncOp func);

/// The function named `name`, or, when `name` is empty, the one function
/// marked `fluid.entry`, else the only public function with a body. On
/// failure `why` says what the program has instead.
FailureOr<func::FuncOp> findEntryFunction(ModuleOp module, StringRef name,
                                          std::string &why);

} // namespace mlir::fluid

#endif // FLUID_DIALECT_FLUID_IR_ENTRYPOINT_H
