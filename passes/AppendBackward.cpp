//===- AppendBackward.cpp - --fluid-append-backward -----------------------===//
//
// Reverse-mode automatic differentiation of a loss function. The forward
// ops stay as they are; the gradient rules are appended after them, from
// the last forward op to the first, so every activation the backward pass
// reads is an SSA value of the forward pass.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDAPPENDBACKWARD
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// Builds the backward pass of one function.
class BackwardBuilder {
public:
  /// With `lossScale` > 0 the backward pass starts from the value of a
  /// parameter @loss_scale (declared with that initial value) instead of 1.
  BackwardBuilder(func::FuncOp func, ModuleOp module, double lossScale)
      : func(func), module(module), builder(func.getContext()),
        lossScale(lossScale) {}

  LogicalResult build();

private:
  /// Which values depend on a trainable parameter (and so need gradients).
  void findDifferentiableValues();
  /// Applies `op`'s gradient rule, given the gradients of its results.
  LogicalResult differentiate(Operation *op);
  /// Adds `grad` to the gradient of `value` (if `value` needs one). The
  /// gradient of an f16 or bf16 value is summed in f32 (its accumulation
  /// type): 16-bit contributions are widened (exactly), and the f32
  /// gradient of a widening cast's result passes as it is.
  void accumulate(Value value, Value grad);
  /// The gradient of `value` in `value`'s type (a 16-bit value's f32 sum
  /// rounded once, the same cast for every rule that reads it), or null.
  Value gradOf(Value value);

  /// A rank-0 constant of `type`'s element type.
  Value scalar(Location loc, RankedTensorType type, double value);
  /// `grad` summed down to `type` (the gradient of a broadcast operand).
  Value sumTo(Location loc, Value grad, RankedTensorType type);

  /// Makes the gradient rules read each forward value that the program
  /// stores in 16 bits (`w = cast(cast(v) to f16|bf16) to v's type`, as
  /// --fluid-mixed-precision writes it) as it is stored, `w`, instead of
  /// `v`, so that only the 16-bit copy is kept for the backward pass.
  void readStoredCopies(ArrayRef<Operation *> forward);
  /// The seed of the backward pass: 1, or the loss scale.
  FailureOr<Value> seed(Value loss);

  func::FuncOp func;
  ModuleOp module;
  OpBuilder builder;
  double lossScale;
  DenseSet<Value> differentiable;
  /// Gradients in their accumulation type, and the 16-bit roundings made.
  DenseMap<Value, Value> grads, rounded;
};

/// f32 for f16 and bf16 tensors (their gradients' accumulation type);
/// every other type as it is.
static Type accumulationType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor ||
      !(tensor.getElementType().isF16() || tensor.getElementType().isBF16()))
    return type;
  return tensor.clone(Float32Type::get(type.getContext()));
}

void BackwardBuilder::findDifferentiableValues() {
  func.walk([&](Operation *op) {
    if (auto get = dyn_cast<GetParamOp>(op)) {
      auto param =
          SymbolTable::lookupNearestSymbolFrom<ParamOp>(op, get.getNameAttr());
      if (param && param.getTrainable() && isFloatTensor(get.getType()))
        differentiable.insert(get.getResult());
      return;
    }
    // floor and greater_equal are piecewise constant: their gradient is
    // zero (PyTorch's too), so no gradient flows through their results.
    if (isa<FloorOp, GreaterEqualOp>(op))
      return;
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return differentiable.contains(v); }))
      for (Value result : op->getResults())
        if (isFloatTensor(result.getType()))
          differentiable.insert(result);
  });
}

void BackwardBuilder::accumulate(Value value, Value grad) {
  if (!differentiable.contains(value))
    return;
  Type sumType = accumulationType(value.getType());
  if (grad.getType() != sumType)
    grad = CastOp::create(builder, grad.getLoc(), sumType, grad);
  auto [it, inserted] = grads.try_emplace(value, grad);
  if (!inserted)
    it->second = AddOp::create(builder, grad.getLoc(), it->second, grad);
}

Value BackwardBuilder::gradOf(Value value) {
  Value grad = grads.lookup(value);
  if (!grad || grad.getType() == value.getType())
    return grad;
  Value &cast = rounded[value];
  if (!cast)
    cast = CastOp::create(builder, grad.getLoc(), value.getType(), grad);
  return cast;
}

