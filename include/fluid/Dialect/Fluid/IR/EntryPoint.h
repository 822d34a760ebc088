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

/// The argument attribute of an entry function's argument stored with its
/// dimensions permuted (--fluid-permute-storage): an array<i64> as a
/// fluid.param's `storage_order`. The argument's type is the stored type;
/// its dimension d is dimension order[d] of the data's own order (images
/// [N, C, H, W] stored [N, H, W, C]: 0, 2, 3, 1).
constexpr StringLiteral kStorageOrderAttrName = "fluid.storage_order";

/// The result attribute of the loss of a function built by
/// --fluid-append-backward.
constexpr StringLiteral kLossAttrName = "fluid.loss";

/// The result attribute of a loss whose gradients are scaled (dynamic loss
/// scaling, --fluid-append-backward's loss-scale): the parameter holding
/// the scale, which --fluid-append-optimizer unscales by and updates.
constexpr StringLiteral kLossScaleAttrName = "fluid.loss_scale";

/// The parameters of dynamic loss scaling: the scale (f32), the steps since
/// it last changed (f32) and the count of skipped steps (i64).
constexpr StringLiteral kLossScaleParam = "loss_scale";
constexpr StringLiteral kLossScaleGrowthTrackerParam =
    "loss_scale.growth_tracker";
constexpr StringLiteral kLossScaleSkippedParam = "loss_scale.skipped_steps";

/// The result attribute of a gradient: the parameter it is the gradient of.
constexpr StringLiteral kGradOfAttrName = "fluid.grad_of";

/// Whether `func` is a training step: it returns its learning rate.
bool isTrainingStep(func::FuncOp func);

/// The function named `name`, or, when `name` is empty, the one function
/// marked `fluid.entry`, else the only public function with a body. On
/// failure `why` says what the program has instead.
FailureOr<func::FuncOp> findEntryFunction(ModuleOp module, StringRef name,
                                          std::string &why);

class ParamOp;

/// Declares a zero-initialized, non-trainable parameter `name` of `type`
/// marked as optimizer state (checkpoints of the model alone lack it, and
/// loading one keeps its initial value), after `after`, or at the start of
/// the module when `after` is null; or returns the parameter of that name
/// if it already is one of that type and not trainable. Fails with an error
/// naming `pass` if the name is taken by something else.
FailureOr<ParamOp> declareStateParam(ModuleOp module, OpBuilder &builder,
                                     ParamOp after, StringRef name,
                                     RankedTensorType type, StringRef pass);

} // namespace mlir::fluid

#endif // FLUID_DIALECT_FLUID_IR_ENTRYPOINT_H
