//===- Interpreter.cpp - Run fluid functions on the cpu backend -----------===//

#include "fluid/Interpreter/Interpreter.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/Fluid/IR/KernelParams.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/runtime/Collective.h"
#include "fluid/runtime/CpuGradKernels.h"
#include "fluid/runtime/CpuKernels.h"
#include "fluid/runtime/CpuOptimizerKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>
#include <vector>

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// The tensor type of a tensor value or of a buffer (the interpreter holds
/// both the same way), or null.
static RankedTensorType tensorTypeOf(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref.hasStaticShape()
               ? RankedTensorType::get(memref.getShape(),
                                       memref.getElementType())
               : RankedTensorType();
  return dyn_cast<RankedTensorType>(type);
}

/// `t` seen as [rows, C]: every dimension but the last folded into one.
static fluid_tensor channelsLastRows(fluid_tensor t) {
  int64_t rows = 1;
  for (int32_t d = 0; d + 1 < t.rank; ++d)
    rows *= t.shape[d];
  int64_t channels = t.rank > 0 ? t.shape[t.rank - 1] : 1;
  t.rank = 2;
  t.shape[0] = rows;
  t.shape[1] = channels;
  return t;
}

/// Runs one function: the values computed so far, and the ops' kernels.
class FunctionRun {
public:
  FunctionRun(ParamStore &params, bool poisonMemory)
      : params(params), poisonMemory(poisonMemory) {}

  FailureOr<SmallVector<HostTensor>> run(func::FuncOp func,
                                         ArrayRef<HostTensor> args);

private:
  LogicalResult execute(Operation *op);
  /// Runs `op` if it is a buffer-level op (fluid_rt, memref); sets
  /// `handled` accordingly.
  LogicalResult executeBufferOp(Operation *op, bool &handled);

  /// The value of `v` as a runtime descriptor (valid while `v` is live).
  fluid_tensor in(Value v) { return values.lookup(v).descriptor(); }
  /// in(v), or an empty descriptor for an absent optional operand.
  fluid_tensor optionalIn(Value v) { return v ? in(v) : fluid_tensor{}; }
  std::vector<fluid_tensor> ins(ValueRange range) {
    std::vector<fluid_tensor> descriptors;
    for (Value v : range)
      descriptors.push_back(in(v));
    return descriptors;
  }
  /// Allocates the value of result `v`; fails with a diagnostic.
  FailureOr<HostTensor> allocate(Value v);
  /// Allocates every result of `op` and returns their descriptors.
  FailureOr<SmallVector<fluid_tensor>> allocateResults(Operation *op);
  /// Turns a runtime status into a diagnostic at `op`.
  LogicalResult check(Operation *op, fluid_status status);

  LogicalResult constant(ConstantOp op);
  /// Runs a fused region's body op by op (each with its cpu kernel), so
  /// that a program's results do not depend on what was fused.
  LogicalResult fusion(FusionOp op);

  ParamStore &params;
  bool poisonMemory;
  DenseMap<Value, HostTensor> values;
  SmallVector<HostTensor> results;
};

FailureOr<HostTensor> FunctionRun::allocate(Value v) {
  // A launch's results are its output buffers, mapped before it runs.
  if (HostTensor preset = values.lookup(v); !preset.isNull())
    return preset;
  auto type = tensorTypeOf(v.getType());
  Operation *op = v.getDefiningOp();
  if (!type)
    return op->emitError() << "the interpreter cannot hold a value of type "
                           << v.getType();
  llvm::Expected<HostTensor> tensor = HostTensor::allocate(
      type, "result #" + std::to_string(cast<OpResult>(v).getResultNumber()));
  if (!tensor)
    return op->emitError() << llvm::toString(tensor.takeError());
  values[v] = *tensor;
  return *tensor;
}

FailureOr<SmallVector<fluid_tensor>>
FunctionRun::allocateResults(Operation *op) {
  SmallVector<fluid_tensor> descriptors;
  for (Value result : op->getResults()) {
    FailureOr<HostTensor> tensor = allocate(result);
    if (failed(tensor))
      return failure();
    descriptors.push_back(tensor->descriptor());
  }
  return descriptors;
}

LogicalResult FunctionRun::check(Operation *op, fluid_status status) {
  if (status == FLUID_OK)
    return success();
  return op->emitError() << "cpu kernel failed: " << fluid_last_error();
}

