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

/// f16 or bf16: storage types that generated kernels only convert from
/// and to (a cast at a region's edge), computing in f32.
static bool isStorageFloat(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         (tensor.getElementType().isF16() || tensor.getElementType().isBF16());
}

bool mlir::fluid::isWideningStorageCast(Operation *op) {
  auto cast = dyn_cast<CastOp>(op);
  return cast && isStorageFloat(cast.getInput().getType()) &&
         isGeneratedFloat(cast.getType());
}

bool mlir::fluid::isLayoutAgnosticElementwise(Operation *op) {
  return isa<ReluOp, SigmoidOp, TanhOp, NegOp, ExpOp, LogOp, CosOp, SqrtOp,
             FloorOp, ErfOp, AddOp, SubOp, MulOp, DivOp, PowOp, MinimumOp,
             MaximumOp, GreaterEqualOp, SelectOp, CastOp, ReluGradOp,
             SigmoidGradOp, TanhGradOp>(op) &&
         op->getNumResults() == 1;
}

bool mlir::fluid::isFusibleElementwise(Operation *op) {
  // A cast from f32 or f64 to a 16-bit storage type: the region rounds.
  // (The widening one is a view.)
  if (auto cast = dyn_cast<CastOp>(op))
    if (isGeneratedFloat(cast.getInput().getType()) &&
        isStorageFloat(cast.getType()))
      return true;
  if (!isa<ReluOp, SigmoidOp, TanhOp, NegOp, ExpOp, LogOp, CosOp, SqrtOp,
           FloorOp, ErfOp, AddOp, SubOp, MulOp, DivOp, PowOp, MinimumOp,
           MaximumOp, GreaterEqualOp, SelectOp, CastOp, BroadcastToOp,
           ReluGradOp, SigmoidGradOp, TanhGradOp, BatchNormApplyOp>(op))
    return false;
  return llvm::all_of(op->getOperandTypes(), isGeneratedFloat) &&
         llvm::all_of(op->getResultTypes(), isGeneratedFloat);
}

std::optional<int64_t> mlir::fluid::fusedSumChannelAxis(Operation *op) {
  // (A widening sum of 16-bit values runs as a runtime reduction.)
  auto sum = dyn_cast<ReduceSumOp>(op);
  if (!sum || !isGeneratedFloat(sum.getInput().getType()) ||
      sum.getInput().getType().getElementType() !=
          sum.getType().getElementType())
    return std::nullopt;
  int64_t rank = sum.getInput().getType().getRank();
  std::optional<ArrayRef<int64_t>> given = sum.getAxes();
  if ((rank != 2 && rank != 4) || !given)
    return std::nullopt;
  SmallVector<int64_t> axes;
  for (int64_t axis : *given)
    axes.push_back(axis < 0 ? axis + rank : axis);
  llvm::sort(axes);
  if (rank == 2)
    return axes == ArrayRef<int64_t>{0} ? std::optional<int64_t>(1)
                                        : std::nullopt;
  if (axes == ArrayRef<int64_t>{0, 2, 3})
    return 1;
  if (axes == ArrayRef<int64_t>{0, 1, 2})
    return 3;
  return std::nullopt;
}

bool mlir::fluid::isFusibleReduction(Operation *op) {
  return fusedSumChannelAxis(op).has_value();
}

/// The dimensions of `shape` other than those of size 1.
static SmallVector<int64_t> nonUnitDims(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> dims;
  for (int64_t d : shape)
    if (d != 1)
      dims.push_back(d);
  return dims;
}

bool mlir::fluid::isFusibleView(Operation *op) {
  if (isWideningStorageCast(op))
    return true;
  if (auto slice = dyn_cast<SliceOp>(op))
    return slice.getOffset() == 0 && isGeneratedFloat(slice.getType());
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return isGeneratedFloat(reshape.getType()) &&
           nonUnitDims(reshape.getInput().getType().getShape()) ==
               nonUnitDims(reshape.getType().getShape());
  return false;
}

bool mlir::fluid::isLoadedView(Operation *op) {
  if (!isFusibleView(op))
    return false;
  Value source = op->getOperand(0);
  if (isa<BlockArgument>(source))
    return true;
  Operation *producer = source.getDefiningOp();
  return producer && isLoadedView(producer);
}

ArrayRef<int64_t> FusionOp::getIterationShape() {
  for (Operation &op : getBodyBlock().without_terminator()) {
    if (isFusibleView(&op))
      continue;
    Type type = isFusibleReduction(&op) ? op.getOperand(0).getType()
                                        : op.getResult(0).getType();
    return cast<RankedTensorType>(type).getShape();
  }
  return cast<RankedTensorType>(getResult(0).getType()).getShape();
}

bool FusionOp::hasReductions() {
  return llvm::any_of(getBodyBlock().without_terminator(),
                      [](Operation &op) { return isFusibleReduction(&op); });
}

int64_t FusionOp::getChannelAxis() {
  for (Operation &op : getBodyBlock().without_terminator())
    if (std::optional<int64_t> axis = fusedSumChannelAxis(&op))
      return *axis;
  return 1;
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
  auto describeShape = [&] {
    std::string text;
    for (int64_t d : shape)
      text += (text.empty() ? "" : "x") + std::to_string(d);
    return text.empty() ? std::string("rank 0") : text;
  };
  for (Operation &op : block.without_terminator()) {
    if (isFusibleView(&op) && !isLoadedView(&op) && !isWideningStorageCast(&op))
      return op.emitOpError() << "is a view of a value the fused region "
                                 "computes; a view may only apply to an "
                                 "input (or a view of one)";
    if (isLoadedView(&op)) {
      // (A sum reads its input at the iteration shape, checked below.)
      for (Operation *user : op.getUsers())
        if (!isFusibleElementwise(user) && !isFusibleView(user) &&
            !isFusibleReduction(user))
          return op.emitOpError()
                 << "result is read by '" << user->getName()
                 << "'; only the region's elementwise ops and sums may read "
                    "a view";
      continue;
    }
    if (std::optional<int64_t> axis = fusedSumChannelAxis(&op)) {
      if (*axis != getChannelAxis())
        return op.emitOpError()
               << "sums per channel along axis " << *axis
               << ", but the fused region's first sum keeps axis "
               << getChannelAxis() << "; all sums of a region keep one axis";
      if (cast<RankedTensorType>(op.getOperand(0).getType()).getShape() !=
          shape)
        return op.emitOpError() << "sums a value whose shape is not the "
                                   "fused region's iteration shape "
                                << describeShape();
      for (Operation *user : op.getUsers())
        if (!isa<YieldOp>(user))
          return op.emitOpError() << "result is used inside the fused "
                                     "region; a sum can only be yielded";
      continue;
    }
    if (!isFusibleElementwise(&op) && !isWideningStorageCast(&op))
      return op.emitOpError()
             << "cannot be part of a fused region (only elementwise ops and "
                "per-channel sums on f32 or f64 can)";
    for (Type type : op.getResultTypes())
      if (cast<RankedTensorType>(type).getShape() != shape)
        return op.emitOpError()
               << "computes " << type
               << " inside a fused region whose iteration shape is "
               << describeShape();
  }
  for (auto [i, value] : llvm::enumerate(yield.getValues())) {
    Operation *producer = value.getDefiningOp();
    if (producer && isFusibleReduction(producer))
      continue;
    if (cast<RankedTensorType>(value.getType()).getShape() != shape)
      return emitOpError() << "result #" << i << " has type " << value.getType()
                           << ", neither the iteration shape "
                           << describeShape() << " nor a per-channel sum";
  }
  return success();
}
