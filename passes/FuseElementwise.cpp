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
//   once), as long as the rules hold. A widening cast of a 16-bit value
//   (a view) is looked through to the op that computes that value: the
//   region then widens its own rounded copy (a recomputed activation read
//   back in f32, --fluid-recompute-elementwise), and the cast stays, after
//   the region, only for readers outside it.
// - An op joins at most one group, and a value that ops outside its group
//   read becomes one more result of the region (multi-output regions).
//   Nothing expensive is recomputed for several consumers. The one
//   exception is cheaper to recompute than to store: an elementwise op
//   that reads 16-bit values through widening casts (relu_grad of a 16-bit
//   gradient and a 16-bit activation, in the backward pass of a batch
//   norm) and whose wider result would cost more to write and read again
//   than its 16-bit inputs cost to read again, and which only other
//   groups read: each such group gets a copy of it and of its widening
//   casts (duplicateWideningOps), when only fusible ops, views and small
//   ops lie between the two (so no buffer lives longer across a library
//   call). The
//   batch-norm backward's dx kernel then recomputes relu_grad from the
//   16-bit values instead of reading an f32 copy that its sums kernel
//   wrote. In f32 programs nothing changes.
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

#include <functional>

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
  /// Gives the later groups that read a cheap widening op's value copies
  /// of it and of its widening casts (see the cost model above).
  void duplicateWideningOps();
  /// Replaces every group of two or more ops by one fluid.fusion.
  void materialize();
  int64_t regions = 0, fusedOps = 0, duplicatedOps = 0;

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
  // A widening cast computes nothing where it stands: what matters is when
  // its readers run (the region computes its own copy, see materialize).
  std::function<bool(Operation *)> readTooEarly = [&](Operation *user) {
    if (inside.contains(user))
      return false;
    if (isWideningStorageCast(user))
      return llvm::any_of(user->getUsers(), readTooEarly);
    return position.lookup(user) <= at;
  };
  for (const Members *members : {&a, &b})
    for (Operation *op : *members)
      if (llvm::any_of(op->getUsers(), readTooEarly))
        return false;
  // A region computes a widening cast of its own value only where an op
  // reads the cast directly: no other view (which applies to inputs only)
  // may stand on it.
  for (Operation *op : inside)
    for (Value operand : op->getOperands()) {
      bool direct = true;
      for (Operation *view = operand.getDefiningOp();
           view && isFusibleView(view);
           view = view->getOperand(0).getDefiningOp(), direct = false)
        if (isWideningStorageCast(view) && !direct &&
            inside.contains(view->getOperand(0).getDefiningOp()))
          return false;
    }
  SmallVector<Operation *> all(a.begin(), a.end());
  all.append(b.begin(), b.end());
  SetVector<Value> inputs, outputs;
  boundary(all, inside, inputs, outputs);
  return inputs.size() + outputs.size() <= maxBuffers;
}

/// The bytes of a tensor value.
static int64_t bytesOf(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  return type.getNumElements() *
         static_cast<int64_t>((type.getElementTypeBitWidth() + 7) / 8);
}

/// The widening cast (a region view) that produces `value`, if any.
static CastOp wideningCastOf(Value value) {
  auto cast = value.getDefiningOp<CastOp>();
  return cast && isFusibleView(cast) ? cast : CastOp();
}

/// Whether `op` may lie between a widening op and a later group's copy of
/// it without keeping a buffer alive across real work: a fusible op (the
/// per-channel arithmetic between a batch norm's sums and its dx), a view,
/// a constant, or an op without results.
static bool isLightweight(Operation *op) {
  return isFusible(op) || isFusibleView(op) || isa<ConstantOp>(op) ||
         op->getNumResults() == 0;
}

/// The source a region reads for `value`: a widening cast's 16-bit input.
static Value storedSource(Value value) {
  CastOp widening = wideningCastOf(value);
  return widening ? widening.getInput() : value;
}