/// Copies the elements of a dense constant into `tensor`.
template <typename T>
static void copyElements(DenseElementsAttr attr, const HostTensor &tensor) {
  T *out = tensor.dataAs<T>();
  for (auto [i, value] : llvm::enumerate(attr.getValues<T>()))
    out[i] = value;
}

LogicalResult FunctionRun::constant(ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitError() << "the interpreter supports only dense constants";
  FailureOr<HostTensor> tensor = allocate(op.getResult());
  if (failed(tensor))
    return failure();
  switch (tensor->getDType()) {
  case FLUID_F32:
    copyElements<float>(dense, *tensor);
    return success();
  case FLUID_F64:
    copyElements<double>(dense, *tensor);
    return success();
  case FLUID_I32:
    copyElements<int32_t>(dense, *tensor);
    return success();
  case FLUID_I64:
    copyElements<int64_t>(dense, *tensor);
    return success();
  default:
    return op.emitError() << "the interpreter has no "
                          << getDTypeName(tensor->getDType()) << " constants";
  }
}

LogicalResult FunctionRun::executeBufferOp(Operation *op, bool &handled) {
  handled = true;
  if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
    MemRefType type = alloc.getType();
    // An arena: bytes that views give types to.
    if (type.getRank() == 1 && type.getElementType().isInteger(8) &&
        type.hasStaticShape()) {
      llvm::Expected<HostTensor> arena =
          HostTensor::allocate(FLUID_U8, type.getShape(), "the arena");
      if (!arena)
        return op->emitError() << llvm::toString(arena.takeError());
      values[alloc] = *arena;
    } else if (failed(allocate(alloc))) {
      return failure();
    }
    if (poisonMemory)
      values[alloc].poison();
    return success();
  }
  if (auto free = dyn_cast<memref::DeallocOp>(op)) {
    HostTensor freed = values.lookup(free.getMemref());
    if (freed.isNull())
      return op->emitError() << "frees a buffer that does not exist";
    if (poisonMemory)
      freed.poison();
    values.erase(free.getMemref());
    return success();
  }
  if (isa<arith::ConstantIndexOp>(op))
    return success();
  if (auto view = dyn_cast<memref::ViewOp>(op)) {
    HostTensor arena = values.lookup(view.getSource());
    auto shift = view.getByteShift().getDefiningOp<arith::ConstantIndexOp>();
    MemRefType type = view.getType();
    std::optional<fluid_dtype> dtype = getDType(type.getElementType());
    if (arena.isNull() || !shift || !dtype || !type.hasStaticShape())
      return op->emitError() << "the interpreter runs only static views at "
                                "constant offsets of an arena";
    int64_t offset = shift.value();
    HostTensor buffer = arena.viewBytes(offset, *dtype, type.getShape());
    if (offset < 0 || offset + buffer.getByteSize() > arena.getByteSize())
      return op->emitError()
             << "view of bytes [" << offset << ", "
             << offset + buffer.getByteSize() << ") is outside its arena of "
             << arena.getByteSize() << " bytes";
    // A new buffer over memory that earlier buffers used.
    if (poisonMemory)
      buffer.poison();
    values[view] = buffer;
    return success();
  }
  if (auto ref = dyn_cast<fluid_rt::ParamRefOp>(op)) {
    // The parameter's own storage: launches and copies write into it.
    HostTensor value = params.lookup(ref.getName());
    if (value.isNull() || !value.matches(tensorTypeOf(ref.getType())))
      return op->emitError() << "parameter @" << ref.getName()
                             << " has no value of type " << ref.getType();
    values[ref.getResult()] = value;
    return success();
  }
  if (auto view = dyn_cast<fluid_rt::ViewOp>(op)) {
    values[view.getResult()] =
        values.lookup(view.getSource())
            .withShape(cast<MemRefType>(view.getType()).getShape());
    return success();
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    HostTensor from = values.lookup(copy.getSource()),
               to = values.lookup(copy.getTarget());
    std::memcpy(to.data(), from.data(), from.getByteSize());
    return success();
  }
  if (auto launch = dyn_cast<fluid_rt::LaunchOp>(op)) {
    // Run the tensor-level op the launch stands for, on the launch's
    // buffers: its operands read the inputs, its results are the outputs.
    Block arguments;
    Operation *tensorOp = launch.buildTensorOp(arguments);
    if (!tensorOp)
      return failure();
    for (auto [arg, input] :
         llvm::zip(arguments.getArguments(), launch.getInputs()))
      values[arg] = values.lookup(input);
    for (auto [result, output] :
         llvm::zip(tensorOp->getResults(), launch.getOutputs()))
      values[result] = values.lookup(output);
    LogicalResult ran = execute(tensorOp);
    for (Value v : arguments.getArguments())
      values.erase(v);
    for (Value v : tensorOp->getResults())
      values.erase(v);
    tensorOp->destroy();
    return ran;
  }
  handled = false;
  return success();
}

