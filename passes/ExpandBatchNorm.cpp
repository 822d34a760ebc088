//===- ExpandBatchNorm.cpp - --fluid-expand-batch-norm --------------------===//
//
// Training batch norm and its gradient become per-channel reductions and
// elementwise ops, so that --fluid-fuse-elementwise can fuse them with what
// is around them (docs/FUSION.md).
//
// Statistics, in one pass over the input (shifted sums): with a shift K_c,
// the channel's first element x[0, c, 0, 0],
//   s1 = sum(x - K), s2 = sum((x - K)^2), mean = K + s1 / M,
//   var = max(s2 / M - (s1 / M)^2, 0)   (biased; M = N * H * W),
// in the program's float type. Because K is one of the channel's own
// values, |K - mean| is a few standard deviations at most and the
// subtraction loses almost nothing, even for badly scaled inputs (large
// mean, small variance), unlike the plain E[x^2] - E[x]^2. The output is
// fluid.batch_norm_apply with mean and inv_std = 1 / sqrt(var + eps); the
// running statistics follow PyTorch (unbiased variance, var * M / (M - 1)).
//
// Gradient: xhat = (x - mean) * inv_std, dshift = sum(dy),
// dscale = sum(dy * xhat), dx = (dy - dshift / M - xhat * dscale / M) *
// (scale * inv_std). xhat is written twice (once for the reduction, once
// for dx): it is cheap to recompute and would cost a full tensor to keep.
// The per-channel factors (dshift / M, dscale / M, scale * inv_std) are
// written on the broadcast values, so that they fuse into dx's kernel: one
// kernel for the sums, one for dx, no per-channel launch.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDEXPANDBATCHNORM
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// Builds the expansion's ops around one batch norm on `input`.
class Expander {
public:
  Expander(ImplicitLocOpBuilder &b, Value input)
      : b(b), type(cast<RankedTensorType>(input.getType())),
        element(type.getElementType()) {
    int64_t channels = type.getDimSize(1);
    count = type.getNumElements() / channels;
    vector = RankedTensorType::get({channels}, element);
    SmallVector<int64_t> keep(type.getRank(), 1);
    keep[1] = channels;
    broadcastable = RankedTensorType::get(keep, element);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != 1)
        axes.push_back(d);
  }

  Value scalar(double v) {
    auto t = RankedTensorType::get({}, element);
    return ConstantOp::create(
        b, DenseElementsAttr::get(t, b.getFloatAttr(element, v)));
  }
  /// A [C] vector as [1, C, 1, 1] (or [1, C]), to broadcast over the input.
  Value toBroadcastable(Value v) {
    return ReshapeOp::create(b, broadcastable, v);
  }
  Value toVector(Value v) { return ReshapeOp::create(b, vector, v); }
  /// A [C] vector broadcast to the input's shape.
  Value spread(Value v) {
    return BroadcastToOp::create(b, type, toBroadcastable(v));
  }
  /// The per-channel sum over every axis but 1.
  Value channelSum(Value v) {
    return ReduceSumOp::create(b, vector, v, b.getDenseI64ArrayAttr(axes),
                               /*keep_dims=*/false);
  }
  /// (x - mean) * inv_std, with [C] statistics.
  Value normalized(Value x, Value mean, Value invStd) {
    Value centered = SubOp::create(b, x, toBroadcastable(mean));
    return MulOp::create(b, centered, toBroadcastable(invStd));
  }
  /// x[0, c, 0, 0] for every channel c: the shift of the one-pass sums.
  Value firstOfChannel(Value x) {
    SmallVector<int64_t> shape(type.getShape());
    Value v = x;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (d == 1 || shape[d] == 1)
        continue;
      shape[d] = 1;
      v = SliceOp::create(b, RankedTensorType::get(shape, element), v,
                          b.getI64IntegerAttr(d), b.getI64IntegerAttr(0));
    }
    return v;
  }

  ImplicitLocOpBuilder &b;
  RankedTensorType type, vector, broadcastable;
  Type element;
  int64_t count;
  SmallVector<int64_t> axes;
};

