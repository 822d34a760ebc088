//===- Layout.cpp - --fluid-layout ----------------------------------------===//
//
// Layout assignment for channels-last (NHWC) convolutions, in the way of
// TensorFlow's layout optimizer and XLA's layout assignment: the
// convolutions are the layout-sensitive ops that decide the layout; the
// elementwise ops, broadcasts, sums and slices around them follow it, and a
// fluid.transpose is left only where a channels-last value meets an op
// that is not converted. One walk over each function in program order
// (forward and backward pass alike) keeps, for every NCHW value that has
// one, its NHWC twin; an op is rebuilt on the twins when it is a
// convolution, or when it is layout-agnostic or a max pool (or a max
// pool's gradient) and one of its 4-D operands has a twin; the program's
// own transposes to and from channels-last map values to twins. Last, each
// replaced op's remaining users read its twin through a transpose back,
// and the canonicalizer folds the transposes (inverse pairs cancel,
// per-channel ones become reshapes).
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <type_traits>

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDLAYOUT
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// NCHW -> NHWC: result dimension d is input dimension kToNhwc[d].
constexpr int64_t kToNhwc[] = {0, 2, 3, 1};
/// NHWC -> NCHW; also where NCHW dimension d sits in NHWC.
constexpr int64_t kToNchw[] = {0, 3, 1, 2};

RankedTensorType nhwcType(RankedTensorType type) {
  ArrayRef<int64_t> s = type.getShape();
  return RankedTensorType::get({s[0], s[2], s[3], s[1]}, type.getElementType());
}

bool isRank4(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getRank() == 4;
}

/// A [C, 1, 1] or [N, C, 1, 1] type, C > 1: one value per NCHW channel
/// (of each example).
bool isPerChannel(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || ranked.getRank() < 3 || ranked.getRank() > 4)
    return false;
  ArrayRef<int64_t> shape = ranked.getShape().take_back(3);
  return shape[0] > 1 && shape[1] == 1 && shape[2] == 1;
}

/// Elementwise ops (NumPy broadcasting, no attribute that names an axis)
/// of 4-D results.
bool isAgnosticElementwise(Operation *op) {
  return isLayoutAgnosticElementwise(op) && isRank4(op->getResult(0));
}

class LayoutAssigner {
public:
  explicit LayoutAssigner(func::FuncOp func) : func(func) {}

  /// Converts the function; returns the number of ops converted.
  int64_t run() {
    SmallVector<Operation *> ops;
    for (Operation &op : func.getBody().getOps())
      ops.push_back(&op);
    for (Operation *op : ops)
      if (convert(op))
        replaced.push_back(op);
    // Users not converted read the twin through a transpose back. In
    // reverse order, so that converted users are gone before their
    // producers are looked at.
    for (Operation *op : llvm::reverse(replaced)) {
      for (Value result : op->getResults()) {
        if (result.use_empty())
          continue;
        Value twin = twins.lookup(result);
        OpBuilder b(func.getContext());
        b.setInsertionPointAfterValue(twin);
        result.replaceAllUsesWith(transpose(b, twin, kToNchw));
      }
      op->erase();
    }
    return static_cast<int64_t>(replaced.size());
  }

  SmallVector<TransposeOp> &transposes() { return created; }

private:
  Value transpose(OpBuilder &b, Value value, ArrayRef<int64_t> permutation) {
    auto op = TransposeOp::create(b, value.getLoc(), value, permutation);
    created.push_back(op);
    return op;
  }

  /// The NHWC twin of a 4-D NCHW value, made where it is missing: a
  /// broadcast of a smaller value is broadcast again from the smaller
  /// value's twin (no full-size transpose); anything else is transposed.
  Value twinOf(Value value) {
    if (Value twin = twins.lookup(value))
      return twin;
    OpBuilder b(func.getContext());
    Value twin;
    if (auto broadcast = value.getDefiningOp<BroadcastToOp>()) {
      b.setInsertionPointAfter(broadcast);
      twin = BroadcastToOp::create(b, broadcast.getLoc(),
                                   nhwcType(broadcast.getType()),
                                   broadcastOperand(b, broadcast.getInput()));
    } else {
      b.setInsertionPointAfterValue(value);
      twin = transpose(b, value, kToNhwc);
    }
    twins[value] = twin;
    return twin;
  }