Value BackwardBuilder::scalar(Location loc, RankedTensorType type,
                              double value) {
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  return ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(scalarType,
                             FloatAttr::get(type.getElementType(), value)));
}

Value BackwardBuilder::sumTo(Location loc, Value grad, RankedTensorType type) {
  if (grad.getType() == type)
    return grad;
  return SumToOp::create(builder, loc, type, grad);
}

/// Dimensions kept (as 1) by a reduction, for reshaping its gradient back.
static SmallVector<int64_t> keptShape(RankedTensorType input,
                                      std::optional<ArrayRef<int64_t>> axes) {
  SmallVector<int64_t> shape(input.getShape());
  int64_t rank = input.getRank();
  if (!axes) {
    std::fill(shape.begin(), shape.end(), 1);
    return shape;
  }
  for (int64_t axis : *axes)
    shape[axis < 0 ? axis + rank : axis] = 1;
  return shape;
}

LogicalResult BackwardBuilder::differentiate(Operation *op) {
  Location loc = op->getLoc();
  auto needs = [&](Value v) { return differentiable.contains(v); };
  auto tensorType = [](Value v) { return cast<RankedTensorType>(v.getType()); };

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](Conv2DOp conv) {
        Value dy = gradOf(conv.getOutput());
        if (needs(conv.getInput()))
          accumulate(conv.getInput(),
                     Conv2DGradInputOp::create(
                         builder, loc, conv.getInput().getType(), dy,
                         conv.getFilter(), conv.getStridesAttr(),
                         conv.getPaddingAttr(), conv.getDilationAttr(),
                         conv.getGroupsAttr(), conv.getChannelsLastAttr()));
        if (needs(conv.getFilter()))
          accumulate(conv.getFilter(),
                     Conv2DGradFilterOp::create(
                         builder, loc, conv.getFilter().getType(), dy,
                         conv.getInput(), conv.getStridesAttr(),
                         conv.getPaddingAttr(), conv.getDilationAttr(),
                         conv.getGroupsAttr(), conv.getChannelsLastAttr()));
        if (conv.getBias() && needs(conv.getBias()))
          accumulate(conv.getBias(),
                     ReduceSumOp::create(builder, loc, dy,
                                         builder.getDenseI64ArrayAttr(
                                             conv.getChannelsLast()
                                                 ? ArrayRef<int64_t>{0, 1, 2}
                                                 : ArrayRef<int64_t>{0, 2, 3}),
                                         /*keep_dims=*/false));
        return success();
      })
      .Case([&](BatchNormOp bn) {
        // Only the normalized output is differentiated: the saved and the
        // running statistics feed the backward pass and the next step.
        Value dy = gradOf(bn.getOutput());
        if (!dy)
          return success();
        auto grad = BatchNormGradOp::create(builder, loc, dy, bn.getInput(),
                                            bn.getScale(), bn.getSavedMean(),
                                            bn.getSavedInvStd());
        accumulate(bn.getInput(), grad.getGradInput());
        accumulate(bn.getScale(), grad.getGradScale());
        accumulate(bn.getShift(), grad.getGradShift());
        return success();
      })
      .Case([&](ReluOp relu) {
        accumulate(relu.getInput(),
                   ReluGradOp::create(builder, loc, gradOf(relu.getOutput()),
                                      relu.getOutput()));
        return success();
      })
      .Case([&](SigmoidOp sigmoid) {
        accumulate(sigmoid.getInput(),
                   SigmoidGradOp::create(builder, loc,
                                         gradOf(sigmoid.getOutput()),
                                         sigmoid.getOutput()));
        return success();
      })
      .Case([&](TanhOp tanh) {
        accumulate(tanh.getInput(),
                   TanhGradOp::create(builder, loc, gradOf(tanh.getOutput()),
                                      tanh.getOutput()));
        return success();
      })
      .Case([&](AddOp add) {
        Value dy = gradOf(add.getOutput());
        if (needs(add.getLhs()))
          accumulate(add.getLhs(), sumTo(loc, dy, add.getLhs().getType()));
        if (needs(add.getRhs()))
          accumulate(add.getRhs(), sumTo(loc, dy, add.getRhs().getType()));
        return success();
      })
      .Case([&](SubOp sub) {
        Value dy = gradOf(sub.getOutput());
        if (needs(sub.getLhs()))
          accumulate(sub.getLhs(), sumTo(loc, dy, sub.getLhs().getType()));
        if (needs(sub.getRhs()))
          accumulate(sub.getRhs(), sumTo(loc, NegOp::create(builder, loc, dy),
                                         sub.getRhs().getType()));
        return success();
      })
      .Case([&](MulOp mul) {
        Value dy = gradOf(mul.getOutput());
        if (needs(mul.getLhs()))
          accumulate(mul.getLhs(),
                     sumTo(loc, MulOp::create(builder, loc, dy, mul.getRhs()),
                           mul.getLhs().getType()));
        if (needs(mul.getRhs()))
          accumulate(mul.getRhs(),
                     sumTo(loc, MulOp::create(builder, loc, dy, mul.getLhs()),
                           mul.getRhs().getType()));
        return success();
      })
      .Case([&](DivOp div) {
        // d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b.
        Value dy = gradOf(div.getOutput());
        if (needs(div.getLhs()))
          accumulate(div.getLhs(),
                     sumTo(loc, DivOp::create(builder, loc, dy, div.getRhs()),
                           div.getLhs().getType()));
        if (needs(div.getRhs())) {
          Value quotient = DivOp::create(
              builder, loc, MulOp::create(builder, loc, dy, div.getOutput()),
              div.getRhs());
          accumulate(div.getRhs(),
                     sumTo(loc, NegOp::create(builder, loc, quotient),
                           div.getRhs().getType()));
        }
        return success();
      })
      .Case<MaximumOp, MinimumOp>([&](Operation *extremum) {
        // As PyTorch: all of dy goes to the operand that is the result,
        // half to each where they tie, and all to both where either is
        // NaN (the result is NaN; neither compares greater or equal).
        Value lhs = extremum->getOperand(0), rhs = extremum->getOperand(1);
        Value dy = gradOf(extremum->getResult(0));
        bool isMax = isa<MaximumOp>(extremum);
        // 1 where lhs is the result (lhs >= rhs for the maximum, lhs <= rhs
        // for the minimum; at a tie both are), and where rhs is.
        Value lhsWins = GreaterEqualOp::create(builder, loc, isMax ? lhs : rhs,
                                               isMax ? rhs : lhs);
        Value rhsWins = GreaterEqualOp::create(builder, loc, isMax ? rhs : lhs,
                                               isMax ? lhs : rhs);
        RankedTensorType type = tensorType(dy);
        Value half = MulOp::create(builder, loc, dy, scalar(loc, type, 0.5));
        Value zero = scalar(loc, type, 0);
        // An operand's share: where the other operand is (one of) the
        // result, half of dy if this one is too, else none; elsewhere all
        // of dy (this operand is the result, or either is NaN).
        auto share = [&](Value mine, Value other) -> Value {
          Value tied = SelectOp::create(builder, loc, mine, half, zero);
          return SelectOp::create(builder, loc, other, tied, dy);
        };
        if (needs(lhs))
          accumulate(lhs, sumTo(loc, share(lhsWins, rhsWins), tensorType(lhs)));
        if (needs(rhs))
          accumulate(rhs, sumTo(loc, share(rhsWins, lhsWins), tensorType(rhs)));
        return success();
      })
      .Case([&](PowOp pow) {
        // As PyTorch: d(x^y)/dx = y x^(y - 1), but 0 where y = 0 (even at
        // x = 0, where y x^(y - 1) is NaN); d(x^y)/dy = x^y log(x), but 0
        // where x = 0 and y >= 0 (where it is NaN or -inf).
        Value base = pow.getLhs(), exponent = pow.getRhs();
        Value dy = gradOf(pow.getOutput());
        RankedTensorType type = pow.getOutput().getType();
        Value zero = scalar(loc, type, 0);
        if (needs(base)) {
          Value lowered = PowOp::create(
              builder, loc, base,
              SubOp::create(builder, loc, exponent, scalar(loc, type, 1)));
          Value slope = MulOp::create(builder, loc, exponent, lowered);
          Value grad =
              SelectOp::create(builder, loc, exponent,
                               MulOp::create(builder, loc, dy, slope), zero);
          accumulate(base, sumTo(loc, grad, tensorType(base)));
        }
        if (needs(exponent)) {
          Value slope = MulOp::create(builder, loc, pow.getOutput(),
                                      LogOp::create(builder, loc, base));
          Value atZeroBase = SelectOp::create(
              builder, loc,
              GreaterEqualOp::create(builder, loc, exponent, zero), zero,
              slope);
          Value grad = MulOp::create(
              builder, loc, dy,
              SelectOp::create(builder, loc, base, slope, atZeroBase));
          accumulate(exponent, sumTo(loc, grad, tensorType(exponent)));
        }
        return success();
      })
      .Case([&](SelectOp select) {
        // dy goes to on_true where the condition is nonzero, to on_false
        // elsewhere; the condition gets none.
        Value onTrue = select.getOnTrue(), onFalse = select.getOnFalse();
        Value dy = gradOf(select.getOutput());
        Value zero = scalar(loc, select.getType(), 0);
        if (needs(onTrue))
          accumulate(onTrue,
                     sumTo(loc,
                           SelectOp::create(builder, loc, select.getCondition(),
                                            dy, zero),
                           tensorType(onTrue)));
        if (needs(onFalse))
          accumulate(onFalse,
                     sumTo(loc,
                           SelectOp::create(builder, loc, select.getCondition(),
                                            zero, dy),
                           tensorType(onFalse)));
        return success();
      })
      .Case([&](BroadcastToOp broadcast) {
        accumulate(broadcast.getInput(),
                   sumTo(loc, gradOf(broadcast.getOutput()),
                         broadcast.getInput().getType()));
        return success();
      })
      .Case([&](SumToOp sum) -> LogicalResult {
        if (sum.getInput().getType().getElementType() !=
            sum.getType().getElementType())
          return sum.emitOpError()
                 << "has no gradient rule as a widening sum (a 16-bit input "
                    "summed into "
                    "f32): --fluid-widening-reductions makes those after "
                    "differentiation";
        accumulate(sum.getInput(),
                   BroadcastToOp::create(builder, loc, sum.getInput().getType(),
                                         gradOf(sum.getOutput())));
        return success();
      })
      .Case([&](MaxPool2DOp pool) {
        accumulate(pool.getInput(),
                   MaxPool2DGradOp::create(
                       builder, loc, pool.getInput().getType(),
                       gradOf(pool.getOutput()), pool.getInput(),
                       pool.getKernelSizeAttr(), pool.getStridesAttr(),
                       pool.getPaddingAttr(), pool.getDilationAttr(),
                       pool.getCeilModeAttr()));
        return success();
      })
      .Case([&](AvgPool2DOp pool) {
        accumulate(pool.getInput(),
                   AvgPool2DGradOp::create(
                       builder, loc, pool.getInput().getType(),
                       gradOf(pool.getOutput()), pool.getKernelSizeAttr(),
                       pool.getStridesAttr(), pool.getPaddingAttr(),
                       pool.getCeilModeAttr(), pool.getCountIncludePadAttr()));
        return success();
      })
      .Case([&](GlobalAvgPoolOp pool) {
        RankedTensorType input = pool.getInput().getType();
        Value spread = BroadcastToOp::create(builder, loc, input,
                                             gradOf(pool.getOutput()));
        double count = input.getDimSize(2) * input.getDimSize(3);
        accumulate(pool.getInput(), DivOp::create(builder, loc, spread,
                                                  scalar(loc, input, count)));
        return success();
      })
      .Case([&](MatmulOp matmul) {
        // With A' = op(A) and B' = op(B), dA' = dY B'^T and dB' = A'^T dY;
        // each transposition flag below folds op() into the product.
        Value dy = gradOf(matmul.getOutput());
        Value a = matmul.getLhs(), b = matmul.getRhs();
        bool ta = matmul.getTransposeLhs(), tb = matmul.getTransposeRhs();
        auto product = [&](Value l, Value r, bool tl, bool tr) -> Value {
          return MatmulOp::create(builder, loc, l, r, tl, tr);
        };
        if (needs(a))
          accumulate(a, ta ? product(b, dy, tb, true)
                           : product(dy, b, false, !tb));
        if (needs(b))
          accumulate(b, tb ? product(dy, a, true, ta)
                           : product(a, dy, !ta, false));
        return success();
      })
      .Case([&](LinearOp linear) {
        // y = x W^T + b: dx = dy W, dW = dy^T x, db = sum over the batch.
        Value dy = gradOf(linear.getOutput());
        if (needs(linear.getInput()))
          accumulate(linear.getInput(),
                     MatmulOp::create(builder, loc, dy, linear.getWeight(),
                                      false, false));
        if (needs(linear.getWeight()))
          accumulate(linear.getWeight(),
                     MatmulOp::create(builder, loc, dy, linear.getInput(), true,
                                      false));
        if (linear.getBias() && needs(linear.getBias()))
          accumulate(linear.getBias(),
                     ReduceSumOp::create(builder, loc, dy,
                                         builder.getDenseI64ArrayAttr({0}),
                                         /*keep_dims=*/false));
        return success();
      })
      .Case<ReshapeOp, FlattenOp>([&](Operation *reshape) {
        Value input = reshape->getOperand(0);
        accumulate(input, ReshapeOp::create(builder, loc, input.getType(),
                                            gradOf(reshape->getResult(0))));
        return success();
      })
      .Case([&](TransposeOp transpose) {
        ArrayRef<int64_t> permutation = transpose.getPermutation();
        SmallVector<int64_t> inverse(permutation.size());
        for (auto [i, d] : llvm::enumerate(permutation))
          inverse[d] = static_cast<int64_t>(i);
        accumulate(transpose.getInput(),
                   TransposeOp::create(builder, loc,
                                       gradOf(transpose.getOutput()), inverse));
        return success();
      })
      .Case([&](ConcatOp concat) {
        Value dy = gradOf(concat.getOutput());
        int64_t rank = concat.getOutput().getType().getRank();
        // I64Attr getters return uint64_t; axes may be negative.
        int64_t axis = static_cast<int64_t>(concat.getAxis());
        if (axis < 0)
          axis += rank;
        int64_t offset = 0;
        for (Value input : concat.getInputs()) {
          RankedTensorType type = tensorType(input);
          if (needs(input))
            accumulate(input,
                       SliceOp::create(builder, loc, type, dy, axis, offset));
          offset += type.getDimSize(axis);
        }
        return success();
      })
      .Case([&](SliceOp slice) {
        // dy in its place along the axis, between zeros: the concatenation
        // that concat's rule slices.
        Value input = slice.getInput(), dy = gradOf(slice.getOutput());
        RankedTensorType inputType = tensorType(input);
        int64_t axis = static_cast<int64_t>(slice.getAxis());
        int64_t before = static_cast<int64_t>(slice.getOffset());
        int64_t after = inputType.getDimSize(axis) - before -
                        slice.getType().getDimSize(axis);
        if (before == 0 && after == 0) {
          accumulate(input, dy);
          return success();
        }
        Value zero = scalar(loc, inputType, 0);
        auto zerosAlong = [&](int64_t size) -> Value {
          SmallVector<int64_t> shape(inputType.getShape());
          shape[axis] = size;
          return BroadcastToOp::create(builder, loc, inputType.clone(shape),
                                       zero);
        };
        SmallVector<Value, 3> parts;
        if (before > 0)
          parts.push_back(zerosAlong(before));
        parts.push_back(dy);
        if (after > 0)
          parts.push_back(zerosAlong(after));
        accumulate(input,
                   ConcatOp::create(builder, loc, inputType, parts, axis));
        return success();
      })
      .Case([&](GatherOp gather) {
        // Each slice of dy goes back to the slice it was taken from; the
        // slices of repeated indices add up.
        accumulate(
            gather.getInput(),
            GatherGradOp::create(builder, loc, gather.getInput().getType(),
                                 gradOf(gather.getOutput()),
                                 gather.getIndices(), gather.getAxisAttr()));
        return success();
      })
      .Case([&](SoftmaxOp softmax) {
        accumulate(
            softmax.getInput(),
            SoftmaxGradOp::create(builder, loc, gradOf(softmax.getOutput()),
                                  softmax.getOutput(), softmax.getAxisAttr()));
        return success();
      })
      .Case([&](LogSoftmaxOp logSoftmax) {
        accumulate(logSoftmax.getInput(),
                   LogSoftmaxGradOp::create(
                       builder, loc, gradOf(logSoftmax.getOutput()),
                       logSoftmax.getOutput(), logSoftmax.getAxisAttr()));
        return success();
      })
      .Case([&](SoftmaxCrossEntropyOp loss) {
        accumulate(loss.getLogits(),
                   SoftmaxCrossEntropyGradOp::create(
                       builder, loc, loss.getLogits().getType(),
                       gradOf(loss.getLoss()), loss.getLogits(),
                       loss.getLabels(), loss.getReductionAttr()));
        return success();
      })
      .Case<MeanOp, ReduceSumOp>([&](Operation *reduce) -> LogicalResult {
        Value input = reduce->getOperand(0);
        RankedTensorType inputType = tensorType(input);
        if (inputType.getElementType() !=
            tensorType(reduce->getResult(0)).getElementType())
          return reduce->emitOpError()
                 << "has no gradient rule as a widening sum (a 16-bit input "
                    "summed into "
                    "f32): --fluid-widening-reductions makes those after "
                    "differentiation";
        auto axes = reduce->getAttrOfType<DenseI64ArrayAttr>("axes");
        std::optional<ArrayRef<int64_t>> axisList;
        if (axes)
          axisList = axes.asArrayRef();
        SmallVector<int64_t> kept = keptShape(inputType, axisList);
        Value dy = gradOf(reduce->getResult(0));
        Value reshaped = ReshapeOp::create(
            builder, loc,
            RankedTensorType::get(kept, inputType.getElementType()), dy);
        Value spread = BroadcastToOp::create(builder, loc, inputType, reshaped);
        if (isa<MeanOp>(reduce)) {
          int64_t count =
              inputType.getNumElements() /
              std::max<int64_t>(1, tensorType(reshaped).getNumElements());
          spread = DivOp::create(builder, loc, spread,
                                 scalar(loc, inputType, count));
        }
        accumulate(input, spread);
        return success();
      })
      .Case([&](CastOp castOp) {
        // Between float types: the gradient converts back (the inputs of
        // --fluid-mixed-precision's 16-bit ops; their gradients reach the
        // f32 parameters this way).
        // An f32 gradient of a 16-bit result (its accumulation type) goes
        // to an f32 input as it is, and that of a widening cast's result
        // to its 16-bit input's f32 sum: the two casts that store an
        // activation in 16 bits do not round its gradient.
        Value input = castOp.getInput();
        if (!isFloatTensor(input.getType()))
          return success();
        Value dy = grads.lookup(castOp.getOutput());
        Type want = accumulationType(input.getType());
        if (dy.getType() != want)
          dy = CastOp::create(builder, loc, want, dy);
        accumulate(input, dy);
        return success();
      })
      .Case([&](NegOp neg) {
        accumulate(neg.getInput(),
                   NegOp::create(builder, loc, gradOf(neg.getOutput())));
        return success();
      })
      .Case([&](ExpOp exp) {
        accumulate(exp.getInput(),
                   MulOp::create(builder, loc, gradOf(exp.getOutput()),
                                 exp.getOutput()));
        return success();
      })
      .Case([&](LogOp log) {
        accumulate(log.getInput(),
                   DivOp::create(builder, loc, gradOf(log.getOutput()),
                                 log.getInput()));
        return success();
      })
      .Case([&](SqrtOp sqrt) {
        // d sqrt(x) = 1 / (2 sqrt(x)).
        Value half = DivOp::create(builder, loc, gradOf(sqrt.getOutput()),
                                   sqrt.getOutput());
        accumulate(sqrt.getInput(),
                   DivOp::create(builder, loc, half,
                                 scalar(loc, sqrt.getOutput().getType(), 2)));
        return success();
      })
      .Case([&](ErfOp erf) {
        // d erf(x) = 2 / sqrt(pi) * exp(-x^2), in PyTorch's order.
        Value x = erf.getInput();
        auto type = cast<RankedTensorType>(x.getType());
        Value square = MulOp::create(builder, loc, x, x);
        Value density =
            ExpOp::create(builder, loc, NegOp::create(builder, loc, square));
        Value slope = MulOp::create(
            builder, loc, scalar(loc, type, 2 / std::sqrt(M_PI)), density);
        accumulate(x,
                   MulOp::create(builder, loc, slope, gradOf(erf.getOutput())));
        return success();
      })
      .Case([&](BatchNormApplyOp apply) {
        return apply.emitOpError()
               << "has no gradient rule: it recomputes a batch norm's output "
                  "for the backward pass, so it appears only after "
                  "differentiation";
      })
      .Case<GetParamOp, SetParamOp, ConstantOp>(
          [&](Operation *) { return success(); })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "has no gradient rule, but the loss depends on it through "
                  "a trainable parameter";
      });
}

