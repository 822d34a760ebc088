//===- NormalizationOps.cpp - BatchNormalization, LayerNormalization -----===//
//
// Batch normalization over inputs of rank 2 to 4. `@forward` normalizes
// with the running statistics; `@loss` with the batch's, and writes the
// updated running statistics back to their parameters, which are not
// trainable.
//
// Layer normalization (opset 17) over the dimensions from `axis` on is
// composed of fluid ops, as torch exports it at opset 13 (ReduceMean, Sub,
// Pow, Sqrt, Div): (x - mean) / sqrt(mean((x - mean)^2) + epsilon) *
// scale + bias, the mean and variance (biased) over those dimensions. It
// has a gradient and its elementwise parts fuse. It computes in the
// input's type, as PyTorch does (stash_type is accepted and not used). The
// optional Mean and InvStdDev outputs are the composition's values.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

static LogicalResult importBatchNorm(FunctionImporter &importer,
                                     const om::Node &node) {
  FailureOr<double> epsilon = importer.floatAttr("epsilon", 1e-5);
  FailureOr<double> momentum = importer.floatAttr("momentum", 0.9);
  FailureOr<int64_t> trainingMode = importer.intAttr("training_mode", 0);
  if (failed(epsilon) || failed(momentum) || failed(trainingMode))
    return failure();
  if (*trainingMode != 0)
    return importer.attributeError("training_mode", Twine(*trainingMode))
           << ": import the inference graph (training_mode = 0); with "
              "--loss the training program uses the batch statistics";
  if (failed(importer.expectOutputs(1, "a training-mode statistic")))
    return failure();
  SmallVector<Value, 5> operands;
  for (unsigned i = 0; i < 5; ++i) {
    FailureOr<Value> operand = importer.floatInput(i);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  // The running statistics are state, not weights.
  ProgramImporter &program = importer.getProgram();
  std::string statNames[2];
  for (unsigned i = 3; i < 5; ++i) {
    const std::string &param = (*importer.lookup(i))->param;
    if (!param.empty()) {
      program.paramTrainable[param] = false;
      statNames[i - 3] = param;
    }
  }

  RankedTensorType type = importer.getTensorType(operands[0]);
  int64_t rank = type.getRank();
  if (rank < 2 || rank > 4)
    return importer.error()
           << "only inputs of rank 2, 3 or 4 are supported, got " << type;
  if (rank == 3) {
    FailureOr<Value> lifted =
        importer.reshape(operands[0], {type.getDimSize(0), type.getDimSize(1),
                                       1, type.getDimSize(2)});
    if (failed(lifted))
      return failure();
    operands[0] = *lifted;
  }

  OpBuilder &builder = importer.getBuilder();
  Location loc = importer.getLoc();
  Value output;
  if (importer.getPhase() == Phase::Inference) {
    BatchNormInferenceOp::Properties properties;
    properties.setEpsilon(builder.getF64FloatAttr(*epsilon));
    FailureOr<BatchNormInferenceOp> norm =
        importer.create<BatchNormInferenceOp>(operands, properties);
    if (failed(norm))
      return failure();
    output = norm->getOutput();
  } else {
    if (statNames[0].empty() || statNames[1].empty())
      return importer.error()
             << "the running mean and variance (inputs #3 and #4) must be "
                "initializers, so that training can update them";
    // Each batch norm updates statistics of its own (torch.onnx's merged
    // ones are read through Identity copies, which are).
    for (unsigned i = 3; i < 5; ++i) {
      auto [it, inserted] = importer.getStatWriters().try_emplace(
          statNames[i - 3], program.currentNode);
      if (!inserted)
        return importer.error()
               << "input #" << i << " '" << node.inputs[i]
               << "' is the running statistic @" << statNames[i - 3]
               << ", which "
               << (it->second == program.currentNode
                       ? std::string("this node")
                       : describeNode(program.model.nodes[it->second],
                                      it->second))
               << " updates already: a training step would write it twice";
    }
    // ONNX weighs the running statistic by `momentum`, PyTorch and fluid
    // the batch's. The attribute has float precision, and so has the
    // result: 1 - 0.9 is 0.1, not 0.09999999999999998.
    BatchNormOp::Properties properties;
    properties.setEpsilon(builder.getF64FloatAttr(*epsilon));
    properties.setMomentum(
        builder.getF64FloatAttr(toDouble(static_cast<float>(1.0 - *momentum))));
    FailureOr<BatchNormOp> norm =
        importer.create<BatchNormOp>(operands, properties);
    if (failed(norm))
      return failure();
    MLIRContext *context = importer.getContext();
    SetParamOp::create(builder, loc,
                       FlatSymbolRefAttr::get(context, statNames[0]),
                       norm->getNewRunningMean());
    SetParamOp::create(builder, loc,
                       FlatSymbolRefAttr::get(context, statNames[1]),
                       norm->getNewRunningVar());
    output = norm->getOutput();
  }
  FailureOr<Value> result = importer.reshape(output, type.getShape());
  return failed(result) ? failure() : importer.define(0, *result);
}

static LogicalResult importLayerNorm(FunctionImporter &importer,
                                     const om::Node &node) {
  FailureOr<int64_t> axisAttr = importer.intAttr("axis", -1);
  FailureOr<double> epsilon = importer.floatAttr("epsilon", 1e-5);
  FailureOr<int64_t> stashType = importer.intAttr("stash_type", 1);
  if (failed(axisAttr) || failed(epsilon) || failed(stashType))
    return failure();
  FailureOr<Value> x = importer.floatInput(0);
  FailureOr<Value> scale = importer.floatInput(1);
  if (failed(x) || failed(scale))
    return failure();
  Value bias;
  if (importer.hasInput(2)) {
    FailureOr<Value> given = importer.floatInput(2);
    if (failed(given))
      return failure();
    bias = *given;
  }
  RankedTensorType type = importer.getTensorType(*x);
  int64_t rank = type.getRank();
  if (rank == 0 || *axisAttr < -rank || *axisAttr >= rank)
    return importer.attributeError("axis", Twine(*axisAttr))
           << ": out of range for rank " << rank;
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  ArrayRef<int64_t> normalized = type.getShape().drop_front(axis);
  for (auto [what, value] : {std::pair<StringRef, Value>{"scale", *scale},
                             std::pair<StringRef, Value>{"bias", bias}}) {
    if (!value)
      continue;
    RankedTensorType operand = importer.getTensorType(value);
    std::optional<SmallVector<int64_t>> shape =
        broadcastShapes(normalized, operand.getShape());
    if (operand.getElementType() != type.getElementType() || !shape ||
        ArrayRef<int64_t>(*shape) != normalized)
      return importer.error()
             << "the " << what << " " << operand
             << " does not broadcast to the normalized dimensions "
             << formatShape(normalized) << " of " << type;
  }

  OpBuilder &builder = importer.getBuilder();
  SmallVector<int64_t> axes;
  for (int64_t d = axis; d < rank; ++d)
    axes.push_back(d);
  MeanOp::Properties properties;
  properties.setAxes(builder.getDenseI64ArrayAttr(axes));
  properties.setKeepDims(builder.getUnitAttr());
  FailureOr<MeanOp> mean = importer.create<MeanOp>(*x, properties);
  if (failed(mean))
    return failure();
  FailureOr<SubOp> centered = importer.create<SubOp>({*x, mean->getOutput()});
  if (failed(centered))
    return failure();
  Value d = centered->getOutput();
  FailureOr<MulOp> square = importer.create<MulOp>({d, d});
  if (failed(square))
    return failure();
  FailureOr<MeanOp> variance =
      importer.create<MeanOp>(square->getOutput(), properties);
  if (failed(variance))
    return failure();
  FailureOr<AddOp> shifted = importer.create<AddOp>(
      {variance->getOutput(),
       importer.scalar(type.getElementType(), *epsilon)});
  if (failed(shifted))
    return failure();
  Value deviation =
      SqrtOp::create(builder, importer.getLoc(), shifted->getOutput())
          .getOutput();
  FailureOr<DivOp> unit = importer.create<DivOp>({d, deviation});
  if (failed(unit))
    return failure();
  // The optional outputs: the mean and 1 / sqrt(variance + epsilon), of
  // the input's shape with the normalized dimensions 1.
  if (importer.hasOutput(2)) {
    FailureOr<DivOp> inverse = importer.create<DivOp>(
        {importer.scalar(type.getElementType(), 1.0), deviation});
    if (failed(inverse) || failed(importer.define(2, inverse->getOutput())))
      return failure();
  }
  if (failed(importer.define(1, mean->getOutput())))
    return failure();
  FailureOr<MulOp> scaled = importer.create<MulOp>({unit->getOutput(), *scale});
  if (failed(scaled))
    return failure();
  Value result = scaled->getOutput();
  if (bias) {
    FailureOr<AddOp> shiftedResult = importer.create<AddOp>({result, bias});
    if (failed(shiftedResult))
      return failure();
    result = shiftedResult->getOutput();
  }
  return importer.define(0, result);
}

std::vector<OperatorInfo>
mlir::fluid::onnx_import::getNormalizationOperators() {
  return {
      {"BatchNormalization",
       &importBatchNorm,
       {1, 6, 7, 9, 14, 15},
       {"epsilon", "momentum", "training_mode"},
       5,
       3},
      {"LayerNormalization",
       &importLayerNorm,
       {17},
       {"axis", "epsilon", "stash_type"},
       3,
       3},
  };
}
