//===- WideningReductions.cpp - --fluid-widening-reductions ---------------===//
//
// A mean or sum of a 16-bit value widened to f32 reads the 16-bit value
// itself: the runtime's reductions widen as they load, so the f32 copy (an
// activation-sized tensor of a mixed-precision step: every SE block's
// squeeze and its gradient) is never written (docs/PRECISION.md).
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDWIDENINGREDUCTIONS
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

Type elementOf(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

struct FluidWideningReductionsPass
    : public mlir::fluid::impl::FluidWideningReductionsBase<
          FluidWideningReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> sums;
    getOperation().walk([&](Operation *op) {
      // The generated kernels' sums (batch norm's statistics) already read
      // a widening cast as they load.
      if (isa<MeanOp, ReduceSumOp, SumToOp>(op) && !isFusibleReduction(op))
        sums.push_back(op);
    });
    for (Operation *op : sums) {
      auto widen = op->getOperand(0).getDefiningOp<CastOp>();
      if (!widen || !elementOf(op->getResult(0)).isF32() ||
          !elementOf(widen.getResult()).isF32())
        continue;
      Type narrow = elementOf(widen.getInput());
      if (!narrow.isF16() && !narrow.isBF16())
        continue;
      op->setOperand(0, widen.getInput());
      ++numWidened;
      if (widen->use_empty()) {
        widen->erase();
        ++numCasts;
      }
    }
  }
};

} // namespace
