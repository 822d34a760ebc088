//===- NarrowDataMovement.cpp - --fluid-narrow-data-movement --------------===//
//
// In a mixed-precision step, reshapes, transposes, slices and max pooling
// of 16-bit values widened to f32 take the 16-bit values and widen after;
// reshapes and transposes that only narrowing casts read move the narrowed
// values; a max-pooling gradient of a widened 16-bit gradient, rounded to
// that type, is computed in it; a narrowing cast that then meets a
// widening one gives the 16-bit value back (docs/PRECISION.md).
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDNARROWDATAMOVEMENT
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// The f16 or bf16 tensor that `value` widens to f32 (exactly), or null.
Value widenedFrom(Value value) {
  auto widen = value.getDefiningOp<CastOp>();
  if (!widen)
    return {};
  Type from = getElementTypeOrSelf(widen.getInput().getType());
  Type to = getElementTypeOrSelf(widen.getType());
  if ((from.isBF16() || from.isF16()) && to.isF32())
    return widen.getInput();
  return {};
}

/// Whether `op` is a view that the generated kernels of its readers apply as
/// they load (a slice at offset 0 or a reshape of unit dimensions, read only
/// by fusible arithmetic, sums or such views): it moves nothing, and the
/// kernels read the 16-bit value through the widening already. Fused views
/// are of f32 values, so moving the widening after one would make it a
/// copy. A narrowing cast does not count: moved, the view meets it and
/// both go.
bool isAbsorbedView(Operation *op) {
  return isFusibleView(op) && llvm::all_of(op->getUsers(), [](Operation *user) {
           auto narrow = dyn_cast<CastOp>(user);
           if (narrow && !getElementTypeOrSelf(narrow.getType()).isF32())
             return false;
           return isFusibleElementwise(user) || isFusibleReduction(user) ||
                  isAbsorbedView(user);
         });
}

/// `op` (one operand) again on `input`, its first result of element type
/// `element` (any others, such as max pooling's picks, as they were).
Operation *recreateOn(PatternRewriter &rewriter, Operation *op, Value input,
                      Type element) {
  SmallVector<Type> types(op->getResultTypes());
  types.front() = cast<RankedTensorType>(types.front()).clone(element);
  OperationState state(op->getLoc(), op->getName(), ValueRange{input}, types,
                       op->getAttrs());
  return rewriter.create(state);
}

/// A pattern that counts its rewrites (the pass's statistics).
template <typename OpTy>
struct CountingPattern : public OpRewritePattern<OpTy> {
  CountingPattern(MLIRContext *context, int64_t &count)
      : OpRewritePattern<OpTy>(context), count(count) {}

  int64_t &count;
};

/// op(widen(x)) -> widen(op(x)) for an op that only moves or selects its
/// one operand's elements (a view, or max pooling, whose maxima and picks
/// are the same in the 16-bit type since widening is exact and keeps the
/// order): the same op on the 16-bit tensor, then the exact widening of
/// its first result. Bit for bit the same f32 tensor, half the bytes moved.
template <typename OpTy>
struct MoveBeforeWidening : public CountingPattern<OpTy> {
  using CountingPattern<OpTy>::CountingPattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumOperands() != 1 || op->getNumResults() < 1)
      return failure();
    Value narrow = widenedFrom(op->getOperand(0));
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!narrow || !type || !type.getElementType().isF32() ||
        isAbsorbedView(op))
      return failure();
    Operation *moved = recreateOn(rewriter, op, narrow,
                                  getElementTypeOrSelf(narrow.getType()));
    SmallVector<Value> results(moved->getResults());
    results.front() =
        CastOp::create(rewriter, op.getLoc(), type, moved->getResult(0));
    rewriter.replaceOp(op, results);
    ++this->count;
    return success();
  }
};

