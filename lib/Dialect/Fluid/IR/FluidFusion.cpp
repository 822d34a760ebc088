//===- FluidFusion.cpp - fluid.fusion and the ops it may hold -------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fluid;

/// f32 or f64: the element types generated kernels compute in.
static bool isGeneratedFloat(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         (tensor.getElementType().isF32() || tensor.getElementType().isF64());
}

bool mlir::fluid::isFusibleElementwise(Operation *op) {
  if (!isa<ReluOp, SigmoidOp, TanhOp, NegOp, ExpOp, LogOp, CosOp, SqrtOp,
           FloorOp, AddOp, SubOp, MulOp, DivOp, PowOp, MinimumOp, MaximumOp,
           GreaterEqualOp, SelectOp, CastOp, BroadcastToOp, ReluGradOp,
           SigmoidGradOp, TanhGradOp, BatchNormApplyOp>(op))
    return false;
  return llvm::all_of(op->getOperandTypes(), isGeneratedFloat) &&
         llvm::all_of(op->getResultTypes(), isGeneratedFloat);
}

YieldOp FusionOp::getYield() {
  return cast<YieldOp>(getBodyBlock().getTerminator());
}

LogicalResult YieldOp::verify() {
  StringRef parent = (*this)->getParentOp()->getName().getStringRef();
  if (parent != FusionOp::getOperationName() && parent != "fluid_rt.launch")
    return emitOpError() << "must end a fused region (fluid.fusion or its "
                            "fluid_rt.launch), not '"
                         << parent << "'";
  return success();
}

LogicalResult FusionOp::verifyRegions() {
  if (getNumResults() == 0)
    return emitOpError() << "must have at least one result";
  Block &block = getBodyBlock();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "has " << getInputs().size()
                         << " inputs but its body takes "
                         << block.getNumArguments() << " arguments";
  for (auto [i, input, arg] :
       llvm::enumerate(getInputs(), block.getArguments()))
    if (input.getType() != arg.getType())
      return emitOpError() << "input #" << i << " has type " << input.getType()
                           << " but the body's argument has type "
                           << arg.getType();
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with fluid.yield";
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getValues().getTypes()
                         << " but its results are " << getResultTypes();
  ArrayRef<int64_t> shape = getIterationShape();
  for (auto [i, type] : llvm::enumerate(getResultTypes()))
    if (cast<RankedTensorType>(type).getShape() != shape)
      return emitOpError() << "result #" << i << " has type " << type
                           << ", not the iteration shape of result #0";
  for (Operation &op : block.without_terminator()) {
    if (!isFusibleElementwise(&op))
      return op.emitOpError()
             << "cannot be part of a fused region (only elementwise ops on "
                "f32 or f64 can)";
    for (Type type : op.getResultTypes())
      if (cast<RankedTensorType>(type).getShape() != shape)
        return op.emitOpError()
               << "computes " << type
               << " inside a fused region whose iteration shape is that of "
               << getResult(0).getType();
  }
  return success();
}
