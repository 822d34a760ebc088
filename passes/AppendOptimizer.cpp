//===- AppendOptimizer.cpp - --fluid-append-optimizer ---------------------===//
//
// Completes a training step: from the gradients that --fluid-append-backward
// returns, computes this step's learning rate from a step counter and
// updates every parameter in place (get, update, set), with torch.optim's
// rules. Everything is ordinary ops, so later passes can fold and fuse it.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>
#include <string>

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDAPPENDOPTIMIZER
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

enum class Optimizer { Sgd, Momentum, Adam, AdamW };
enum class Schedule { Constant, Step, MultiStep, Exponential, Cosine };

/// The name of the step counter parameter.
constexpr StringLiteral kGlobalStep = "global_step";
/// The name of the base learning rate parameter (with lr-param).
constexpr StringLiteral kLearningRate = "learning_rate";

struct FluidAppendOptimizerPass
    : public mlir::fluid::impl::FluidAppendOptimizerBase<
          FluidAppendOptimizerPass> {
  using Base::Base;

  /// Parses and checks the options, so that a bad one is reported where the
  /// pipeline is built, once, through `errorHandler`.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override;
  /// Checks the options again (a pass built from C++ skips the above).
  LogicalResult initialize(MLIRContext *context) override;
  void runOnOperation() override;

private:
  /// Sets `kind` and `scheduleKind`; returns what is wrong with the options,
  /// or an empty string.
  std::string checkOptions();

  Optimizer kind = Optimizer::Momentum;
  Schedule scheduleKind = Schedule::Constant;

  /// Declares a parameter next to `after`, or reuses one of the same name
  /// and type; fails if the name is taken by something else.
  FailureOr<ParamOp> declareState(OpBuilder &builder, ParamOp after,
                                  StringRef name, RankedTensorType type);
  /// The learning rate at completed-step count `step` (i64), as f64.
  Value learningRate(OpBuilder &builder, Location loc, Value step,
                     Schedule scheduleKind);
  /// The rate of schedule `kind` (without warm-up) at step `t` (f64).
  Value scheduledRate(OpBuilder &builder, Location loc, Value t,
                      Schedule scheduleKind);
  /// Replaces each gradient of `updates` by its unscaled value (one
  /// fluid.unscale_grads per element type) and returns the flag that some
  /// gradient is not finite.
  Value unscaleGradients(OpBuilder &builder, Location loc,
                         MutableArrayRef<std::pair<ParamOp, Value>> updates);
  /// Backs off or grows @loss_scale from this step's flag, and counts.
  void updateLossScale(OpBuilder &builder, Location loc, Value foundInf);
  /// lr * factor + offset (f64): a constant, or computed from the
  /// @learning_rate parameter with lr-param.
  Value baseRate(OpBuilder &builder, Location loc, double factor = 1.0,
                 double offset = 0.0);
};

Value f64Scalar(OpBuilder &builder, Location loc, double value) {
  auto type = RankedTensorType::get({}, builder.getF64Type());
  return ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(type, builder.getF64FloatAttr(value)));
}

Value scalarOf(OpBuilder &builder, Location loc, Type elementType,
               double value) {
  auto type = RankedTensorType::get({}, elementType);
  return ConstantOp::create(
      builder, loc,
      DenseElementsAttr::get(type, FloatAttr::get(elementType, value)));
}

