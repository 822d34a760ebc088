//===- PlanMemory.cpp - --fluid-plan-memory -------------------------------===//
//
// Per function: (1) frees of temporaries go (the arena replaces them);
// (2) in-place reuse, in program order: a single-output launch whose kernel
// may write over an input takes over the buffer of a dead input of its
// output's type; (3) offsets from the lifetime intervals of the remaining
// temporaries, by greedy placement in two orders, the smaller arena kept;
// (4) every temporary becomes a memref.view of one arena.
//
//===----------------------------------------------------------------------===//

#include "fluid/Analysis/BufferLiveness.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

#include <algorithm>

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDPLANMEMORY
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

using Buffer = BufferLiveness::Buffer;

/// A temporary alloc that the plan places.
bool isPlanned(const Buffer &buffer) {
  return buffer.isTemporary() && !buffer.arena &&
         buffer.root.getDefiningOp<memref::AllocOp>();
}

//===----------------------------------------------------------------------===//
// In-place reuse
//===----------------------------------------------------------------------===//

/// Merges the output buffers of launches into dead inputs; returns how
/// many launches now run in place.
int64_t runInPlace(func::FuncOp func) {
  BufferLiveness liveness(func);
  // The analysis' roots and last uses, kept current as buffers merge.
  DenseMap<Value, Value> rootOf;
  DenseMap<Value, int64_t> lastUse;
  DenseMap<Value, int64_t> firstUse;
  for (const Buffer &buffer : liveness.getBuffers()) {
    if (!isPlanned(buffer))
      continue;
    for (Value alias : buffer.aliases)
      rootOf[alias] = buffer.root;
    lastUse[buffer.root] = buffer.last;
    firstUse[buffer.root] = buffer.first;
  }
  int64_t merged = 0;
  SmallVector<fluid_rt::LaunchOp> launches(
      func.getBody().front().getOps<fluid_rt::LaunchOp>());
  for (fluid_rt::LaunchOp launch : launches) {
    if (launch.getOutputs().size() != 1 ||
        !fluid_rt::mayWriteOverInput(launch.getKernel(), 0))
      continue;
    Value output = launch.getOutputs()[0];
    int64_t position = liveness.getPosition(launch);
    // The output is a fresh buffer that this launch writes first.
    auto alloc = output.getDefiningOp<memref::AllocOp>();
    if (!alloc || rootOf.lookup(output) != output ||
        firstUse.lookup(output) != position)
      continue;
    for (Value input : launch.getInputs()) {
      Value root = rootOf.lookup(input);
      if (!root || root == output || input.getType() != output.getType() ||
          lastUse.lookup(root) != position)
        continue;
      // The input's buffer is dead after this launch: the output is it.
      int64_t outputLast = lastUse.lookup(output);
      for (auto &[alias, aliasRoot] : rootOf)
        if (aliasRoot == output)
          aliasRoot = root;
      output.replaceAllUsesWith(input);
      lastUse[root] = std::max(outputLast, position);
      lastUse.erase(output);
      firstUse.erase(output);
      rootOf.erase(output);
      alloc.erase();
      ++merged;
      break;
    }
  }
  return merged;
}

//===----------------------------------------------------------------------===//
// Offsets
//===----------------------------------------------------------------------===//

struct Interval {
  int64_t first, last, bytes;
  bool overlaps(const Interval &other) const {
    return first <= other.last && other.first <= last;
  }
};

/// Greedy placement in `order`: each interval at the lowest offset where
/// it fits among the placed intervals it overlaps in time. Returns the
/// arena size; fills `offsets`.
int64_t place(ArrayRef<Interval> intervals, ArrayRef<unsigned> order,
              SmallVectorImpl<int64_t> &offsets) {
  offsets.assign(intervals.size(), -1);
  SmallVector<unsigned> placed;
  int64_t arena = 0;
  SmallVector<std::pair<int64_t, int64_t>> taken;
  for (unsigned i : order) {
    const Interval &interval = intervals[i];
    taken.clear();
    for (unsigned j : placed)
      if (intervals[j].overlaps(interval))
        taken.push_back({offsets[j], offsets[j] + intervals[j].bytes});
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [begin, end] : taken) {
      if (offset + interval.bytes <= begin)
        break;
      offset = std::max(offset, end);
    }
    offsets[i] = offset;
    arena = std::max(arena, offset + interval.bytes);
    placed.push_back(i);
  }
  return arena;
}

