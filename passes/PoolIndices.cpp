//===- PoolIndices.cpp - --fluid-pool-indices -----------------------------===//
//
// fluid.max_pool2d_grad finds each window's maximum again in the forward
// input, so it reads the whole input a second time and keeps it alive
// until the backward pass. Where a training step takes the gradient of a
// fluid.max_pool2d, the pool becomes fluid.max_pool2d_with_indices, which
// also saves each window's pick as one byte, and its gradients become
// fluid.max_pool2d_grad_indices of those bytes: the same values, bit for
// bit, from a fraction of the traffic.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDPOOLINDICES
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// Whether `grad` is the gradient of `pool`: the same input and window
/// attributes, and grad_output of pool's output type.
bool isGradientOf(MaxPool2DGradOp grad, MaxPool2DOp pool) {
  return grad.getInput() == pool.getInput() &&
         grad.getKernelSize() == pool.getKernelSize() &&
         grad.getStrides() == pool.getStrides() &&
         grad.getPadding() == pool.getPadding() &&
         grad.getDilation() == pool.getDilation() &&
         grad.getCeilMode() == pool.getCeilMode() &&
         grad.getGradOutput().getType() == pool.getType();
}

/// The gradients to rewrite together with `pool`: every fluid.max_pool2d_grad
/// that reads pool's input, provided each is pool's gradient and comes
/// after it in its block, and the kernel's picks fit in a byte; otherwise
/// none, and the pool stays as it is.
SmallVector<MaxPool2DGradOp> gradientsToRewrite(MaxPool2DOp pool) {
  ArrayRef<int64_t> kernel = pool.getKernelSize();
  // The verifier has checked two sizes, each >= 1.
  if (kernel[0] > kMaxPoolIndexCells / kernel[1])
    return {};
  llvm::SetVector<Operation *> users;
  for (Operation *user : pool.getInput().getUsers())
    if (isa<MaxPool2DGradOp>(user))
      users.insert(user);
  SmallVector<MaxPool2DGradOp> grads;
  for (Operation *user : users) {
    auto grad = cast<MaxPool2DGradOp>(user);
    if (!isGradientOf(grad, pool) || grad->getBlock() != pool->getBlock() ||
        !pool->isBeforeInBlock(grad))
      return {};
    grads.push_back(grad);
  }
  return grads;
}

struct FluidPoolIndicesPass
    : public mlir::fluid::impl::FluidPoolIndicesBase<FluidPoolIndicesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<MaxPool2DOp> pools;
    getOperation().walk([&](MaxPool2DOp pool) { pools.push_back(pool); });
    for (MaxPool2DOp pool : pools) {
      SmallVector<MaxPool2DGradOp> grads = gradientsToRewrite(pool);
      if (grads.empty())
        continue;
      rewrite(pool, grads);
      ++numPools;
      numGradients += grads.size();
    }
  }

  void rewrite(MaxPool2DOp pool, ArrayRef<MaxPool2DGradOp> grads) {
    OpBuilder builder(pool);
    RankedTensorType output = pool.getType();
    auto indicesType = RankedTensorType::get(
        output.getShape(), builder.getIntegerType(8, /*isSigned=*/false));
    auto withIndices = MaxPool2DWithIndicesOp::create(
        builder, pool.getLoc(), output, indicesType, pool.getInput(),
        pool.getKernelSizeAttr(), pool.getStridesAttr(), pool.getPaddingAttr(),
        pool.getCeilModeAttr(), pool.getDilationAttr());
    withIndices->setDiscardableAttrs(pool->getDiscardableAttrDictionary());
    pool.getOutput().replaceAllUsesWith(withIndices.getOutput());
    pool.erase();
    for (MaxPool2DGradOp grad : grads) {
      builder.setInsertionPoint(grad);
      auto fromIndices = MaxPool2DGradIndicesOp::create(
          builder, grad.getLoc(), grad.getType(), grad.getGradOutput(),
          withIndices.getIndices(), grad.getKernelSizeAttr(),
          grad.getStridesAttr(), grad.getPaddingAttr(), grad.getDilationAttr(),
          grad.getCeilModeAttr());
      fromIndices->setDiscardableAttrs(grad->getDiscardableAttrDictionary());
      grad.getGradInput().replaceAllUsesWith(fromIndices.getGradInput());
      grad.erase();
    }
  }
};

} // namespace
