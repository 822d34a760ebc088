//===- FoldLrMath.cpp - --fluid-fold-lr-math ------------------------------===//
//
// A short driver over the fluid dialect's folders: it gathers the rank-0
// ops that the updates' rates are computed from, folds them with the
// greedy rewriter (the folders of FluidFolders.cpp and the ops'
// canonicalization patterns), and merges equal ones.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDFOLDLRMATH
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// The operands of `op` that are learning-rate arithmetic: rates and
/// Adam's step, of single and grouped updates.
SmallVector<Value> rateOperands(Operation *op) {
  return llvm::TypeSwitch<Operation *, SmallVector<Value>>(op)
      .Case<SgdOp, MomentumOp, SgdGroupOp, MomentumGroupOp>(
          [](auto update) { return SmallVector<Value>{update.getLr()}; })
      .Case<AdamOp, AdamGroupOp>([](auto update) {
        return SmallVector<Value>{update.getLr(), update.getStep()};
      })
      .Default([](Operation *) { return SmallVector<Value>{}; });
}

/// Whether `op` is scalar arithmetic of the fluid dialect: every operand
/// and result a rank-0 tensor, and no effect but reading parameters.
bool isScalarMath(Operation *op) {
  if (!isa<FluidDialect>(op->getDialect()) || op->getNumResults() == 0 ||
      op->getNumRegions() != 0)
    return false;
  auto scalar = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getRank() == 0;
  };
  if (!llvm::all_of(op->getResultTypes(), scalar) ||
      !llvm::all_of(op->getOperandTypes(), scalar))
    return false;
  return isa<GetParamOp>(op) || isMemoryEffectFree(op);
}

/// The learning-rate computation of `func`, in program order: the scalar
/// math that its updates' rates and steps and its learning-rate result
/// are computed from.
SmallVector<Operation *> learningRateOps(func::FuncOp func) {
  SmallVector<Value> worklist;
  func.walk([&](Operation *op) {
    llvm::append_range(worklist, rateOperands(op));
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      for (unsigned i = 0; i < ret.getNumOperands(); ++i)
        if (func.getResultAttr(i, kLearningRateResultAttrName))
          worklist.push_back(ret.getOperand(i));
  });
  llvm::SetVector<Operation *> slice;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || !isScalarMath(op) || !slice.insert(op))
      continue;
    llvm::append_range(worklist, op->getOperands());
  }
  SmallVector<Operation *> ops = slice.takeVector();
  llvm::sort(ops, [](Operation *a, Operation *b) {
    return a->getBlock() == b->getBlock() ? a->isBeforeInBlock(b)
                                          : a < b; // one block in practice
  });
  return ops;
}

/// Whether a fluid.set_param of `name` lies between `first` and `second`
/// (of one block, `first` before `second`).
bool writtenBetween(Operation *first, Operation *second, StringRef name) {
  for (Operation *op = first->getNextNode(); op && op != second;
       op = op->getNextNode())
    if (auto set = dyn_cast<SetParamOp>(op); set && set.getName() == name)
      return true;
  return false;
}

/// Merges each op of `ops` (in program order) into an earlier equal one:
/// same name, operands, attributes and result types; for parameter reads,
/// no write of the parameter in between. Returns how many were merged.
int mergeEqualOps(ArrayRef<Operation *> ops) {
  SmallVector<Operation *> kept;
  int merged = 0;
  for (Operation *op : ops) {
    Operation *equal = nullptr;
    for (Operation *earlier : kept) {
      if (earlier->getName() != op->getName() ||
          earlier->getBlock() != op->getBlock() ||
          !OperationEquivalence::isEquivalentTo(
              earlier, op, OperationEquivalence::exactValueMatch,
              /*markEquivalent=*/nullptr,
              OperationEquivalence::IgnoreLocations))
        continue;
      if (auto get = dyn_cast<GetParamOp>(op);
          get && writtenBetween(earlier, op, get.getName()))
        continue;
      equal = earlier;
      break;
    }
    if (!equal) {
      kept.push_back(op);
      continue;
    }
    op->replaceAllUsesWith(equal);
    op->erase();
    ++merged;
  }
  return merged;
}

struct FluidFoldLrMathPass
    : public mlir::fluid::impl::FluidFoldLrMathBase<FluidFoldLrMathPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    for (RegisteredOperationName name : context->getRegisteredOperations())
      if (&name.getDialect() == context->getLoadedDialect<FluidDialect>())
        name.getCanonicalizationPatterns(set, context);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Folding can expose merges and merges folds (a product of two
      // merged constants): repeat until neither changes anything.
      for (int round = 0; round < 8; ++round) {
        SmallVector<Operation *> ops = learningRateOps(func);
        if (ops.empty())
          break;
        GreedyRewriteConfig config;
        config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
        bool changed = false;
        if (failed(applyOpPatternsGreedily(ops, patterns, config, &changed)))
          return signalPassFailure();
        if (mergeEqualOps(learningRateOps(func)) == 0 && !changed)
          break;
      }
      // Schedules that ignore the step leave its conversion unused.
      SmallVector<Operation *> dead;
      func.walk([&](Operation *op) {
        if (op->use_empty() && isScalarMath(op) && isMemoryEffectFree(op))
          dead.push_back(op);
      });
      while (!dead.empty()) {
        Operation *op = dead.pop_back_val();
        SmallVector<Operation *> producers;
        for (Value operand : op->getOperands())
          if (Operation *producer = operand.getDefiningOp())
            producers.push_back(producer);
        op->erase();
        for (Operation *producer : producers)
          if (producer->use_empty() && isScalarMath(producer) &&
              isMemoryEffectFree(producer) &&
              !llvm::is_contained(dead, producer))
            dead.push_back(producer);
      }
    }
  }

private:
  FrozenRewritePatternSet patterns;
};

} // namespace