LogicalResult FunctionRun::execute(Operation *op) {
  // Ops that produce no new memory.
  if (auto get = dyn_cast<GetParamOp>(op)) {
    HostTensor value = params.lookup(get.getName());
    if (value.isNull() || !value.matches(get.getType()))
      return op->emitError() << "parameter @" << get.getName()
                             << " has no value of type " << get.getType();
    values[get.getResult()] = value;
    return success();
  }
  if (auto set = dyn_cast<SetParamOp>(op)) {
    params.set(set.getName(), values.lookup(set.getValue()));
    return success();
  }
  if (auto constantOp = dyn_cast<ConstantOp>(op))
    return constant(constantOp);
  if (auto fused = dyn_cast<FusionOp>(op))
    return fusion(fused);
  if (isa<ReshapeOp, FlattenOp>(op)) {
    // Same elements, new shape: the storage is shared, not copied.
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    values[op->getResult(0)] =
        values.lookup(op->getOperand(0)).withShape(type.getShape());
    return success();
  }
  bool handled = false;
  if (failed(executeBufferOp(op, handled)))
    return failure();
  if (handled)
    return success();
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (Value v : ret.getOperands())
      results.push_back(values.lookup(v));
    return success();
  }

  if (!isa<FluidDialect>(op->getDialect()))
    return op->emitError() << "the interpreter does not run '" << op->getName()
                           << "'";
  FailureOr<SmallVector<fluid_tensor>> out = allocateResults(op);
  if (failed(out))
    return failure();
  fluid_tensor *o = out->data();

  bool supported = true;
  fluid_status status =
      llvm::TypeSwitch<Operation *, fluid_status>(op)
          .Case([&](Conv2DOp c) {
            fluid_conv2d_params p = convParams(c);
            fluid_tensor x = in(c.getInput()), w = in(c.getFilter());
            fluid_tensor b = c.getBias() ? in(c.getBias()) : fluid_tensor{};
            return fluid_cpu_conv2d(&x, &w, c.getBias() ? &b : nullptr, o, &p);
          })
          .Case([&](BatchNormOp bn) {
            fluid_batch_norm_params p = batchNormParams(bn);
            fluid_tensor x = in(bn.getInput()), g = in(bn.getScale()),
                         b = in(bn.getShift()), m = in(bn.getRunningMean()),
                         v = in(bn.getRunningVar());
            return fluid_cpu_batch_norm(&x, &g, &b, &m, &v, &o[0], &o[1], &o[2],
                                        &o[3], &o[4], &p);
          })
          .Case([&](BatchNormInferenceOp bn) {
            fluid_tensor x = in(bn.getInput()), g = in(bn.getScale()),
                         b = in(bn.getShift()), m = in(bn.getMean()),
                         v = in(bn.getVariance());
            return fluid_cpu_batch_norm_inference(
                &x, &g, &b, &m, &v, o, bn.getEpsilon().convertToDouble());
          })
          .Case([&](BatchNormApplyOp bn) {
            fluid_tensor x = in(bn.getInput()), g = in(bn.getScale()),
                         b = in(bn.getShift()), m = in(bn.getMean()),
                         s = in(bn.getInvStd());
            if (!bn.getChannelsLast())
              return fluid_cpu_batch_norm_apply(&x, &g, &b, &m, &s, o);
            // Per channel along the last axis: the kernel's [rows, C] form
            // of the same elements.
            fluid_tensor rows = channelsLastRows(x), y = channelsLastRows(*o);
            return fluid_cpu_batch_norm_apply(&rows, &g, &b, &m, &s, &y);
          })
          .Case([&](ReluOp u) {
            fluid_tensor x = in(u.getInput());
            return fluid_cpu_relu(&x, o);
          })
          .Case([&](SigmoidOp u) {
            fluid_tensor x = in(u.getInput());
            return fluid_cpu_sigmoid(&x, o);
          })
          .Case([&](TanhOp u) {
            fluid_tensor x = in(u.getInput());
            return fluid_cpu_tanh(&x, o);
          })
          .Case<AddOp, SubOp, MulOp, DivOp>([&](auto b) {
            fluid_tensor l = in(b.getLhs()), r = in(b.getRhs());
            using OpT = decltype(b);
            if constexpr (std::is_same_v<OpT, AddOp>)
              return fluid_cpu_add(&l, &r, o);
            else if constexpr (std::is_same_v<OpT, SubOp>)
              return fluid_cpu_sub(&l, &r, o);
            else if constexpr (std::is_same_v<OpT, MulOp>)
              return fluid_cpu_mul(&l, &r, o);
            else
              return fluid_cpu_div(&l, &r, o);
          })
          .Case([&](MaxPool2DOp pool) {
            fluid_max_pool2d_params p = maxPoolParams(pool);
            fluid_tensor x = in(pool.getInput());
            return fluid_cpu_max_pool2d(&x, o, &p);
          })
          .Case([&](MaxPool2DWithIndicesOp pool) {
            fluid_max_pool2d_params p = maxPoolParams(pool);
            fluid_tensor x = in(pool.getInput());
            return fluid_cpu_max_pool2d_with_indices(&x, &o[0], &o[1], &p);
          })
          .Case([&](AvgPool2DOp pool) {
            fluid_avg_pool2d_params p = avgPoolParams(pool);
            fluid_tensor x = in(pool.getInput());
            return fluid_cpu_avg_pool2d(&x, o, &p);
          })
          .Case([&](GlobalAvgPoolOp pool) {
            fluid_tensor x = in(pool.getInput());
            return fluid_cpu_global_avg_pool(&x, o);
          })
          .Case([&](MatmulOp m) {
            fluid_matmul_params p = matmulParams(m);
            fluid_tensor l = in(m.getLhs()), r = in(m.getRhs());
            return fluid_cpu_matmul(&l, &r, o, &p);
          })
          .Case([&](LinearOp l) {
            fluid_tensor x = in(l.getInput()), w = in(l.getWeight());
            fluid_tensor b = l.getBias() ? in(l.getBias()) : fluid_tensor{};
            return fluid_cpu_linear(&x, &w, l.getBias() ? &b : nullptr, o);
          })
          .Case([&](ConcatOp c) {
            SmallVector<fluid_tensor> inputs;
            for (Value v : c.getInputs())
              inputs.push_back(in(v));
            return fluid_cpu_concat(
                inputs.data(), static_cast<int64_t>(inputs.size()), o,
                normalizeAxis(c.getAxis(), c.getOutput().getType().getRank()));
          })
          .Case([&](SoftmaxOp s) {
            fluid_tensor x = in(s.getInput());
            return fluid_cpu_softmax(&x, o, normalizeAxis(s.getAxis(), x.rank));
          })
          .Case([&](LogSoftmaxOp s) {
            fluid_tensor x = in(s.getInput());
            return fluid_cpu_log_softmax(&x, o,
                                         normalizeAxis(s.getAxis(), x.rank));
          })
          .Case([&](SoftmaxCrossEntropyOp s) {
            fluid_tensor logits = in(s.getLogits()), labels = in(s.getLabels());
            return fluid_cpu_softmax_cross_entropy(&logits, &labels, o,
                                                   toRuntime(s.getReduction()));
          })
          .Case([&](MeanOp r) {
            fluid_tensor x = in(r.getInput());
            fluid_reduce_params p =
                reduceParams(r.getAxes(), r.getKeepDims(), x.rank);
            return fluid_cpu_mean(&x, o, &p);
          })
          .Case([&](ReduceSumOp r) {
            fluid_tensor x = in(r.getInput());
            fluid_reduce_params p =
                reduceParams(r.getAxes(), r.getKeepDims(), x.rank);
            return fluid_cpu_reduce_sum(&x, o, &p);
          })
          // Math and broadcasting.
          .Case<NegOp, ExpOp, LogOp, CosOp, SqrtOp, FloorOp>([&](auto u) {
            fluid_tensor x = in(u.getInput());
            using OpT = decltype(u);
            if constexpr (std::is_same_v<OpT, NegOp>)
              return fluid_cpu_neg(&x, o);
            else if constexpr (std::is_same_v<OpT, ExpOp>)
              return fluid_cpu_exp(&x, o);
            else if constexpr (std::is_same_v<OpT, LogOp>)
              return fluid_cpu_log(&x, o);
            else if constexpr (std::is_same_v<OpT, CosOp>)
              return fluid_cpu_cos(&x, o);
            else if constexpr (std::is_same_v<OpT, SqrtOp>)
              return fluid_cpu_sqrt(&x, o);
            else
              return fluid_cpu_floor(&x, o);
          })
          .Case([&](ErfOp u) {
            fluid_tensor x = in(u.getInput());
            return fluid_cpu_erf(&x, o);
          })
          .Case<PowOp, MinimumOp, MaximumOp, GreaterEqualOp>([&](auto b) {
            fluid_tensor l = in(b.getLhs()), r = in(b.getRhs());
            using OpT = decltype(b);
            if constexpr (std::is_same_v<OpT, PowOp>)
              return fluid_cpu_pow(&l, &r, o);
            else if constexpr (std::is_same_v<OpT, MinimumOp>)
              return fluid_cpu_minimum(&l, &r, o);
            else if constexpr (std::is_same_v<OpT, MaximumOp>)
              return fluid_cpu_maximum(&l, &r, o);
            else
              return fluid_cpu_greater_equal(&l, &r, o);
          })
          .Case([&](SelectOp s) {
            fluid_tensor c = in(s.getCondition()), t = in(s.getOnTrue()),
                         f = in(s.getOnFalse());
            return fluid_cpu_select(&c, &t, &f, o);
          })
          .Case([&](CastOp c) {
            fluid_tensor x = in(c.getInput());
            return fluid_cpu_cast(&x, o);
          })
          .Case([&](BroadcastToOp b) {
            fluid_tensor x = in(b.getInput());
            return fluid_cpu_broadcast_to(&x, o);
          })
          .Case([&](SumToOp s) {
            fluid_tensor x = in(s.getInput());
            return fluid_cpu_sum_to(&x, o);
          })
          .Case([&](SliceOp s) {
            fluid_tensor x = in(s.getInput());
            return fluid_cpu_slice(&x, o, s.getAxis(), s.getOffset());
          })
          .Case([&](GatherOp g) {
            fluid_tensor x = in(g.getInput()), indices = in(g.getIndices());
            return fluid_cpu_gather(&x, &indices, o,
                                    normalizeAxis(g.getAxis(), x.rank));
          })
          .Case([&](TransposeOp t) {
            fluid_transpose_params p = transposeParams(t);
            fluid_tensor x = in(t.getInput());
            return fluid_cpu_transpose(&x, o, &p);
          })
          // Gradients.
          .Case([&](Conv2DGradInputOp c) {
            fluid_conv2d_params p = convParams(c);
            fluid_tensor dy = in(c.getGradOutput()), w = in(c.getFilter());
            return fluid_cpu_conv2d_grad_input(&dy, &w, o, &p);
          })
          .Case([&](Conv2DGradFilterOp c) {
            fluid_conv2d_params p = convParams(c);
            fluid_tensor dy = in(c.getGradOutput()), x = in(c.getInput());
            return fluid_cpu_conv2d_grad_filter(&dy, &x, o, &p);
          })
          .Case([&](BatchNormGradOp bn) {
            fluid_tensor dy = in(bn.getGradOutput()), x = in(bn.getInput()),
                         g = in(bn.getScale()), m = in(bn.getSavedMean()),
                         s = in(bn.getSavedInvStd());
            return fluid_cpu_batch_norm_grad(&dy, &x, &g, &m, &s, &o[0], &o[1],
                                             &o[2]);
          })
          .Case<ReluGradOp, SigmoidGradOp, TanhGradOp>([&](auto a) {
            fluid_tensor dy = in(a.getGradOutput()), y = in(a.getOutput());
            using OpT = decltype(a);
            if constexpr (std::is_same_v<OpT, ReluGradOp>)
              return fluid_cpu_relu_grad(&dy, &y, o);
            else if constexpr (std::is_same_v<OpT, SigmoidGradOp>)
              return fluid_cpu_sigmoid_grad(&dy, &y, o);
            else
              return fluid_cpu_tanh_grad(&dy, &y, o);
          })
          .Case([&](MaxPool2DGradOp pool) {
            fluid_max_pool2d_params p = maxPoolParams(pool);
            fluid_tensor dy = in(pool.getGradOutput()), x = in(pool.getInput());
            return fluid_cpu_max_pool2d_grad(&dy, &x, o, &p);
          })
          .Case([&](MaxPool2DGradIndicesOp pool) {
            fluid_max_pool2d_params p = maxPoolParams(pool);
            fluid_tensor dy = in(pool.getGradOutput()),
                         indices = in(pool.getIndices());
            return fluid_cpu_max_pool2d_grad_indices(&dy, &indices, o, &p);
          })
          .Case([&](AvgPool2DGradOp pool) {
            fluid_avg_pool2d_params p = avgPoolParams(pool);
            fluid_tensor dy = in(pool.getGradOutput());
            return fluid_cpu_avg_pool2d_grad(&dy, o, &p);
          })
          .Case([&](GatherGradOp g) {
            fluid_tensor dy = in(g.getGradOutput()),
                         indices = in(g.getIndices());
            return fluid_cpu_gather_grad(&dy, &indices, o,
                                         normalizeAxis(g.getAxis(), dy.rank));
          })
          .Case([&](SoftmaxGradOp s) {
            fluid_tensor dy = in(s.getGradOutput()), y = in(s.getOutput());
            return fluid_cpu_softmax_grad(&dy, &y, o,
                                          normalizeAxis(s.getAxis(), y.rank));
          })
          .Case([&](LogSoftmaxGradOp s) {
            fluid_tensor dy = in(s.getGradOutput()), y = in(s.getOutput());
            return fluid_cpu_log_softmax_grad(
                &dy, &y, o, normalizeAxis(s.getAxis(), y.rank));
          })
          .Case([&](SoftmaxCrossEntropyGradOp s) {
            fluid_tensor g = in(s.getGradLoss()), logits = in(s.getLogits()),
                         labels = in(s.getLabels());
            return fluid_cpu_softmax_cross_entropy_grad(
                &g, &logits, &labels, o, toRuntime(s.getReduction()));
          })
          // Optimizer updates; the skip flag is optional.
          .Case([&](SgdOp u) {
            fluid_sgd_params p = sgdParams(u);
            fluid_tensor w = in(u.getParam()), g = in(u.getGrad()),
                         lr = in(u.getLr()), skip = optionalIn(u.getFoundInf());
            return fluid_cpu_sgd(&w, &g, &lr, u.getFoundInf() ? &skip : nullptr,
                                 o, &p);
          })
          .Case([&](MomentumOp u) {
            fluid_momentum_params p = momentumParams(u);
            fluid_tensor w = in(u.getParam()), g = in(u.getGrad()),
                         v = in(u.getVelocity()), lr = in(u.getLr()),
                         skip = optionalIn(u.getFoundInf());
            return fluid_cpu_momentum(&w, &g, &v, &lr,
                                      u.getFoundInf() ? &skip : nullptr, &o[0],
                                      &o[1], &p);
          })
          .Case([&](AdamOp u) {
            fluid_adam_params p = adamParams(u);
            fluid_tensor w = in(u.getParam()), g = in(u.getGrad()),
                         m = in(u.getExpAvg()), v = in(u.getExpAvgSq()),
                         lr = in(u.getLr()), step = in(u.getStep()),
                         skip = optionalIn(u.getFoundInf());
            return fluid_cpu_adam(&w, &g, &m, &v, &lr, &step,
                                  u.getFoundInf() ? &skip : nullptr, &o[0],
                                  &o[1], &o[2], &p);
          })
          // Grouped updates: lists of descriptors, outputs list by list.
          .Case([&](SgdGroupOp u) {
            fluid_sgd_params p = sgdParams(u);
            std::vector<fluid_tensor> w = ins(u.getParams()),
                                      g = ins(u.getGrads());
            fluid_tensor lr = in(u.getLr()), skip = optionalIn(u.getFoundInf());
            return fluid_cpu_sgd_group(
                static_cast<int64_t>(w.size()), w.data(), g.data(), &lr,
                u.getFoundInf() ? &skip : nullptr, o, &p);
          })
          .Case([&](MomentumGroupOp u) {
            fluid_momentum_params p = momentumParams(u);
            std::vector<fluid_tensor> w = ins(u.getParams()),
                                      g = ins(u.getGrads()),
                                      v = ins(u.getVelocities());
            fluid_tensor lr = in(u.getLr()), skip = optionalIn(u.getFoundInf());
            int64_t n = static_cast<int64_t>(w.size());
            return fluid_cpu_momentum_group(
                n, w.data(), g.data(), v.data(), &lr,
                u.getFoundInf() ? &skip : nullptr, o, o + n, &p);
          })
          .Case([&](AdamGroupOp u) {
            fluid_adam_params p = adamParams(u);
            std::vector<fluid_tensor> w = ins(u.getParams()),
                                      g = ins(u.getGrads()),
                                      m = ins(u.getExpAvgs()),
                                      v = ins(u.getExpAvgSqs());
            fluid_tensor lr = in(u.getLr()), step = in(u.getStep()),
                         skip = optionalIn(u.getFoundInf());
            int64_t n = static_cast<int64_t>(w.size());
            return fluid_cpu_adam_group(
                n, w.data(), g.data(), m.data(), v.data(), &lr, &step,
                u.getFoundInf() ? &skip : nullptr, o, o + n, o + 2 * n, &p);
          })
          // One process is one rank: the mean over the ranks is the value.
          .Case([&](AllReduceMeanOp u) {
            std::vector<fluid_tensor> x = ins(u.getInputs());
            return fluid_cpu_all_reduce_mean(
                nullptr, static_cast<int64_t>(x.size()), x.data(), o);
          })
          .Case([&](UnscaleGradsOp u) {
            std::vector<fluid_tensor> g = ins(u.getGrads());
            fluid_tensor scale = in(u.getScale());
            int64_t n = static_cast<int64_t>(g.size());
            return fluid_cpu_unscale_grads(n, g.data(), &scale, o, o + n);
          })
          .Default([&](Operation *) {
            supported = false;
            return FLUID_OK;
          });
  if (!supported)
    return op->emitError() << "the interpreter does not run '" << op->getName()
                           << "'";
  return check(op, status);
}

