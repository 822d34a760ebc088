//===- FluidGradOps.cpp - Math, gradient and optimizer ops ----------------===//
//
// Verifiers of the ops the training passes emit. Gradient ops whose result
// is a forward operand's type are checked by running the forward op's shape
// rule on that type: a gradient op is valid exactly when the forward op it
// differentiates would be.
//
//===----------------------------------------------------------------------===//

#include "ShapeRules.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "llvm/Support/Format.h"

#include <cmath>
#include <cstdio>
#include <string>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::detail;

/// Checks that the forward op's output type `forward` is `gradOutput`'s.
static LogicalResult expectGradOutputType(Operation *op,
                                          RankedTensorType forward,
                                          RankedTensorType gradOutput) {
  if (forward == gradOutput)
    return success();
  return op->emitOpError() << "grad_output has type " << gradOutput
                           << ", but the forward op's output would be "
                           << forward;
}

//===----------------------------------------------------------------------===//
// Math and broadcasting
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> condition =
      errors.tensor(adaptor.getCondition(), "condition");
  if (failed(condition))
    return failure();
  FailureOr<RankedTensorType> onTrue =
      errors.tensor(adaptor.getOnTrue(), "on_true");
  if (failed(onTrue))
    return failure();
  FailureOr<RankedTensorType> onFalse =
      errors.tensor(adaptor.getOnFalse(), "on_false");
  if (failed(onFalse) ||
      failed(
          errors.sameElementType(*onTrue, "on_true", *onFalse, "on_false")) ||
      failed(
          errors.sameElementType(*condition, "condition", *onTrue, "on_true")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(errors, *onTrue, *onFalse);
  if (failed(shape))
    return failure();
  RankedTensorType values =
      RankedTensorType::get(*shape, onTrue->getElementType());
  FailureOr<SmallVector<int64_t>> full =
      broadcastShapes(errors, *condition, values);
  if (failed(full))
    return failure();
  inferred.push_back(RankedTensorType::get(*full, onTrue->getElementType()));
  return success();
}

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError() << "cannot change the shape (" << getInput().getType()
                         << " to " << getType() << ")";
  return success();
}

/// Whether `small` broadcasts to `large` under NumPy's rules.
static bool broadcastsTo(ArrayRef<int64_t> small, ArrayRef<int64_t> large) {
  if (small.size() > large.size())
    return false;
  for (size_t i = 0; i < small.size(); ++i) {
    int64_t s = small[small.size() - 1 - i], l = large[large.size() - 1 - i];
    if (s != l && s != 1)
      return false;
  }
  return true;
}

LogicalResult BroadcastToOp::verify() {
  RankedTensorType input = getInput().getType(), output = getType();
  if (input.getElementType() != output.getElementType())
    return emitOpError() << "cannot change the element type";
  if (!broadcastsTo(input.getShape(), output.getShape()))
    return emitOpError() << input << " does not broadcast to " << output;
  return success();
}

LogicalResult SumToOp::verify() {
  RankedTensorType input = getInput().getType(), output = getType();
  if (!isReductionElementType(input.getElementType(), output.getElementType()))
    return emitOpError() << "cannot change the element type (but for a "
                            "16-bit input's sum in f32)";
  if (!broadcastsTo(output.getShape(), input.getShape()))
    return emitOpError() << "the result " << output
                         << " must broadcast to the input " << input;
  return success();
}

LogicalResult SliceOp::verify() {
  RankedTensorType input = getInput().getType(), output = getType();
  if (input.getElementType() != output.getElementType() ||
      input.getRank() != output.getRank())
    return emitOpError() << "the result must have the input's rank and "
                            "element type";
  int64_t rank = input.getRank(), axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "'axis' " << axis << " is out of range for rank "
                         << rank;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && input.getDimSize(d) != output.getDimSize(d))
      return emitOpError() << "the result differs from the input in "
                              "dimension "
                           << d << ", which is not the axis";
  int64_t offset = getOffset(), size = output.getDimSize(axis);
  if (offset < 0 || offset > input.getDimSize(axis) - size)
    return emitOpError() << "elements [" << offset << ", " << offset << " + "
                         << size << ") are outside the input's "
                         << input.getDimSize(axis) << " along axis " << axis;
  return success();
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

