//===- Bufferize.cpp - --fluid-bufferize ----------------------------------===//
//
// Tensor values become buffers, ops become kernel launches. The pass works
// op by op in program order, so every launch reads buffers that earlier
// launches wrote, and a parameter's buffer changes exactly where the
// program's fluid.set_param was.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDBUFFERIZE
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

MemRefType bufferTypeOf(Type tensor) {
  auto type = cast<RankedTensorType>(tensor);
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// Bufferizes one function.
class FunctionBufferizer {
public:
  explicit FunctionBufferizer(func::FuncOp func)
      : func(func), builder(func.getContext()) {}

  LogicalResult run();

private:
  LogicalResult convert(Operation *op);
  LogicalResult convertChannelsLast(BatchNormApplyOp apply);
  Value fresh(Location loc, Type tensor) {
    return memref::AllocOp::create(builder, loc, bufferTypeOf(tensor));
  }
  /// Whether `value` (read from parameter `name`) is used after a
  /// fluid.set_param of that parameter, so it must be snapshotted.
  bool usedAfterOverwrite(GetParamOp get);

  func::FuncOp func;
  OpBuilder builder;
  IRMapping buffers;
  DenseSet<Value> paramBuffers;
};

bool FunctionBufferizer::usedAfterOverwrite(GetParamOp get) {
  Operation *firstSet = nullptr;
  for (Operation *op = get->getNextNode(); op && !firstSet;
       op = op->getNextNode())
    if (auto set = dyn_cast<SetParamOp>(op))
      if (set.getName() == get.getName())
        firstSet = op;
  if (!firstSet)
    return false;
  return llvm::any_of(get->getUsers(), [&](Operation *user) {
    return firstSet->isBeforeInBlock(user) || user == firstSet;
  });
}

LogicalResult FunctionBufferizer::convert(Operation *op) {
  Location loc = op->getLoc();
  builder.setInsertionPoint(op);
  if (auto get = dyn_cast<GetParamOp>(op)) {
    Value buffer = fluid_rt::ParamRefOp::create(
        builder, loc, bufferTypeOf(get.getType()), get.getNameAttr());
    if (usedAfterOverwrite(get)) {
      Value snapshot = fresh(loc, get.getType());
      memref::CopyOp::create(builder, loc, buffer, snapshot);
      buffer = snapshot;
    } else {
      paramBuffers.insert(buffer);
    }
    buffers.map(get.getResult(), buffer);
    return success();
  }
  if (auto set = dyn_cast<SetParamOp>(op)) {
    Value target = fluid_rt::ParamRefOp::create(
        builder, loc, bufferTypeOf(set.getValue().getType()),
        set.getNameAttr());
    memref::CopyOp::create(builder, loc, buffers.lookup(set.getValue()),
                           target);
    return success();
  }
  if (isa<ReshapeOp, FlattenOp>(op)) {
    buffers.map(op->getResult(0),
                fluid_rt::ViewOp::create(
                    builder, loc, bufferTypeOf(op->getResult(0).getType()),
                    buffers.lookup(op->getOperand(0))));
    return success();
  }
  // A channels-last batch_norm_apply is the kernel's [rows, C] form on
  // views: the same elements, per channel along the last axis.
  if (auto apply = dyn_cast<BatchNormApplyOp>(op);
      apply && apply.getChannelsLast())
    return convertChannelsLast(apply);
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    SmallVector<Value> results;
    for (Value v : ret.getOperands()) {
      Value buffer = buffers.lookup(v);
      // The caller must not see later updates of a parameter.
      if (paramBuffers.contains(buffer) || isa<BlockArgument>(buffer)) {
        Value copy = fresh(loc, v.getType());
        memref::CopyOp::create(builder, loc, buffer, copy);
        buffer = copy;
      }
      results.push_back(buffer);
    }
    func::ReturnOp::create(builder, loc, results);
    return success();
  }
  // The all-reduce averages its gradients in place (its launch reads and
  // writes the same buffers): each result is its
  // input's buffer, live until the update reads it, so that the cuda
  // backend's asynchronous all-reduce may run until then. An input the
  // step must not overwrite (an argument, a parameter) is copied first.
  if (auto reduce = dyn_cast<AllReduceMeanOp>(op)) {
    SmallVector<Value> targets;
    for (auto [input, result] :
         llvm::zip(reduce.getInputs(), reduce.getOutputs())) {
      Value buffer = buffers.lookup(input);
      if (isa<BlockArgument>(buffer) || paramBuffers.contains(buffer) ||
          !buffer.getDefiningOp<memref::AllocOp>()) {
        Value copy = fresh(loc, input.getType());
        memref::CopyOp::create(builder, loc, buffer, copy);
        buffer = copy;
      }
      buffers.map(result, buffer);
      targets.push_back(buffer);
    }
    fluid_rt::LaunchOp::create(
        builder, loc, op->getName().stripDialect(), targets, targets,
        builder.getDictionaryAttr(builder.getNamedAttr(
            "bucket", builder.getI64IntegerAttr(reduce.getBucket()))));
    return success();
  }
  if (!isa<FluidDialect>(op->getDialect()))
    return op->emitOpError() << "cannot be bufferized";

  SmallVector<Value> inputs, outputs;
  for (Value operand : op->getOperands())
    inputs.push_back(buffers.lookup(operand));
  for (Value result : op->getResults()) {
    Value buffer = fresh(loc, result.getType());
    buffers.map(result, buffer);
    outputs.push_back(buffer);
  }
  auto params =
      dyn_cast_or_null<DictionaryAttr>(op->getPropertiesAsAttribute());
  NamedAttrList attrs(params ? params : builder.getDictionaryAttr({}));
  attrs.append(op->getDiscardableAttrDictionary().getValue());
  auto launch = fluid_rt::LaunchOp::create(
      builder, loc, op->getName().stripDialect(), inputs, outputs,
      attrs.getDictionary(builder.getContext()));
  // A fused region keeps its body (tensor ops on the inputs' tensors).
  if (auto fusion = dyn_cast<FusionOp>(op))
    launch.getBody().takeBody(fusion.getBody());
  return success();
}

