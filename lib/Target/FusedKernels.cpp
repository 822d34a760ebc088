//===- FusedKernels.cpp - The cpu loop of a fused region ------------------===//

#include "fluid/Target/FusedKernels.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace mlir::fluid;

SmallVector<int64_t> mlir::fluid::contiguousStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

BlockArgument mlir::fluid::viewedArgument(Value value) {
  while (Operation *producer = value.getDefiningOp()) {
    if (!isFusibleView(producer))
      return nullptr;
    value = producer->getOperand(0);
  }
  return dyn_cast<BlockArgument>(value);
}

SmallVector<OpOperand *> mlir::fluid::fusedAccesses(BlockArgument arg) {
  SmallVector<OpOperand *> accesses;
  SmallVector<Value> pending = {arg};
  while (!pending.empty()) {
    Value value = pending.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      if (isFusibleView(use.getOwner()))
        pending.push_back(use.getOwner()->getResult(0));
      else
        accesses.push_back(&use);
    }
  }
  return accesses;
}

/// The shape of `value` and its element strides in the buffer of the
/// argument it views (dense strides for any other value).
static std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
viewLayout(Value value) {
  Operation *view = value.getDefiningOp();
  if (!view || !isFusibleView(view)) {
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(value.getType()).getShape();
    return {SmallVector<int64_t>(shape), contiguousStrides(shape)};
  }
  auto [sourceShape, sourceStrides] = viewLayout(view->getOperand(0));
  ArrayRef<int64_t> shape = cast<RankedTensorType>(value.getType()).getShape();
  // A slice at offset 0 and a widening cast keep the strides; a reshape
  // of unit dimensions keeps those of the other dimensions, in order.
  if (isa<SliceOp, CastOp>(view))
    return {SmallVector<int64_t>(shape), sourceStrides};
  SmallVector<int64_t> kept;
  for (auto [size, stride] : llvm::zip(sourceShape, sourceStrides))
    if (size != 1)
      kept.push_back(stride);
  SmallVector<int64_t> strides(shape.size(), 0);
  for (size_t d = 0, k = 0; d < shape.size(); ++d)
    if (shape[d] != 1)
      strides[d] = kept[k++];
  return {SmallVector<int64_t>(shape), strides};
}

SmallVector<int64_t> mlir::fluid::fusedAccessStrides(FusionOp fusion,
                                                     OpOperand &use) {
  ArrayRef<int64_t> space = fusion.getIterationShape();
  auto [shape, layout] = viewLayout(use.get());
  SmallVector<int64_t> strides(space.size(), 0);
  // batch_norm_apply reads its per-channel operands along axis 1 (the
  // last axis when channels-last).
  if (auto apply = dyn_cast<BatchNormApplyOp>(use.getOwner());
      apply && use.getOperandNumber() > 0) {
    strides[apply.getChannelsLast() ? space.size() - 1 : 1] = layout.back();
    return strides;
  }
  // NumPy broadcasting: shapes aligned from the right.
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1,
               s = static_cast<int64_t>(space.size()) - 1;
       d >= 0 && s >= 0; --d, --s)
    if (shape[d] != 1)
      strides[s] = layout[d];
  return strides;
}

int64_t mlir::fluid::fusedVectorWidth(FusionOp fusion) {
  // A small region without sums (batch norm's per-channel arithmetic on 64
  // to 2,048 channels) runs the element-at-a-time kernel only: its vector
  // kernel, one block whose threads each work through a chain of lanes,
  // took 1.4 to 2.2 times as long for every such region of ResNet-50's
  // bf16 step (bench/NOTES.md, session 28).
  if (!fusion.hasReductions()) {
    int64_t count = 1;
    for (int64_t d : fusion.getIterationShape())
      count *= d;
    if (count <= kScalarRegionElements)
      return 1;
  }
  // 16 bytes of the narrowest element type per step: one 128-bit access
  // of 16-bit values, two of the f32 values they are cast to.
  int64_t narrowest = 8;
  auto visit = [&](Type type) {
    Type element = cast<RankedTensorType>(type).getElementType();
    narrowest =
        std::min<int64_t>(narrowest, element.getIntOrFloatBitWidth() / 8);
  };
  llvm::for_each(fusion.getInputs().getTypes(), visit);
  llvm::for_each(fusion.getResultTypes(), visit);
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    llvm::for_each(op.getResultTypes(), visit);
  int64_t width = 16 / std::max<int64_t>(narrowest, 1);
  ArrayRef<int64_t> space = fusion.getIterationShape();
  // A kernel with sums moves vectors within one row of a channel, or, for
  // channels-last sums, along the channels of one row.
  int64_t run = 1;
  if (isChannelsLastSum(fusion))
    run = space.back();
  else if (fusion.hasReductions())
    for (size_t d = 2; d < space.size(); ++d)
      run *= space[d];
  else
    for (int64_t d : space)
      run *= d;
  return run % width == 0 ? width : 1;
}