LogicalResult Conv2DGradInputOp::verify() {
  ShapeErrors errors(getLoc(), getOperationName());
  FailureOr<RankedTensorType> forward =
      inferConv2DType(errors, getType(), getFilter().getType(),
                      RankedTensorType(), getStrides(), getPadding(),
                      getDilation(), getGroups(), getChannelsLast());
  if (failed(forward))
    return failure();
  return expectGradOutputType(*this, *forward, getGradOutput().getType());
}

LogicalResult Conv2DGradFilterOp::verify() {
  ShapeErrors errors(getLoc(), getOperationName());
  FailureOr<RankedTensorType> forward = inferConv2DType(
      errors, getInput().getType(), getType(), RankedTensorType(), getStrides(),
      getPadding(), getDilation(), getGroups(), getChannelsLast());
  if (failed(forward))
    return failure();
  return expectGradOutputType(*this, *forward, getGradOutput().getType());
}

LogicalResult
BatchNormGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> input =
      errors.tensor(adaptor.getInput(), "input");
  if (failed(input))
    return failure();
  FailureOr<RankedTensorType> channel =
      errors.tensor(adaptor.getScale(), "scale");
  if (failed(channel) ||
      failed(errors.expectRank(*input, "input", {2, 4}, " (NC or NCHW)")) ||
      failed(errors.sameElementType(*input, "input", *channel, "scale")))
    return failure();
  if (channel->getRank() != 1 || channel->getDimSize(0) != input->getDimSize(1))
    return errors.fail("per-channel operands must have shape [",
                       input->getDimSize(1), "] (the input's channels), got ",
                       *channel);
  inferred.push_back(*input);
  inferred.append(2, *channel);
  return success();
}

LogicalResult MaxPool2DGradOp::verify() {
  ShapeErrors errors(getLoc(), getOperationName());
  FailureOr<RankedTensorType> forward = inferPool2DType(
      errors, getInput().getType(), getKernelSize(), getStrides(), getPadding(),
      getDilation(), getCeilMode(), getChannelsLast());
  if (failed(forward))
    return failure();
  return expectGradOutputType(*this, *forward, getGradOutput().getType());
}

LogicalResult MaxPool2DGradIndicesOp::verify() {
  ShapeErrors errors(getLoc(), getOperationName());
  auto forward = inferMaxPool2DWithIndicesTypes(
      errors, getType(), getKernelSize(), getStrides(), getPadding(),
      getDilation(), getCeilMode(), getChannelsLast());
  if (failed(forward) || failed(expectGradOutputType(
                             *this, forward->first, getGradOutput().getType())))
    return failure();
  if (forward->second != getIndices().getType())
    return emitOpError() << "indices have type " << getIndices().getType()
                         << ", but the forward op's would be "
                         << forward->second;
  return success();
}

LogicalResult AvgPool2DGradOp::verify() {
  ShapeErrors errors(getLoc(), getOperationName());
  FailureOr<RankedTensorType> forward =
      inferPool2DType(errors, getType(), getKernelSize(), getStrides(),
                      getPadding(), /*dilation=*/{1, 1}, getCeilMode());
  if (failed(forward))
    return failure();
  return expectGradOutputType(*this, *forward, getGradOutput().getType());
}

template <typename SoftmaxGradOp>
static LogicalResult verifySoftmaxGrad(SoftmaxGradOp op) {
  ShapeErrors errors(op.getLoc(), op.getOperationName());
  return errors.axis(op.getAxis(), op.getOutput().getType().getRank(), "axis");
}

LogicalResult SoftmaxGradOp::verify() { return verifySoftmaxGrad(*this); }
LogicalResult LogSoftmaxGradOp::verify() { return verifySoftmaxGrad(*this); }

LogicalResult GatherGradOp::verify() {
  ShapeErrors errors(getLoc(), getOperationName());
  RankedTensorType input = getType();
  FailureOr<RankedTensorType> forward = inferGatherType(
      errors, input, getIndices().getType(), static_cast<int64_t>(getAxis()));
  if (failed(forward) ||
      failed(expectGradOutputType(*this, *forward, getGradOutput().getType())))
    return failure();
  // I64Attr getters return uint64_t; the axis may be negative.
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0)
    axis += input.getRank();
  return verifyConstantIndices(*this, getIndices(), input.getDimSize(axis),
                               axis);
}

