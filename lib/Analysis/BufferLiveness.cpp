//===- BufferLiveness.cpp - Lifetimes of a training step's buffers --------===//
//
// One walk over the block gives every op its position; every memref value
// is then assigned to its root through ViewLikeOpInterface (fluid_rt.view,
// memref.view), and each root's interval is the span of the uses of its
// aliases. mlir::Liveness answers whether one SSA value is live; here the
// question is about memory reached through several values, with frees and
// views not counting as uses, so the uses are scanned directly: in one
// block that is exact and linear in the number of uses.
//
//===----------------------------------------------------------------------===//

#include "fluid/Analysis/BufferLiveness.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::fluid;

StringRef mlir::fluid::stringifyBufferKind(BufferLiveness::Kind kind) {
  switch (kind) {
  case BufferLiveness::Kind::Temporary:
    return "temporary";
  case BufferLiveness::Kind::Parameter:
    return "parameter";
  case BufferLiveness::Kind::Argument:
    return "argument";
  case BufferLiveness::Kind::Result:
    return "result";
  case BufferLiveness::Kind::Constant:
    return "constant";
  case BufferLiveness::Kind::Arena:
    return "arena";
  }
  return "unknown";
}

static int64_t bytesOf(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape())
    return 0;
  unsigned bits = memref.getElementTypeBitWidth();
  return memref.getNumElements() * static_cast<int64_t>((bits + 7) / 8);
}

LogicalResult mlir::fluid::forEachBufferFunction(
    ModuleOp module, StringRef pass,
    function_ref<LogicalResult(func::FuncOp)> fn) {
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (!func.getBody().hasOneBlock())
      return func.emitError()
             << "--" << pass << " handles single-block functions only";
    if (failed(fn(func)))
      return failure();
  }
  return success();
}

bool BufferLiveness::isAllocationOrView(Operation *op) {
  return isa<memref::AllocOp, memref::DeallocOp, ViewLikeOpInterface,
             arith::ConstantOp>(op);
}

/// The byte offset of a memref.view with a constant offset.
static std::optional<int64_t> constantByteShift(memref::ViewOp view) {
  auto constant = view.getByteShift().getDefiningOp<arith::ConstantIndexOp>();
  if (!constant)
    return std::nullopt;
  return constant.value();
}

BufferLiveness::BufferLiveness(func::FuncOp func) : func(func) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return;
  Block &block = func.getBody().front();
  for (Operation &op : block) {
    positions[&op] = static_cast<int64_t>(ops.size());
    ops.push_back(&op);
  }

  auto addRoot = [&](Value root, Kind kind) {
    bufferOf[root] = buffers.size();
    Buffer buffer;
    buffer.root = root;
    buffer.kind = kind;
    buffer.bytes = bytesOf(root.getType());
    buffer.aliases.push_back(root);
    buffers.push_back(buffer);
  };
  for (BlockArgument argument : block.getArguments())
    if (isa<MemRefType>(argument.getType()))
      addRoot(argument, Kind::Argument);

  // Roots and aliases, in program order (a view follows its source).
  for (Operation *op : ops) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      addRoot(alloc, Kind::Temporary);
    } else if (auto ref = dyn_cast<fluid_rt::ParamRefOp>(op)) {
      addRoot(ref, Kind::Parameter);
    } else if (auto view = dyn_cast<memref::ViewOp>(op)) {
      // A view of an arena is a buffer of its own, at an offset.
      auto source = bufferOf.find(view.getSource());
      std::optional<int64_t> shift = constantByteShift(view);
      if (source != bufferOf.end() && shift &&
          view.getSource().getDefiningOp<memref::AllocOp>()) {
        buffers[source->second].kind = Kind::Arena;
        Value arena = view.getSource();
        addRoot(view, Kind::Temporary);
        buffers.back().arena = arena;
        buffers.back().arenaOffset = *shift;
      } else if (source != bufferOf.end()) {
        // Read the index before bufferOf[] may grow the map and invalidate
        // the iterator.
        unsigned index = source->second;
        bufferOf[view] = index;
        buffers[index].aliases.push_back(view);
      }
    } else if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
      auto source = bufferOf.find(view.getViewSource());
      if (source != bufferOf.end()) {
        unsigned index = source->second;
        bufferOf[view.getViewDest()] = index;
        buffers[index].aliases.push_back(view.getViewDest());
      }
    }
  }
  if (auto arena = llvm::find_if(
          buffers, [](const Buffer &b) { return b.kind == Kind::Arena; });
      arena != buffers.end())
    arena->bytes = bytesOf(arena->root.getType());

  // Intervals, results and constants.
  for (Buffer &buffer : buffers) {
    // A returned constant is a constant, whatever the order of its uses.
    bool returned = false, constant = false;
    for (Value alias : buffer.aliases) {
      for (OpOperand &use : alias.getUses()) {
        Operation *user = use.getOwner();
        if (isAllocationOrView(user))
          continue;
        returned |= isa<func::ReturnOp>(user);
        auto launch = dyn_cast<fluid_rt::LaunchOp>(user);
        constant |= launch && launch.getKernel() == "constant";
        int64_t position = positions.lookup(user);
        if (buffer.first < 0 || position < buffer.first) {
          buffer.first = position;
          buffer.producer = user;
        }
        buffer.last = std::max(buffer.last, position);
      }
    }
    if (buffer.kind == Kind::Temporary && (constant || returned))
      buffer.kind = constant ? Kind::Constant : Kind::Result;
  }
}

const BufferLiveness::Buffer *BufferLiveness::lookup(Value value) const {
  auto it = bufferOf.find(value);
  return it == bufferOf.end() ? nullptr : &buffers[it->second];
}

int64_t BufferLiveness::liveBytesAt(int64_t position, int64_t alignment) const {
  int64_t total = 0;
  for (const Buffer &buffer : buffers)
    if (buffer.isTemporary() && buffer.isLive(position))
      total += alignBytes(buffer.bytes, alignment);
  return total;
}

std::pair<int64_t, int64_t> BufferLiveness::peak(int64_t alignment) const {
  // A sweep over interval ends: +bytes at first, -bytes after last.
  SmallVector<int64_t> delta(ops.size() + 1, 0);
  bool any = false;
  for (const Buffer &buffer : buffers) {
    if (!buffer.isTemporary() || buffer.first < 0)
      continue;
    any = true;
    int64_t bytes = alignBytes(buffer.bytes, alignment);
    delta[buffer.first] += bytes;
    delta[buffer.last + 1] -= bytes;
  }
  if (!any)
    return {0, -1};
  int64_t live = 0, best = 0, where = 0;
  for (int64_t position = 0; position < getNumOps(); ++position) {
    live += delta[position];
    if (live > best) {
      best = live;
      where = position;
    }
  }
  return {best, where};
}

int64_t BufferLiveness::persistentBytes(Kind kind) const {
  int64_t total = 0;
  llvm::StringSet<> params;
  for (const Buffer &buffer : buffers) {
    if (buffer.kind != kind)
      continue;
    // Each fluid_rt.param_ref of one parameter is the same memory.
    if (auto ref = buffer.root.getDefiningOp<fluid_rt::ParamRefOp>())
      if (!params.insert(ref.getName()).second)
        continue;
    total += buffer.bytes;
  }
  return total;
}
