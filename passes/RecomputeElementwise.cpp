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
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <numeric>

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
  void recomputeChains(func::FuncOp func);
};

/// A forward value as the step keeps it: the value and, in mixed precision
/// (--fluid-mixed-precision), the narrowing cast that stores it in 16 bits
/// and the widening cast that f32 ops read it through.
struct StoredValue {
  Value value;
  CastOp narrow; // may be null
  CastOp widen;  // may be null (and is, when narrow is)
};

/// The casts through which `value` is kept (value -> 16 bits -> f32), when
/// it feeds one narrowing cast and nothing else, and that cast at most one
/// widening cast back to f32 besides its 16-bit users.
StoredValue storedForm(Value value) {
  StoredValue stored{value, nullptr, nullptr};
  auto f32 = [](Type type) {
    return cast<RankedTensorType>(type).getElementType().isF32();
  };
  if (!value.hasOneUse())
    return stored;
  auto narrow = dyn_cast<CastOp>(*value.getUsers().begin());
  if (!narrow || f32(narrow.getType()) ||
      cast<RankedTensorType>(narrow.getType()).getElementTypeBitWidth() != 16)
    return stored;
  stored.narrow = narrow;
  for (Operation *user : narrow.getResult().getUsers()) {
    auto widen = dyn_cast<CastOp>(user);
    if (!widen || !f32(widen.getType()))
      continue;
    if (stored.widen) // two widening casts: leave them alone
      return StoredValue{value, nullptr, nullptr};
    stored.widen = widen;
  }
  return stored;
}

/// Moves `op` and every op that (transitively) reads its results before
/// `anchor` to right after `anchor`, in their order. Fails (moving nothing)
/// when `anchor` is among them (it depends on `op`).
bool sinkAfter(Operation *op, Operation *anchor) {
  SmallVector<Operation *> cone = {op};
  DenseSet<Operation *> inCone = {op};
  for (Operation *at = op->getNextNode(); at && at != anchor;
       at = at->getNextNode())
    if (llvm::any_of(at->getOperands(), [&](Value operand) {
          Operation *producer = operand.getDefiningOp();
          return producer && inCone.contains(producer);
        })) {
      cone.push_back(at);
      inCone.insert(at);
    }
  if (llvm::any_of(anchor->getOperands(), [&](Value operand) {
        Operation *producer = operand.getDefiningOp();
        return producer && inCone.contains(producer);
      }))
    return false;
  Operation *after = anchor;
  for (Operation *member : cone) {
    member->moveAfter(after);
    after = member;
  }
  return true;
}

/// The loss op of a training step (the forward pass ends there; what comes
/// after is the backward pass and the optimizer), or null.
Operation *findLossOp(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands()))
    if (func.getResultAttr(i, kLossAttrName))
      return value.getDefiningOp();
  return nullptr;
}