std::string FluidAppendOptimizerPass::checkOptions() {
  auto bad = [](const Twine &message) { return message.str(); };
  std::optional<Optimizer> parsedKind =
      llvm::StringSwitch<std::optional<Optimizer>>(optimizer)
          .Case("sgd", Optimizer::Sgd)
          .Case("momentum", Optimizer::Momentum)
          .Case("adam", Optimizer::Adam)
          .Case("adamw", Optimizer::AdamW)
          .Default(std::nullopt);
  if (!parsedKind)
    return bad("unknown optimizer '" + optimizer +
               "'; expected sgd, momentum, adam or adamw");
  kind = *parsedKind;
  std::optional<Schedule> parsedSchedule =
      llvm::StringSwitch<std::optional<Schedule>>(schedule)
          .Case("constant", Schedule::Constant)
          .Case("step", Schedule::Step)
          .Case("multistep", Schedule::MultiStep)
          .Case("exponential", Schedule::Exponential)
          .Case("cosine", Schedule::Cosine)
          .Default(std::nullopt);
  if (!parsedSchedule)
    return bad("unknown schedule '" + schedule +
               "'; expected constant, step, multistep, exponential or cosine");
  scheduleKind = *parsedSchedule;
  if (!(lr > 0) || !std::isfinite(lr))
    return bad("lr must be finite and > 0, got " +
               std::to_string(lr.getValue()));
  if (!(weightDecay >= 0) || !std::isfinite(weightDecay))
    return bad("weight-decay must be finite and >= 0");
  if (!(momentum >= 0 && momentum <= 1))
    return bad("momentum must be in [0, 1], got " +
               std::to_string(momentum.getValue()));
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return bad("beta1 and beta2 must be in [0, 1)");
  if (!(epsilon > 0))
    return bad("epsilon must be > 0");
  if (scheduleKind == Schedule::Step && stepSize < 1)
    return bad("the step schedule needs step-size >= 1");
  if (scheduleKind == Schedule::Cosine && totalSteps < 1)
    return bad("the cosine schedule needs total-steps >= 1");
  if (scheduleKind == Schedule::MultiStep) {
    if (milestones.empty())
      return bad("the multistep schedule needs milestones");
    if (!llvm::is_sorted(milestones) || milestones.front() < 1)
      return bad("milestones must be positive and ascending");
  }
  if (scheduleKind != Schedule::Constant && !(gamma > 0) &&
      scheduleKind != Schedule::Cosine)
    return bad("gamma must be > 0");
  if (warmupSteps < 0)
    return bad("warmup-steps must be >= 0");
  if (warmupSteps > 0 && !(warmupStartFactor > 0 && warmupStartFactor <= 1))
    return bad("warmup-start-factor must be in (0, 1]");
  // The growth tracker counts in f32, exact up to 2^24.
  if (scaleGrowthInterval < 1 || scaleGrowthInterval > (int64_t(1) << 24))
    return bad("scale-growth-interval must be in [1, 2^24], got " +
               std::to_string(scaleGrowthInterval.getValue()));
  if (!(scaleGrowthFactor > 1) || !std::isfinite(scaleGrowthFactor))
    return bad("scale-growth-factor must be finite and > 1");
  if (!(scaleBackoffFactor > 0 && scaleBackoffFactor < 1))
    return bad("scale-backoff-factor must be in (0, 1)");
  const double f32Max = std::numeric_limits<float>::max();
  if (!(minLossScale > 0) || !(maxLossScale >= minLossScale) ||
      !(maxLossScale <= f32Max))
    return bad("min-loss-scale and max-loss-scale must satisfy 0 < min <= "
               "max <= the largest f32");
  return "";
}

LogicalResult FluidAppendOptimizerPass::initializeOptions(
    StringRef options,
    function_ref<LogicalResult(const Twine &)> errorHandler) {
  if (failed(Base::initializeOptions(options, errorHandler)))
    return failure();
  std::string problem = checkOptions();
  if (!problem.empty())
    return errorHandler(problem);
  return success();
}

LogicalResult FluidAppendOptimizerPass::initialize(MLIRContext *context) {
  std::string problem = checkOptions();
  if (!problem.empty())
    return emitError(UnknownLoc::get(context))
           << "--fluid-append-optimizer: " << problem;
  return success();
}

FailureOr<ParamOp>
FluidAppendOptimizerPass::declareState(OpBuilder &builder, ParamOp after,
                                       StringRef name, RankedTensorType type) {
  return declareStateParam(getOperation(), builder, after, name, type,
                           "--fluid-append-optimizer");
}