bool mlir::fluid::isChannelsLastSum(FusionOp fusion) {
  return fusion.hasReductions() &&
         fusion.getChannelAxis() ==
             static_cast<int64_t>(fusion.getIterationShape().size()) - 1 &&
         fusion.getIterationShape().size() > 2;
}

int64_t mlir::fluid::fusedColumnTileChannels(FusionOp fusion) {
  int64_t width = fusedVectorWidth(fusion);
  return std::min<int64_t>(fusion.getIterationShape().back(),
                           width == 1 ? 32 : kColumnTileVectors * width);
}

/// The channel count of a region with sums.
static int64_t fusedChannels(FusionOp fusion) {
  ArrayRef<int64_t> space = fusion.getIterationShape();
  return space.size() >= 2
             ? std::max<int64_t>(space[fusion.getChannelAxis()], 1)
             : 1;
}

int64_t mlir::fluid::fusedReductionSplits(FusionOp fusion,
                                          int64_t columnMinElements) {
  ArrayRef<int64_t> space = fusion.getIterationShape();
  int64_t count = 1;
  for (int64_t d : space)
    count *= d;
  int64_t channels = fusedChannels(fusion);
  if (isChannelsLastSum(fusion)) {
    // Tiles of channels, each split along the rows: 16 blocks per SM of an
    // H200 where there is enough work (at least columnMinElements per block),
    // and few enough splits that the tile's last block reads at most
    // kColumnPartialsPerThread partial sums per thread and 32 channels.
    int64_t tile = fusedColumnTileChannels(fusion);
    int64_t tiles = (channels + tile - 1) / tile;
    int64_t perTile = count / channels * tile;
    int64_t reductions =
        llvm::count_if(fusion.getBodyBlock().without_terminator(),
                       [](Operation &op) { return isFusibleReduction(&op); });
    int64_t splits = (kReductionTargetBlocks + tiles - 1) / tiles;
    int64_t cap = kColumnPartialsPerThread * kReductionThreads /
                  (32 * std::max<int64_t>(reductions, 1));
    return std::max<int64_t>(
        1, std::min({splits, perTile / columnMinElements, cap}));
  }
  int64_t perChannel = count / channels;
  // 16 blocks per SM of an H200, each summing at least 8192 elements:
  // more splits help the large reductions (56x56, 112x112), but below
  // 8192 elements per block combining the blocks' sums costs more than it
  // saves (measured when they were added atomically; bench/NOTES.md,
  // 2026-12-03).
  constexpr int64_t kMinPerBlock = 8192;
  int64_t splits = (kReductionTargetBlocks + channels - 1) / channels;
  return std::max<int64_t>(1, std::min(splits, perChannel / kMinPerBlock));
}

std::optional<FusedSumScratch> mlir::fluid::fusedSumScratch(FusionOp fusion,
                                                            int64_t splits) {
  if (!fusion.hasReductions() || splits == 1)
    return std::nullopt;
  int64_t reductions = 0;
  Type element;
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    if (isFusibleReduction(&op) && !reductions++)
      element = cast<ShapedType>(op.getResult(0).getType()).getElementType();
  // (A channels-last kernel counts per tile, on its first channel's
  // counter.)
  int64_t channels = fusedChannels(fusion);
  return FusedSumScratch{channels, channels * splits * reductions, element};
}

int64_t mlir::fluid::fusedReductionBlocks(FusionOp fusion, int64_t splits) {
  int64_t channels = fusedChannels(fusion);
  if (isChannelsLastSum(fusion)) {
    int64_t tile = fusedColumnTileChannels(fusion);
    channels = (channels + tile - 1) / tile;
  }
  return channels * splits;
}

/// Whether `use` reads its argument at the element being computed.
static bool isElementAccess(FusionOp fusion, OpOperand &use) {
  return fusedAccessStrides(fusion, use) ==
         contiguousStrides(fusion.getIterationShape());
}

