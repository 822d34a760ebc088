//===- DataParallel.cpp - --fluid-data-parallel ---------------------------===//
//
// Finds the gradients the updates read (the values before unscaling under
// dynamic loss scaling), orders them by where the backward pass computes
// them, cuts that order into buckets of at least `bucket-bytes`, and puts
// one fluid.all_reduce_mean per bucket right after its last gradient's
// producer; the readers then read the averages.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDDATAPARALLEL
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// The operands of `op` that are gradients to average: an update's
/// gradients, unless they are unscale_grads' results (its inputs are
/// averaged instead), and unscale_grads' inputs. Empty for other ops.
SmallVector<OpOperand *> gradientOperands(Operation *op) {
  SmallVector<OpOperand *> operands;
  auto add = [&](OpOperand &operand) {
    if (!operand.get().getDefiningOp<UnscaleGradsOp>())
      operands.push_back(&operand);
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case<SgdOp, MomentumOp, AdamOp>(
          [&](auto update) { add(update.getGradMutable()); })
      .Case<SgdGroupOp, MomentumGroupOp, AdamGroupOp, UnscaleGradsOp>(
          [&](auto group) {
            for (OpOperand &operand : group.getGradsMutable())
              add(operand);
          });
  return operands;
}

int64_t bytesOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getNumElements() * static_cast<int64_t>(llvm::divideCeil(
                                     type.getElementTypeBitWidth(), 8));
}

struct FluidDataParallelPass
    : public mlir::fluid::impl::FluidDataParallelBase<FluidDataParallelPass> {
  using Base::Base;

  LogicalResult runOnFunction(func::FuncOp func);

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && failed(runOnFunction(func)))
        return signalPassFailure();
  }
};

LogicalResult FluidDataParallelPass::runOnFunction(func::FuncOp func) {
  Block &body = func.getBody().front();
  // The gradients in first-read order, and their readers.
  llvm::SetVector<Value> gradients;
  DenseMap<Value, SmallVector<OpOperand *>> readers;
  for (Operation &op : body) {
    if (isa<AllReduceMeanOp>(op))
      return op.emitOpError()
             << "is already in @" << func.getSymName()
             << ": --fluid-data-parallel runs once per program";
    for (OpOperand *operand : gradientOperands(&op)) {
      Value gradient = operand->get();
      if (gradient.getParentBlock() != &body)
        return op.emitOpError()
               << "reads a gradient computed outside the function's body";
      gradients.insert(gradient);
      readers[gradient].push_back(operand);
    }
  }
  if (gradients.empty())
    return success();

  // In the order the program computes them (arguments first).
  SmallVector<Value> order(gradients.begin(), gradients.end());
  llvm::stable_sort(order, [&](Value a, Value b) {
    Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
    if (!x || !y)
      return !x && y;
    return x->isBeforeInBlock(y);
  });

  // Buckets of at least bucketBytes, in that order.
  SmallVector<SmallVector<Value>> buckets(1);
  int64_t filled = 0;
  for (Value gradient : order) {
    if (filled >= static_cast<int64_t>(bucketBytes) &&
        !buckets.back().empty()) {
      buckets.emplace_back();
      filled = 0;
    }
    buckets.back().push_back(gradient);
    filled += bytesOf(gradient);
    numGradientBytes += bytesOf(gradient);
  }

  OpBuilder builder(func.getContext());
  Operation *previous = nullptr;
  for (auto [index, bucket] : llvm::enumerate(buckets)) {
    // Right after the last gradient's producer; a bucket of arguments
    // (available from the start) after the previous bucket's all-reduce.
    Operation *after = bucket.back().getDefiningOp();
    if (after)
      builder.setInsertionPointAfter(after);
    else if (previous)
      builder.setInsertionPointAfter(previous);
    else
      builder.setInsertionPointToStart(&body);
    auto reduce = AllReduceMeanOp::create(
        builder, bucket.back().getLoc(), ValueRange(bucket).getTypes(), bucket,
        builder.getI64IntegerAttr(static_cast<int64_t>(index)));
    for (auto [gradient, mean] : llvm::zip(bucket, reduce.getOutputs()))
      for (OpOperand *operand : readers[gradient])
        operand->set(mean);
    previous = reduce;
    ++numBuckets;
    numGradients += bucket.size();
  }
  return success();
}

} // namespace