Value FluidAppendOptimizerPass::baseRate(OpBuilder &builder, Location loc,
                                         double factor, double offset) {
  if (!lrParam)
    return f64Scalar(builder, loc, lr * factor + offset);
  auto type = RankedTensorType::get({}, builder.getF64Type());
  Value rate = GetParamOp::create(builder, loc, type, kLearningRate);
  if (factor != 1.0)
    rate = MulOp::create(builder, loc, rate, f64Scalar(builder, loc, factor));
  if (offset != 0.0)
    rate = AddOp::create(builder, loc, rate, f64Scalar(builder, loc, offset));
  return rate;
}

Value FluidAppendOptimizerPass::scheduledRate(OpBuilder &builder, Location loc,
                                              Value t, Schedule scheduleKind) {
  switch (scheduleKind) {
  case Schedule::Constant:
    return baseRate(builder, loc);
  case Schedule::Step: {
    // lr * gamma^floor(t / step_size)
    Value periods = FloorOp::create(
        builder, loc,
        DivOp::create(builder, loc, t, f64Scalar(builder, loc, stepSize)));
    return MulOp::create(
        builder, loc, baseRate(builder, loc),
        PowOp::create(builder, loc, f64Scalar(builder, loc, gamma), periods));
  }
  case Schedule::MultiStep: {
    // lr * gamma^(number of milestones <= t)
    Value passed = f64Scalar(builder, loc, 0.0);
    for (int64_t milestone : milestones)
      passed = AddOp::create(
          builder, loc, passed,
          GreaterEqualOp::create(builder, loc, t,
                                 f64Scalar(builder, loc, milestone)));
    return MulOp::create(
        builder, loc, baseRate(builder, loc),
        PowOp::create(builder, loc, f64Scalar(builder, loc, gamma), passed));
  }
  case Schedule::Exponential:
    return MulOp::create(
        builder, loc, baseRate(builder, loc),
        PowOp::create(builder, loc, f64Scalar(builder, loc, gamma), t));
  case Schedule::Cosine: {
    // eta_min + (lr - eta_min) * (1 + cos(pi * t / T)) / 2
    Value angle = MulOp::create(
        builder, loc, f64Scalar(builder, loc, M_PI),
        DivOp::create(builder, loc, t, f64Scalar(builder, loc, totalSteps)));
    Value wave =
        DivOp::create(builder, loc,
                      AddOp::create(builder, loc, f64Scalar(builder, loc, 1.0),
                                    CosOp::create(builder, loc, angle)),
                      f64Scalar(builder, loc, 2.0));
    return AddOp::create(builder, loc, f64Scalar(builder, loc, etaMin),
                         MulOp::create(builder, loc,
                                       baseRate(builder, loc, 1.0, -etaMin),
                                       wave));
  }
  }
  llvm_unreachable("unknown schedule");
}

Value FluidAppendOptimizerPass::learningRate(OpBuilder &builder, Location loc,
                                             Value step,
                                             Schedule scheduleKind) {
  auto f64Type = RankedTensorType::get({}, builder.getF64Type());
  Value t = CastOp::create(builder, loc, f64Type, step);
  if (warmupSteps == 0)
    return scheduledRate(builder, loc, t, scheduleKind);
  // Warm-up: lr * (s + (1 - s) * t / W) for t < W; then the schedule,
  // restarted at t - W.
  Value warmupLength = f64Scalar(builder, loc, warmupSteps);
  Value ramp =
      MulOp::create(builder, loc, baseRate(builder, loc, 1 - warmupStartFactor),
                    DivOp::create(builder, loc, t, warmupLength));
  Value warm = AddOp::create(builder, loc,
                             baseRate(builder, loc, warmupStartFactor), ramp);
  Value after = MaximumOp::create(builder, loc,
                                  SubOp::create(builder, loc, t, warmupLength),
                                  f64Scalar(builder, loc, 0.0));
  Value scheduled = scheduledRate(builder, loc, after, scheduleKind);
  Value done = GreaterEqualOp::create(builder, loc, t, warmupLength);
  return SelectOp::create(builder, loc, done, scheduled, warm);
}

