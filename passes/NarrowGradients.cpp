//===- NarrowGradients.cpp - --fluid-narrow-gradients ---------------------===//
//
// In a mixed-precision training step, the activation gradients computed from
// 16-bit values (elementwise, or by max pooling's gradient) that more than
// one op (or a non-elementwise op) reads are stored in 16 bits, as
// torch.autocast's are (docs/PRECISION.md).
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDNARROWGRADIENTS
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

bool isF32Tensor(Type type, int64_t minRank = 0) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32() &&
         tensor.getRank() >= minRank;
}

bool is16BitFloat(Type type) { return type.isBF16() || type.isF16(); }

struct FluidNarrowGradientsPass
    : public mlir::fluid::impl::FluidNarrowGradientsBase<
          FluidNarrowGradientsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) { runOnFunction(func); });
  }

  void runOnFunction(func::FuncOp func) {
    DenseSet<Value> updates = parameterUpdateCone(func);
    // The 16-bit type each f32 value is computed from, if it is computed
    // only from 16-bit values (see sourceType). Operands come before their
    // users, so one walk in order fills it.
    DenseMap<Value, Type> source;
    SmallVector<std::pair<Value, Type>> chosen;
    func.walk([&](Operation *op) {
      for (Value result : op->getResults()) {
        Type element = sourceType(op, result, source);
        if (!element)
          continue;
        source[result] = element;
        if (isChosen(op, result, updates))
          chosen.emplace_back(result, element);
      }
    });
    for (auto [value, element] : chosen)
      roundWhereMade(value, element);
    numNarrowed += chosen.size();
  }

  /// The values that a chain of elementwise ops, casts and reshapes carries
  /// into a `fluid.set_param`: the parameters' gradients and the
  /// optimizer's arithmetic, which stay f32 (a parameter's gradient is
  /// summed over its uses in f32, as autocast's f32 master weights are).
  static DenseSet<Value> parameterUpdateCone(func::FuncOp func) {
    DenseSet<Value> cone;
    SmallVector<Value> work;
    func.walk([&](SetParamOp op) { work.push_back(op.getValue()); });
    while (!work.empty()) {
      Value value = work.pop_back_val();
      if (!cone.insert(value).second)
        continue;
      Operation *producer = value.getDefiningOp();
      if (producer && (isFusibleElementwise(producer) ||
                       isa<CastOp, ReshapeOp, BroadcastToOp>(producer)))
        llvm::append_range(work, producer->getOperands());
    }
    return cone;
  }

  /// The 16-bit type that `result` (of `op`) is computed from, or null: a
  /// widening cast of a 16-bit value; a reshape or broadcast of such a
  /// value, or max pooling's gradient of one; an elementwise op whose operands
  /// of the result's size are all such values of one type (smaller, broadcast
  /// operands such as a per-channel factor or a scalar do not count).
  static Type sourceType(Operation *op, Value result,
                         const DenseMap<Value, Type> &source) {
    if (!isF32Tensor(result.getType()))
      return {};
    auto lookup = [&](Value value) -> Type {
      if (auto cast = value.getDefiningOp<CastOp>()) {
        Type input = cast.getInput().getType();
        if (auto tensor = dyn_cast<RankedTensorType>(input);
            tensor && is16BitFloat(tensor.getElementType()))
          return tensor.getElementType();
      }
      return source.lookup(value);
    };
    if (isa<CastOp>(op))
      return lookup(result);
    if (isa<ReshapeOp, BroadcastToOp>(op) || isPoolGradient(op))
      return lookup(op->getOperand(0));
    if (!isFusibleElementwise(op))
      return {};
    auto resultType = cast<RankedTensorType>(result.getType());
    Type element;
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!type || type.getShape() != resultType.getShape())
        continue;
      Type from = lookup(operand);
      if (!from || (element && element != from))
        return {};
      element = from;
    }
    return element;
  }

  /// Max pooling's gradient: sums of the picked terms of its first
  /// operand (grad_output); its second (the input or the picks) only
  /// selects.
  static bool isPoolGradient(Operation *op) {
    return isa<MaxPool2DGradOp, MaxPool2DGradIndicesOp>(op);
  }

  /// Whether `result` (of `op`, computed from 16-bit values) is stored in
  /// 16 bits: an f32 tensor of rank 3 or more, outside the parameter
  /// updates and not returned, that an elementwise op (not a cast) makes
  /// and more than one op or one that is not elementwise reads (the rule
  /// of --fluid-mixed-precision's store-activations), or that max
  /// pooling's gradient makes (stored whoever reads it).
  static bool isChosen(Operation *op, Value result,
                       const DenseSet<Value> &updates) {
    if (isa<CastOp>(op) || !(isFusibleElementwise(op) || isPoolGradient(op)) ||
        !isF32Tensor(result.getType(), /*minRank=*/3) ||
        updates.contains(result))
      return false;
    if (llvm::any_of(result.getUsers(), [](Operation *user) {
          return user->hasTrait<mlir::OpTrait::IsTerminator>();
        }))
      return false;
    // A pooling gradient is written to memory whoever reads it (no fused
    // region takes it).
    return isPoolGradient(op) ? !result.use_empty()
                              : isReadBeyondOneRegion(result);
  }
};

} // namespace
