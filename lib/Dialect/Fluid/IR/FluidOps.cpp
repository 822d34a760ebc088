//===- FluidOps.cpp - Ops of the fluid dialect: shapes and verifiers ------===//
//
// Each op's shape rule is written once, in its `inferReturnTypes`: builders
// use it to compute result types, and the verifier (through
// InferTypeOpInterface) checks printed result types against it. The rules
// report why a shape is invalid, and do all arithmetic on dimensions with
// overflow checks, since well-formed IR may carry absurd sizes.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "ShapeRules.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::fluid;

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

using namespace mlir::fluid::detail;

//===----------------------------------------------------------------------===//
// ParamOp, GetParamOp, SetParamOp
//===----------------------------------------------------------------------===//

static ParseResult parseInitializer(OpAsmParser &parser,
                                    InitializerAttr &init) {
  Attribute body = InitializerAttr::parseBody(parser);
  if (!body)
    return failure();
  init = cast<InitializerAttr>(body);
  return success();
}

static void printInitializer(OpAsmPrinter &printer, ParamOp,
                             InitializerAttr init) {
  init.printBody(printer);
}

bool mlir::fluid::isPermutation(ArrayRef<int64_t> order, int64_t rank) {
  if (static_cast<int64_t>(order.size()) != rank)
    return false;
  llvm::SmallBitVector seen(rank);
  for (int64_t d : order) {
    if (d < 0 || d >= rank || seen.test(d))
      return false;
    seen.set(d);
  }
  return true;
}

RankedTensorType mlir::fluid::unpermutedType(RankedTensorType stored,
                                             ArrayRef<int64_t> order) {
  SmallVector<int64_t> shape(stored.getRank());
  for (auto [d, from] : llvm::enumerate(order))
    shape[from] = stored.getDimSize(d);
  return RankedTensorType::get(shape, stored.getElementType());
}

RankedTensorType ParamOp::getCheckpointType() {
  std::optional<ArrayRef<int64_t>> order = getStorageOrder();
  return order ? unpermutedType(getTensorType(), *order) : getTensorType();
}

LogicalResult ParamOp::verify() {
  // The name is the parameter's key in checkpoints (safetensors: UTF-8).
  if (failed(verifyExternalName([&] { return emitOpError(); },
                                "the parameter name", getSymName())))
    return failure();
  if (std::optional<ArrayRef<int64_t>> order = getStorageOrder())
    if (!isPermutation(*order, getTensorType().getRank()))
      return emitOpError() << "'storage_order' must be a permutation of the "
                           << getTensorType().getRank()
                           << " dimensions of its type";
  RankedTensorType type = getTensorType();
  InitializerAttr init = getInit();
  if (init.usesFans() && type.getRank() < 2)
    return emitOpError() << stringifyInitKind(init.getKind())
                         << " needs a tensor of rank >= 2 to compute its "
                            "fans, got "
                         << type;
  if (isIntTensor(type) && init.getKind() != InitKind::Zeros &&
      init.getKind() != InitKind::Ones && init.getKind() != InitKind::Constant)
    return emitOpError() << "integer parameters can only be initialized "
                            "with zeros, ones or constant, not "
                         << stringifyInitKind(init.getKind());
  for (auto [name, value] :
       {std::pair<StringRef, double>{"lr_mult", getLrMult().convertToDouble()},
        {"decay_mult", getDecayMult().convertToDouble()}})
    if (!std::isfinite(value) || value < 0)
      return emitOpError() << "'" << name << "' must be finite and >= 0, got "
                           << value;
  return success();
}

/// Finds the `fluid.param` named by `user`'s `name` attribute and checks that
/// it has type `type`.
static LogicalResult verifyParamUse(Operation *user, FlatSymbolRefAttr name,
                                    Type type,
                                    SymbolTableCollection &symbolTable) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(user, name);
  if (!symbol)
    return user->emitOpError() << "refers to unknown parameter " << name;
  auto param = dyn_cast<ParamOp>(symbol);
  if (!param)
    return user->emitOpError() << name << " is a '" << symbol->getName()
                               << "', not a 'fluid.param'";
  if (param.getType() != type)
    return user->emitOpError()
           << "type " << type << " does not match parameter " << name
           << " of type " << param.getType();
  return success();
}