  /// An operand broadcast against 4-D NCHW values, as it must be against
  /// their twins: rank 4 by its twin; lower ranks (aligned from the right)
  /// padded to rank 4 first, unless they hold a single element.
  Value broadcastOperand(OpBuilder &b, Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() == 4)
      return twinOf(value);
    if (type.getNumElements() == 1 && type.getRank() == 0)
      return value;
    SmallVector<int64_t> padded(4 - type.getRank(), 1);
    llvm::append_range(padded, type.getShape());
    if (llvm::all_of(padded, [](int64_t d) { return d == 1; }))
      return value;
    b.setInsertionPointAfterValue(value);
    Value reshaped = ReshapeOp::create(
        b, value.getLoc(), RankedTensorType::get(padded, type.getElementType()),
        value);
    return twinOf(reshaped);
  }

  bool hasTwinOperand(Operation *op) {
    return llvm::any_of(op->getOperands(),
                        [&](Value v) { return twins.contains(v); });
  }

  /// `op` rebuilt before itself on `operandOf` of each operand, its 4-D
  /// results in NHWC and recorded as the twins of `op`'s.
  Operation *cloneOnTwins(OpBuilder &b, Operation *op,
                          function_ref<Value(Value)> operandOf) {
    IRMapping mapping;
    for (Value operand : op->getOperands())
      mapping.map(operand, operandOf(operand));
    b.setInsertionPoint(op);
    Operation *twin = b.clone(*op, mapping);
    for (auto [result, twinResult] :
         llvm::zip_equal(op->getResults(), twin->getResults())) {
      twinResult.setType(nhwcType(cast<RankedTensorType>(result.getType())));
      twins[result] = twinResult;
    }
    return twin;
  }

  /// A max pool or its gradient rebuilt channels-last on the twins of its
  /// operands (all 4-D), when the layout around it is NHWC already: the
  /// input (forward) or one of its operands (gradient) has a twin. A
  /// gradient from indices needs the indices' twin, that is its forward
  /// pool converted (u8 indices are not transposed).
  template <typename PoolOp> bool convertMaxPool(OpBuilder &b, PoolOp pool) {
    if (pool.getChannelsLast() || !hasTwinOperand(pool))
      return false;
    if constexpr (std::is_same_v<PoolOp, MaxPool2DGradIndicesOp>)
      if (!twins.contains(pool.getIndices()))
        return false;
    auto twin =
        cast<PoolOp>(cloneOnTwins(b, pool, [&](Value v) { return twinOf(v); }));
    twin.setChannelsLast(true);
    return true;
  }

  /// A 4-D NCHW axis, normalized, at its NHWC position.
  static int64_t nhwcAxis(int64_t axis) {
    return kToNchw[axis < 0 ? axis + 4 : axis];
  }

  bool convert(Operation *op) {
    OpBuilder b(op);
    return llvm::TypeSwitch<Operation *, bool>(op)
        .Case<Conv2DOp, Conv2DGradInputOp, Conv2DGradFilterOp>([&](auto conv) {
          if (conv.getChannelsLast())
            return false;
          // Every 4-D operand (activations, filters) by its twin; a bias
          // stays as it is.
          auto twin = cast<decltype(conv)>(cloneOnTwins(
              b, conv, [&](Value v) { return isRank4(v) ? twinOf(v) : v; }));
          twin.setChannelsLast(true);
          return true;
        })
        .Case<MaxPool2DOp, MaxPool2DWithIndicesOp, MaxPool2DGradOp,
              MaxPool2DGradIndicesOp>(
            [&](auto pool) { return convertMaxPool(b, pool); })
        .Case([&](BroadcastToOp broadcast) {
          // A per-channel value ([C, 1, 1] or [N, C, 1, 1]) broadcast:
          // always, its twin being a broadcast of the (small) input's, so
          // that what it feeds (batch norm's per-channel factors in the
          // backward pass) can follow. Other broadcasts, of a value per
          // pixel say (a layer norm's over a program's own channels-last
          // tensor), follow their users.
          if (!isRank4(broadcast.getOutput()) ||
              !isPerChannel(broadcast.getInput().getType()))
            return false;
          (void)twinOf(broadcast.getOutput());
          return true;
        })
        .Case([&](SliceOp slice) {
          if (!isRank4(slice.getInput()) || !hasTwinOperand(slice))
            return false;
          Value x = twinOf(slice.getInput());
          b.setInsertionPoint(slice);
          twins[slice.getOutput()] =
              SliceOp::create(b, slice.getLoc(), nhwcType(slice.getType()), x,
                              nhwcAxis(slice.getAxis()), slice.getOffset());
          return true;
        })
        .Case([&](BatchNormApplyOp apply) {
          if (!isRank4(apply.getInput()) || !hasTwinOperand(apply))
            return false;
          // Per channel along the last axis of the NHWC twin: the same
          // arithmetic on the same elements.
          b.setInsertionPoint(apply);
          twins[apply.getOutput()] = BatchNormApplyOp::create(
              b, apply.getLoc(), nhwcType(apply.getType()),
              twinOf(apply.getInput()), apply.getScale(), apply.getShift(),
              apply.getMean(), apply.getInvStd(), /*channels_last=*/true);
          return true;
        })
        .Case([&](GlobalAvgPoolOp pool) {
          if (!isRank4(pool.getInput()) || !hasTwinOperand(pool))
            return false;
          // The mean over H and W, kept as [N, 1, 1, C].
          Value x = twinOf(pool.getInput());
          b.setInsertionPoint(pool);
          twins[pool.getOutput()] = MeanOp::create(
              b, pool.getLoc(), x, b.getDenseI64ArrayAttr({1, 2}),
              /*keep_dims=*/true);
          return true;
        })
        .Case([&](TransposeOp transpose) {
          // A program's own layout changes (ConvNeXt permutes to
          // channels-last around its layer norms, and back): NCHW -> NHWC
          // of a value with a twin is the twin; the NHWC twin of
          // NHWC -> NCHW of a value is that value.
          if (!isRank4(transpose.getInput()))
            return false;
          ArrayRef<int64_t> permutation = transpose.getPermutation();
          if (permutation == ArrayRef<int64_t>(kToNhwc)) {
            Value twin = twins.lookup(transpose.getInput());
            if (!twin)
              return false;
            transpose.getOutput().replaceAllUsesWith(twin);
            return true;
          }
          if (permutation != ArrayRef<int64_t>(kToNchw))
            return false;
          twins[transpose.getOutput()] = transpose.getInput();
          return true;
        })
        .Case<ReduceSumOp, MeanOp>(
            [&](auto reduce) { return convertReduction(reduce); })
        .Case([&](SumToOp sum) {
          if (!isRank4(sum.getInput()) || !hasTwinOperand(sum))
            return false;
          // The result padded to rank 4, summed in NHWC, then back.
          RankedTensorType type = sum.getType();
          SmallVector<int64_t> padded(4 - type.getRank(), 1);
          llvm::append_range(padded, type.getShape());
          auto paddedType =
              RankedTensorType::get(padded, type.getElementType());
          Value x = twinOf(sum.getInput());
          b.setInsertionPoint(sum);
          Value twin =
              SumToOp::create(b, sum.getLoc(), nhwcType(paddedType), x);
          if (type.getRank() == 4) {
            twins[sum.getOutput()] = twin;
            return true;
          }
          Value back = transpose(b, twin, kToNchw);
          sum.getOutput().replaceAllUsesWith(
              ReshapeOp::create(b, sum.getLoc(), type, back).getResult());
          return true;
        })
        .Default([&](Operation *other) {
          if (!isAgnosticElementwise(other) || !hasTwinOperand(other))
            return false;
          cloneOnTwins(b, other,
                       [&](Value v) { return broadcastOperand(b, v); });
          return true;
        });
  }

  /// A reduction over a converted 4-D value, with its axes renumbered;
  /// without keep_dims only when the kept dimensions stay in order (the
  /// per-channel sums over N, H and W give the same [C]).
  template <typename ReduceOp> bool convertReduction(ReduceOp reduce) {
    Value input = reduce.getInput();
    if (!isRank4(input) || !twins.contains(input))
      return false;
    std::optional<ArrayRef<int64_t>> given = reduce.getAxes();
    SmallVector<int64_t> axes;
    if (given)
      for (int64_t axis : *given)
        axes.push_back(nhwcAxis(axis));
    else
      axes = {0, 1, 2, 3};
    llvm::sort(axes);
    bool keepDims = reduce.getKeepDims();
    if (!keepDims) {
      SmallVector<int64_t> keptNchw, keptNhwc;
      for (int64_t d = 0; d < 4; ++d) {
        if (!llvm::is_contained(axes, kToNchw[d]))
          keptNchw.push_back(d);
        if (!llvm::is_contained(axes, d))
          keptNhwc.push_back(kToNhwc[d]);
      }
      if (keptNchw != keptNhwc)
        return false;
    }
    OpBuilder b(reduce);
    Value x = twinOf(input);
    RankedTensorType type = reduce.getType();
    auto twin = ReduceOp::create(
        b, reduce.getLoc(), keepDims ? nhwcType(type) : type, x,
        b.getDenseI64ArrayAttr(axes), reduce.getKeepDimsAttr());
    if (keepDims)
      twins[reduce.getResult()] = twin;
    else
      reduce.getResult().replaceAllUsesWith(twin.getResult());
    return true;
  }

  func::FuncOp func;
  DenseMap<Value, Value> twins;
  SmallVector<Operation *> replaced;
  SmallVector<TransposeOp> created;
};