void expand(BatchNormOp bn) {
  ImplicitLocOpBuilder b(bn.getLoc(), bn);
  Value x = bn.getInput();
  Expander e(b, x);
  Value shift = e.firstOfChannel(x);
  Value deviation = SubOp::create(b, x, shift);
  Value s1 = e.channelSum(deviation);
  Value s2 = e.channelSum(MulOp::create(b, deviation, deviation));
  Value invCount = e.scalar(1.0 / static_cast<double>(e.count));
  Value m1 = MulOp::create(b, s1, invCount);
  Value mean = AddOp::create(b, e.toVector(shift), m1);
  Value var = MaximumOp::create(b,
                                SubOp::create(b, MulOp::create(b, s2, invCount),
                                              MulOp::create(b, m1, m1)),
                                e.scalar(0));
  Value invStd = DivOp::create(
      b, e.scalar(1),
      SqrtOp::create(
          b,
          AddOp::create(b, var, e.scalar(bn.getEpsilon().convertToDouble()))));
  double momentum = bn.getMomentum().convertToDouble();
  double unbias = e.count > 1 ? static_cast<double>(e.count) /
                                    static_cast<double>(e.count - 1)
                              : 1.0;
  auto running = [&](Value old, Value batch, double factor) -> Value {
    return AddOp::create(b, MulOp::create(b, old, e.scalar(1 - momentum)),
                         MulOp::create(b, batch, e.scalar(momentum * factor)));
  };
  Value runningMean = running(bn.getRunningMean(), mean, 1.0);
  Value runningVar = running(bn.getRunningVar(), var, unbias);
  // After every per-channel op, so that they form one region: an op that
  // read the statistics in between would keep the running statistics'
  // ops out of it (a region runs where its last op ran).
  Value y = BatchNormApplyOp::create(b, x, bn.getScale(), bn.getShift(), mean,
                                     invStd);
  bn.getOutput().replaceAllUsesWith(y);
  bn.getSavedMean().replaceAllUsesWith(mean);
  bn.getSavedInvStd().replaceAllUsesWith(invStd);
  bn.getNewRunningMean().replaceAllUsesWith(runningMean);
  bn.getNewRunningVar().replaceAllUsesWith(runningVar);
  bn.erase();
}

void expand(BatchNormGradOp grad) {
  ImplicitLocOpBuilder b(grad.getLoc(), grad);
  Value dy = grad.getGradOutput(), x = grad.getInput();
  Expander e(b, x);
  Value mean = grad.getSavedMean(), invStd = grad.getSavedInvStd();
  Value dshift = e.channelSum(dy);
  Value dscale =
      e.channelSum(MulOp::create(b, dy, e.normalized(x, mean, invStd)));
  Value invCount = e.scalar(1.0 / static_cast<double>(e.count));
  // The per-channel factors are computed per element, the same products of
  // the same values (so bitwise what [C] ops would give): they join dx's
  // region instead of being kernels of their own.
  Value meanDy = MulOp::create(b, e.spread(dshift), invCount);
  Value meanDyXhat = MulOp::create(b, e.spread(dscale), invCount);
  Value a =
      MulOp::create(b, e.spread(grad.getScale()), e.toBroadcastable(invStd));
  Value centered = SubOp::create(b, dy, meanDy);
  Value projected = MulOp::create(b, e.normalized(x, mean, invStd), meanDyXhat);
  Value dx = MulOp::create(b, SubOp::create(b, centered, projected), a);
  grad.getGradInput().replaceAllUsesWith(dx);
  grad.getGradScale().replaceAllUsesWith(dscale);
  grad.getGradShift().replaceAllUsesWith(dshift);
  grad.erase();
}

struct FluidExpandBatchNormPass
    : public mlir::fluid::impl::FluidExpandBatchNormBase<
          FluidExpandBatchNormPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<BatchNormOp, BatchNormGradOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto bn = dyn_cast<BatchNormOp>(op))
        expand(bn);
      else
        expand(cast<BatchNormGradOp>(op));
      ++numExpanded;
    }
  }
};

} // namespace