void BackwardBuilder::readStoredCopies(ArrayRef<Operation *> forward) {
  DenseSet<Operation *> inForward(forward.begin(), forward.end());
  auto isSixteenBit = [](Type type) {
    Type element = cast<RankedTensorType>(type).getElementType();
    return element.isF16() || element.isBF16();
  };
  for (Operation *op : forward)
    for (Value value : op->getResults()) {
      if (!isFloatTensor(value.getType()) || isSixteenBit(value.getType()))
        continue;
      Value stored;
      for (Operation *user : value.getUsers()) {
        auto narrow = dyn_cast<CastOp>(user);
        if (!narrow || !inForward.contains(narrow) ||
            !isSixteenBit(narrow.getType()))
          continue;
        for (Operation *reader : narrow->getUsers())
          if (auto wide = dyn_cast<CastOp>(reader);
              wide && inForward.contains(wide) &&
              wide.getType() == value.getType())
            stored = wide;
      }
      if (stored)
        value.replaceUsesWithIf(stored, [&](OpOperand &use) {
          return !inForward.contains(use.getOwner());
        });
    }
}

FailureOr<Value> BackwardBuilder::seed(Value loss) {
  auto lossType = cast<RankedTensorType>(loss.getType());
  if (lossScale <= 0)
    return scalar(loss.getLoc(), lossType, 1.0);
  // Dynamic loss scaling: d(scale * loss) = scale, the value of a
  // parameter that --fluid-append-optimizer updates.
  ParamOp last;
  for (ParamOp param : module.getOps<ParamOp>())
    last = param;
  OpBuilder declare(module.getContext());
  auto type = RankedTensorType::get({}, declare.getF32Type());
  FailureOr<ParamOp> param = declareStateParam(
      module, declare, last, kLossScaleParam, type, "--fluid-append-backward");
  if (failed(param))
    return failure();
  param->setInitAttr(InitializerAttr::get(
      module.getContext(), InitKind::Constant, lossScale, 0.0, FanMode::FanIn));
  Location loc =
      NameLoc::get(builder.getStringAttr("loss_scale"), loss.getLoc());
  Value scale = GetParamOp::create(builder, loc, type, kLossScaleParam);
  if (lossType != type)
    scale = CastOp::create(builder, loc, lossType, scale);
  return scale;
}

