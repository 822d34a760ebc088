//===- ModelBuilder.cpp - Emits a model's layers as fluid ops -------------===//

#include "ModelBuilder.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::models;

/// kaiming_*'s gain for ReLU networks (nonlinearity='relu').
static const double kReluGain = std::sqrt(2.0);
/// kaiming_uniform's gain in nn.Conv2d/nn.Linear's reset_parameters, which
/// pass a = sqrt(5): sqrt(2 / (1 + a^2)).
static const double kTorchDefaultGain = std::sqrt(1.0 / 3.0);
/// nn.BatchNorm2d's defaults.
static constexpr double kBatchNormEpsilon = 1e-5;
static constexpr double kBatchNormMomentum = 0.1;

ModelBuilder::ModelBuilder(func::FuncOp func, Phase phase)
    : body(OpBuilder::atBlockEnd(&func.getBody().front())), params(func),
      phase(phase) {}

Location ModelBuilder::layerLoc(const Twine &name) {
  return NameLoc::get(body.getStringAttr(name));
}

InitializerAttr ModelBuilder::weightInitializer(WeightInit init) {
  switch (init) {
  case WeightInit::KaimingNormalFanOut:
    return InitializerAttr::get(body.getContext(), InitKind::KaimingNormal,
                                kReluGain, 0.0, FanMode::FanOut);
  case WeightInit::TorchDefault:
    return InitializerAttr::get(body.getContext(), InitKind::KaimingUniform,
                                kTorchDefaultGain, 0.0, FanMode::FanIn);
  }
  llvm_unreachable("unknown weight initializer");
}

InitializerAttr ModelBuilder::biasInitializer(int64_t fanIn) {
  double bound = 1.0 / std::sqrt(static_cast<double>(fanIn));
  return InitializerAttr::get(body.getContext(), InitKind::Uniform, -bound,
                              bound, FanMode::FanIn);
}

InitializerAttr ModelBuilder::constantInitializer(InitKind kind) {
  // The values the parser gives `zeros` and `ones`, so the IR round-trips.
  return InitializerAttr::get(body.getContext(), kind, 0.0, 0.0,
                              FanMode::FanIn);
}

Value ModelBuilder::param(Location loc, const Twine &name,
                          ArrayRef<int64_t> shape, InitializerAttr init,
                          bool trainable) {
  auto type = RankedTensorType::get(shape, body.getF32Type());
  StringAttr symbol = body.getStringAttr(name);
  // Attributes left null take their defaults (and are not printed).
  if (phase == Phase::Training)
    ParamOp::create(params, loc, symbol, TypeAttr::get(type), init,
                    trainable ? BoolAttr() : body.getBoolAttr(false),
                    FloatAttr(), FloatAttr(), DenseI64ArrayAttr());
  return GetParamOp::create(body, loc, type, FlatSymbolRefAttr::get(symbol));
}

template <typename OpT>
OpT ModelBuilder::createInferred(Location loc, ValueRange operands,
                                 const typename OpT::Properties &properties) {
  SmallVector<Type, 5> resultTypes;
  typename OpT::Adaptor adaptor(operands, DictionaryAttr(), properties);
  if (failed(OpT::inferReturnTypes(body.getContext(), loc, adaptor,
                                   resultTypes))) {
    hasFailed = true;
    return nullptr;
  }
  return OpT::create(body, loc, resultTypes, operands, properties);
}

Value ModelBuilder::conv2d(const Twine &name, Value input,
                           const ConvSpec &spec) {
  if (hasFailed)
    return {};
  Location loc = layerLoc(name);
  std::string prefix = name.str();
  int64_t inChannels = cast<RankedTensorType>(input.getType()).getDimSize(1);
  int64_t perGroup = inChannels / spec.groupsValue;
  SmallVector<Value, 3> operands = {
      input, param(loc, prefix + ".weight",
                   {spec.outChannels, perGroup, spec.kernel, spec.kernel},
                   weightInitializer(spec.weightInit))};
  if (spec.hasBias)
    operands.push_back(
        param(loc, prefix + ".bias", {spec.outChannels},
              biasInitializer(perGroup * spec.kernel * spec.kernel)));

  Conv2DOp::Properties properties;
  int64_t s = spec.strideValue, p = spec.paddingValue;
  properties.setStrides(body.getDenseI64ArrayAttr({s, s}));
  properties.setPadding(body.getDenseI64ArrayAttr({p, p, p, p}));
  properties.setGroups(body.getI64IntegerAttr(spec.groupsValue));
  Conv2DOp conv = createInferred<Conv2DOp>(loc, operands, properties);
  return conv ? conv.getOutput() : Value();
}