/// narrow(op(x)) -> op(narrow(x)) for a reshape or transpose of an f32
/// value that only narrowing casts to one 16-bit type read: the op moves
/// 16-bit elements, and the cast meets the op that makes x (a generated
/// kernel then writes the 16-bit tensor itself). Not for slices: the cast
/// would convert the elements the slice drops.
template <typename OpTy>
struct MoveAfterNarrowing : public CountingPattern<OpTy> {
  using CountingPattern<OpTy>::CountingPattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumOperands() != 1 || op->getNumResults() != 1 ||
        op->use_empty())
      return failure();
    Value input = op->getOperand(0);
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!type || !type.getElementType().isF32() || widenedFrom(input))
      return failure();
    Type element;
    for (Operation *user : op->getUsers()) {
      auto narrow = dyn_cast<CastOp>(user);
      Type to = narrow ? getElementTypeOrSelf(narrow.getType()) : Type();
      if (!to || !(to.isBF16() || to.isF16()) || (element && element != to))
        return failure();
      element = to;
    }
    auto inputType = cast<RankedTensorType>(input.getType());
    Value narrowInput =
        CastOp::create(rewriter, op.getLoc(), inputType.clone(element), input);
    Value narrowed =
        recreateOn(rewriter, op, narrowInput, element)->getResult(0);
    for (Operation *user : llvm::make_early_inc_range(op->getUsers()))
      rewriter.replaceOp(user, narrowed);
    rewriter.eraseOp(op);
    ++this->count;
    return success();
  }
};

/// narrow(max_pool2d_grad_indices(widen(g), picks)) -> the same gradient of
/// g in g's 16-bit type, where the narrowing is to that type and the only
/// reader: a 16-bit max-pooling gradient is defined as its f32 sums rounded
/// to the 16-bit type, so this is the same tensor without the f32 copies of
/// the gradient and of its sums (--fluid-narrow-gradients rounds a max
/// pooling's gradient of 16-bit values that two ops read). Also
/// max_pool2d_grad, whose input must then be a widening of the same type.
template <typename OpTy>
struct NarrowPoolGradient : public CountingPattern<CastOp> {
  using CountingPattern<CastOp>::CountingPattern;

  LogicalResult matchAndRewrite(CastOp narrow,
                                PatternRewriter &rewriter) const override {
    auto gradient = narrow.getInput().getDefiningOp<OpTy>();
    Type element = getElementTypeOrSelf(narrow.getType());
    if (!gradient || !gradient->hasOneUse() ||
        !(element.isBF16() || element.isF16()) ||
        !getElementTypeOrSelf(gradient.getType()).isF32())
      return failure();
    SmallVector<Value> operands(gradient->getOperands());
    for (size_t k = 0; k < operands.size(); ++k) {
      if (!isa<FloatType>(getElementTypeOrSelf(operands[k].getType())))
        continue; // max_pool2d_grad_indices' picks
      Value from = widenedFrom(operands[k]);
      if (!from || getElementTypeOrSelf(from.getType()) != element)
        return failure();
      operands[k] = from;
    }
    OperationState state(gradient.getLoc(), gradient->getName(), operands,
                         TypeRange{narrow.getType()}, gradient->getAttrs());
    rewriter.replaceOp(narrow, rewriter.create(state)->getResults());
    ++count;
    return success();
  }
};

/// cast(widen(x)) back to x's type is x: CastOp's own folder, applied to
/// casts alone (the pass runs without folding, so that nothing else
/// changes).
struct DropRoundTrip : public CountingPattern<CastOp> {
  using CountingPattern<CastOp>::CountingPattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getInput().getDefiningOp<CastOp>())
      return failure();
    SmallVector<OpFoldResult> folded;
    if (failed(op->fold(folded)) || folded.size() != 1)
      return failure();
    auto value = dyn_cast<Value>(folded.front());
    if (!value || value == op.getResult())
      return failure();
    rewriter.replaceOp(op, value);
    ++count;
    return success();
  }
};

struct FluidNarrowDataMovementPass
    : public mlir::fluid::impl::FluidNarrowDataMovementBase<
          FluidNarrowDataMovementPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t moved = 0, dropped = 0;
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<MoveBeforeWidening<ReshapeOp>, MoveBeforeWidening<TransposeOp>,
                 MoveBeforeWidening<SliceOp>, MoveBeforeWidening<MaxPool2DOp>,
                 MoveBeforeWidening<MaxPool2DWithIndicesOp>>(context, moved);
    patterns
        .add<MoveAfterNarrowing<ReshapeOp>, MoveAfterNarrowing<TransposeOp>>(
            context, moved);
    patterns.add<NarrowPoolGradient<MaxPool2DGradIndicesOp>,
                 NarrowPoolGradient<MaxPool2DGradOp>>(context, moved);
    patterns.add<DropRoundTrip>(context, dropped);
    // Only these rewrites (and erasing what they leave unused): no
    // folding, no constants moved or merged, no region simplification.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.enableConstantCSE(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config))) {
      getOperation().emitError()
          << "--fluid-narrow-data-movement did not converge";
      return signalPassFailure();
    }
    numMoved += moved;
    numRoundTrips += dropped;
  }
};

} // namespace