bool mlir::fluid::isLaneContiguousAccess(FusionOp fusion, OpOperand &use) {
  int64_t width = fusedVectorWidth(fusion);
  ArrayRef<int64_t> space = fusion.getIterationShape();
  if (width == 1 || space.empty() || isElementAccess(fusion, use))
    return false;
  SmallVector<int64_t> strides = fusedAccessStrides(fusion, use);
  int64_t last = static_cast<int64_t>(space.size()) - 1;
  if (strides[last] != 1 || space[last] % width != 0)
    return false;
  // Every other dimension read moves the offset by whole vectors (its
  // extent in elements, a multiple of space[last], is one too).
  for (int64_t d = 0; d < last; ++d)
    if (strides[d] != 0 && space[d] != 1 && strides[d] % width != 0)
      return false;
  return true;
}

SmallVector<bool> mlir::fluid::fusedVectorOperands(FusionOp fusion) {
  SmallVector<bool> vector;
  for (BlockArgument arg : fusion.getBodyBlock().getArguments())
    vector.push_back(llvm::any_of(fusedAccesses(arg), [&](OpOperand *use) {
      return isElementAccess(fusion, *use) ||
             isLaneContiguousAccess(fusion, *use);
    }));
  vector.append(fusion.getNumResults(), true);
  return vector;
}

SmallVector<int64_t> mlir::fluid::fusedInputElementsRead(FusionOp fusion) {
  SmallVector<int64_t> elements;
  for (BlockArgument arg : fusion.getBodyBlock().getArguments()) {
    int64_t all = cast<RankedTensorType>(arg.getType()).getNumElements();
    // Each value accessed (the argument or a view of it) is read at most
    // once per element it has.
    llvm::SmallPtrSet<Value, 4> seen;
    int64_t read = 0;
    for (OpOperand *use : fusedAccesses(arg))
      if (seen.insert(use->get()).second)
        read += cast<RankedTensorType>(use->get().getType()).getNumElements();
    elements.push_back(std::min(read, all));
  }
  return elements;
}

bool mlir::fluid::fusedOutputMayOverwrite(FusionOp fusion, unsigned output,
                                          unsigned input) {
  Value result = fusion.getYield().getValues()[output];
  Operation *producer = result.getDefiningOp();
  if ((producer && isFusibleReduction(producer)) ||
      fusion.getInputs()[input].getType() != result.getType())
    return false;
  BlockArgument arg = fusion.getBodyBlock().getArgument(input);
  return llvm::all_of(fusedAccesses(arg), [&](OpOperand *use) {
    return isElementAccess(fusion, *use);
  });
}

std::string mlir::fluid::describeFusion(FusionOp fusion) {
  std::string text;
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    text += (text.empty() ? "" : ", ") + op.getName().stripDialect().str();
  return text;
}