struct FluidLayoutPass
    : public mlir::fluid::impl::FluidLayoutBase<FluidLayoutPass> {
  using FluidLayoutBase::FluidLayoutBase;

  void runOnOperation() override {
    if (layout != "nchw" && layout != "nhwc") {
      getOperation().emitError()
          << "--fluid-layout: layout must be nchw or nhwc, got '" << layout
          << "'";
      return signalPassFailure();
    }
    if (layout == "nchw")
      return;
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    TransposeOp::getCanonicalizationPatterns(patterns, context);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      LayoutAssigner assigner(func);
      numConverted += assigner.run();
      // The transposes made here, and the transposes that read them: a
      // program that permutes to channels-last itself (ConvNeXt's
      // x.permute(0, 2, 3, 1) around its layer norms) transposes a value
      // that is now channels-last back, and the pair cancels.
      SetVector<Operation *> ops;
      for (TransposeOp op : assigner.transposes()) {
        ops.insert(op);
        for (Operation *user : op->getUsers())
          if (isa<TransposeOp>(user))
            ops.insert(user);
      }
      GreedyRewriteConfig config;
      config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
      if (failed(applyOpPatternsGreedily(ops.takeVector(), frozen, config))) {
        func.emitError() << "--fluid-layout: the layout changes did not "
                            "settle";
        return signalPassFailure();
      }
    }
    getOperation().walk([&](TransposeOp) { ++numTransposes; });
  }
};

} // namespace