LogicalResult BackwardBuilder::build() {
  Block &body = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret || ret.getNumOperands() != 1 ||
      !isFloatTensor(ret.getOperand(0).getType()) ||
      cast<RankedTensorType>(ret.getOperand(0).getType()).getRank() != 0)
    return (ret ? ret.getOperation() : func.getOperation())->emitError()
           << "--fluid-append-backward: @" << func.getSymName()
           << " must return exactly one scalar floating-point loss";
  Value loss = ret.getOperand(0);

  // Only the optimizer updates trainable parameters, once per step; the
  // forward function may write other state (running statistics), once
  // (fluid.set_param's verifier checks that).
  for (auto set : body.getOps<SetParamOp>()) {
    auto param =
        SymbolTable::lookupNearestSymbolFrom<ParamOp>(set, set.getNameAttr());
    if (param && param.getTrainable())
      return set.emitError()
             << "--fluid-append-backward: @" << func.getSymName()
             << " writes the trainable parameter @" << param.getSymName()
             << ", which the optimizer updates; a forward function may "
                "write only parameters with trainable = false";
  }

  findDifferentiableValues();
  builder.setInsertionPoint(ret);
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);

  if (differentiable.contains(loss)) {
    FailureOr<Value> start = seed(loss);
    if (failed(start))
      return failure();
    grads[loss] = *start;
  }
  for (Operation *op : llvm::reverse(forward)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return grads.contains(r); }))
      continue;
    if (failed(differentiate(op)))
      return failure();
  }

  readStoredCopies(forward);

  // One gradient per trainable parameter, summed over its reads.
  llvm::MapVector<StringRef, Value> paramGrads;
  SmallVector<ParamOp> trainable;
  for (ParamOp param : module.getOps<ParamOp>())
    if (param.getTrainable() && isFloatTensor(param.getType()))
      trainable.push_back(param);
  for (Operation *op : forward)
    if (auto get = dyn_cast<GetParamOp>(op))
      if (Value grad = gradOf(get.getResult())) {
        Value &sum = paramGrads[get.getName()];
        sum = sum ? AddOp::create(builder, get.getLoc(), sum, grad) : grad;
      }

  // A loss no trainable parameter reaches has nothing to train; a parameter
  // the loss does not reach keeps a zero gradient, which is worth a word.
  if (!trainable.empty() && paramGrads.empty())
    return ret.emitError()
           << "--fluid-append-backward: the loss of @" << func.getSymName()
           << " depends on none of the " << trainable.size()
           << " trainable parameters; there is nothing to train";
  SmallVector<StringRef> unreached;
  for (ParamOp param : trainable)
    if (!paramGrads.count(param.getSymName()))
      unreached.push_back(param.getSymName());
  if (!unreached.empty()) {
    InFlightDiagnostic diag = func.emitWarning()
                              << "--fluid-append-backward: the loss does not "
                                 "depend on "
                              << unreached.size() << " trainable parameter"
                              << (unreached.size() == 1 ? "" : "s") << " (@"
                              << unreached.front();
    if (unreached.size() > 1)
      diag << (unreached.size() == 2 ? ", @" : ", ..., @") << unreached.back();
    diag << "); their gradient is zero";
  }

  SmallVector<Value> results = {loss};
  SmallVector<NamedAttribute> lossAttrs = {
      builder.getNamedAttr(kLossAttrName, builder.getUnitAttr())};
  if (lossScale > 0)
    lossAttrs.push_back(builder.getNamedAttr(
        kLossScaleAttrName,
        FlatSymbolRefAttr::get(builder.getContext(), kLossScaleParam)));
  SmallVector<DictionaryAttr> resultAttrs = {
      builder.getDictionaryAttr(lossAttrs)};
  for (ParamOp param : trainable) {
    Value grad = paramGrads.lookup(param.getSymName());
    if (!grad) {
      RankedTensorType type = param.getTensorType();
      grad = ConstantOp::create(
          builder, param.getLoc(),
          DenseElementsAttr::get(type,
                                 FloatAttr::get(type.getElementType(), 0.0)));
    }
    results.push_back(grad);
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        kGradOfAttrName, FlatSymbolRefAttr::get(param.getSymNameAttr()))));
  }
  func::ReturnOp::create(builder, ret.getLoc(), results);
  ret.erase();

  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  func.setType(builder.getFunctionType(func.getArgumentTypes(), resultTypes));
  func.setAllResultAttrs(resultAttrs);

  // The widening of a stored 16-bit copy that neither the forward ops nor
  // the gradient rules read (a value only 16-bit ops read, whose gradient
  // rules need no activation: a max pool's output read by convolutions)
  // would only cost a kernel.
  for (Operation *op : llvm::reverse(forward))
    if (auto wide = dyn_cast<CastOp>(op);
        wide && wide.use_empty() && isFloatTensor(wide.getType()) &&
        accumulationType(wide.getInput().getType()) == wide.getType() &&
        wide.getInput().getType() != wide.getType())
      wide.erase();
  return success();
}

struct FluidAppendBackwardPass
    : public mlir::fluid::impl::FluidAppendBackwardBase<
          FluidAppendBackwardPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string why;
    FailureOr<func::FuncOp> func = findEntryFunction(module, funcName, why);
    if (failed(func)) {
      module.emitError() << "--fluid-append-backward: " << why;
      return signalPassFailure();
    }
    if (!(lossScale >= 0) || !std::isfinite(lossScale) ||
        lossScale > std::numeric_limits<float>::max()) {
      module.emitError() << "--fluid-append-backward: loss-scale must be a "
                            "finite f32 >= 0 (0: no loss scaling), got "
                         << lossScale.getValue();
      return signalPassFailure();
    }
    if (failed(BackwardBuilder(*func, module, lossScale).build()))
      return signalPassFailure();
  }
};

} // namespace
