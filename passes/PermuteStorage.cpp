//===- PermuteStorage.cpp - --fluid-permute-storage -----------------------===//
//
// The layout changes --fluid-layout leaves at the program's boundary, at
// the input images and at each filter (read through a transpose, its
// gradient written back through the inverse one), would run in every step.
// This pass stores those tensors the way they are read instead, so the
// change happens once, when the driver loads, initializes or saves them.
//
// Values that must share one layout form a group: a parameter with every
// fluid.get_param and fluid.set_param of it, the elementwise ops between
// them, and the entries of updates (and of fluid.unscale_grads) that take
// them, with the other parameters such an entry reads and writes (the
// optimizer state). A group is stored permuted when every way into or out
// of it is a layout change by one permutation: a fluid.transpose (or a
// fluid.reshape that moves only dimensions of size 1 as it would) of a
// group value read outside, or a group value made from outside by the
// inverse change. Then the group's values take the permuted types, its
// parameters record the permutation as `storage_order`, and the layout
// changes are gone. A group with any other use stays as it is. An argument
// of a function no one calls (the images) starts a group the same way,
// one without parameters whose permutation keeps dimension 0 (a batch is
// filled by ranges of examples); it is marked fluid.storage_order.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDPERMUTESTORAGE
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

SmallVector<int64_t> inversePermutation(ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [d, from] : llvm::enumerate(permutation))
    inverse[from] = static_cast<int64_t>(d);
  return inverse;
}

bool isIdentity(ArrayRef<int64_t> permutation) {
  for (auto [d, from] : llvm::enumerate(permutation))
    if (from != static_cast<int64_t>(d))
      return false;
  return true;
}

RankedTensorType permutedType(RankedTensorType type,
                              ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> shape;
  for (int64_t from : permutation)
    shape.push_back(type.getDimSize(from));
  return RankedTensorType::get(shape, type.getElementType());
}

/// Whether reshaping `from` to `to` moves the elements as transposing by
/// `permutation` does: the shapes are permuted, and the dimensions larger
/// than 1 keep their order.
bool reshapeIsPermutation(ArrayRef<int64_t> from, ArrayRef<int64_t> to,
                          ArrayRef<int64_t> permutation) {
  if (from.size() != permutation.size() || to.size() != permutation.size())
    return false;
  int64_t last = -1;
  for (auto [d, source] : llvm::enumerate(permutation)) {
    if (to[d] != from[source])
      return false;
    if (to[d] == 1)
      continue;
    if (source < last)
      return false;
    last = source;
  }
  return true;
}

/// A permutation that a reshape from `from` to `to` may be, if any: the
/// dimensions larger than 1 in order, those of size 1 in order.
std::optional<SmallVector<int64_t>> reshapeAsPermutation(ArrayRef<int64_t> from,
                                                         ArrayRef<int64_t> to) {
  if (from.size() != to.size())
    return std::nullopt;
  SmallVector<int64_t> large, unit, permutation;
  for (auto [d, size] : llvm::enumerate(from))
    (size == 1 ? unit : large).push_back(static_cast<int64_t>(d));
  size_t nextLarge = 0, nextUnit = 0;
  for (int64_t size : to) {
    SmallVector<int64_t> &pool = size == 1 ? unit : large;
    size_t &next = size == 1 ? nextUnit : nextLarge;
    if (next == pool.size())
      return std::nullopt;
    permutation.push_back(pool[next++]);
  }
  if (!reshapeIsPermutation(from, to, permutation))
    return std::nullopt;
  return permutation;
}

/// A layout change: a transpose, or a reshape that may be one.
bool isLayoutChange(Operation *op) { return isa<TransposeOp, ReshapeOp>(op); }

/// Whether `op` (a layout change) moves its input's elements as transposing
/// by `permutation` does.
bool changesBy(Operation *op, ArrayRef<int64_t> permutation) {
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return transpose.getPermutation() == permutation;
  auto from = cast<RankedTensorType>(op->getOperand(0).getType());
  auto to = cast<RankedTensorType>(op->getResult(0).getType());
  return reshapeIsPermutation(from.getShape(), to.getShape(), permutation);
}

/// The permutation a layout change is, or may be.
std::optional<SmallVector<int64_t>> permutationOf(Operation *op) {
  if (auto transpose = dyn_cast<TransposeOp>(op))
    return llvm::to_vector(transpose.getPermutation());
  auto from = cast<RankedTensorType>(op->getOperand(0).getType());
  auto to = cast<RankedTensorType>(op->getResult(0).getType());
  return reshapeAsPermutation(from.getShape(), to.getShape());
}