LogicalResult FunctionRun::fusion(FusionOp op) {
  Block &body = op.getBodyBlock();
  for (auto [arg, input] : llvm::zip(body.getArguments(), op.getInputs()))
    values[arg] = values.lookup(input);
  llvm::scope_exit forget([&] {
    for (Value arg : body.getArguments())
      values.erase(arg);
    for (Operation &inner : body)
      for (Value v : inner.getResults())
        values.erase(v);
  });
  for (Operation &inner : body.without_terminator())
    if (failed(execute(&inner)))
      return failure();
  for (auto [result, yielded] :
       llvm::zip(op.getResults(), op.getYield().getValues())) {
    HostTensor value = values.lookup(yielded);
    // A launch's output buffer is mapped already: the value goes there.
    if (HostTensor preset = values.lookup(result); !preset.isNull())
      std::memcpy(preset.data(), value.data(), value.getByteSize());
    else
      values[result] = value;
  }
  return success();
}

FailureOr<SmallVector<HostTensor>> FunctionRun::run(func::FuncOp func,
                                                    ArrayRef<HostTensor> args) {
  if (func.isExternal())
    return func.emitError()
           << "@" << func.getSymName() << " has no body to run";
  Block &body = func.getBody().front();
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "the interpreter runs single-block functions";
  if (args.size() != body.getNumArguments())
    return func.emitError()
           << "@" << func.getSymName() << " takes " << body.getNumArguments()
           << " arguments, got " << args.size();
  for (auto [i, arg] : llvm::enumerate(body.getArguments())) {
    RankedTensorType type = tensorTypeOf(arg.getType());
    if (!type || !args[i].matches(type))
      return func.emitError()
             << "argument #" << i << " of @" << func.getSymName() << " must be "
             << arg.getType() << ", got "
             << describe(args[i].getDType(), args[i].getShape());
    values[arg] = args[i];
  }

  // Release each value right after its last use.
  DenseMap<Operation *, SmallVector<Value>> dyingAfter;
  DenseMap<Value, Operation *> lastUse;
  for (Operation &op : body)
    for (Value operand : op.getOperands())
      lastUse[operand] = &op;
  for (auto [value, op] : lastUse)
    dyingAfter[op].push_back(value);

  for (Operation &op : body) {
    if (failed(execute(&op)))
      return failure();
    for (Value dead : dyingAfter.lookup(&op))
      values.erase(dead);
  }
  return results;
}

} // namespace

FailureOr<SmallVector<HostTensor>> Interpreter::run(func::FuncOp func,
                                                    ArrayRef<HostTensor> args) {
  FunctionRun run(params, poisonMemory);
  return run.run(func, args);
}