LogicalResult GetParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getNameAttr(), getType(), symbolTable);
}

LogicalResult SetParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getNameAttr(), getValue().getType(),
                        symbolTable);
}

LogicalResult SetParamOp::verify() {
  // The first write of a block checks all of them, so that verifying a
  // block costs one walk over it, not one per write.
  for (Operation *op = (*this)->getPrevNode(); op; op = op->getPrevNode())
    if (isa<SetParamOp>(op))
      return success();
  llvm::SmallDenseMap<Attribute, Location> firstWrites;
  for (Operation *op = *this; op; op = op->getNextNode()) {
    auto set = dyn_cast<SetParamOp>(op);
    if (!set)
      continue;
    auto [it, inserted] =
        firstWrites.try_emplace(set.getNameAttr(), set.getLoc());
    if (inserted)
      continue;
    InFlightDiagnostic diag = set.emitOpError()
                              << "writes the parameter " << set.getNameAttr()
                              << " a second time in one function: a step "
                                 "writes each parameter at most once";
    diag.attachNote(it->second) << "first written here";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, getOperationName());
  auto value = dyn_cast_or_null<ElementsAttr>(adaptor.getValueAttr());
  if (!value)
    return errors.fail("'value' must be an elements attribute");
  if (!isFluidTensor(value.getType()))
    return errors.fail("value must be a statically shaped tensor of f16, "
                       "bf16, f32, f64, i32 or i64 whose size fits in 64 "
                       "bits, got ",
                       value.getType());
  inferred.push_back(value.getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Conv2DOp and batch norm
//===----------------------------------------------------------------------===//

/// [N, H, W, C] -> [N, C, H, W] (also [O, KH, KW, I] -> [O, I, KH, KW]).
static SmallVector<int64_t> channelsFirst(ArrayRef<int64_t> shape) {
  return {shape[0], shape[3], shape[1], shape[2]};
}

FailureOr<RankedTensorType> mlir::fluid::detail::inferConv2DType(
    const ShapeErrors &errors, RankedTensorType input, RankedTensorType filter,
    RankedTensorType bias, ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
    ArrayRef<int64_t> dilation, int64_t groups, bool channelsLast) {
  if (failed(errors.expectRank(input, "input", {4},
                               channelsLast ? " (NHWC)" : " (NCHW)")) ||
      failed(errors.expectRank(filter, "filter", {4},
                               channelsLast ? " (OHWI)" : " (OIHW)")) ||
      failed(errors.sameElementType(input, "input", filter, "filter")) ||
      failed(errors.expectArray(strides, "strides", 2, 1)) ||
      failed(errors.expectArray(padding, "padding", 4, 0)) ||
      failed(errors.expectArray(dilation, "dilation", 2, 1)))
    return failure();

  // The NHWC rule is the NCHW rule on the permuted shapes.
  SmallVector<int64_t> in(input.getShape()), w(filter.getShape());
  if (channelsLast) {
    in = channelsFirst(in);
    w = channelsFirst(w);
  }
  int64_t channels = in[1], outChannels = w[0];
  if (groups < 1)
    return errors.fail("'groups' must be >= 1, got ", groups);
  if (channels % groups != 0)
    return errors.fail("groups (", groups, ") must divide the input channels (",
                       channels, ")");
  if (outChannels % groups != 0)
    return errors.fail("groups (", groups,
                       ") must divide the output channels (", outChannels, ")");
  if (w[1] != channels / groups)
    return errors.fail("input has ", channels, " channels but the filter ",
                       "expects ", w[1], " per group x ", groups,
                       " groups = ", w[1] * groups);
  if (bias) {
    if (failed(errors.sameElementType(input, "input", bias, "bias")))
      return failure();
    if (bias.getRank() != 1 || bias.getDimSize(0) != outChannels)
      return errors.fail("bias must have shape [", outChannels,
                         "] (the output channels), got ", bias);
  }

  FailureOr<int64_t> height =
      windowOutputSize(errors, "height", in[2], w[2], strides[0], padding[0],
                       padding[2], dilation[0], /*ceilMode=*/false);
  if (failed(height))
    return failure();
  FailureOr<int64_t> width =
      windowOutputSize(errors, "width", in[3], w[3], strides[1], padding[1],
                       padding[3], dilation[1], /*ceilMode=*/false);
  if (failed(width))
    return failure();
  if (channelsLast)
    return RankedTensorType::get({in[0], *height, *width, outChannels},
                                 input.getElementType());
  return RankedTensorType::get({in[0], outChannels, *height, *width},
                               input.getElementType());
}

LogicalResult Conv2DOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> loc,
                                         Adaptor rawAdaptor,
                                         SmallVectorImpl<Type> &inferred) {
  Properties defaults;
  Adaptor adaptor = withDefaults<Conv2DOp>(context, rawAdaptor, defaults);
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> input =
      errors.tensor(adaptor.getInput(), "input");
  if (failed(input))
    return failure();
  FailureOr<RankedTensorType> filter =
      errors.tensor(adaptor.getFilter(), "filter");
  if (failed(filter))
    return failure();
  RankedTensorType bias;
  if (Value biasValue = adaptor.getBias()) {
    FailureOr<RankedTensorType> biasType = errors.tensor(biasValue, "bias");
    if (failed(biasType))
      return failure();
    bias = *biasType;
  }
  FailureOr<RankedTensorType> output = inferConv2DType(
      errors, *input, *filter, bias, adaptor.getStrides(), adaptor.getPadding(),
      adaptor.getDilation(), adaptor.getGroups(), adaptor.getChannelsLast());
  if (failed(output))
    return failure();
  inferred.push_back(*output);
  return success();
}

/// Checks a batch-norm input ([N, C, H, W] or [N, C]) against its per-channel
/// operands (whose types match each other by construction), and its
/// attributes (batch_norm_apply has neither epsilon nor momentum).
static LogicalResult
verifyBatchNormShapes(const ShapeErrors &errors, Value inputValue,
                      Value channelValue, std::optional<double> epsilon,
                      std::optional<double> momentum, RankedTensorType &input,
                      RankedTensorType &channel, bool channelsLast = false) {
  FailureOr<RankedTensorType> in = errors.tensor(inputValue, "input");
  if (failed(in))
    return failure();
  FailureOr<RankedTensorType> ch =
      errors.tensor(channelValue, "per-channel operand");
  if (failed(ch) ||
      failed(errors.expectRank(*in, "input", {2, 4},
                               channelsLast ? " (NC or NHWC)"
                                            : " (NC or NCHW)")) ||
      failed(errors.sameElementType(*in, "input", *ch, "per-channel operands")))
    return failure();
  int64_t channels = in->getDimSize(channelsLast ? in->getRank() - 1 : 1);
  if (ch->getRank() != 1 || ch->getDimSize(0) != channels)
    return errors.fail("per-channel operands must have shape [", channels,
                       "] (the input's channels), got ", *ch);
  if (epsilon && (!(*epsilon > 0) || !std::isfinite(*epsilon)))
    return errors.fail("'epsilon' must be finite and > 0, got ", *epsilon);
  if (momentum && !(*momentum >= 0 && *momentum <= 1))
    return errors.fail("'momentum' must be in [0, 1], got ", *momentum);
  input = *in;
  channel = *ch;
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor rawAdaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Properties defaults;
  Adaptor adaptor = withDefaults<BatchNormOp>(context, rawAdaptor, defaults);
  ShapeErrors errors(loc, getOperationName());
  RankedTensorType input, channel;
  if (failed(verifyBatchNormShapes(
          errors, adaptor.getInput(), adaptor.getScale(),
          adaptor.getEpsilon().convertToDouble(),
          adaptor.getMomentum().convertToDouble(), input, channel)))
    return failure();
  inferred.push_back(input);
  inferred.append(4, channel);
  return success();
}

LogicalResult BatchNormInferenceOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor rawAdaptor,
    SmallVectorImpl<Type> &inferred) {
  Properties defaults;
  Adaptor adaptor =
      withDefaults<BatchNormInferenceOp>(context, rawAdaptor, defaults);
  ShapeErrors errors(loc, getOperationName());
  RankedTensorType input, channel;
  if (failed(verifyBatchNormShapes(errors, adaptor.getInput(),
                                   adaptor.getScale(),
                                   adaptor.getEpsilon().convertToDouble(),
                                   std::nullopt, input, channel)))
    return failure();
  inferred.push_back(input);
  return success();
}

