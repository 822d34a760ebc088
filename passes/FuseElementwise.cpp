//===- FuseElementwise.cpp - --fluid-fuse-elementwise ---------------------===//
//
// Groups elementwise ops into `fluid.fusion` regions, each run as one
// generated kernel (docs/FUSION.md).
//
// Legality and cost model:
// - Only ops that fluid::isFusibleElementwise or fluid::isFusibleReduction
//   (per-channel sums) accept join a group, so convolutions, matmuls,
//   batch norm's library kernels, pooling, other reductions and every other
//   library call stay outside. A sum's result is read only outside its
//   group (it is complete only after the whole iteration space), and the
//   sums of one group keep one axis (1, or the last in channels-last
//   programs).
// - A group is one iteration space: every op in it computes a result of the
//   same shape (a sum: reads one). A smaller operand (a per-channel scale,
//   a scalar) is read with broadcasting; an op of another shape is not
//   fused into it.
// - An op joins the group of an operand's producer, or the group of an
//   earlier op that reads the same operand (siblings: one kernel reads it
//   once), as long as the rules hold.
// - No op is ever duplicated: an op joins at most one group, and a value
//   that ops outside its group read becomes one more result of the region
//   (multi-output regions). Nothing is recomputed for several consumers.
// - A group runs where its last op ran. An op joins its producers' group
//   only if no op outside the group reads the group's values before it;
//   this keeps every use after its definition and rules out any cycle
//   through an unfused op (a path that leaves the group and comes back).
// - A group of one op stays that op (the runtime's kernel for it is as
//   fast as a generated one), unless it reads a 16-bit value through a
//   widening cast: as a region it reads the 16-bit buffer, and the cast
//   costs no kernel and no f32 copy.
// - A region has at most `max-buffers` inputs and results together (kernel
//   parameters are limited).
// - An input that is a view of another value (a slice at offset 0, a
//   reshape of unit dimensions: fluid::isFusibleView) becomes that value,
//   the view applied in the region: the kernel reads the value's buffer at
//   the view's strides instead of a copy (batch norm's shift, each
//   channel's first element, costs no launch).
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDFUSEELEMENTWISE
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

bool isFusible(Operation *op) {
  return isFusibleElementwise(op) || isFusibleReduction(op);
}

/// The iteration space `op` needs: its result's shape, a sum's input's.
ArrayRef<int64_t> shapeOf(Operation *op) {
  Value v = isFusibleReduction(op) ? op->getOperand(0) : op->getResult(0);
  return cast<RankedTensorType>(v.getType()).getShape();
}

class FunctionFuser {
public:
  FunctionFuser(Block &block, unsigned maxBuffers)
      : block(block), maxBuffers(maxBuffers) {}

  /// Forms the groups, in program order.
  void group();
  /// Replaces every group of two or more ops by one fluid.fusion.
  void materialize();
  int64_t regions = 0, fusedOps = 0;

private:
  using Members = SmallVector<Operation *>;
  /// Whether `a` and `b` (which holds `last`, the newest op) can be one
  /// group, by the rules above.
  bool canMerge(const Members &a, const Members &b, Operation *last);
  /// Replaces each input that is a chain of views (isFusibleView) of
  /// another value by that value, and returns the chains' ops, producers
  /// first, for the region to apply to its argument.
  SmallVector<Operation *> foldViews(SetVector<Value> &inputs);
  /// The values a group reads from outside and those read outside it.
  void boundary(ArrayRef<Operation *> members,
                const DenseSet<Operation *> &inside, SetVector<Value> &inputs,
                SetVector<Value> &outputs);

  Block &block;
  unsigned maxBuffers;
  DenseMap<Operation *, int64_t> position;
  DenseMap<Operation *, int64_t> groupOf;
  SmallVector<Members> groups;
};

void FunctionFuser::boundary(ArrayRef<Operation *> members,
                             const DenseSet<Operation *> &inside,
                             SetVector<Value> &inputs,
                             SetVector<Value> &outputs) {
  for (Operation *op : members) {
    for (Value operand : op->getOperands())
      if (!inside.contains(operand.getDefiningOp()))
        inputs.insert(operand);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !inside.contains(user); }))
        outputs.insert(result);
  }
}

SmallVector<Operation *> FunctionFuser::foldViews(SetVector<Value> &inputs) {
  SetVector<Operation *> views;
  SetVector<Value> sources;
  for (Value input : inputs) {
    SmallVector<Operation *> chain;
    Value source = input;
    while (Operation *producer = source.getDefiningOp()) {
      if (!isFusibleView(producer) || producer->getBlock() != &block)
        break;
      chain.push_back(producer);
      source = producer->getOperand(0);
    }
    sources.insert(source);
    views.insert(chain.rbegin(), chain.rend());
  }
  inputs = std::move(sources);
  return views.takeVector();
}

