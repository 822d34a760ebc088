//===- MixedPrecision.cpp - --fluid-mixed-precision -----------------------===//
//
// Convolutions and matrix products of f32 tensors run on 16-bit casts of
// their operands, their 16-bit results cast back to f32, and activations
// are stored in 16 bits (docs/PRECISION.md).
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDMIXEDPRECISION
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// `type` with element type `element`, if it is an f32 tensor.
RankedTensorType narrowed(Type type, Type element) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isF32())
    return {};
  return tensor.clone(element);
}

struct FluidMixedPrecisionPass
    : public mlir::fluid::impl::FluidMixedPrecisionBase<
          FluidMixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    Builder types(&getContext());
    Type element;
    if (precision == "bf16")
      element = types.getBF16Type();
    else if (precision == "fp16")
      element = types.getF16Type();
    else {
      getOperation().emitError()
          << "--fluid-mixed-precision: precision must be bf16 or fp16, got '"
          << precision << "'";
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<Conv2DOp, MatmulOp, LinearOp>(op) &&
          llvm::all_of(op->getResultTypes(),
                       [&](Type t) { return bool(narrowed(t, element)); }))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      rewrite(op, element);
    numOps += ops.size();
    if (storeActivations) {
      SmallVector<Value> stored;
      getOperation().walk([&](Operation *op) {
        for (Value result : op->getResults())
          if (isStoredActivation(result))
            stored.push_back(result);
      });
      for (Value value : stored)
        roundWhereMade(value, element);
      numStored += stored.size();
    }
  }

  /// Whether `value` is an activation to store in 16 bits (see the pass's
  /// description).
  static bool isStoredActivation(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    Operation *producer = value.getDefiningOp();
    if (!type || !type.getElementType().isF32() || type.getRank() < 3 ||
        !producer || isa<CastOp, GetParamOp, ConstantOp>(producer) ||
        value.use_empty())
      return false;
    return isa<ReluOp, SigmoidOp, TanhOp>(producer) ||
           isReadBeyondOneRegion(value);
  }

  /// Replaces `op` by the same op on 16-bit casts of its f32 operands,
  /// its results cast back to f32. A convolution's or linear layer's bias
  /// is added after the cast back, in f32 (reshaped to [O, 1, 1] against a
  /// convolution's [N, O, OH, OW]): the bias, its gradient and the sum
  /// that gradient is stay f32, as torch.autocast's f32 master bias.
  void rewrite(Operation *op, Type element) {
    OpBuilder builder(op);
    Location loc = op->getLoc();
    Value bias;
    if (auto conv = dyn_cast<Conv2DOp>(op))
      bias = conv.getBias();
    else if (auto linear = dyn_cast<LinearOp>(op))
      bias = linear.getBias();
    // The bias is the last operand of both ops.
    SmallVector<Value> operands;
    for (Value operand : op->getOperands().drop_back(bias ? 1 : 0)) {
      if (RankedTensorType type = narrowed(operand.getType(), element))
        operand = CastOp::create(builder, loc, type, operand);
      operands.push_back(operand);
    }
    SmallVector<Type> results;
    for (Type type : op->getResultTypes())
      results.push_back(narrowed(type, element));
    OperationState state(loc, op->getName(), operands, results, op->getAttrs());
    Operation *narrow = builder.create(state);
    for (auto [old, now] : llvm::zip(op->getResults(), narrow->getResults())) {
      Value wide = CastOp::create(builder, loc, old.getType(), now);
      if (bias)
        wide = AddOp::create(builder, loc, old.getType(), wide,
                             broadcastable(builder, loc, bias, old.getType()));
      old.replaceAllUsesWith(wide);
    }
    op->erase();
  }

  /// `bias` ([O]) reshaped so that NumPy broadcasting adds it along
  /// dimension 1 of `target` ([N, O, ...]).
  static Value broadcastable(OpBuilder &builder, Location loc, Value bias,
                             Type target) {
    auto targetType = cast<RankedTensorType>(target);
    if (targetType.getRank() <= 2)
      return bias;
    auto biasType = cast<RankedTensorType>(bias.getType());
    SmallVector<int64_t> shape(targetType.getRank() - 1, 1);
    shape[0] = biasType.getDimSize(0);
    return ReshapeOp::create(builder, loc, biasType.clone(shape), bias);
  }
};

} // namespace

bool mlir::fluid::isReadBeyondOneRegion(Value value) {
  auto users = value.getUsers();
  return !value.use_empty() && (!llvm::hasSingleElement(users) ||
                                !isFusibleElementwise(*users.begin()));
}

void mlir::fluid::roundWhereMade(Value value, Type element) {
  OpBuilder builder(value.getContext());
  builder.setInsertionPointAfterValue(value);
  Location loc = value.getLoc();
  auto type = cast<RankedTensorType>(value.getType());
  Value narrow = CastOp::create(builder, loc, type.clone(element), value);
  Value wide = CastOp::create(builder, loc, type, narrow);
  // A reader that wants the 16-bit value (a convolution's operand cast)
  // reads the stored one.
  for (Operation *user : llvm::make_early_inc_range(value.getUsers()))
    if (auto cast = dyn_cast<CastOp>(user);
        cast && user != narrow.getDefiningOp() &&
        cast.getType() == narrow.getType()) {
      cast.replaceAllUsesWith(narrow);
      cast.erase();
    }
  value.replaceAllUsesExcept(wide, narrow.getDefiningOp());
}
