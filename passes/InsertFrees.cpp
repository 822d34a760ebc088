//===- InsertFrees.cpp - --fluid-insert-frees -----------------------------===//
//
// A memref.dealloc of every temporary right after its last use, from the
// buffer liveness analysis. A temporary nothing uses is freed right after
// its allocation.
//
//===----------------------------------------------------------------------===//

#include "fluid/Analysis/BufferLiveness.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDINSERTFREES
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// Whether `root` is freed already.
bool isFreed(Value root) {
  return llvm::any_of(root.getUsers(), [](Operation *user) {
    return isa<memref::DeallocOp>(user);
  });
}

/// Returns how many frees it added.
int64_t insertFrees(func::FuncOp func) {
  int64_t freed = 0;
  BufferLiveness liveness(func);
  for (const BufferLiveness::Buffer &buffer : liveness.getBuffers()) {
    if (!buffer.isTemporary() || buffer.arena ||
        !buffer.root.getDefiningOp<memref::AllocOp>() || isFreed(buffer.root))
      continue;
    Operation *after = buffer.last >= 0 ? liveness.getOp(buffer.last)
                                        : buffer.root.getDefiningOp();
    // Frees after one op keep the order of the buffers' definitions.
    Operation *insertAfter = after;
    while (auto next =
               dyn_cast_or_null<memref::DeallocOp>(insertAfter->getNextNode()))
      insertAfter = next;
    OpBuilder builder(insertAfter->getContext());
    builder.setInsertionPointAfter(insertAfter);
    memref::DeallocOp::create(builder, after->getLoc(), buffer.root);
    ++freed;
  }
  return freed;
}

struct FluidInsertFreesPass
    : public mlir::fluid::impl::FluidInsertFreesBase<FluidInsertFreesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(forEachBufferFunction(getOperation(), getArgument(),
                                     [&](func::FuncOp func) {
                                       numFreed += insertFrees(func);
                                       return success();
                                     })))
      signalPassFailure();
  }
};

} // namespace