LogicalResult BatchNormApplyOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor rawAdaptor,
    SmallVectorImpl<Type> &inferred) {
  // (When parsing, channels_last is in the attribute dictionary.)
  Properties defaults;
  Adaptor adaptor =
      withDefaults<BatchNormApplyOp>(context, rawAdaptor, defaults);
  ShapeErrors errors(loc, getOperationName());
  RankedTensorType input, channel;
  if (failed(verifyBatchNormShapes(
          errors, adaptor.getInput(), adaptor.getScale(), std::nullopt,
          std::nullopt, input, channel, adaptor.getChannelsLast())))
    return failure();
  inferred.push_back(input);
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

static LogicalResult inferBroadcast(StringRef opName,
                                    std::optional<Location> loc, Value lhsValue,
                                    Value rhsValue, bool allowIntegers,
                                    SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, opName);
  FailureOr<RankedTensorType> lhs =
      errors.tensor(lhsValue, "lhs", /*requireFloat=*/!allowIntegers);
  if (failed(lhs))
    return failure();
  FailureOr<RankedTensorType> rhs =
      errors.tensor(rhsValue, "rhs", /*requireFloat=*/!allowIntegers);
  if (failed(rhs) || failed(errors.sameElementType(*lhs, "lhs", *rhs, "rhs")))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = broadcastShapes(errors, *lhs, *rhs);
  if (failed(shape))
    return failure();
  inferred.push_back(RankedTensorType::get(*shape, lhs->getElementType()));
  return success();
}