namespace {

std::string cType(Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  if (element.isF16() || element.isBF16())
    return "uint16_t"; // its bits (fluid/runtime/Float16.h)
  return element.isF64() ? "double" : "float";
}

/// The C++ class of a 16-bit element type in fluid/runtime/Float16.h, or
/// "" for another type.
std::string float16Class(Type type) {
  Type element = cast<RankedTensorType>(type).getElementType();
  if (element.isF16())
    return "fluid::rt::cpu::Half";
  if (element.isBF16())
    return "fluid::rt::cpu::BFloat16";
  return "";
}

/// The cpu kernel's expression for `op` on operand expressions `a`, in the
/// result's C type `t` (runtime/cpu: Elementwise.cpp, ElementwiseGrad.cpp,
/// Math.cpp, Norm.cpp).
FailureOr<std::string> cpuExpression(Operation *op, ArrayRef<std::string> a,
                                     const std::string &t) {
  auto d = [](const std::string &x) { return "double(" + x + ")"; };
  std::optional<std::string> e =
      llvm::TypeSwitch<Operation *, std::optional<std::string>>(op)
          .Case([&](ReluOp) {
            return "(" + a[0] + " < " + t + "(0) ? " + t + "(0) : " + a[0] +
                   ")";
          })
          .Case([&](SigmoidOp) {
            return t + "(1) / (" + t + "(1) + std::exp(-" + a[0] + "))";
          })
          .Case([&](TanhOp) { return "std::tanh(" + a[0] + ")"; })
          .Case([&](NegOp) { return "-" + a[0]; })
          .Case([&](ExpOp) { return "std::exp(" + a[0] + ")"; })
          .Case([&](LogOp) { return "std::log(" + a[0] + ")"; })
          .Case([&](CosOp) { return "std::cos(" + a[0] + ")"; })
          .Case([&](SqrtOp) { return "std::sqrt(" + a[0] + ")"; })
          .Case([&](ErfOp) { return "std::erf(" + a[0] + ")"; })
          .Case([&](FloorOp) { return "std::floor(" + a[0] + ")"; })
          .Case([&](AddOp) { return a[0] + " + " + a[1]; })
          .Case([&](SubOp) { return a[0] + " - " + a[1]; })
          .Case([&](MulOp) { return a[0] + " * " + a[1]; })
          .Case([&](DivOp) { return a[0] + " / " + a[1]; })
          .Case([&](PowOp) { return "std::pow(" + a[0] + ", " + a[1] + ")"; })
          .Case([&](MinimumOp) {
            return "(" + a[0] + " < " + a[1] + " || " + a[0] + " != " + a[0] +
                   " ? " + a[0] + " : " + a[1] + ")";
          })
          .Case([&](MaximumOp) {
            return "(" + a[0] + " > " + a[1] + " || " + a[0] + " != " + a[0] +
                   " ? " + a[0] + " : " + a[1] + ")";
          })
          .Case([&](GreaterEqualOp) {
            return t + "(" + a[0] + " >= " + a[1] + " ? 1 : 0)";
          })
          .Case([&](SelectOp) {
            return "(" + a[0] + " != 0 ? " + a[1] + " : " + a[2] + ")";
          })
          .Case([&](CastOp c) -> std::string {
            // 16-bit values are bits: widened exactly, rounded once.
            if (std::string from = float16Class(c.getInput().getType());
                !from.empty())
              return "static_cast<" + t + ">(static_cast<float>(" + from +
                     "::fromBits(" + a[0] + ")))";
            if (std::string to = float16Class(c.getType()); !to.empty())
              return to + "(" + a[0] + ").bits";
            return "static_cast<" + t + ">(" + a[0] + ")";
          })
          .Case([&](BroadcastToOp) { return a[0]; })
          .Case([&](ReluGradOp) {
            return t + "(" + d(a[1]) + " <= 0 ? 0.0 : " + d(a[0]) + ")";
          })
          .Case([&](SigmoidGradOp) {
            return t + "(" + d(a[0]) + " * " + d(a[1]) + " * (1 - " + d(a[1]) +
                   "))";
          })
          .Case([&](TanhGradOp) {
            return t + "(" + d(a[0]) + " * (1 - " + d(a[1]) + " * " + d(a[1]) +
                   "))";
          })
          .Case([&](BatchNormApplyOp) {
            // input, scale, shift, mean, inv_std: normalizeChannel().
            return t + "((" + a[0] + " - " + d(a[3]) + ") * (" + d(a[1]) +
                   " * " + d(a[4]) + ") + " + d(a[2]) + ")";
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!e)
    return op->emitOpError() << "has no generated code";
  return *e;
}

} // namespace

FailureOr<std::string> mlir::fluid::emitCpuFusedKernel(FusionOp fusion,
                                                       StringRef name) {
  Block &body = fusion.getBodyBlock();
  ArrayRef<int64_t> space = fusion.getIterationShape();
  auto rank = static_cast<int64_t>(space.size());
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// " << describeFusion(fusion) << "\n";
  os << "fluid_status " << name
     << "(const fluid_tensor *const *in, fluid_tensor *const *out) {\n";
  for (auto [k, arg] : llvm::enumerate(body.getArguments()))
    os << "  const " << cType(arg.getType()) << " *x" << k
       << " = static_cast<const " << cType(arg.getType()) << " *>(in[" << k
       << "]->data);\n";
  for (auto [k, type] : llvm::enumerate(fusion.getResultTypes()))
    os << "  " << cType(type) << " *y" << k << " = static_cast<" << cType(type)
       << " *>(out[" << k << "]->data);\n";
  // Per-channel sums, accumulated in double in the loop nest's order (the
  // cpu reduce_sum kernel's), so they are bitwise that kernel's.
  int64_t axis = fusion.getChannelAxis();
  int64_t channels = rank >= 2 ? space[axis] : 1;
  DenseMap<Operation *, std::string> sums;
  for (Operation &op : body.without_terminator())
    if (isFusibleReduction(&op)) {
      std::string name = "r" + std::to_string(sums.size());
      sums[&op] = name;
      os << "  std::vector<double> " << name << "(" << channels << ", 0.0);\n";
    }
  // The loop nest; dimensions of size 1 need no loop.
  std::string indent = "  ";
  bool any = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (space[d] == 1)
      continue;
    os << indent << "for (int64_t i" << d << " = 0; i" << d << " < " << space[d]
       << "; ++i" << d << ")\n";
    indent += "  ";
    any = true;
  }
  os << (any ? indent.substr(2) : indent) << "{\n";
  // `offset(strides)`: the element index at the current iteration.
  auto offset = [&](ArrayRef<int64_t> strides) {
    std::string sum;
    for (int64_t d = 0; d < rank; ++d) {
      if (strides[d] == 0 || space[d] == 1)
        continue;
      std::string term =
          "i" + std::to_string(d) +
          (strides[d] == 1 ? "" : " * " + std::to_string(strides[d]));
      sum += (sum.empty() ? "" : " + ") + term;
    }
    return sum.empty() ? std::string("0") : sum;
  };
  SmallVector<int64_t> contiguous = contiguousStrides(space);
  os << indent << "const int64_t e = " << offset(contiguous) << ";\n";
  os << indent << "(void)e;\n";