LogicalResult FunctionBufferizer::convertChannelsLast(BatchNormApplyOp apply) {
  Location loc = apply.getLoc();
  RankedTensorType type = apply.getType();
  int64_t channels = type.getShape().back();
  auto rows = RankedTensorType::get(
      {type.getNumElements() / channels, channels}, type.getElementType());
  SmallVector<Value> inputs = {fluid_rt::ViewOp::create(
      builder, loc, bufferTypeOf(rows), buffers.lookup(apply.getInput()))};
  for (Value operand : apply->getOperands().drop_front())
    inputs.push_back(buffers.lookup(operand));
  Value output = fresh(loc, rows);
  fluid_rt::LaunchOp::create(builder, loc, "batch_norm_apply", inputs,
                             ValueRange{output}, builder.getDictionaryAttr({}));
  buffers.map(apply.getOutput(), fluid_rt::ViewOp::create(
                                     builder, loc, bufferTypeOf(type), output));
  return success();
}

LogicalResult FunctionBufferizer::run() {
  if (func.isExternal())
    return success();
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      return func.emitOpError()
             << "argument #" << arg.getArgNumber() << " is not a tensor";
    arg.setType(bufferTypeOf(arg.getType()));
    buffers.map(arg, arg);
  }
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Operation *op : ops)
    if (failed(convert(op)))
      return failure();
  // The old ops use each other's results: drop them last first.
  for (Operation *op : llvm::reverse(ops)) {
    op->dropAllUses();
    op->erase();
  }
  SmallVector<Type> resultTypes;
  for (Type type : func.getResultTypes())
    resultTypes.push_back(bufferTypeOf(type));
  func.setType(FunctionType::get(func.getContext(), body.getArgumentTypes(),
                                 resultTypes));
  return success();
}

struct FluidBufferizePass
    : public mlir::fluid::impl::FluidBufferizeBase<FluidBufferizePass> {
  using Base::Base;

  void runOnOperation() override {
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>())
      if (failed(FunctionBufferizer(func).run()))
        return signalPassFailure();
  }
};

} // namespace