#define FLUID_BROADCAST_INFER(OP, INTEGERS)                                    \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &inferred) {                                       \
    return inferBroadcast(getOperationName(), loc, adaptor.getLhs(),           \
                          adaptor.getRhs(), INTEGERS, inferred);               \
  }
FLUID_BROADCAST_INFER(AddOp, true)
FLUID_BROADCAST_INFER(SubOp, true)
FLUID_BROADCAST_INFER(MulOp, true)
FLUID_BROADCAST_INFER(DivOp, false)
FLUID_BROADCAST_INFER(PowOp, false)
FLUID_BROADCAST_INFER(MinimumOp, false)
FLUID_BROADCAST_INFER(MaximumOp, false)
FLUID_BROADCAST_INFER(GreaterEqualOp, false)
#undef FLUID_BROADCAST_INFER

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

FailureOr<RankedTensorType> mlir::fluid::detail::inferPool2DType(
    const ShapeErrors &errors, RankedTensorType input, ArrayRef<int64_t> kernel,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
    ArrayRef<int64_t> dilation, bool ceilMode, bool channelsLast) {
  if (failed(errors.expectRank(input, "input", {4},
                               channelsLast ? " (NHWC)" : " (NCHW)")) ||
      failed(errors.expectArray(kernel, "kernel_size", 2, 1)) ||
      failed(errors.expectArray(strides, "strides", 2, 1)) ||
      failed(errors.expectArray(padding, "padding", 4, 0)) ||
      failed(errors.expectArray(dilation, "dilation", 2, 1)))
    return failure();
  // The NHWC rule is the NCHW rule on the permuted shape.
  SmallVector<int64_t> in(input.getShape());
  if (channelsLast)
    in = channelsFirst(in);
  FailureOr<int64_t> height =
      windowOutputSize(errors, "height", in[2], kernel[0], strides[0],
                       padding[0], padding[2], dilation[0], ceilMode);
  if (failed(height))
    return failure();
  FailureOr<int64_t> width =
      windowOutputSize(errors, "width", in[3], kernel[1], strides[1],
                       padding[1], padding[3], dilation[1], ceilMode);
  if (failed(width))
    return failure();
  if (channelsLast)
    return RankedTensorType::get({in[0], *height, *width, in[1]},
                                 input.getElementType());
  return RankedTensorType::get({in[0], in[1], *height, *width},
                               input.getElementType());
}

static LogicalResult
inferPool2D(StringRef opName, std::optional<Location> loc, Value inputValue,
            ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
            ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
            bool ceilMode, bool channelsLast, SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, opName);
  FailureOr<RankedTensorType> input = errors.tensor(inputValue, "input");
  if (failed(input))
    return failure();
  FailureOr<RankedTensorType> output =
      inferPool2DType(errors, *input, kernel, strides, padding, dilation,
                      ceilMode, channelsLast);
  if (failed(output))
    return failure();
  inferred.push_back(*output);
  return success();
}

