//===- UpdateInPlace.cpp - --fluid-update-in-place ------------------------===//
//
// Folds `launch ... outs(%fresh); memref.copy %fresh, @param` into a launch
// writing @param itself, where the kernel allows its output to alias its
// inputs (documented per entry point in the runtime's headers; a grouped
// update's output only its own entry's input) and the parameter is not
// touched in between.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Target/FusedKernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/ScopeExit.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDUPDATEINPLACE
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid_rt;

namespace {

/// The parameter a buffer belongs to (through views), if any.
FlatSymbolRefAttr parameterOf(Value buffer) {
  while (auto view = buffer.getDefiningOp<ViewOp>())
    buffer = view.getSource();
  if (auto ref = buffer.getDefiningOp<ParamRefOp>())
    return ref.getNameAttr();
  return nullptr;
}

/// Tries to make the launch that computes `copy`'s source write the
/// parameter `copy` writes.
LogicalResult foldCopy(memref::CopyOp copy) {
  FlatSymbolRefAttr param = parameterOf(copy.getTarget());
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  if (!param || !alloc ||
      !llvm::hasNItems(alloc->getUses().begin(), alloc->getUses().end(), 2))
    return failure();
  LaunchOp launch;
  OpOperand *written = nullptr;
  for (OpOperand &use : alloc->getUses())
    if (auto user = dyn_cast<LaunchOp>(use.getOwner()))
      if (llvm::is_contained(user.getOutputs(), use.get())) {
        launch = user;
        written = &use;
      }
  if (!launch || launch->getBlock() != copy->getBlock() ||
      !launch->isBeforeInBlock(copy))
    return failure();
  unsigned outputIndex =
      written->getOperandNumber() - launch.getInputs().size();
  // A grouped update's output may be only its own entry's parameter or
  // state buffer.
  if (std::optional<unsigned> input = groupedInPlaceInput(
          launch.getKernel(), launch.getOutputs().size(), outputIndex)) {
    if (*input >= launch.getInputs().size() ||
        parameterOf(launch.getInputs()[*input]) != param)
      return failure();
  } else if (launch.getKernel() == "fusion") {
    // A fused region may write over the parameter only where it reads the
    // parameter element by element.
    Block scratch;
    auto fusion = cast<fluid::FusionOp>(launch.buildTensorOp(scratch));
    llvm::scope_exit destroy([&] { fusion->destroy(); });
    for (auto [i, input] : llvm::enumerate(launch.getInputs()))
      if (parameterOf(input) == param &&
          !fluid::fusedOutputMayOverwrite(fusion, outputIndex, i))
        return failure();
  } else if (!mayWriteOverInput(launch.getKernel(), outputIndex)) {
    return failure();
  }
  // Nothing between the launch and the copy may see the parameter change.
  for (Operation *op = launch->getNextNode(); op != copy;
       op = op->getNextNode())
    for (Value operand : op->getOperands())
      if (parameterOf(operand) == param)
        return failure();

  OpBuilder builder(launch);
  Value target = ParamRefOp::create(builder, copy.getLoc(),
                                    copy.getTarget().getType(), param);
  written->set(target);
  Operation *oldTarget = copy.getTarget().getDefiningOp();
  copy.erase();
  alloc.erase();
  if (oldTarget && oldTarget->use_empty())
    oldTarget->erase();
  return success();
}

struct FluidUpdateInPlacePass
    : public mlir::fluid::impl::FluidUpdateInPlaceBase<FluidUpdateInPlacePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies)
      (void)foldCopy(copy);
  }
};

} // namespace
