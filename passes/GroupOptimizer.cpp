//===- GroupOptimizer.cpp - --fluid-group-optimizer -----------------------===//
//
// Gathers the single updates of each function by their group key (rule,
// element type, rate and step values, hyper-parameters), drops the members
// whose move would be visible, and replaces each group of two or more by
// one grouped op where its last member was.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/Fluid/IR/KernelParams.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDGROUPOPTIMIZER
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// A double's exact bits, so that keys compare what the kernels read.
std::string bits(double value) {
  return llvm::formatv("{0:x16}", llvm::bit_cast<uint64_t>(value)).str();
}

/// Whether `a` and `b` hold the same scalar in every run: the same value,
/// or equal pure computations of equal operands (such as the same rate
/// times equal multipliers, when --fluid-fold-lr-math has not merged
/// them), looked through up to `depth` ops.
bool sameScalar(Value a, Value b, int depth = 8) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || depth == 0 || !isMemoryEffectFree(x) ||
      !isMemoryEffectFree(y) || x->getNumRegions() || y->getNumRegions() ||
      cast<OpResult>(a).getResultNumber() !=
          cast<OpResult>(b).getResultNumber())
    return false;
  // Same name, attributes, properties and result types; operands compared
  // by this function, one level down.
  return OperationEquivalence::isEquivalentTo(
      x, y,
      [&](Value p, Value q) { return success(sameScalar(p, q, depth - 1)); },
      /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// What a single update shares with the others of its group.
struct GroupKey {
  /// The grouped op's name, e.g. "fluid.momentum_group".
  StringRef groupName;
  Type elementType;
  Value lr, step;
  /// The update's `skip_if` flag (dynamic loss scaling), or null.
  Value foundInf;
  /// The hyper-parameters as the runtime reads them.
  std::string hyperParameters;
  Block *block;

  bool operator==(const GroupKey &other) const {
    return groupName == other.groupName && elementType == other.elementType &&
           sameScalar(lr, other.lr) &&
           (step == other.step ||
            (step && other.step && sameScalar(step, other.step))) &&
           foundInf == other.foundInf &&
           hyperParameters == other.hyperParameters && block == other.block;
  }
};

/// The key of `op`, if it is a single update.
std::optional<GroupKey> keyOf(Operation *op) {
  auto elementType = [](Value param) {
    return cast<RankedTensorType>(param.getType()).getElementType();
  };
  return llvm::TypeSwitch<Operation *, std::optional<GroupKey>>(op)
      .Case([&](SgdOp u) -> std::optional<GroupKey> {
        return GroupKey{SgdGroupOp::getOperationName(),
                        elementType(u.getParam()),
                        u.getLr(),
                        Value(),
                        u.getFoundInf(),
                        bits(sgdParams(u).weight_decay),
                        op->getBlock()};
      })
      .Case([&](MomentumOp u) -> std::optional<GroupKey> {
        fluid_momentum_params p = momentumParams(u);
        return GroupKey{MomentumGroupOp::getOperationName(),
                        elementType(u.getParam()),
                        u.getLr(),
                        Value(),
                        u.getFoundInf(),
                        bits(p.momentum) + " " + bits(p.weight_decay) + " " +
                            std::to_string(p.nesterov),
                        op->getBlock()};
      })
      .Case([&](AdamOp u) -> std::optional<GroupKey> {
        fluid_adam_params p = adamParams(u);
        return GroupKey{AdamGroupOp::getOperationName(),
                        elementType(u.getParam()),
                        u.getLr(),
                        u.getStep(),
                        u.getFoundInf(),
                        bits(p.beta1) + " " + bits(p.beta2) + " " +
                            bits(p.epsilon) + " " + bits(p.weight_decay) + " " +
                            std::to_string(p.decoupled),
                        op->getBlock()};
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// A single update and the fluid.set_params of its results.
struct Member {
  Operation *op;
  SmallVector<SetParamOp> sets;
};

struct Group {
  GroupKey key;
  SmallVector<Member> members;
  llvm::StringSet<> names;
};

/// The fluid.set_params that are the only users of `op`'s results, unless
/// a result has another user or none.
std::optional<SmallVector<SetParamOp>> soleSets(Operation *op) {
  SmallVector<SetParamOp> sets;
  for (Value result : op->getResults()) {
    if (result.use_empty())
      return std::nullopt;
    for (Operation *user : result.getUsers()) {
      auto set = dyn_cast<SetParamOp>(user);
      if (!set || set->getBlock() != op->getBlock() || set->isBeforeInBlock(op))
        return std::nullopt;
      sets.push_back(set);
    }
  }
  llvm::sort(sets,
             [](SetParamOp a, SetParamOp b) { return a->isBeforeInBlock(b); });
  return sets;
}

/// Whether moving `member`'s sets to just after `last` changes nothing:
/// from the update to `last` or to its last set, whichever is later,
/// nothing but the member's own sets reads or writes the parameters it
/// sets, and nothing has unknown effects.
bool canMoveSets(const Member &member, Operation *last) {
  llvm::StringSet<> names;
  for (SetParamOp set : member.sets)
    names.insert(set.getName());
  Operation *end = last;
  if (!member.sets.empty() && end->isBeforeInBlock(member.sets.back()))
    end = member.sets.back();
  for (Operation *op = member.op->getNextNode(); op; op = op->getNextNode()) {
    if (auto set = dyn_cast<SetParamOp>(op)) {
      if (!llvm::is_contained(member.sets, set) &&
          names.contains(set.getName()))
        return false;
    } else if (auto get = dyn_cast<GetParamOp>(op)) {
      if (names.contains(get.getName()))
        return false;
    } else if (!isMemoryEffectFree(op)) {
      return false;
    }
    if (op == end)
      return true;
  }
  return member.op == end;
}

/// Replaces `members` (two or more, in program order) by one grouped op.
void replaceByGroup(StringRef groupName, ArrayRef<Member> members) {
  Operation *first = members.front().op;
  Operation *last = members.back().op;
  // Operand and result lists: entry k of list i is operand i of member k;
  // the trailing scalars (rate, step, skip flag) are the first member's.
  unsigned scalars =
      (isa<AdamOp>(first) ? 2 : 1) + (keyOf(first)->foundInf ? 1 : 0);
  unsigned lists = first->getNumOperands() - scalars;
  OperationState state(first->getLoc(),
                       OperationName(groupName, first->getContext()));
  for (unsigned i = 0; i < lists; ++i)
    for (const Member &member : members)
      state.operands.push_back(member.op->getOperand(i));
  for (unsigned i = lists; i < first->getNumOperands(); ++i)
    state.operands.push_back(first->getOperand(i));
  for (unsigned r = 0; r < first->getNumResults(); ++r)
    for (const Member &member : members)
      state.types.push_back(member.op->getResult(r).getType());
  if (auto properties =
          dyn_cast_or_null<DictionaryAttr>(first->getPropertiesAsAttribute()))
    state.attributes.append(properties.getValue());
  // Each list, then each scalar, is one operand segment.
  SmallVector<int32_t> segments(lists, static_cast<int32_t>(members.size()));
  segments.push_back(1); // lr
  if (isa<AdamOp>(first))
    segments.push_back(1); // step
  segments.push_back(keyOf(first)->foundInf ? 1 : 0);
  OpBuilder attributes(first->getContext());
  state.addAttribute("operandSegmentSizes",
                     attributes.getDenseI32ArrayAttr(segments));

  OpBuilder builder(last->getContext());
  builder.setInsertionPointAfter(last);
  Operation *group = builder.create(state);
  size_t count = members.size();
  Operation *insertAfter = group;
  for (auto [k, member] : llvm::enumerate(members)) {
    for (unsigned r = 0; r < member.op->getNumResults(); ++r)
      member.op->getResult(r).replaceAllUsesWith(
          group->getResult(r * count + k));
    for (SetParamOp set : member.sets) {
      set->moveAfter(insertAfter);
      insertAfter = set;
    }
  }
  for (const Member &member : members)
    member.op->erase();
}

void groupFunction(func::FuncOp func) {
  SmallVector<Group> groups;
  func.walk([&](Operation *op) {
    std::optional<GroupKey> key = keyOf(op);
    if (!key)
      return;
    std::optional<SmallVector<SetParamOp>> sets = soleSets(op);
    if (!sets)
      return;
    Group *group =
        llvm::find_if(groups, [&](const Group &g) { return g.key == *key; });
    if (group == groups.end()) {
      groups.push_back({*key, {}, {}});
      group = &groups.back();
    }
    // A parameter set twice in one group would be updated out of order.
    if (llvm::any_of(*sets, [&](SetParamOp set) {
          return group->names.contains(set.getName());
        }))
      return;
    for (SetParamOp set : *sets)
      group->names.insert(set.getName());
    group->members.push_back({op, std::move(*sets)});
  });

  for (Group &group : groups) {
    // Drop members whose sets cannot move behind the last member; the
    // last one may change, so check again until none is dropped.
    for (size_t before = 0;
         group.members.size() >= 2 && before != group.members.size();) {
      before = group.members.size();
      Operation *last = group.members.back().op;
      llvm::erase_if(group.members, [&](const Member &member) {
        return !canMoveSets(member, last);
      });
    }
    if (group.members.size() >= 2)
      replaceByGroup(group.key.groupName, group.members);
  }
}

struct FluidGroupOptimizerPass
    : public mlir::fluid::impl::FluidGroupOptimizerBase<
          FluidGroupOptimizerPass> {
  using Base::Base;

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal())
        groupFunction(func);
  }
};

} // namespace