/// The smallest arena over the placement orders; fills `offsets`.
int64_t planOffsets(ArrayRef<Interval> intervals,
                    SmallVectorImpl<int64_t> &offsets) {
  SmallVector<unsigned> bySize(intervals.size());
  for (unsigned i = 0; i < intervals.size(); ++i)
    bySize[i] = i;
  SmallVector<unsigned> byArea(bySize);
  // Ties keep program order, so the plan is deterministic.
  llvm::stable_sort(bySize, [&](unsigned a, unsigned b) {
    return intervals[a].bytes > intervals[b].bytes;
  });
  auto area = [&](unsigned i) {
    const Interval &v = intervals[i];
    return static_cast<double>(v.bytes) *
           static_cast<double>(v.last - v.first + 1);
  };
  llvm::stable_sort(byArea,
                    [&](unsigned a, unsigned b) { return area(a) > area(b); });
  SmallVector<int64_t> other;
  int64_t best = place(intervals, bySize, offsets);
  int64_t second = place(intervals, byArea, other);
  if (second < best) {
    best = second;
    offsets.assign(other.begin(), other.end());
  }
  return best;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct FluidPlanMemoryPass
    : public mlir::fluid::impl::FluidPlanMemoryBase<FluidPlanMemoryPass> {
  using Base::Base;

  LogicalResult planFunction(func::FuncOp func);

  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (failed(Base::initializeOptions(options, errorHandler)))
      return failure();
    std::string problem = checkOptions();
    return problem.empty() ? success() : errorHandler(problem);
  }
  /// Checks the options again (a pass built from C++ skips the above).
  LogicalResult initialize(MLIRContext *context) override {
    std::string problem = checkOptions();
    if (!problem.empty())
      return emitError(UnknownLoc::get(context))
             << "--fluid-plan-memory: " << problem;
    return success();
  }

  /// What is wrong with the options, or an empty string.
  std::string checkOptions() const {
    if (alignment <= 0 || (alignment & (alignment - 1)))
      return "alignment must be a power of two, got " +
             std::to_string(alignment);
    if (workspaceLimitMiB < -1 || workspaceLimitMiB > (int64_t(1) << 30))
      return "workspace-limit must be -1 (none) or a size in MiB up to 2^30, "
             "got " +
             std::to_string(workspaceLimitMiB);
    return "";
  }

  void runOnOperation() override {
    if (failed(forEachBufferFunction(
            getOperation(), getArgument(),
            [&](func::FuncOp func) { return planFunction(func); })))
      return signalPassFailure();
    Builder builder(&getContext());
    if (workspaceLimitMiB >= 0)
      getOperation()->setAttr(
          fluid_rt::kWorkspaceLimitAttrName,
          builder.getI64IntegerAttr(workspaceLimitMiB * (int64_t(1) << 20)));
  }
};

LogicalResult FluidPlanMemoryPass::planFunction(func::FuncOp func) {
  Block &block = func.getBody().front();
  // A function planned before keeps its plan.
  if (func->hasAttr(fluid_rt::kArenaBytesAttrName))
    return success();

  // (1) The arena replaces the frees of temporaries.
  {
    BufferLiveness liveness(func);
    for (const Buffer &buffer : liveness.getBuffers())
      if (isPlanned(buffer))
        for (Operation *user :
             llvm::make_early_inc_range(buffer.root.getUsers()))
          if (isa<memref::DeallocOp>(user))
            user->erase();
  }
  // (2) In place.
  if (inPlace)
    numInPlace += runInPlace(func);

  // (3) Offsets.
  BufferLiveness liveness(func);
  SmallVector<const Buffer *> planned;
  SmallVector<Interval> intervals;
  for (const Buffer &buffer : liveness.getBuffers()) {
    if (!isPlanned(buffer))
      continue;
    if (buffer.first < 0) {
      // Never used: no memory at all.
      if (buffer.root.use_empty())
        buffer.root.getDefiningOp()->erase();
      continue;
    }
    planned.push_back(&buffer);
    intervals.push_back(
        {buffer.first, buffer.last,
         alignBytes(std::max<int64_t>(buffer.bytes, 1), alignment)});
  }
  Builder attrs(func.getContext());
  if (planned.empty()) {
    func->setAttr(fluid_rt::kArenaBytesAttrName, attrs.getI64IntegerAttr(0));
    func->setAttr(fluid_rt::kArenaLowerBoundAttrName,
                  attrs.getI64IntegerAttr(0));
    return success();
  }
  numPlanned += planned.size();
  SmallVector<int64_t> offsets;
  int64_t arenaBytes = planOffsets(intervals, offsets);
  int64_t lowerBound = liveness.peak(alignment).first;

  // (4) Views of one arena.
  OpBuilder builder(func.getContext());
  builder.setInsertionPointToStart(&block);
  Location loc = func.getLoc();
  Value arena = memref::AllocOp::create(
      builder, loc, MemRefType::get({arenaBytes}, builder.getI8Type()),
      builder.getI64IntegerAttr(alignment));
  for (auto [buffer, offset] : llvm::zip(planned, offsets)) {
    auto alloc = buffer->root.getDefiningOp<memref::AllocOp>();
    builder.setInsertionPoint(alloc);
    Value shift =
        arith::ConstantIndexOp::create(builder, alloc.getLoc(), offset);
    Value view = memref::ViewOp::create(
        builder, alloc.getLoc(), alloc.getType(), arena, shift, ValueRange());
    alloc.getResult().replaceAllUsesWith(view);
    alloc.erase();
  }
  func->setAttr(fluid_rt::kArenaBytesAttrName,
                attrs.getI64IntegerAttr(arenaBytes));
  func->setAttr(fluid_rt::kArenaLowerBoundAttrName,
                attrs.getI64IntegerAttr(lowerBound));
  return success();
}

} // namespace