bool FunctionFuser::canMerge(const Members &a, const Members &b,
                             Operation *last) {
  DenseSet<Operation *> inside(a.begin(), a.end());
  inside.insert(b.begin(), b.end());
  // A sum is complete only once the whole iteration space is walked:
  // nothing in the same kernel may read it.
  for (Operation *op : inside)
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp();
          producer && inside.contains(producer) && isFusibleReduction(producer))
        return false;
  // One kernel walks the iteration space one way: its sums keep one axis.
  std::optional<int64_t> axis;
  for (Operation *op : inside)
    if (std::optional<int64_t> kept = fusedSumChannelAxis(op)) {
      if (axis && *axis != *kept)
        return false;
      axis = kept;
    }
  int64_t at = position.lookup(last);
  for (const Members *members : {&a, &b})
    for (Operation *op : *members)
      for (Operation *user : op->getUsers())
        if (!inside.contains(user) && position.lookup(user) <= at)
          return false;
  SmallVector<Operation *> all(a.begin(), a.end());
  all.append(b.begin(), b.end());
  SetVector<Value> inputs, outputs;
  boundary(all, inside, inputs, outputs);
  return inputs.size() + outputs.size() <= maxBuffers;
}

void FunctionFuser::group() {
  for (auto [i, op] : llvm::enumerate(block))
    position[&op] = static_cast<int64_t>(i);
  for (Operation &op : block) {
    if (!isFusible(&op))
      continue;
    int64_t mine = static_cast<int64_t>(groups.size());
    groups.push_back({&op});
    groupOf[&op] = mine;
    // Candidates: the groups of the operands' producers, then (siblings)
    // those of earlier ops reading the same operands, which one kernel can
    // read once.
    SmallVector<Operation *> candidates;
    for (Value operand : op.getOperands())
      if (Operation *producer = operand.getDefiningOp())
        candidates.push_back(producer);
    for (Value operand : op.getOperands())
      for (Operation *user : operand.getUsers())
        if (user != &op && user->getBlock() == &block &&
            user->isBeforeInBlock(&op))
          candidates.push_back(user);
    for (Operation *candidate : candidates) {
      auto found = groupOf.find(candidate);
      if (found == groupOf.end() || found->second == mine ||
          shapeOf(candidate) != shapeOf(&op))
        continue;
      int64_t theirs = found->second;
      if (!canMerge(groups[theirs], groups[mine], &op))
        continue;
      // The earlier group absorbs this one, keeping program order.
      for (Operation *member : groups[mine]) {
        groups[theirs].push_back(member);
        groupOf[member] = theirs;
      }
      groups[mine].clear();
      mine = theirs;
      llvm::sort(groups[mine], [&](Operation *x, Operation *y) {
        return position.lookup(x) < position.lookup(y);
      });
    }
  }
}

/// Whether `op` reads an operand through a widening cast that a region
/// would apply as a view.
static bool readsWideningView(Operation *op) {
  return llvm::any_of(op->getOperands(), [](Value operand) {
    Operation *producer = operand.getDefiningOp();
    return producer && isa<CastOp>(producer) && isFusibleView(producer);
  });
}

void FunctionFuser::materialize() {
  for (Members &members : groups) {
    if (members.empty() ||
        (members.size() == 1 && !readsWideningView(members.front())))
      continue;
    DenseSet<Operation *> inside(members.begin(), members.end());
    SetVector<Value> inputs, outputs;
    boundary(members, inside, inputs, outputs);
    // Ops whose values nothing reads stay as they are (dead code is not
    // this pass's to remove).
    if (outputs.empty())
      continue;
    SmallVector<Operation *> views = foldViews(inputs);
    Operation *last = members.back();
    OpBuilder builder(last);
    SmallVector<Location> locations;
    for (Operation *op : members)
      locations.push_back(op->getLoc());
    Location loc = builder.getFusedLoc(locations);
    SmallVector<Type> resultTypes;
    for (Value v : outputs)
      resultTypes.push_back(v.getType());
    auto fusion =
        FusionOp::create(builder, loc, resultTypes, inputs.getArrayRef());
    Block *body = builder.createBlock(&fusion.getBody());
    IRMapping mapping;
    for (Value input : inputs)
      mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
    for (Operation *view : views)
      builder.clone(*view, mapping);
    for (Operation *op : members)
      builder.clone(*op, mapping);
    SmallVector<Value> yielded;
    for (Value v : outputs)
      yielded.push_back(mapping.lookup(v));
    YieldOp::create(builder, loc, yielded);
    for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
      Value(output).replaceUsesWithIf(result, [&](OpOperand &use) {
        return !inside.contains(use.getOwner());
      });
    for (Operation *op : llvm::reverse(members))
      op->erase();
    // The views are the region's now; copies nothing else reads go.
    for (Operation *view : llvm::reverse(views))
      if (view->use_empty())
        view->erase();
    ++regions;
    fusedOps += static_cast<int64_t>(members.size());
  }
}

struct FluidFuseElementwisePass
    : public mlir::fluid::impl::FluidFuseElementwiseBase<
          FluidFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxBuffers < 2) {
      getOperation().emitError()
          << "--fluid-fuse-elementwise: max-buffers must be at least 2, got "
          << static_cast<unsigned>(maxBuffers);
      return signalPassFailure();
    }
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      FunctionFuser fuser(func.getBody().front(), maxBuffers);
      fuser.group();
      fuser.materialize();
      numRegions += fuser.regions;
      numFusedOps += fuser.fusedOps;
    }
  }
};

} // namespace