void FunctionFuser::duplicateWideningOps() {
  for (int64_t g = 0, e = static_cast<int64_t>(groups.size()); g < e; ++g) {
    DenseSet<Operation *> inside(groups[g].begin(), groups[g].end());
    for (Operation *op : SmallVector<Operation *>(groups[g])) {
      if (!isFusibleElementwise(op) || op->getNumResults() != 1)
        continue;
      Value result = op->getResult(0);
      // Every user outside the group must be in another group: a library
      // call reading the value needs it stored anyway.
      SmallVector<int64_t> others;
      bool stored = false;
      for (Operation *user : result.getUsers()) {
        auto found = groupOf.find(user);
        if (found == groupOf.end()) {
          stored = true;
          break;
        }
        if (found->second != g && !llvm::is_contained(others, found->second))
          others.push_back(found->second);
      }
      if (stored || others.empty())
        continue;
      // The ops of the group that compute it (no sum among them), and what
      // they read from outside it.
      SetVector<Operation *> cone;
      SetVector<Value> leaves;
      SmallVector<Operation *> work = {op};
      bool elementwise = true;
      while (!work.empty() && elementwise) {
        Operation *at = work.pop_back_val();
        if (!cone.insert(at))
          continue;
        for (Value operand : at->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (producer && inside.contains(producer)) {
            elementwise = elementwise && isFusibleElementwise(producer);
            work.push_back(producer);
          } else {
            leaves.insert(operand);
          }
        }
      }
      if (!elementwise)
        continue;
      // Recomputing must read fewer bytes (full-size inputs, 16-bit ones
      // at their stored size) than storing the value and reading it back.
      int64_t elements =
          cast<RankedTensorType>(result.getType()).getNumElements();
      int64_t again = 0;
      bool widens = false;
      for (Value leaf : leaves) {
        widens = widens || static_cast<bool>(wideningCastOf(leaf));
        if (cast<RankedTensorType>(leaf.getType()).getNumElements() == elements)
          again += bytesOf(storedSource(leaf));
      }
      if (!widens || again >= 2 * bytesOf(result))
        continue;
      SmallVector<Operation *> ordered = cone.takeVector();
      llvm::sort(ordered, [](Operation *x, Operation *y) {
        return x->isBeforeInBlock(y);
      });
      for (int64_t h : others) {
        // Its first member reading the value; only fusible ops, views and
        // small ops may lie between, so no buffer outlives a library call.
        Operation *first = nullptr;
        for (Operation *member : groups[h])
          if (llvm::is_contained(member->getOperands(), result)) {
            first = member;
            break;
          }
        bool near = true;
        for (Operation *between = op->getNextNode(); between != first;
             between = between->getNextNode())
          near = near && isLightweight(between);
        if (!near)
          continue;
        // The kernel's parameters: its inputs and results, and the new
        // inputs.
        DenseSet<Operation *> theirs(groups[h].begin(), groups[h].end());
        SetVector<Value> inputs, outputs;
        boundary(groups[h], theirs, inputs, outputs);
        size_t added = 0;
        for (Value leaf : leaves)
          added += !inputs.contains(leaf);
        if (inputs.size() + outputs.size() + added > maxBuffers)
          continue;
        OpBuilder builder(first);
        IRMapping mapping;
        SmallVector<Operation *> copies;
        for (Operation *member : ordered)
          copies.push_back(builder.clone(*member, mapping));
        Value copy = mapping.lookup(result);
        for (Operation *member : groups[h])
          member->replaceUsesOfWith(result, copy);
        for (Operation *c : copies)
          groupOf[c] = h;
        groups[h].append(copies.begin(), copies.end());
        llvm::sort(groups[h], [](Operation *x, Operation *y) {
          return x->isBeforeInBlock(y);
        });
        duplicatedOps += static_cast<int64_t>(copies.size());
      }
    }
  }
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
      if (Operation *producer = operand.getDefiningOp()) {
        candidates.push_back(producer);
        // Through a widening cast to the op computing the 16-bit value.
        if (isWideningStorageCast(producer))
          if (Operation *source = producer->getOperand(0).getDefiningOp())
            candidates.push_back(source);
      }
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
    // A widening cast of a 16-bit value the group computes, read by the
    // group: the region widens its own copy (the cast stays for readers
    // outside it).
    SmallVector<Operation *> widened;
    for (Operation *op : members)
      for (Value operand : op->getOperands())
        if (Operation *producer = operand.getDefiningOp();
            producer && isWideningStorageCast(producer) &&
            inside.contains(producer->getOperand(0).getDefiningOp()) &&
            !llvm::is_contained(widened, producer))
          widened.push_back(producer);
    // The region reads no widened value from outside; the 16-bit value it
    // widens is still a result when the cast has readers outside.
    DenseSet<Operation *> reading = inside;
    reading.insert(widened.begin(), widened.end());
    for (Operation *cast : widened)
      if (llvm::all_of(cast->getUsers(),
                       [&](Operation *user) { return inside.contains(user); }))
        inside.insert(cast);
    SetVector<Value> inputs, outputs, unused;
    boundary(members, reading, inputs, unused);
    boundary(members, inside, unused, outputs);
    // Ops whose values nothing reads stay as they are (dead code is not
    // this pass's to remove).
    if (outputs.empty())
      continue;
    SmallVector<Operation *> computed(members.begin(), members.end());
    computed.append(widened.begin(), widened.end());
    llvm::sort(computed, [&](Operation *x, Operation *y) {
      return position.lookup(x) < position.lookup(y);
    });
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
    for (Operation *op : computed)
      builder.clone(*op, mapping);
    SmallVector<Value> yielded;
    for (Value v : outputs)
      yielded.push_back(mapping.lookup(v));
    YieldOp::create(builder, loc, yielded);
    DenseSet<Operation *> cloned(members.begin(), members.end());
    for (auto [output, result] : llvm::zip(outputs, fusion.getResults()))
      Value(output).replaceUsesWithIf(result, [&](OpOperand &use) {
        return !cloned.contains(use.getOwner());
      });
    // The members go, with the widening casts only they read (references
    // first: such a cast reads a member and members read it).
    SmallVector<Operation *> dead(members.begin(), members.end());
    for (Operation *cast : widened)
      if (inside.contains(cast))
        dead.push_back(cast);
    for (Operation *op : dead)
      op->dropAllReferences();
    for (Operation *op : dead)
      op->erase();
    // A widening cast still read outside now reads the region's result: it
    // comes after the region (its readers do, by canMerge).
    for (Operation *cast : widened)
      if (!inside.contains(cast))
        cast->moveAfter(fusion);
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
      fuser.duplicateWideningOps();
      fuser.materialize();
      numRegions += fuser.regions;
      numFusedOps += fuser.fusedOps;
      numDuplicatedOps += fuser.duplicatedOps;
    }
  }
};

} // namespace