LogicalResult MaxPool2DOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor rawAdaptor,
                                            SmallVectorImpl<Type> &inferred) {
  // (When parsing, channels_last is in the attribute dictionary.)
  Properties defaults;
  Adaptor adaptor = withDefaults<MaxPool2DOp>(context, rawAdaptor, defaults);
  return inferPool2D(
      getOperationName(), loc, adaptor.getInput(), adaptor.getKernelSize(),
      adaptor.getStrides(), adaptor.getPadding(), adaptor.getDilation(),
      adaptor.getCeilMode(), adaptor.getChannelsLast(), inferred);
}

FailureOr<std::pair<RankedTensorType, RankedTensorType>>
mlir::fluid::detail::inferMaxPool2DWithIndicesTypes(
    const ShapeErrors &errors, RankedTensorType input, ArrayRef<int64_t> kernel,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
    ArrayRef<int64_t> dilation, bool ceilMode, bool channelsLast) {
  FailureOr<RankedTensorType> output =
      inferPool2DType(errors, input, kernel, strides, padding, dilation,
                      ceilMode, channelsLast);
  if (failed(output))
    return failure();
  // inferPool2DType has checked that there are two sizes, each >= 1.
  std::optional<int64_t> cells =
      llvm::checkedMul<int64_t>(kernel[0], kernel[1]);
  if (!cells || *cells > kMaxPoolIndexCells) {
    (void)errors.fail("the kernel ", kernel[0], "x", kernel[1],
                      " has more than ", kMaxPoolIndexCells,
                      " cells, too many for ui8 indices");
    return failure();
  }
  auto indices = RankedTensorType::get(
      output->getShape(),
      IntegerType::get(input.getContext(), 8, IntegerType::Unsigned));
  return std::make_pair(*output, indices);
}

LogicalResult MaxPool2DWithIndicesOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor rawAdaptor,
    SmallVectorImpl<Type> &inferred) {
  Properties defaults;
  Adaptor adaptor =
      withDefaults<MaxPool2DWithIndicesOp>(context, rawAdaptor, defaults);
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> input =
      errors.tensor(adaptor.getInput(), "input");
  if (failed(input))
    return failure();
  auto types = inferMaxPool2DWithIndicesTypes(
      errors, *input, adaptor.getKernelSize(), adaptor.getStrides(),
      adaptor.getPadding(), adaptor.getDilation(), adaptor.getCeilMode(),
      adaptor.getChannelsLast());
  if (failed(types))
    return failure();
  inferred.push_back(types->first);
  inferred.push_back(types->second);
  return success();
}

LogicalResult AvgPool2DOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> loc,
                                            Adaptor rawAdaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Properties defaults;
  Adaptor adaptor = withDefaults<AvgPool2DOp>(context, rawAdaptor, defaults);
  return inferPool2D(getOperationName(), loc, adaptor.getInput(),
                     adaptor.getKernelSize(), adaptor.getStrides(),
                     adaptor.getPadding(), /*dilation=*/{1, 1},
                     adaptor.getCeilMode(), /*channelsLast=*/false, inferred);
}