/// The values that must share the layout of `value`, an operand or result
/// of `op`: an elementwise op's operands and result of `value`'s shape (the
/// others must be scalars); an update's tensors; the entry of a grouped
/// update or of fluid.unscale_grads that `value` belongs to. None when
/// `op` needs `value` in its layout.
std::optional<SmallVector<Value>> sharingLayout(Operation *op, Value value) {
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  auto all = [&]() -> std::optional<SmallVector<Value>> {
    SmallVector<Value> values;
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
      auto type = dyn_cast<RankedTensorType>(v.getType());
      if (!type)
        return std::nullopt;
      if (type.getRank() == 0)
        continue;
      if (type.getShape() != shape)
        return std::nullopt;
      values.push_back(v);
    }
    return values;
  };
  if (isLayoutAgnosticElementwise(op) || isa<SgdOp, MomentumOp, AdamOp>(op))
    return all();
  // Grouped: `lists` operand lists and `resultLists` result lists of
  // `entries` entries each, entry k of every list together; scalars after
  // them.
  int64_t entries = 0, lists = 0, resultLists = 0;
  if (auto group = dyn_cast<SgdGroupOp>(op))
    entries = group.getParams().size(), lists = 2, resultLists = 1;
  else if (auto group = dyn_cast<MomentumGroupOp>(op))
    entries = group.getParams().size(), lists = 3, resultLists = 2;
  else if (auto group = dyn_cast<AdamGroupOp>(op))
    entries = group.getParams().size(), lists = 4, resultLists = 3;
  else if (auto unscale = dyn_cast<UnscaleGradsOp>(op))
    entries = unscale.getGrads().size(), lists = 1, resultLists = 1;
  else
    return std::nullopt;
  std::optional<int64_t> entry;
  for (OpOperand &operand : op->getOpOperands())
    if (operand.get() == value && operand.getOperandNumber() < lists * entries)
      entry = operand.getOperandNumber() % entries;
  for (OpResult result : op->getResults())
    if (result == value && result.getResultNumber() < resultLists * entries)
      entry = result.getResultNumber() % entries;
  if (!entry)
    return std::nullopt;
  SmallVector<Value> values;
  for (int64_t l = 0; l < lists; ++l)
    values.push_back(op->getOperand(l * entries + *entry));
  for (int64_t r = 0; r < resultLists; ++r)
    values.push_back(op->getResult(r * entries + *entry));
  return values;
}

/// The parameters of a module with their reads and writes.
struct ParamUses {
  SmallVector<GetParamOp> reads;
  SmallVector<SetParamOp> writes;
};

/// A group of values that share one layout (see the file comment).
struct StorageGroup {
  SetVector<StringRef> params;
  SetVector<Value> values;
  SetVector<Operation *> readers, writers; // layout changes out and in
  SmallVector<int64_t> permutation;
};

class GroupBuilder {
public:
  GroupBuilder(const llvm::StringMap<ParamOp> &params,
               const llvm::StringMap<ParamUses> &uses)
      : params(params), uses(uses) {}

  /// The group of parameter `name`, or none if it must stay as it is.
  std::optional<StorageGroup> build(StringRef name) {
    start(params.lookup(name).getTensorType());
    addParam(name);
    return finish();
  }

  /// The group of argument `arg`, or none if it must stay as it is: it
  /// must hold no parameter, and its permutation must keep dimension 0.
  std::optional<StorageGroup> build(BlockArgument arg) {
    start(cast<RankedTensorType>(arg.getType()));
    argument = arg;
    addValue(arg);
    std::optional<StorageGroup> result = finish();
    argument = nullptr;
    if (!result || !result->params.empty() || result->permutation[0] != 0)
      return std::nullopt;
    return result;
  }

  /// Parameters `build` has looked at, whatever became of them.
  const llvm::StringSet<> &seen() const { return seenParams; }

private:
  void start(RankedTensorType type) {
    group = StorageGroup();
    ok = true;
    shape = type.getShape();
  }

  std::optional<StorageGroup> finish() {
    while (ok && !worklist.empty())
      visit(worklist.pop_back_val());
    worklist.clear();
    if (!ok || group.readers.empty() || !choosePermutation())
      return std::nullopt;
    return std::move(group);
  }

  void addParam(StringRef name) {
    seenParams.insert(name);
    ParamOp param = params.lookup(name);
    if (!param || param.getStorageOrder()) {
      ok = false;
      return;
    }
    if (!group.params.insert(param.getSymName()))
      return;
    auto it = uses.find(name);
    if (it == uses.end())
      return;
    for (GetParamOp read : it->second.reads)
      addValue(read.getResult());
    for (SetParamOp write : it->second.writes)
      addValue(write.getValue());
  }

