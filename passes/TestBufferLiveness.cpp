//===- TestBufferLiveness.cpp - --fluid-test-buffer-liveness --------------===//
//
// Prints what BufferLiveness finds, one line per root buffer, so that lit
// tests can check the analysis on hand-written buffer programs.
//
//===----------------------------------------------------------------------===//

#include "fluid/Analysis/BufferLiveness.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDTESTBUFFERLIVENESS
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// Where `value` is defined: "arg N" or "at POSITION".
void printDefinition(raw_ostream &os, const BufferLiveness &liveness,
                     Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    os << "arg " << argument.getArgNumber();
  else
    os << "at " << liveness.getPosition(value.getDefiningOp());
}

void printProducer(raw_ostream &os, Operation *producer) {
  if (!producer) {
    os << "none";
    return;
  }
  os << producer->getName();
  if (auto launch = dyn_cast<fluid_rt::LaunchOp>(producer))
    os << " \"" << launch.getKernel() << "\"";
}

void printFunction(raw_ostream &os, func::FuncOp func) {
  BufferLiveness liveness(func);
  ArrayRef<BufferLiveness::Buffer> buffers = liveness.getBuffers();
  os << "@" << func.getSymName() << ": " << liveness.getNumOps() << " ops, "
     << buffers.size() << " buffers\n";
  for (auto [index, buffer] : llvm::enumerate(buffers)) {
    os << "  #" << index << " " << stringifyBufferKind(buffer.kind) << " ";
    printDefinition(os, liveness, buffer.root);
    os << ": " << buffer.bytes << " bytes";
    if (buffer.arena)
      os << " in #" << (liveness.lookup(buffer.arena) - buffers.data())
         << " at offset " << buffer.arenaOffset;
    if (buffer.first < 0)
      os << ", unused";
    else
      os << ", live [" << buffer.first << ", " << buffer.last << "]";
    os << ", producer ";
    printProducer(os, buffer.producer);
    os << ", " << buffer.aliases.size()
       << (buffer.aliases.size() == 1 ? " alias" : " aliases") << "\n";
  }
  using Kind = BufferLiveness::Kind;
  os << "  persistent: " << liveness.persistentBytes(Kind::Parameter)
     << " parameter, " << liveness.persistentBytes(Kind::Argument)
     << " argument, " << liveness.persistentBytes(Kind::Result) << " result, "
     << liveness.persistentBytes(Kind::Constant) << " constant\n";
  for (int64_t alignment : {1, 256}) {
    auto [bytes, position] = liveness.peak(alignment);
    os << "  peak " << bytes << " bytes at " << position << " (alignment "
       << alignment << ")\n";
  }
}

struct FluidTestBufferLivenessPass
    : public mlir::fluid::impl::FluidTestBufferLivenessBase<
          FluidTestBufferLivenessPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(forEachBufferFunction(getOperation(), getArgument(),
                                     [&](func::FuncOp func) {
                                       printFunction(llvm::outs(), func);
                                       return success();
                                     })))
      signalPassFailure();
    llvm::outs().flush();
    markAllAnalysesPreserved();
  }
};

} // namespace