LogicalResult
GlobalAvgPoolOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> input =
      errors.tensor(adaptor.getInput(), "input");
  if (failed(input) ||
      failed(errors.expectRank(*input, "input", {4}, " (NCHW)")))
    return failure();
  if (input->getDimSize(2) == 0 || input->getDimSize(3) == 0)
    return errors.fail("input must have a non-empty image, got ", *input);
  inferred.push_back(
      RankedTensorType::get({input->getDimSize(0), input->getDimSize(1), 1, 1},
                            input->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// MatmulOp, LinearOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> lhs = errors.tensor(adaptor.getLhs(), "lhs");
  if (failed(lhs))
    return failure();
  FailureOr<RankedTensorType> rhs = errors.tensor(adaptor.getRhs(), "rhs");
  if (failed(rhs) || failed(errors.expectRank(*lhs, "lhs", {2, 3}, "")) ||
      failed(errors.sameElementType(*lhs, "lhs", *rhs, "rhs")))
    return failure();
  if (lhs->getRank() != rhs->getRank())
    return errors.fail("lhs and rhs must have the same rank, got ", *lhs,
                       " and ", *rhs);
  int64_t rank = lhs->getRank();
  ArrayRef<int64_t> a = lhs->getShape(), b = rhs->getShape();
  bool tl = adaptor.getTransposeLhs(), tr = adaptor.getTransposeRhs();
  int64_t m = tl ? a[rank - 1] : a[rank - 2];
  int64_t k = tl ? a[rank - 2] : a[rank - 1];
  int64_t kr = tr ? b[rank - 1] : b[rank - 2];
  int64_t n = tr ? b[rank - 2] : b[rank - 1];
  if (k != kr)
    return errors.fail("contraction dimensions differ: lhs has ", k,
                       ", rhs has ", kr, " (", *lhs, " x ", *rhs, ")");
  SmallVector<int64_t> shape;
  if (rank == 3) {
    if (a[0] != b[0])
      return errors.fail("batch dimensions differ: ", a[0], " vs ", b[0]);
    shape.push_back(a[0]);
  }
  shape.append({m, n});
  inferred.push_back(RankedTensorType::get(shape, lhs->getElementType()));
  return success();
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> input =
      errors.tensor(adaptor.getInput(), "input");
  if (failed(input))
    return failure();
  FailureOr<RankedTensorType> weight =
      errors.tensor(adaptor.getWeight(), "weight");
  if (failed(weight) ||
      failed(errors.expectRank(*input, "input", {2}, " ([batch, in])")) ||
      failed(errors.expectRank(*weight, "weight", {2}, " ([out, in])")) ||
      failed(errors.sameElementType(*input, "input", *weight, "weight")))
    return failure();
  int64_t outFeatures = weight->getDimSize(0);
  if (input->getDimSize(1) != weight->getDimSize(1))
    return errors.fail("input has ", input->getDimSize(1),
                       " features but the weight expects ",
                       weight->getDimSize(1));
  if (Value biasValue = adaptor.getBias()) {
    FailureOr<RankedTensorType> bias = errors.tensor(biasValue, "bias");
    if (failed(bias) ||
        failed(errors.sameElementType(*input, "input", *bias, "bias")))
      return failure();
    if (bias->getRank() != 1 || bias->getDimSize(0) != outFeatures)
      return errors.fail("bias must have shape [", outFeatures,
                         "] (the output features), got ", *bias);
  }
  inferred.push_back(RankedTensorType::get({input->getDimSize(0), outFeatures},
                                           input->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = getInput().getType(), output = getType();
  if (input.getElementType() != output.getElementType())
    return emitOpError() << "cannot change the element type ("
                         << input.getElementType() << " to "
                         << output.getElementType() << ")";
  if (input.getNumElements() != output.getNumElements())
    return emitOpError() << "cannot reshape " << input << " ("
                         << input.getNumElements() << " elements) to " << output
                         << " (" << output.getNumElements() << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *context,
                                          std::optional<Location> loc,
                                          Adaptor rawAdaptor,
                                          SmallVectorImpl<Type> &inferred) {
  Properties defaults;
  Adaptor adaptor = withDefaults<FlattenOp>(context, rawAdaptor, defaults);
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> input =
      errors.tensor(adaptor.getInput(), "input", /*requireFloat=*/false);
  if (failed(input))
    return failure();
  FailureOr<int64_t> axis = errors.axis(adaptor.getAxis(), input->getRank(),
                                        "axis", /*inclusive=*/true);
  if (failed(axis))
    return failure();
  // The whole tensor's size fits in 64 bits, so these products do too.
  int64_t outer = 1, inner = 1;
  for (auto [i, dim] : llvm::enumerate(input->getShape()))
    (static_cast<int64_t>(i) < *axis ? outer : inner) *= dim;
  inferred.push_back(
      RankedTensorType::get({outer, inner}, input->getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, getOperationName());
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return errors.fail("needs at least one input");
  SmallVector<RankedTensorType> types;
  for (auto [i, value] : llvm::enumerate(inputs)) {
    FailureOr<RankedTensorType> type = errors.tensor(
        value, "input #" + std::to_string(i), /*requireFloat=*/false);
    if (failed(type))
      return failure();
    types.push_back(*type);
  }
  RankedTensorType first = types.front();
  FailureOr<int64_t> axis =
      errors.axis(adaptor.getAxis(), first.getRank(), "axis");
  if (failed(axis))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  for (auto [i, type] : llvm::enumerate(ArrayRef(types).drop_front())) {
    if (type.getElementType() != first.getElementType())
      return errors.fail("input #", i + 1, " has element type ",
                         type.getElementType(), " but input #0 has ",
                         first.getElementType());
    if (type.getRank() != first.getRank())
      return errors.fail("input #", i + 1, " has rank ", type.getRank(),
                         " but input #0 has rank ", first.getRank());
    for (int64_t d = 0; d < first.getRank(); ++d) {
      if (d == *axis)
        continue;
      if (type.getDimSize(d) != first.getDimSize(d))
        return errors.fail("input #", i + 1,
                           " differs from input #0 in "
                           "dimension ",
                           d, " (", type.getDimSize(d), " vs ",
                           first.getDimSize(d), "), which is not the axis");
    }
    std::optional<int64_t> sum =
        llvm::checkedAdd<int64_t>(shape[*axis], type.getDimSize(*axis));
    if (!sum)
      return errors.fail("the concatenated dimension overflows 64 bits");
    shape[*axis] = *sum;
  }
  auto result = RankedTensorType::get(shape, first.getElementType());
  if (!isFluidTensor(result))
    return errors.fail("the result ", result, " is too large");
  inferred.push_back(result);
  return success();
}

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

FailureOr<RankedTensorType>
mlir::fluid::detail::inferGatherType(const ShapeErrors &errors,
                                     RankedTensorType input,
                                     RankedTensorType indices, int64_t axis) {
  if (input.getRank() == 0) {
    (void)errors.fail("input must have rank >= 1, got ", input);
    return failure();
  }
  if (!isIntTensor(indices) || indices.getRank() != 1) {
    (void)errors.fail("indices must be a 1-D tensor of i32 or i64, got ",
                      indices);
    return failure();
  }
  FailureOr<int64_t> d = errors.axis(axis, input.getRank(), "axis");
  if (failed(d))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  shape[*d] = indices.getDimSize(0);
  auto result = RankedTensorType::get(shape, input.getElementType());
  if (!isFluidTensor(result)) {
    (void)errors.fail("the result ", result, " is too large");
    return failure();
  }
  return result;
}

LogicalResult mlir::fluid::detail::verifyConstantIndices(Operation *op,
                                                         Value indices,
                                                         int64_t extent,
                                                         int64_t axis) {
  auto constant = indices.getDefiningOp<ConstantOp>();
  auto values =
      constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
  if (!values)
    return success();
  for (auto [i, value] : llvm::enumerate(values.getValues<APInt>())) {
    int64_t index = value.getSExtValue();
    if (index < 0 || index >= extent)
      return op->emitOpError() << "index " << index << " (element " << i
                               << " of the indices) is outside [0, " << extent
                               << "), the size of axis " << axis;
  }
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> input =
      errors.tensor(adaptor.getInput(), "input", /*requireFloat=*/false);
  if (failed(input))
    return failure();
  FailureOr<RankedTensorType> indices =
      errors.tensor(adaptor.getIndices(), "indices", /*requireFloat=*/false);
  if (failed(indices))
    return failure();
  FailureOr<RankedTensorType> result = inferGatherType(
      errors, *input, *indices, static_cast<int64_t>(adaptor.getAxis()));
  if (failed(result))
    return failure();
  inferred.push_back(*result);
  return success();
}

LogicalResult GatherOp::verify() {
  RankedTensorType input = getInput().getType();
  // I64Attr getters return uint64_t; the axis may be negative. An axis out
  // of range is the shape rule's error (it may run after this).
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0)
    axis += input.getRank();
  if (axis < 0 || axis >= input.getRank())
    return success();
  return verifyConstantIndices(*this, getIndices(), input.getDimSize(axis),
                               axis);
}

//===----------------------------------------------------------------------===//
// Softmax and loss
//===----------------------------------------------------------------------===//

template <typename SoftmaxOp> static LogicalResult verifySoftmax(SoftmaxOp op) {
  ShapeErrors errors(op.getLoc(), op.getOperationName());
  return errors.axis(op.getAxis(), op.getInput().getType().getRank(), "axis");
}

LogicalResult SoftmaxOp::verify() { return verifySoftmax(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmax(*this); }

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> loc, Adaptor rawAdaptor,
    SmallVectorImpl<Type> &inferred) {
  Properties defaults;
  Adaptor adaptor =
      withDefaults<SoftmaxCrossEntropyOp>(context, rawAdaptor, defaults);
  ShapeErrors errors(loc, getOperationName());
  FailureOr<RankedTensorType> logits =
      errors.tensor(adaptor.getLogits(), "logits");
  if (failed(logits) ||
      failed(errors.expectRank(*logits, "logits", {2}, " ([batch, classes])")))
    return failure();
  Type labelsType = adaptor.getLabels().getType();
  if (!isIntTensor(labelsType))
    return errors.fail("labels must be a tensor of i32 or i64 class indices, "
                       "got ",
                       labelsType);
  auto labels = cast<RankedTensorType>(labelsType);
  if (failed(errors.expectRank(labels, "labels", {1}, " ([batch])")))
    return failure();
  int64_t batch = logits->getDimSize(0);
  if (labels.getDimSize(0) != batch)
    return errors.fail("labels have batch size ", labels.getDimSize(0),
                       " but logits have batch size ", batch);
  if (logits->getDimSize(1) < 1)
    return errors.fail("logits must have at least one class");
  SmallVector<int64_t> shape;
  if (adaptor.getReduction() == Reduction::None)
    shape.push_back(batch);
  inferred.push_back(RankedTensorType::get(shape, logits->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

static LogicalResult inferReduce(StringRef opName, std::optional<Location> loc,
                                 Value inputValue,
                                 std::optional<ArrayRef<int64_t>> axes,
                                 bool keepDims,
                                 SmallVectorImpl<Type> &inferred) {
  ShapeErrors errors(loc, opName);
  FailureOr<RankedTensorType> input = errors.tensor(inputValue, "input");
  if (failed(input))
    return failure();
  int64_t rank = input->getRank();
  llvm::SmallBitVector reduced(rank, !axes.has_value());
  if (axes) {
    for (int64_t axis : *axes) {
      FailureOr<int64_t> normalized = errors.axis(axis, rank, "axes");
      if (failed(normalized))
        return failure();
      if (reduced.test(*normalized))
        return errors.fail("'axes' names dimension ", *normalized, " twice");
      reduced.set(*normalized);
    }
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced.test(d))
      shape.push_back(input->getDimSize(d));
    else if (keepDims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, input->getElementType()));
  return success();
}

bool mlir::fluid::isReductionElementType(Type input, Type result) {
  return input == result ||
         ((input.isF16() || input.isBF16()) && result.isF32());
}

bool mlir::fluid::isReductionResultType(TypeRange inferred, TypeRange actual) {
  if (inferred.size() != 1 || actual.size() != 1)
    return false;
  auto want = dyn_cast<RankedTensorType>(inferred[0]);
  auto got = dyn_cast<RankedTensorType>(actual[0]);
  return want && got && want.getShape() == got.getShape() &&
         isReductionElementType(want.getElementType(), got.getElementType());
}

LogicalResult MeanOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  return inferReduce(getOperationName(), loc, adaptor.getInput(),
                     adaptor.getAxes(), adaptor.getKeepDims(), inferred);
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferReduce(getOperationName(), loc, adaptor.getInput(),
                     adaptor.getAxes(), adaptor.getKeepDims(), inferred);
}

//===----------------------------------------------------------------------===//
// Grouped updates
//===----------------------------------------------------------------------===//

/// The types of a grouped update's other lists (gradients, state, results)
/// are the parameters' types, entry by entry: they are not printed.
template <typename... Lists>
static ParseResult parseEntryTypes(OpAsmParser &, ArrayRef<Type> params,
                                   Lists &...lists) {
  (lists.assign(params.begin(), params.end()), ...);
  return success();
}

template <typename... Ranges>
static void printEntryTypes(OpAsmPrinter &, Operation *, TypeRange,
                            Ranges &&...) {}

#define GET_OP_CLASSES
#include "fluid/Dialect/Fluid/IR/FluidOps.cpp.inc"