void FluidRecomputeElementwisePass::recompute(func::FuncOp func) {
  Block &block = func.getBody().front();
  Operation *lossOp = findLossOp(func);
  if (!lossOp)
    return;
  DenseMap<Operation *, int64_t> position;
  auto number = [&] {
    position.clear();
    for (auto [i, op] : llvm::enumerate(block))
      position[&op] = static_cast<int64_t>(i);
  };
  number();
  int64_t forwardEnd = position.lookup(lossOp);
  auto backwardUses = [&](Value value) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : value.getUses())
      if (position.lookup(use.getOwner()) > forwardEnd)
        uses.push_back(&use);
    return uses;
  };
  auto earliest = [&](ArrayRef<OpOperand *> uses) {
    Operation *first = nullptr;
    for (OpOperand *use : uses)
      if (!first || position.lookup(use->getOwner()) < position.lookup(first))
        first = use->getOwner();
    return first;
  };

  SmallVector<Operation *> candidates;
  for (Operation &op : block)
    if (isa<ReluOp, BatchNormOp>(op) && position.lookup(&op) < forwardEnd)
      candidates.push_back(&op);
  OpBuilder builder(func.getContext());
  // Whether what a copy of a batch norm's output reads (its input and
  // statistics) is kept for the backward pass anyway, so that recomputing
  // keeps nothing longer.
  auto keptAnyway = [&](BatchNormOp norm) {
    return !backwardUses(norm.getInput()).empty() &&
           !backwardUses(norm.getSavedMean()).empty() &&
           !backwardUses(norm.getSavedInvStd()).empty();
  };
  auto normalize = [&](BatchNormOp norm, Location loc) -> Value {
    return BatchNormApplyOp::create(builder, loc, norm.getOutput().getType(),
                                    norm.getInput(), norm.getScale(),
                                    norm.getShift(), norm.getSavedMean(),
                                    norm.getSavedInvStd());
  };
  for (Operation *candidate : candidates) {
    // relu(batch_norm(x)), or a residual block's output relu(batch_norm(x)
    // + z), where z is another batch norm's output (a projection shortcut)
    // or a value the backward pass keeps anyway (an identity shortcut: the
    // block's input, which its first convolution's filter gradient reads);
    // or a batch norm's output itself where the backward pass reads it
    // (a squeeze-and-excitation block's product's gradient).
    auto relu = dyn_cast<ReluOp>(candidate);
    BatchNormOp norm, otherNorm;
    AddOp add;
    Value other;
    if (!relu) {
      norm = cast<BatchNormOp>(candidate);
    } else if (auto direct = relu.getInput().getDefiningOp<BatchNormOp>()) {
      norm = direct;
    } else if (auto sum = relu.getInput().getDefiningOp<AddOp>();
               sum && sum.getResult().hasOneUse() &&
               sum.getLhs().getType() == sum.getType() &&
               sum.getRhs().getType() == sum.getType()) {
      add = sum;
      for (unsigned i = 0; i < 2 && !norm; ++i)
        if (auto operand = sum->getOperand(i).getDefiningOp<BatchNormOp>()) {
          norm = operand;
          other = sum->getOperand(1 - i);
        }
      if (norm)
        otherNorm = other.getDefiningOp<BatchNormOp>();
    }
    if (!norm)
      continue;
    StoredValue stored = storedForm(relu ? relu.getResult() : norm.getOutput());
    Value kept = stored.narrow ? stored.narrow.getResult() : stored.value;
    // (A batch norm's own output may have other uses: it is the value.)
    // A normalized value inside the recomputed expression must feed only
    // it (a batch norm's own output is the value itself).
    if (!keptAnyway(norm) || (relu && !norm.getOutput().hasOneUse()) ||
        (otherNorm &&
         (!keptAnyway(otherNorm) || !otherNorm.getOutput().hasOneUse())) ||
        bytesOf(kept.getType()) < static_cast<int64_t>(minBytes))
      continue;
    SmallVector<OpOperand *> uses;
    SmallVector<Value, 3> values = {stored.value};
    if (stored.narrow)
      values.push_back(stored.narrow.getResult());
    if (stored.widen)
      values.push_back(stored.widen.getResult());
    for (Value value : values)
      llvm::append_range(uses, backwardUses(value));
    if (uses.empty())
      continue;
    // The batch norm's gradient reads its input after the backward pass's
    // first use of the activation when that use is the next convolution's
    // filter gradient. Such uses (and what reads them) move after the
    // gradient, so that the copy can be computed where the gradient's
    // kernels read the batch norm's input anyway and fuse with them
    // (--fluid-fuse-elementwise): the activation costs one write there.
    Operation *gradient = earliest(backwardUses(norm.getInput()));
    for (OpOperand *use : uses) {
      Operation *owner = use->getOwner();
      if (owner->getNumResults() != 0 &&
          position.lookup(owner) < position.lookup(gradient) &&
          !isFusibleElementwise(owner) && sinkAfter(owner, gradient))
        number();
    }
    Operation *first = earliest(uses);
    // An identity shortcut must be read there or later anyway (its stored
    // 16-bit form, where it is read through a widening cast); it is not
    // when it was recomputed itself, which makes every other block output
    // of a chain of identity blocks a candidate.
    if (add && !otherNorm) {
      Value source = other;
      if (auto widen = other.getDefiningOp<CastOp>();
          widen && isWideningStorageCast(widen))
        source = widen.getInput();
      if (llvm::none_of(source.getUsers(), [&](Operation *user) {
            return position.lookup(user) >= position.lookup(first);
          }))
        continue;
    }
    builder.setInsertionPoint(first);
    Location loc = candidate->getLoc();
    Value recomputed = normalize(norm, loc);
    if (add) {
      Value shortcut = otherNorm ? normalize(otherNorm, loc) : other;
      bool normFirst = add.getLhs() == norm.getOutput();
      recomputed = AddOp::create(builder, add.getLoc(), add.getType(),
                                 normFirst ? recomputed : shortcut,
                                 normFirst ? shortcut : recomputed)
                       .getResult();
    }
    IRMapping copies;
    if (relu)
      recomputed =
          ReluOp::create(builder, loc, relu.getType(), recomputed).getResult();
    copies.map(stored.value, recomputed);
    if (stored.narrow)
      copies.map(stored.narrow.getResult(),
                 builder.clone(*stored.narrow, copies)->getResult(0));
    if (stored.widen)
      copies.map(stored.widen.getResult(),
                 builder.clone(*stored.widen, copies)->getResult(0));
    for (OpOperand *use : uses)
      use->set(copies.lookup(use->get()));
    // A widening cast that only the backward pass read is dead now.
    if (stored.widen && stored.widen.use_empty())
      stored.widen.erase();
    number();
    ++numRecomputed;
    numRecomputedBytes += bytesOf(kept.getType());
  }
}