  // Loads, one per (argument, access).
  DenseMap<Value, std::string> names;
  std::map<std::pair<unsigned, SmallVector<int64_t>>, std::string> loads;
  auto operandText = [&](OpOperand &use) -> std::string {
    BlockArgument arg = viewedArgument(use.get());
    if (!arg)
      return names.lookup(use.get());
    SmallVector<int64_t> strides = fusedAccessStrides(fusion, use);
    // A 16-bit argument read through a widening cast: widened as loaded.
    std::string widen = float16Class(arg.getType());
    if (!widen.empty() && float16Class(use.get().getType()).empty())
      strides.push_back(-1); // keyed apart from a plain load
    else
      widen.clear();
    auto key = std::make_pair(arg.getArgNumber(), strides);
    auto [it, inserted] = loads.insert({key, ""});
    if (inserted) {
      if (!widen.empty())
        strides.pop_back();
      std::string element =
          "x" + std::to_string(arg.getArgNumber()) + "[" +
          (strides == contiguous ? std::string("e") : offset(strides)) + "]";
      std::string type =
          cType(widen.empty() ? arg.getType() : use.get().getType());
      if (!widen.empty())
        element = "static_cast<" + type + ">(static_cast<float>(" + widen +
                  "::fromBits(" + element + ")))";
      it->second = "a" + std::to_string(loads.size() - 1);
      os << indent << "const " << type << " " << it->second << " = " << element
         << ";\n";
    }
    return it->second;
  };
  int64_t next = 0;
  std::string channel = space.size() >= 2 && space[axis] != 1
                            ? "i" + std::to_string(axis)
                            : std::string("0");
  for (Operation &op : body.without_terminator()) {
    if (isLoadedView(&op))
      continue; // its readers load through it
    if (isFusibleReduction(&op)) {
      std::string value = operandText(op.getOpOperand(0));
      os << indent << sums.lookup(&op) << "[" << channel << "] += " << value
         << ";  // reduce_sum\n";
      continue;
    }
    SmallVector<std::string> operands;
    for (OpOperand &use : op.getOpOperands())
      operands.push_back(operandText(use));
    std::string t = cType(op.getResult(0).getType());
    FailureOr<std::string> expression = cpuExpression(&op, operands, t);
    if (failed(expression))
      return failure();
    std::string v = "v" + std::to_string(next++);
    os << indent << "const " << t << " " << v << " = " << *expression
       << ";  // " << op.getName().stripDialect() << "\n";
    names[op.getResult(0)] = v;
  }
  for (auto [k, use] : llvm::enumerate(fusion.getYield()->getOpOperands())) {
    Operation *producer = use.get().getDefiningOp();
    if (producer && sums.count(producer))
      continue;
    os << indent << "y" << k << "[e] = " << operandText(use) << ";\n";
  }
  os << (any ? indent.substr(2) : indent) << "}\n";
  for (auto [k, use] : llvm::enumerate(fusion.getYield()->getOpOperands())) {
    Operation *producer = use.get().getDefiningOp();
    if (!producer || !sums.count(producer))
      continue;
    os << "  for (int64_t c = 0; c < " << channels << "; ++c)\n"
       << "    y" << k << "[c] = " << cType(use.get().getType()) << "("
       << sums.lookup(producer) << "[c]);\n";
  }
  os << "  return FLUID_OK;\n}\n";
  return text;
}