LogicalResult SoftmaxCrossEntropyGradOp::verify() {
  SmallVector<Type> loss;
  ShapeErrors errors(getLoc(), getOperationName());
  SoftmaxCrossEntropyOp::Properties properties;
  properties.reduction = getReductionAttr();
  // The forward op's rule gives the loss type, which grad_loss must have.
  if (failed(SoftmaxCrossEntropyOp::inferReturnTypes(
          getContext(), getLoc(),
          SoftmaxCrossEntropyOp::Adaptor({getLogits(), getLabels()},
                                         DictionaryAttr(), properties),
          loss)))
    return failure();
  if (loss.front() != getGradLoss().getType())
    return emitOpError() << "grad_loss has type " << getGradLoss().getType()
                         << ", but the loss has type " << loss.front();
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

/// "0.9", "1e-08", "inf": numbers as a person writes them.
static std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// Common checks: the learning rate's element type is the parameter's, and
/// each named hyper-parameter lies in its range.
static LogicalResult
verifyUpdate(Operation *op, RankedTensorType param, RankedTensorType lr,
             ArrayRef<std::tuple<StringRef, double, double, double>> ranges) {
  if (lr.getElementType() != param.getElementType())
    return op->emitOpError()
           << "lr must have the parameter's element type "
           << param.getElementType() << ", got " << lr.getElementType();
  for (auto [name, value, low, high] : ranges)
    if (!(value >= low && value <= high))
      return op->emitOpError()
             << "'" << name << "' must be in [" << shortNumber(low) << ", "
             << shortNumber(high) << "], got " << shortNumber(value);
  return success();
}

static constexpr double kInf = HUGE_VAL;

LogicalResult SgdOp::verify() {
  return verifyUpdate(
      *this, getParam().getType(), getLr().getType(),
      {{"weight_decay", getWeightDecay().convertToDouble(), 0.0, kInf}});
}

LogicalResult MomentumOp::verify() {
  return verifyUpdate(
      *this, getParam().getType(), getLr().getType(),
      {{"momentum", getMomentum().convertToDouble(), 0.0, 1.0},
       {"weight_decay", getWeightDecay().convertToDouble(), 0.0, kInf}});
}

LogicalResult AdamOp::verify() {
  RankedTensorType step = getStep().getType();
  if (step.getRank() != 0 || !step.getElementType().isSignlessInteger(64))
    return emitOpError() << "step must be a tensor<i64>, got " << step;
  return verifyUpdate(
      *this, getParam().getType(), getLr().getType(),
      {{"beta1", getBeta1().convertToDouble(), 0.0, 1.0},
       {"beta2", getBeta2().convertToDouble(), 0.0, 1.0},
       {"epsilon", getEpsilon().convertToDouble(), 0.0, kInf},
       {"weight_decay", getWeightDecay().convertToDouble(), 0.0, kInf}});
}

//===----------------------------------------------------------------------===//
// Grouped updates
//===----------------------------------------------------------------------===//

/// Checks a grouped update's lists: at least one entry; every list (named
/// in `lists`) has one tensor per parameter, of that parameter's type; and
/// every parameter has the first one's element type. `scalars` is the
/// number of operands after the lists (the rate, Adam's step, the skip
/// flag).
static LogicalResult
verifyGroupEntries(Operation *op, ValueRange params, unsigned operandLists,
                   unsigned scalars,
                   ArrayRef<std::pair<StringRef, TypeRange>> lists) {
  if (params.empty())
    return op->emitOpError() << "needs at least one parameter";
  // Equal lists are split by count: a stray operand would shift them.
  if (op->getNumOperands() != operandLists * params.size() + scalars)
    return op->emitOpError()
           << "has " << op->getNumOperands() << " operands; expected "
           << operandLists << " lists of one tensor per parameter and "
           << scalars << " scalar" << (scalars == 1 ? "" : "s");
  Type elementType =
      cast<RankedTensorType>(params.front().getType()).getElementType();
  for (auto [index, param] : llvm::enumerate(params)) {
    auto type = cast<RankedTensorType>(param.getType());
    if (type.getElementType() != elementType)
      return op->emitOpError()
             << "entry " << index << ": the parameter has element type "
             << type.getElementType() << ", but entry 0's is " << elementType
             << " (a group has one element type)";
  }
  for (auto [name, types] : lists) {
    if (types.size() != params.size())
      return op->emitOpError() << "has " << types.size() << " " << name
                               << " for " << params.size() << " parameters";
    for (auto [index, pair] :
         llvm::enumerate(llvm::zip(params.getTypes(), types)))
      if (std::get<0>(pair) != std::get<1>(pair))
        return op->emitOpError()
               << "entry " << index << ": " << name << " has type "
               << std::get<1>(pair) << ", but the parameter is "
               << std::get<0>(pair);
  }
  return success();
}

LogicalResult SgdGroupOp::verify() {
  if (failed(verifyGroupEntries(*this, getParams(), 2, 1 + !!getFoundInf(),
                                {{"grads", getGrads().getTypes()},
                                 {"new_params", getNewParams().getTypes()}})))
    return failure();
  return verifyUpdate(
      *this, cast<RankedTensorType>(getParams().front().getType()),
      getLr().getType(),
      {{"weight_decay", getWeightDecay().convertToDouble(), 0.0, kInf}});
}

LogicalResult MomentumGroupOp::verify() {
  if (failed(verifyGroupEntries(
          *this, getParams(), 3, 1 + !!getFoundInf(),
          {{"grads", getGrads().getTypes()},
           {"velocities", getVelocities().getTypes()},
           {"new_params", getNewParams().getTypes()},
           {"new_velocities", getNewVelocities().getTypes()}})))
    return failure();
  return verifyUpdate(
      *this, cast<RankedTensorType>(getParams().front().getType()),
      getLr().getType(),
      {{"momentum", getMomentum().convertToDouble(), 0.0, 1.0},
       {"weight_decay", getWeightDecay().convertToDouble(), 0.0, kInf}});
}

LogicalResult AdamGroupOp::verify() {
  if (failed(verifyGroupEntries(
          *this, getParams(), 4, 2 + !!getFoundInf(),
          {{"grads", getGrads().getTypes()},
           {"exp_avgs", getExpAvgs().getTypes()},
           {"exp_avg_sqs", getExpAvgSqs().getTypes()},
           {"new_params", getNewParams().getTypes()},
           {"new_exp_avgs", getNewExpAvgs().getTypes()},
           {"new_exp_avg_sqs", getNewExpAvgSqs().getTypes()}})))
    return failure();
  RankedTensorType step = getStep().getType();
  if (step.getRank() != 0 || !step.getElementType().isSignlessInteger(64))
    return emitOpError() << "step must be a tensor<i64>, got " << step;
  return verifyUpdate(
      *this, cast<RankedTensorType>(getParams().front().getType()),
      getLr().getType(),
      {{"beta1", getBeta1().convertToDouble(), 0.0, 1.0},
       {"beta2", getBeta2().convertToDouble(), 0.0, 1.0},
       {"epsilon", getEpsilon().convertToDouble(), 0.0, kInf},
       {"weight_decay", getWeightDecay().convertToDouble(), 0.0, kInf}});
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling
//===----------------------------------------------------------------------===//

LogicalResult UnscaleGradsOp::verify() {
  if (getGrads().empty())
    return emitOpError() << "needs at least one gradient";
  if (getUnscaled().size() != getGrads().size())
    return emitOpError() << "has " << getUnscaled().size()
                         << " unscaled gradients for " << getGrads().size()
                         << " gradients";
  Type elementType =
      cast<RankedTensorType>(getGrads().front().getType()).getElementType();
  for (auto [index, pair] : llvm::enumerate(
           llvm::zip(getGrads().getTypes(), getUnscaled().getTypes()))) {
    auto [grad, unscaled] = pair;
    auto type = cast<RankedTensorType>(grad);
    if (!type.getElementType().isF32() && !type.getElementType().isF64())
      return emitOpError() << "entry " << index << ": gradient of type " << grad
                           << "; expected f32 or f64 (master "
                           << "gradients)";
    if (type.getElementType() != elementType)
      return emitOpError() << "entry " << index
                           << ": the gradient has element type "
                           << type.getElementType() << ", but entry 0's is "
                           << elementType << " (one element type per op)";
    if (unscaled != grad)
      return emitOpError() << "entry " << index << ": unscaled has type "
                           << unscaled << ", but the gradient is " << grad;
  }
  return success();
}

LogicalResult AllReduceMeanOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one tensor";
  if (static_cast<int64_t>(getBucket()) < 0)
    return emitOpError() << "has bucket " << static_cast<int64_t>(getBucket())
                         << "; buckets are numbered from 0";
  if (getOutputs().size() != getInputs().size())
    return emitOpError() << "has " << getOutputs().size() << " results for "
                         << getInputs().size() << " inputs";
  for (auto [index, pair] : llvm::enumerate(
           llvm::zip(getInputs().getTypes(), getOutputs().getTypes()))) {
    auto [input, output] = pair;
    if (input != output)
      return emitOpError() << "entry " << index << ": result of type " << output
                           << ", but the input is " << input;
  }
  return success();
}
