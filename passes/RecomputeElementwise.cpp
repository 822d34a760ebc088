//===- RecomputeElementwise.cpp - --fluid-recompute-elementwise -----------===//
//
// Between the forward and the backward pass a training step keeps, per
// convolution + batch norm + ReLU, both the convolution's output (for batch
// norm's gradient) and the ReLU's output (for the ReLU's gradient and the
// next convolution's filter gradient). The second is cheap to compute again
// from the first and the per-channel statistics that batch norm saved. This
// pass does that: the backward pass's uses of relu(batch_norm(x)) read a
// copy computed right before the first of them with fluid.batch_norm_apply
// and fluid.relu, so the forward value dies at its last forward use.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDRECOMPUTEELEMENTWISE
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

int64_t bytesOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor.getNumElements() *
         static_cast<int64_t>((tensor.getElementTypeBitWidth() + 7) / 8);
}

struct FluidRecomputeElementwisePass
    : public mlir::fluid::impl::FluidRecomputeElementwiseBase<
          FluidRecomputeElementwisePass> {
  using Base::Base;

  void runOnOperation() override;
  void recompute(func::FuncOp func);
};

void FluidRecomputeElementwisePass::recompute(func::FuncOp func) {
  Block &block = func.getBody().front();
  // The forward pass ends where the loss is computed; what comes after is
  // the backward pass (and the optimizer).
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  Operation *lossOp = nullptr;
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (func.getResultAttr(i, kLossAttrName))
      lossOp = value.getDefiningOp();
  if (!lossOp)
    return;
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = static_cast<int64_t>(i);
  int64_t forwardEnd = position.lookup(lossOp);
  auto backwardUses = [&](Value value) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : value.getUses())
      if (position.lookup(use.getOwner()) > forwardEnd)
        uses.push_back(&use);
    return uses;
  };

  SmallVector<ReluOp> candidates;
  for (ReluOp relu : block.getOps<ReluOp>())
    if (position.lookup(relu) < forwardEnd)
      candidates.push_back(relu);
  OpBuilder builder(func.getContext());
  for (ReluOp relu : candidates) {
    auto norm = relu.getInput().getDefiningOp<BatchNormOp>();
    // The normalized value must feed only this ReLU, and what the copy
    // reads (the batch norm's input and statistics) must be kept for the
    // backward pass anyway, so that recomputing keeps nothing longer.
    if (!norm || !norm.getOutput().hasOneUse() ||
        bytesOf(relu.getType()) < static_cast<int64_t>(minBytes) ||
        backwardUses(norm.getInput()).empty() ||
        backwardUses(norm.getSavedMean()).empty() ||
        backwardUses(norm.getSavedInvStd()).empty())
      continue;
    SmallVector<OpOperand *> uses = backwardUses(relu.getResult());
    if (uses.empty())
      continue;
    Operation *first = uses.front()->getOwner();
    for (OpOperand *use : uses)
      if (use->getOwner()->isBeforeInBlock(first))
        first = use->getOwner();
    builder.setInsertionPoint(first);
    Location loc = relu.getLoc();
    Value normalized = BatchNormApplyOp::create(
        builder, loc, norm.getOutput().getType(), norm.getInput(),
        norm.getScale(), norm.getShift(), norm.getSavedMean(),
        norm.getSavedInvStd());
    Value again =
        ReluOp::create(builder, loc, relu.getType(), normalized).getResult();
    for (OpOperand *use : uses)
      use->set(again);
    ++numRecomputed;
    numRecomputedBytes += bytesOf(relu.getType());
  }
}

void FluidRecomputeElementwisePass::runOnOperation() {
  for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
    if (func.isExternal() || !isTrainingStep(func))
      continue;
    if (!func.getBody().hasOneBlock() ||
        llvm::any_of(func.getArgumentTypes(),
                     [](Type type) { return isa<MemRefType>(type); })) {
      func.emitError() << "--fluid-recompute-elementwise works on the tensor "
                          "level of a single-block training step (run it "
                          "before --fluid-bufferize)";
      return signalPassFailure();
    }
    recompute(func);
  }
}

} // namespace