  void addValue(Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || type.getShape() != shape) {
      ok = false;
      return;
    }
    if (group.values.insert(value))
      worklist.push_back(value);
  }

  void visit(Value value) {
    Operation *def = value.getDefiningOp();
    if (!def) {
      if (value != argument) // another argument
        ok = false;
    } else if (auto read = dyn_cast<GetParamOp>(def)) {
      addParam(read.getName());
    } else if (isLayoutChange(def)) {
      group.writers.insert(def);
    } else if (auto shared = sharingLayout(def, value)) {
      for (Value v : *shared)
        addValue(v);
    } else {
      ok = false;
    }
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto write = dyn_cast<SetParamOp>(user)) {
        addParam(write.getName());
      } else if (isLayoutChange(user)) {
        group.readers.insert(user);
      } else if (auto shared = sharingLayout(user, value)) {
        for (Value v : *shared)
          addValue(v);
      } else {
        ok = false;
      }
    }
  }

  /// One permutation for every reader (and its inverse for every writer),
  /// taken from a transpose if there is one; not the identity.
  bool choosePermutation() {
    std::optional<SmallVector<int64_t>> chosen;
    for (Operation *op :
         llvm::concat<Operation *const>(group.readers, group.writers)) {
      if (group.readers.contains(op) && group.writers.contains(op))
        return false;
      if (!isa<TransposeOp>(op) && chosen)
        continue;
      std::optional<SmallVector<int64_t>> candidate = permutationOf(op);
      if (!candidate)
        return false;
      if (group.writers.contains(op))
        candidate = inversePermutation(*candidate);
      chosen = candidate;
      if (isa<TransposeOp>(op))
        break;
    }
    if (!chosen || isIdentity(*chosen))
      return false;
    SmallVector<int64_t> inverse = inversePermutation(*chosen);
    for (Operation *reader : group.readers)
      if (!changesBy(reader, *chosen))
        return false;
    for (Operation *writer : group.writers)
      if (!changesBy(writer, inverse))
        return false;
    group.permutation = std::move(*chosen);
    return true;
  }

  const llvm::StringMap<ParamOp> &params;
  const llvm::StringMap<ParamUses> &uses;
  StorageGroup group;
  SmallVector<Value> worklist;
  ArrayRef<int64_t> shape;
  llvm::StringSet<> seenParams;
  Value argument; // the argument a group is built from
  bool ok = true;
};

/// Stores `group` permuted: readers read the group's values, which take
/// the permuted types, and writers' inputs replace their results.
void permuteGroup(StorageGroup &group, const llvm::StringMap<ParamOp> &params,
                  MLIRContext *context) {
  for (Operation *reader : group.readers) {
    reader->getResult(0).replaceAllUsesWith(reader->getOperand(0));
    reader->erase();
  }
  for (Value value : group.values)
    value.setType(permutedType(cast<RankedTensorType>(value.getType()),
                               group.permutation));
  for (Operation *writer : group.writers) {
    writer->getResult(0).replaceAllUsesWith(writer->getOperand(0));
    writer->erase();
  }
  Builder builder(context);
  for (StringRef name : group.params) {
    ParamOp param = params.lookup(name);
    param.setType(permutedType(param.getTensorType(), group.permutation));
    param.setStorageOrderAttr(builder.getDenseI64ArrayAttr(group.permutation));
  }
}

/// Records that argument `arg` of `func`, whose group is now permuted,
/// is stored permuted.
void markArgument(func::FuncOp func, BlockArgument arg,
                  ArrayRef<int64_t> permutation) {
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getBody().getArgumentTypes(),
                                         func.getResultTypes()));
  Builder builder(func.getContext());
  func.setArgAttr(arg.getArgNumber(), kStorageOrderAttrName,
                  builder.getDenseI64ArrayAttr(permutation));
}

struct FluidPermuteStoragePass
    : public mlir::fluid::impl::FluidPermuteStorageBase<
          FluidPermuteStoragePass> {
  using FluidPermuteStorageBase::FluidPermuteStorageBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<ParamOp> params;
    SmallVector<StringRef> order;
    for (ParamOp param : module.getOps<ParamOp>()) {
      params[param.getSymName()] = param;
      order.push_back(param.getSymName());
    }
    llvm::StringMap<ParamUses> uses;
    module.walk([&](Operation *op) {
      if (auto read = dyn_cast<GetParamOp>(op))
        uses[read.getName()].reads.push_back(read);
      else if (auto write = dyn_cast<SetParamOp>(op))
        uses[write.getName()].writes.push_back(write);
    });

    GroupBuilder builder(params, uses);
    for (StringRef name : order) {
      if (builder.seen().contains(name) ||
          params.lookup(name).getTensorType().getRank() < 2)
        continue;
      std::optional<StorageGroup> group = builder.build(name);
      if (!group)
        continue;
      numParams += group->params.size();
      numRemoved += group->readers.size() + group->writers.size();
      permuteGroup(*group, params, &getContext());
    }

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !SymbolTable::symbolKnownUseEmpty(func, module))
        continue;
      for (BlockArgument arg : func.getArguments()) {
        auto type = dyn_cast<RankedTensorType>(arg.getType());
        if (!type || type.getRank() < 2 ||
            func.getArgAttr(arg.getArgNumber(), kStorageOrderAttrName))
          continue;
        std::optional<StorageGroup> group = builder.build(arg);
        if (!group)
          continue;
        ++numArguments;
        numRemoved += group->readers.size() + group->writers.size();
        permuteGroup(*group, params, &getContext());
        markArgument(func, arg, group->permutation);
      }
    }
  }
};

} // namespace