Value FluidAppendOptimizerPass::unscaleGradients(
    OpBuilder &builder, Location loc,
    MutableArrayRef<std::pair<ParamOp, Value>> updates) {
  auto f32Scalar = RankedTensorType::get({}, builder.getF32Type());
  Value scale = GetParamOp::create(builder, loc, f32Scalar, kLossScaleParam);
  llvm::MapVector<Type, SmallVector<unsigned>> byType;
  for (auto [index, update] : llvm::enumerate(updates))
    byType[cast<RankedTensorType>(update.second.getType()).getElementType()]
        .push_back(index);
  Value foundInf;
  for (auto &[elementType, indices] : byType) {
    SmallVector<Value> grads;
    for (unsigned index : indices)
      grads.push_back(updates[index].second);
    auto op = UnscaleGradsOp::create(builder, loc, ValueRange(grads).getTypes(),
                                     f32Scalar, grads, scale);
    for (auto [index, unscaled] : llvm::zip(indices, op.getUnscaled()))
      updates[index].second = unscaled;
    foundInf = foundInf
                   ? MaximumOp::create(builder, loc, foundInf, op.getFoundInf())
                         .getResult()
                   : op.getFoundInf();
  }
  return foundInf;
}

void FluidAppendOptimizerPass::updateLossScale(OpBuilder &builder, Location loc,
                                               Value foundInf) {
  Type f32 = builder.getF32Type();
  auto f32Scalar = RankedTensorType::get({}, f32);
  auto constant = [&](double value) {
    return scalarOf(builder, loc, f32, value);
  };
  Value scale = GetParamOp::create(builder, loc, f32Scalar, kLossScaleParam);
  Value tracker =
      GetParamOp::create(builder, loc, f32Scalar, kLossScaleGrowthTrackerParam);
  // good = (tracker + 1) * (1 - found): the steps without overflow, 0 after
  // one; grow once they reach the interval (GradScaler's
  // _amp_update_scale_), then count again from 0.
  Value good = MulOp::create(
      builder, loc, AddOp::create(builder, loc, tracker, constant(1.0)),
      SubOp::create(builder, loc, constant(1.0), foundInf));
  Value grow = GreaterEqualOp::create(builder, loc, good,
                                      constant(double(scaleGrowthInterval)));
  Value factor = SelectOp::create(
      builder, loc, foundInf, constant(scaleBackoffFactor),
      SelectOp::create(builder, loc, grow, constant(scaleGrowthFactor),
                       constant(1.0)));
  Value scaled = MinimumOp::create(
      builder, loc,
      MaximumOp::create(builder, loc,
                        MulOp::create(builder, loc, scale, factor),
                        constant(minLossScale)),
      constant(maxLossScale));
  SetParamOp::create(builder, loc, kLossScaleParam, scaled);
  SetParamOp::create(builder, loc, kLossScaleGrowthTrackerParam,
                     SelectOp::create(builder, loc, grow, constant(0.0), good));
  auto stepType = RankedTensorType::get({}, builder.getI64Type());
  Value skipped =
      GetParamOp::create(builder, loc, stepType, kLossScaleSkippedParam);
  SetParamOp::create(
      builder, loc, kLossScaleSkippedParam,
      AddOp::create(builder, loc, skipped,
                    CastOp::create(builder, loc, stepType, foundInf)));
}

void FluidAppendOptimizerPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::string why;
  FailureOr<func::FuncOp> found = findEntryFunction(module, funcName, why);
  if (failed(found)) {
    module.emitError() << "--fluid-append-optimizer: " << why;
    return signalPassFailure();
  }
  func::FuncOp func = *found;

  // The gradients, by parameter.
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<std::pair<ParamOp, Value>> updates;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto param =
        func.getResultAttrOfType<FlatSymbolRefAttr>(i, kGradOfAttrName);
    if (!param)
      continue;
    auto paramOp = SymbolTable::lookupSymbolIn(module, param.getAttr());
    if (!isa_and_nonnull<ParamOp>(paramOp)) {
      func.emitError() << "result #" << i << " is the gradient of " << param
                       << ", which is not a fluid.param";
      return signalPassFailure();
    }
    updates.push_back({cast<ParamOp>(paramOp), ret.getOperand(i)});
  }
  if (updates.empty()) {
    func.emitError() << "--fluid-append-optimizer: @" << func.getSymName()
                     << " returns no gradients (fluid.grad_of); run "
                        "--fluid-append-backward first";
    return signalPassFailure();
  }

  OpBuilder builder(&getContext());
  ParamOp last;
  for (ParamOp param : module.getOps<ParamOp>())
    last = param;
  auto stepType = RankedTensorType::get({}, builder.getI64Type());
  FailureOr<ParamOp> stepParam =
      declareState(builder, last, kGlobalStep, stepType);
  if (failed(stepParam))
    return signalPassFailure();
  last = *stepParam;
  if (lrParam) {
    // The base rate, initialized to lr: a hyperparameter kept in
    // checkpoints, which a compiled program's --lr overwrites.
    FailureOr<ParamOp> rateParam =
        declareState(builder, last, kLearningRate,
                     RankedTensorType::get({}, builder.getF64Type()));
    if (failed(rateParam))
      return signalPassFailure();
    (*rateParam)
        .setInitAttr(InitializerAttr::get(
            builder.getContext(), InitKind::Constant, lr, 0.0, FanMode::FanIn));
    last = *rateParam;
  }

  // Optimizer state, declared next to the counter.
  StringRef stateNames[2];
  int stateCount = 0;
  if (kind == Optimizer::Momentum) {
    stateNames[0] = "momentum_buffer";
    stateCount = 1;
  } else if (kind == Optimizer::Adam || kind == Optimizer::AdamW) {
    stateNames[0] = "exp_avg";
    stateNames[1] = "exp_avg_sq";
    stateCount = 2;
  }
  SmallVector<SmallVector<ParamOp, 2>> states;
  for (auto &[param, grad] : updates) {
    SmallVector<ParamOp, 2> paramStates;
    for (int s = 0; s < stateCount; ++s) {
      FailureOr<ParamOp> state = declareState(
          builder, last, (param.getSymName() + "." + stateNames[s]).str(),
          param.getTensorType());
      if (failed(state))
        return signalPassFailure();
      last = *state;
      paramStates.push_back(*state);
    }
    states.push_back(paramStates);
  }

  // Dynamic loss scaling: its state next to the scale.
  ParamOp scaleParam;
  unsigned lossIndex = 0;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (func.getResultAttr(i, kLossAttrName))
      lossIndex = i;
  if (auto scaleName = func.getResultAttrOfType<FlatSymbolRefAttr>(
          lossIndex, kLossScaleAttrName)) {
    scaleParam = dyn_cast_or_null<ParamOp>(
        SymbolTable::lookupSymbolIn(module, scaleName.getAttr()));
    auto f32Scalar = RankedTensorType::get({}, builder.getF32Type());
    if (!scaleParam || scaleParam.getType() != f32Scalar) {
      func.emitError() << "the loss is scaled by " << scaleName
                       << ", which is not a tensor<f32> fluid.param";
      return signalPassFailure();
    }
    for (auto [name, type] : {std::pair<StringRef, RankedTensorType>{
                                  kLossScaleGrowthTrackerParam, f32Scalar},
                              {kLossScaleSkippedParam, stepType}}) {
      FailureOr<ParamOp> state = declareState(builder, last, name, type);
      if (failed(state))
        return signalPassFailure();
      last = *state;
    }
  }

  Location loc = NameLoc::get(builder.getStringAttr("optimizer"), ret.getLoc());
  builder.setInsertionPoint(ret);
  Value foundInf;
  if (scaleParam)
    foundInf = unscaleGradients(builder, loc, updates);
  Value step = GetParamOp::create(builder, loc, stepType, kGlobalStep);
  Value rate64 = learningRate(builder, loc, step, scheduleKind);
  auto one = DenseElementsAttr::get(stepType, builder.getI64IntegerAttr(1));
  Value next =
      AddOp::create(builder, loc, step, ConstantOp::create(builder, loc, one));
  SetParamOp::create(builder, loc, kGlobalStep, next);
  // Adam's bias correction counts the updates made, as torch.optim's
  // state["step"] does: skipped steps do not count.
  Value adamStep = next;
  if (scaleParam && (kind == Optimizer::Adam || kind == Optimizer::AdamW))
    adamStep = SubOp::create(
        builder, loc, next,
        GetParamOp::create(builder, loc, stepType, kLossScaleSkippedParam));

  DenseMap<Type, Value> rateByType;
  for (auto [index, update] : llvm::enumerate(updates)) {
    auto [param, grad] = update;
    RankedTensorType type = param.getTensorType();
    Type elementType = type.getElementType();
    Value &rate = rateByType[elementType];
    if (!rate)
      rate = CastOp::create(builder, loc,
                            RankedTensorType::get({}, elementType), rate64);
    // One product per parameter, the way Fluid did; folding it is a pass.
    Value paramRate =
        MulOp::create(builder, loc, rate,
                      scalarOf(builder, loc, elementType,
                               param.getLrMult().convertToDouble()));
    double decay = weightDecay * param.getDecayMult().convertToDouble();
    Value value = GetParamOp::create(builder, loc, type, param.getSymName());
    SmallVector<Value> stateValues;
    for (ParamOp state : states[index])
      stateValues.push_back(
          GetParamOp::create(builder, loc, type, state.getSymName()));

    SmallVector<Value> results;
    switch (kind) {
    case Optimizer::Sgd:
      results.push_back(SgdOp::create(builder, loc, value, grad, paramRate,
                                      foundInf,
                                      builder.getF64FloatAttr(decay)));
      break;
    case Optimizer::Momentum: {
      auto op = MomentumOp::create(
          builder, loc, value, grad, stateValues[0], paramRate, foundInf,
          builder.getF64FloatAttr(momentum), builder.getF64FloatAttr(decay),
          nesterov ? builder.getUnitAttr() : nullptr);
      results.append(op->result_begin(), op->result_end());
      break;
    }
    case Optimizer::Adam:
    case Optimizer::AdamW: {
      auto op = AdamOp::create(
          builder, loc, value, grad, stateValues[0], stateValues[1], paramRate,
          adamStep, foundInf, builder.getF64FloatAttr(beta1),
          builder.getF64FloatAttr(beta2), builder.getF64FloatAttr(epsilon),
          builder.getF64FloatAttr(decay),
          kind == Optimizer::AdamW ? builder.getUnitAttr() : nullptr);
      results.append(op->result_begin(), op->result_end());
      break;
    }
    }
    SetParamOp::create(builder, loc, param.getSymName(), results[0]);
    for (auto [state, newValue] :
         llvm::zip(states[index], ArrayRef(results).drop_front()))
      SetParamOp::create(builder, loc, state.getSymName(), newValue);
  }

  if (scaleParam)
    updateLossScale(builder, loc, foundInf);

  // The step returns the loss and this step's learning rate (for logs).
  Value loss = ret.getOperand(lossIndex);
  DictionaryAttr lossAttrs = func.getResultAttrDict(lossIndex);
  DictionaryAttr rateAttrs = builder.getDictionaryAttr(
      builder.getNamedAttr(kLearningRateResultAttrName, builder.getUnitAttr()));
  func::ReturnOp::create(builder, ret.getLoc(), ValueRange{loss, rate64});
  ret.erase();
  func.setType(builder.getFunctionType(func.getArgumentTypes(),
                                       {loss.getType(), rate64.getType()}));
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{lossAttrs, rateAttrs});
}

} // namespace