Value ModelBuilder::batchNorm(const Twine &name, Value input,
                              InitKind weightInit) {
  if (hasFailed)
    return {};
  Location loc = layerLoc(name);
  std::string prefix = name.str();
  int64_t channels = cast<RankedTensorType>(input.getType()).getDimSize(1);
  std::string runningMean = prefix + ".running_mean";
  std::string runningVar = prefix + ".running_var";
  Value operands[] = {
      input,
      param(loc, prefix + ".weight", {channels},
            constantInitializer(weightInit)),
      param(loc, prefix + ".bias", {channels},
            constantInitializer(InitKind::Zeros)),
      param(loc, runningMean, {channels}, constantInitializer(InitKind::Zeros),
            /*trainable=*/false),
      param(loc, runningVar, {channels}, constantInitializer(InitKind::Ones),
            /*trainable=*/false)};

  if (phase == Phase::Inference) {
    BatchNormInferenceOp::Properties properties;
    properties.setEpsilon(body.getF64FloatAttr(kBatchNormEpsilon));
    BatchNormInferenceOp norm =
        createInferred<BatchNormInferenceOp>(loc, operands, properties);
    return norm ? norm.getOutput() : Value();
  }
  BatchNormOp::Properties properties;
  properties.setEpsilon(body.getF64FloatAttr(kBatchNormEpsilon));
  properties.setMomentum(body.getF64FloatAttr(kBatchNormMomentum));
  BatchNormOp norm = createInferred<BatchNormOp>(loc, operands, properties);
  if (!norm)
    return {};
  SetParamOp::create(body, loc,
                     FlatSymbolRefAttr::get(body.getContext(), runningMean),
                     norm.getNewRunningMean());
  SetParamOp::create(body, loc,
                     FlatSymbolRefAttr::get(body.getContext(), runningVar),
                     norm.getNewRunningVar());
  return norm.getOutput();
}

Value ModelBuilder::linear(const Twine &name, Value input,
                           int64_t outFeatures) {
  if (hasFailed)
    return {};
  Location loc = layerLoc(name);
  std::string prefix = name.str();
  int64_t inFeatures = cast<RankedTensorType>(input.getType()).getDimSize(1);
  Value operands[] = {
      input,
      param(loc, prefix + ".weight", {outFeatures, inFeatures},
            weightInitializer(WeightInit::TorchDefault)),
      param(loc, prefix + ".bias", {outFeatures}, biasInitializer(inFeatures))};
  LinearOp op = createInferred<LinearOp>(loc, operands);
  return op ? op.getOutput() : Value();
}

Value ModelBuilder::relu(const Twine &name, Value input) {
  if (hasFailed)
    return {};
  return ReluOp::create(body, layerLoc(name), input).getOutput();
}

Value ModelBuilder::sigmoid(const Twine &name, Value input) {
  if (hasFailed)
    return {};
  return SigmoidOp::create(body, layerLoc(name), input).getOutput();
}

Value ModelBuilder::maxPool(const Twine &name, Value input, int64_t kernel,
                            int64_t stride, int64_t padding) {
  if (hasFailed)
    return {};
  MaxPool2DOp::Properties properties;
  properties.setKernelSize(body.getDenseI64ArrayAttr({kernel, kernel}));
  properties.setStrides(body.getDenseI64ArrayAttr({stride, stride}));
  properties.setPadding(
      body.getDenseI64ArrayAttr({padding, padding, padding, padding}));
  MaxPool2DOp op =
      createInferred<MaxPool2DOp>(layerLoc(name), input, properties);
  return op ? op.getOutput() : Value();
}

Value ModelBuilder::globalAvgPool(const Twine &name, Value input) {
  if (hasFailed)
    return {};
  GlobalAvgPoolOp op = createInferred<GlobalAvgPoolOp>(layerLoc(name), input);
  return op ? op.getOutput() : Value();
}

Value ModelBuilder::flatten(const Twine &name, Value input) {
  if (hasFailed)
    return {};
  FlattenOp::Properties properties;
  properties.setAxis(body.getI64IntegerAttr(1));
  FlattenOp op = createInferred<FlattenOp>(layerLoc(name), input, properties);
  return op ? op.getOutput() : Value();
}

Value ModelBuilder::add(const Twine &name, Value lhs, Value rhs) {
  if (hasFailed)
    return {};
  AddOp op = createInferred<AddOp>(layerLoc(name), {lhs, rhs});
  return op ? op.getOutput() : Value();
}

Value ModelBuilder::mul(const Twine &name, Value lhs, Value rhs) {
  if (hasFailed)
    return {};
  MulOp op = createInferred<MulOp>(layerLoc(name), {lhs, rhs});
  return op ? op.getOutput() : Value();
}

Value ModelBuilder::softmaxCrossEntropy(const Twine &name, Value logits,
                                        Value labels) {
  if (hasFailed)
    return {};
  SoftmaxCrossEntropyOp::Properties properties;
  properties.setReduction(
      ReductionAttr::get(body.getContext(), Reduction::Mean));
  SoftmaxCrossEntropyOp op = createInferred<SoftmaxCrossEntropyOp>(
      layerLoc(name), {logits, labels}, properties);
  return op ? op.getLoss() : Value();
}