/// Ops that a chain recomputes: elementwise arithmetic of generated float
/// types (no casts, whose stored forms the rule above handles, and no
/// batch-norm applications).
bool isChainOp(Operation *op) {
  return op->getNumResults() == 1 && isFusibleElementwise(op) &&
         !isa<CastOp, BatchNormApplyOp>(op);
}

/// The second rule: chains of elementwise ops whose results the backward
/// pass reads (GELU composed as x * 0.5 * (1 + erf(x / sqrt(2))) keeps
/// four tensors the size of x; a composed layer norm keeps x - mean and
/// its quotient), recomputed from the chains' inputs when keeping those
/// costs fewer bytes than keeping the results. Candidates are forward
/// values of chain ops with backward uses, of at least min-bytes; each
/// one's cone is the chain ops it is computed by (at most kMaxCone), its
/// leaves the other values the cone reads. Candidates that share a leaf
/// form one group, decided at once: the bytes of its candidates against
/// those of its leaves that nothing keeps yet (the backward pass reads
/// none of them; parameters, constants and arguments cost nothing). A
/// group that saves bytes is computed again, once, before the backward
/// pass's first use of any of its candidates, and its backward uses read
/// the copies.
void FluidRecomputeElementwisePass::recomputeChains(func::FuncOp func) {
  constexpr size_t kMaxCone = 16;
  Block &block = func.getBody().front();
  Operation *lossOp = findLossOp(func);
  if (!lossOp)
    return;
  DenseMap<Operation *, int64_t> position;
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = static_cast<int64_t>(i);
  int64_t forwardEnd = position.lookup(lossOp);
  auto hasBackwardUse = [&](Value value) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      return position.lookup(user) > forwardEnd;
    });
  };
  auto isFree = [](Value leaf) {
    Operation *producer = leaf.getDefiningOp();
    return !producer || isa<ConstantOp, GetParamOp>(producer);
  };

  // Candidates and their cones (chain ops) and leaves.
  struct Candidate {
    Value value;
    SetVector<Operation *> cone;
    SetVector<Value> leaves;
  };
  SmallVector<Candidate> candidates;
  for (Operation &op : block) {
    if (position.lookup(&op) >= forwardEnd)
      break;
    if (!isChainOp(&op) || !hasBackwardUse(op.getResult(0)) ||
        bytesOf(op.getResult(0).getType()) < static_cast<int64_t>(minBytes))
      continue;
    Candidate candidate{op.getResult(0), {}, {}};
    SmallVector<Operation *> work = {&op};
    bool tooLarge = false;
    while (!work.empty() && !tooLarge) {
      Operation *at = work.pop_back_val();
      if (!candidate.cone.insert(at))
        continue;
      tooLarge = candidate.cone.size() > kMaxCone;
      for (Value operand : at->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (producer && isChainOp(producer))
          work.push_back(producer);
        else
          candidate.leaves.insert(operand);
      }
    }
    if (tooLarge)
      continue;
    candidates.push_back(std::move(candidate));
  }

  // Groups: candidates sharing a leaf (union-find over the candidates).
  SmallVector<size_t> parent(candidates.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](size_t i) {
    while (parent[i] != i)
      i = parent[i] = parent[parent[i]];
    return i;
  };
  DenseMap<Value, size_t> leafOwner;
  for (auto [i, candidate] : llvm::enumerate(candidates))
    for (Value leaf : candidate.leaves) {
      auto [it, inserted] = leafOwner.try_emplace(leaf, i);
      if (!inserted)
        parent[find(i)] = find(it->second);
    }
  DenseMap<size_t, SmallVector<size_t>> groups;
  for (size_t i = 0; i < candidates.size(); ++i)
    groups[find(i)].push_back(i);
  SmallVector<size_t> roots;
  for (auto &entry : groups)
    roots.push_back(entry.first);
  llvm::sort(roots);

  OpBuilder builder(func.getContext());
  DenseSet<Value> keptLeaves;
  for (size_t root : roots) {
    ArrayRef<size_t> members = groups[root];
    DenseSet<Value> memberValues;
    for (size_t i : members)
      memberValues.insert(candidates[i].value);
    int64_t saved = 0, added = 0;
    SetVector<Value> leaves;
    for (size_t i : members) {
      saved += bytesOf(candidates[i].value.getType());
      leaves.insert(candidates[i].leaves.begin(), candidates[i].leaves.end());
    }
    for (Value leaf : leaves)
      if (!isFree(leaf) && !hasBackwardUse(leaf) && !keptLeaves.contains(leaf))
        added += bytesOf(leaf.getType());
    if (saved <= added)
      continue;
    // The copies, before the first backward use of any member.
    SmallVector<OpOperand *> uses;
    for (size_t i : members)
      for (OpOperand &use : candidates[i].value.getUses())
        if (position.lookup(use.getOwner()) > forwardEnd)
          uses.push_back(&use);
    Operation *first = nullptr;
    for (OpOperand *use : uses)
      if (!first || position.lookup(use->getOwner()) < position.lookup(first))
        first = use->getOwner();
    SetVector<Operation *> cone;
    for (size_t i : members)
      cone.insert(candidates[i].cone.begin(), candidates[i].cone.end());
    SmallVector<Operation *> ordered(cone.begin(), cone.end());
    llvm::sort(ordered, [&](Operation *a, Operation *b) {
      return position.lookup(a) < position.lookup(b);
    });
    builder.setInsertionPoint(first);
    IRMapping copies;
    for (Operation *op : ordered)
      builder.clone(*op, copies);
    for (OpOperand *use : uses)
      use->set(copies.lookupOrDefault(use->get()));
    for (Value leaf : leaves)
      keptLeaves.insert(leaf);
    // Positions: the copies sit before `first`; only forward-ness matters.
    for (Operation *op : ordered)
      position[copies.lookup(op->getResult(0)).getDefiningOp()] =
          position.lookup(first);
    numRecomputed += static_cast<int64_t>(members.size());
    numRecomputedBytes += saved;
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
    recomputeChains(func);
  }
}

} // namespace
