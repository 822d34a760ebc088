//===- ElementwiseOps.cpp - Arithmetic, activations, casts, softmax -------===//
//
// Add, Sub, Mul, Div, Mod and Pow with NumPy broadcasting; Relu, Sigmoid,
// Tanh, Exp, Log, Sqrt and Erf (with Div, Add and Mul, torch's export of
// exact GELU); Clip, HardSigmoid and HardSwish; Cast; Softmax and
// LogSoftmax; Equal, Not and Where; Dropout. Arithmetic and casts on
// values known at import time are folded: on integers they compute
// shapes, which fluid programs need statically, and on floats constants
// (swin's shifted-window attention mask, from a ConstantOfShape), each
// result rounded once to its type as the run-time op would. So are Mod,
// which fluid has no op for, Equal, Not and casts to BOOL, whose BOOL
// results fluid has no tensors for, and Where on known values (torch's
// export of expand(n, -1, -1) computes its shape with them); a Where with
// a known condition and run-time values is a fluid.select with the
// condition as a 0/1 constant.
//
// Dropout is the identity where it drops nothing: at ratio 0, and in
// @forward unless it is in training mode. One that would drop at random
// (in training mode, or in the @loss of --loss) is an error: fluid does
// not drop at random, and ignoring it would train another model.
//
// Pow by a known 2 is x * x, bitwise what pow gives and what its gradient
// 2 x dy is; any other exponent is a fluid.pow.
//
// Clip and the activations built on it are compositions of relu, add and
// sub, which have gradients and fuse into one kernel with their
// neighbours: max(x, lo) = x + relu(lo - x) (relu(x) for lo = 0) and
// min(y, hi) = y - relu(y - hi). Where the bound is not reached the
// relu is 0 and the input passes exactly; where it is, the result is the
// bound exactly while the input is within twice the bound (Sterbenz), and
// within half an ulp of the input beyond.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

namespace {
enum class BinaryKind { Add, Sub, Mul, Div, Mod };
} // namespace

template <typename OpT>
static LogicalResult importUnary(FunctionImporter &importer,
                                 const om::Node &node) {
  FailureOr<Value> x = importer.floatInput(0);
  if (failed(x))
    return failure();
  return importer.define(
      0, OpT::create(importer.getBuilder(), importer.getLoc(), *x).getOutput());
}

/// The index into a tensor of `shape` that broadcasting maps the element
/// `index` of a tensor of `resultShape` to.
static int64_t broadcastIndex(int64_t index, ArrayRef<int64_t> resultShape,
                              ArrayRef<int64_t> shape) {
  int64_t source = 0, stride = 1;
  for (size_t i = 0; i < resultShape.size(); ++i) {
    size_t d = resultShape.size() - 1 - i;
    int64_t coordinate = index % resultShape[d];
    index /= resultShape[d];
    if (i < shape.size()) {
      int64_t dim = shape[shape.size() - 1 - i];
      source += (dim == 1 ? 0 : coordinate) * stride;
      stride *= dim;
    }
  }
  return source;
}

ConstTensor
mlir::fluid::onnx_import::broadcastConstant(const ConstTensor &tensor,
                                            ArrayRef<int64_t> shape) {
  ConstTensor result;
  result.type = tensor.type;
  result.shape.assign(shape.begin(), shape.end());
  size_t size = tensor.getElementSize();
  result.bytes.resize(result.getNumElements() * size);
  for (int64_t i = 0, e = result.getNumElements(); i < e; ++i)
    std::memcpy(result.bytes.data() + i * size,
                tensor.bytes.data() +
                    broadcastIndex(i, shape, tensor.shape) * size,
                size);
  return result;
}

/// Integer `x` op `y`, or nullopt when it overflows int64_t; `fmod`
/// picks Mod's sign: the dividend's (C's fmod) or the divisor's
/// (Python's %).
static std::optional<int64_t> foldInt(BinaryKind kind, int64_t x, int64_t y,
                                      bool fmod) {
  switch (kind) {
  case BinaryKind::Add:
    return llvm::checkedAdd(x, y);
  case BinaryKind::Sub:
    return llvm::checkedSub(x, y);
  case BinaryKind::Mul:
    return llvm::checkedMul(x, y);
  case BinaryKind::Div:
    if (y == -1 && x == std::numeric_limits<int64_t>::min())
      return std::nullopt;
    return x / y;
  case BinaryKind::Mod: {
    // x % -1 is 0, and INT64_MIN % -1 is undefined in C++.
    int64_t rest = y == -1 ? 0 : x % y;
    if (!fmod && rest != 0 && (rest < 0) != (y < 0))
      rest += y;
    return rest;
  }
  }
  llvm_unreachable("unknown binary kind");
}

/// Float `x` op `y` in `T` (float or double), as the run-time op computes
/// it: one rounding to T.
template <typename T> static T foldFloat(BinaryKind kind, T x, T y) {
  switch (kind) {
  case BinaryKind::Add:
    return x + y;
  case BinaryKind::Sub:
    return x - y;
  case BinaryKind::Mul:
    return x * y;
  case BinaryKind::Div:
    return x / y;
  case BinaryKind::Mod:
    return std::fmod(x, y);
  }
  llvm_unreachable("unknown binary kind");
}

/// Defines output 0 as `a` op `b`, both known at import time and of one
/// element type: integer arithmetic on shapes and indices, and float
/// arithmetic on constants (swin's attention mask is built from a
/// ConstantOfShape).
static LogicalResult foldBinary(FunctionImporter &importer, BinaryKind kind,
                                const ConstTensor &a, const ConstTensor &b,
                                bool fmod) {
  if (a.type == om::DataType::Bool)
    return importer.error() << "arithmetic on BOOL values is not supported";
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(a.shape, b.shape);
  if (!shape)
    return importer.error()
           << "the operands " << formatShape(a.shape) << " and "
           << formatShape(b.shape) << " are not broadcast-compatible";
  if (!getKnownElementCount(*shape))
    return importer.error()
           << "the result " << formatShape(*shape)
           << " of this computation at import time has more than "
           << kMaxKnownElements << " elements";
  ConstTensor result;
  result.type = a.type;
  result.shape = *shape;
  result.bytes.resize(result.getNumElements() * result.getElementSize());
  for (int64_t i = 0, e = result.getNumElements(); i < e; ++i) {
    int64_t xi = broadcastIndex(i, *shape, a.shape);
    int64_t yi = broadcastIndex(i, *shape, b.shape);
    if (result.type == om::DataType::Float) {
      float x, y;
      std::memcpy(&x, a.bytes.data() + xi * 4, 4);
      std::memcpy(&y, b.bytes.data() + yi * 4, 4);
      float value = foldFloat(kind, x, y);
      std::memcpy(result.bytes.data() + i * 4, &value, 4);
      continue;
    }
    if (result.type == om::DataType::Double) {
      double value = foldFloat(kind, a.getDouble(xi), b.getDouble(yi));
      std::memcpy(result.bytes.data() + i * 8, &value, 8);
      continue;
    }
    int64_t x = a.getInt(xi), y = b.getInt(yi);
    if (y == 0 && (kind == BinaryKind::Div || kind == BinaryKind::Mod))
      return importer.error() << "integer division by zero";
    std::optional<int64_t> value = foldInt(kind, x, y, fmod);
    if (!value || (result.type == om::DataType::Int32 &&
                   *value != static_cast<int32_t>(*value)))
      return importer.error()
             << "integer overflow computing with " << x << " and " << y;
    result.setInt(i, *value);
  }
  return importer.define(0, std::move(result));
}

/// The element types of a binary operator's two inputs, which must agree.
static FailureOr<om::DataType> binaryType(FunctionImporter &importer) {
  FailureOr<om::DataType> lhsType = importer.inputType(0),
                          rhsType = importer.inputType(1);
  if (failed(lhsType) || failed(rhsType))
    return failure();
  if (*lhsType != *rhsType) {
    importer.error() << "the operands have different element types ("
                     << om::getDataTypeName(*lhsType) << " and "
                     << om::getDataTypeName(*rhsType) << ")";
    return failure();
  }
  return *lhsType;
}

template <BinaryKind kind>
static LogicalResult importBinary(FunctionImporter &importer,
                                  const om::Node &node) {
  FailureOr<om::DataType> lhsType = binaryType(importer);
  if (failed(lhsType))
    return failure();

  // Arithmetic on known values: shape computations and constants. Floats
  // too many to compute here are computed at run time.
  const ConstTensor *a = importer.constantInput(0),
                    *b = importer.constantInput(1);
  if (a && b) {
    std::optional<SmallVector<int64_t>> shape =
        broadcastShapes(a->shape, b->shape);
    if (!isFloatDataType(a->type) || !shape || getKnownElementCount(*shape))
      return foldBinary(importer, kind, *a, *b, /*fmod=*/false);
  }

  FailureOr<Value> lhs = importer.input(0), rhs = importer.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  Value operands[] = {*lhs, *rhs};
  FailureOr<Value> result = failure();
  switch (kind) {
  case BinaryKind::Add:
    if (FailureOr<AddOp> op = importer.create<AddOp>(operands); succeeded(op))
      result = op->getOutput();
    break;
  case BinaryKind::Sub:
    if (FailureOr<SubOp> op = importer.create<SubOp>(operands); succeeded(op))
      result = op->getOutput();
    break;
  case BinaryKind::Mul:
    if (FailureOr<MulOp> op = importer.create<MulOp>(operands); succeeded(op))
      result = op->getOutput();
    break;
  case BinaryKind::Div:
    if (!isFloatDataType(*lhsType))
      return importer.error() << "integer division is supported only on "
                                 "values known at import time";
    if (FailureOr<DivOp> op = importer.create<DivOp>(operands); succeeded(op))
      result = op->getOutput();
    break;
  case BinaryKind::Mod:
    llvm_unreachable("Mod has a converter of its own");
  }
  return failed(result) ? failure() : importer.define(0, *result);
}

static LogicalResult importMod(FunctionImporter &importer,
                               const om::Node &node) {
  FailureOr<bool> fmod = importer.boolAttr("fmod");
  FailureOr<om::DataType> type = binaryType(importer);
  if (failed(fmod) || failed(type))
    return failure();
  if (isFloatDataType(*type) && !*fmod)
    return importer.attributeError("fmod", "0")
           << " for " << om::getDataTypeName(*type)
           << " operands (ONNX requires fmod = 1 for floating-point types)";
  const ConstTensor *a = importer.constantInput(0),
                    *b = importer.constantInput(1);
  if (!a || !b)
    return importer.error()
           << "Mod is supported on values known at import time only (shape "
              "and index arithmetic): input #"
           << (a ? 1 : 0) << " '" << node.inputs[a ? 1 : 0]
           << "' is computed at run time, and fluid has no remainder op";
  return foldBinary(importer, BinaryKind::Mod, *a, *b, *fmod);
}

static FailureOr<ConstTensor> castConstant(FunctionImporter &importer,
                                           const ConstTensor &tensor,
                                           om::DataType type);

static LogicalResult importPow(FunctionImporter &importer,
                               const om::Node &node) {
  // An integer base known at import time (shape arithmetic): folded, the
  // power truncated to the base's type as ONNX defines it.
  const ConstTensor *base = importer.constantInput(0),
                    *power = importer.constantInput(1);
  if (base && power && base->isInteger()) {
    std::optional<SmallVector<int64_t>> shape =
        broadcastShapes(base->shape, power->shape);
    if (!shape || !getKnownElementCount(*shape))
      return importer.error()
             << "the operands " << formatShape(base->shape) << " and "
             << formatShape(power->shape)
             << " are not broadcast-compatible or too large to compute at "
                "import time";
    ConstTensor result = broadcastConstant(*base, *shape);
    for (int64_t i = 0, e = result.getNumElements(); i < e; ++i) {
      double value = std::trunc(
          std::pow(result.getDouble(i),
                   power->getDouble(broadcastIndex(i, *shape, power->shape))));
      bool fits = result.type == om::DataType::Int32
                      ? value >= -0x1p31 && value < 0x1p31
                      : value >= -0x1p63 && value < 0x1p63;
      if (!fits)
        return importer.error()
               << "integer overflow computing a power of " << result.getInt(i);
      result.setInt(i, static_cast<int64_t>(value));
    }
    return importer.define(0, std::move(result));
  }
  FailureOr<Value> x = importer.floatInput(0);
  FailureOr<om::DataType> baseType = importer.inputType(0);
  if (failed(x) || failed(baseType))
    return failure();
  // ONNX lets the exponent have another type than the base; fluid.pow
  // takes the base's, so a known exponent is converted.
  Value exponent;
  if (const ConstTensor *known = importer.constantInput(1)) {
    // x * x has x's shape: a 2 of higher rank would broadcast it.
    if (known->getNumElements() == 1 && known->getDouble(0) == 2.0 &&
        known->shape.size() <= importer.getTensorType(*x).getShape().size()) {
      FailureOr<MulOp> square = importer.create<MulOp>({*x, *x});
      return failed(square) ? failure()
                            : importer.define(0, square->getOutput());
    }
    FailureOr<ConstTensor> converted =
        castConstant(importer, *known, *baseType);
    if (failed(converted))
      return failure();
    FailureOr<Value> value = importer.constant(*converted);
    if (failed(value))
      return failure();
    exponent = *value;
  } else {
    FailureOr<Value> y = importer.floatInput(1);
    if (failed(y))
      return failure();
    if (importer.getTensorType(*y).getElementType() !=
        importer.getTensorType(*x).getElementType())
      return importer.error()
             << "the exponent " << y->getType() << " differs in element type "
             << "from the base " << x->getType()
             << "; it is supported when it is known at import time";
    exponent = *y;
  }
  FailureOr<PowOp> pow = importer.create<PowOp>({*x, exponent});
  return failed(pow) ? failure() : importer.define(0, pow->getOutput());
}

static LogicalResult importEqual(FunctionImporter &importer,
                                 const om::Node &node) {
  FailureOr<om::DataType> lhsType = importer.inputType(0),
                          rhsType = importer.inputType(1);
  if (failed(lhsType) || failed(rhsType))
    return failure();
  if (*lhsType != *rhsType)
    return importer.error() << "the operands have different element types ("
                            << om::getDataTypeName(*lhsType) << " and "
                            << om::getDataTypeName(*rhsType) << ")";
  const ConstTensor *a = importer.constantInput(0),
                    *b = importer.constantInput(1);
  if (!a || !b)
    return importer.error()
           << "Equal is supported on values known at import time (shape "
              "computations) only: its BOOL result on run-time tensors "
              "would have no fluid type";
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(a->shape, b->shape);
  if (!shape)
    return importer.error()
           << "the operands " << formatShape(a->shape) << " and "
           << formatShape(b->shape) << " are not broadcast-compatible";
  if (!getKnownElementCount(*shape))
    return importer.error()
           << "the result " << formatShape(*shape)
           << " of this comparison at import time has more than "
           << kMaxKnownElements << " elements";
  ConstTensor result;
  result.type = om::DataType::Bool;
  result.shape = *shape;
  result.bytes.resize(result.getNumElements());
  for (int64_t i = 0, e = result.getNumElements(); i < e; ++i) {
    int64_t x = broadcastIndex(i, *shape, a->shape),
            y = broadcastIndex(i, *shape, b->shape);
    bool equal = a->isInteger() || a->type == om::DataType::Bool
                     ? a->getInt(x) == b->getInt(y)
                     : a->getDouble(x) == b->getDouble(y);
    result.setInt(i, equal);
  }
  return importer.define(0, std::move(result));
}

static LogicalResult importNot(FunctionImporter &importer,
                               const om::Node &node) {
  FailureOr<om::DataType> type = importer.inputType(0);
  if (failed(type))
    return failure();
  if (*type != om::DataType::Bool)
    return importer.error()
           << "the input must be BOOL, got " << om::getDataTypeName(*type);
  const ConstTensor *x = importer.constantInput(0);
  if (!x)
    return importer.error()
           << "input #0 '" << node.inputs[0]
           << "' must be known at import time: fluid has no BOOL tensors, "
              "and Not is folded (conditions of Where)";
  ConstTensor result = *x;
  for (int64_t i = 0, e = result.getNumElements(); i < e; ++i)
    result.setInt(i, !x->getInt(i));
  return importer.define(0, std::move(result));
}

static LogicalResult importWhere(FunctionImporter &importer,
                                 const om::Node &node) {
  FailureOr<om::DataType> conditionType = importer.inputType(0),
                          lhsType = importer.inputType(1),
                          rhsType = importer.inputType(2);
  if (failed(conditionType) || failed(lhsType) || failed(rhsType))
    return failure();
  if (*conditionType != om::DataType::Bool)
    return importer.error()
           << "the condition (input #0 '" << node.inputs[0]
           << "') must be BOOL, got " << om::getDataTypeName(*conditionType);
  if (*lhsType != *rhsType)
    return importer.error() << "X and Y have different element types ("
                            << om::getDataTypeName(*lhsType) << " and "
                            << om::getDataTypeName(*rhsType) << ")";
  const ConstTensor *condition = importer.constantInput(0);
  if (!condition)
    return importer.error()
           << "the condition (input #0 '" << node.inputs[0]
           << "') must be known at import time: fluid has no BOOL tensors";
  FailureOr<SmallVector<int64_t>> lhsShape = importer.inputShape(1),
                                  rhsShape = importer.inputShape(2);
  if (failed(lhsShape) || failed(rhsShape))
    return failure();
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(condition->shape, *lhsShape);
  if (shape)
    shape = broadcastShapes(*shape, *rhsShape);
  if (!shape)
    return importer.error()
           << "the condition " << formatShape(condition->shape) << ", X "
           << formatShape(*lhsShape) << " and Y " << formatShape(*rhsShape)
           << " are not broadcast-compatible";

  // Known values (shapes) are selected here.
  const ConstTensor *a = importer.constantInput(1),
                    *b = importer.constantInput(2);
  if (a && b) {
    if (!getKnownElementCount(*shape))
      return importer.error()
             << "the result " << formatShape(*shape)
             << " of this selection at import time has more than "
             << kMaxKnownElements << " elements";
    ConstTensor result = broadcastConstant(*a, *shape);
    ConstTensor other = broadcastConstant(*b, *shape);
    size_t size = result.getElementSize();
    for (int64_t i = 0, e = result.getNumElements(); i < e; ++i)
      if (!condition->getInt(broadcastIndex(i, *shape, condition->shape)))
        std::memcpy(result.bytes.data() + i * size,
                    other.bytes.data() + i * size, size);
    return importer.define(0, std::move(result));
  }

  FailureOr<Value> lhs = importer.floatInput(1), rhs = importer.floatInput(2);
  if (failed(lhs) || failed(rhs))
    return failure();
  // The condition as 1.0 and 0.0 of the values' type.
  ConstTensor mask;
  mask.type = *lhsType;
  mask.shape = condition->shape;
  mask.bytes.resize(condition->getNumElements() * mask.getElementSize());
  for (int64_t i = 0, e = condition->getNumElements(); i < e; ++i) {
    double one = condition->getInt(i) ? 1.0 : 0.0;
    if (mask.type == om::DataType::Float) {
      float narrow = static_cast<float>(one);
      std::memcpy(mask.bytes.data() + i * 4, &narrow, 4);
    } else {
      std::memcpy(mask.bytes.data() + i * 8, &one, 8);
    }
  }
  FailureOr<Value> maskValue = importer.constant(mask);
  if (failed(maskValue))
    return failure();
  FailureOr<SelectOp> select =
      importer.create<SelectOp>({*maskValue, *lhs, *rhs});
  return failed(select) ? failure() : importer.define(0, select->getOutput());
}

/// `x` clipped to [lo, hi]; an absent or infinite bound does not clip.
static FailureOr<Value> clip(FunctionImporter &importer, Value x,
                             std::optional<double> lo,
                             std::optional<double> hi) {
  OpBuilder &builder = importer.getBuilder();
  Location loc = importer.getLoc();
  Type element = importer.getTensorType(x).getElementType();
  Value result = x;
  if (lo && *lo == 0) {
    result = ReluOp::create(builder, loc, result).getOutput();
  } else if (lo && !std::isinf(*lo)) {
    FailureOr<SubOp> below =
        importer.create<SubOp>({importer.scalar(element, *lo), result});
    if (failed(below))
      return failure();
    Value raise = ReluOp::create(builder, loc, below->getOutput()).getOutput();
    FailureOr<AddOp> raised = importer.create<AddOp>({result, raise});
    if (failed(raised))
      return failure();
    result = raised->getOutput();
  }
  if (hi && !std::isinf(*hi)) {
    FailureOr<SubOp> above =
        importer.create<SubOp>({result, importer.scalar(element, *hi)});
    if (failed(above))
      return failure();
    Value excess = ReluOp::create(builder, loc, above->getOutput()).getOutput();
    FailureOr<SubOp> lowered = importer.create<SubOp>({result, excess});
    if (failed(lowered))
      return failure();
    result = lowered->getOutput();
  }
  return result;
}

/// ONNX's HardSigmoid: max(0, min(1, alpha * x + beta)).
static FailureOr<Value> hardSigmoid(FunctionImporter &importer, Value x,
                                    double alpha, double beta) {
  Type element = importer.getTensorType(x).getElementType();
  Value line = x;
  if (alpha != 1.0) {
    FailureOr<MulOp> scaled =
        importer.create<MulOp>({line, importer.scalar(element, alpha)});
    if (failed(scaled))
      return failure();
    line = scaled->getOutput();
  }
  if (beta != 0.0) {
    FailureOr<AddOp> shifted =
        importer.create<AddOp>({line, importer.scalar(element, beta)});
    if (failed(shifted))
      return failure();
    line = shifted->getOutput();
  }
  return clip(importer, line, 0.0, 1.0);
}

static LogicalResult importClip(FunctionImporter &importer,
                                const om::Node &node) {
  FailureOr<Value> x = importer.floatInput(0);
  if (failed(x))
    return failure();
  std::optional<double> bounds[2];
  for (unsigned i = 1; i < 3; ++i) {
    if (!importer.hasInput(i))
      continue;
    FailureOr<double> bound =
        importer.scalarInput(i, i == 1 ? "the minimum" : "the maximum");
    if (failed(bound))
      return failure();
    bounds[i - 1] = *bound;
  }
  FailureOr<Value> result = clip(importer, *x, bounds[0], bounds[1]);
  return failed(result) ? failure() : importer.define(0, *result);
}

static LogicalResult importHardSigmoid(FunctionImporter &importer,
                                       const om::Node &node) {
  FailureOr<double> alpha = importer.floatAttr("alpha", 0.2);
  FailureOr<double> beta = importer.floatAttr("beta", 0.5);
  FailureOr<Value> x = importer.floatInput(0);
  if (failed(alpha) || failed(beta) || failed(x))
    return failure();
  FailureOr<Value> result = hardSigmoid(importer, *x, *alpha, *beta);
  return failed(result) ? failure() : importer.define(0, *result);
}

static LogicalResult importHardSwish(FunctionImporter &importer,
                                     const om::Node &node) {
  FailureOr<Value> x = importer.floatInput(0);
  if (failed(x))
    return failure();
  // x * HardSigmoid(x) with alpha = 1/6 and beta = 0.5, as ONNX defines it.
  FailureOr<Value> gate = hardSigmoid(importer, *x, 1.0 / 6.0, 0.5);
  if (failed(gate))
    return failure();
  FailureOr<MulOp> result = importer.create<MulOp>({*x, *gate});
  return failed(result) ? failure() : importer.define(0, result->getOutput());
}

/// `tensor` converted to `type` (FLOAT, DOUBLE, INT32, INT64 or BOOL):
/// floats to integers toward zero, as C and NumPy do, and anything but 0
/// to true.
static FailureOr<ConstTensor> castConstant(FunctionImporter &importer,
                                           const ConstTensor &tensor,
                                           om::DataType type) {
  ConstTensor result;
  result.type = type;
  result.shape = tensor.shape;
  int64_t count = tensor.getNumElements();
  result.bytes.resize(count * result.getElementSize());
  for (int64_t i = 0; i < count; ++i) {
    if (type == om::DataType::Bool) {
      result.setInt(i, tensor.getDouble(i) != 0);
      continue;
    }
    if (type == om::DataType::Float || type == om::DataType::Double) {
      double value = tensor.getDouble(i);
      if (type == om::DataType::Double) {
        std::memcpy(result.bytes.data() + i * 8, &value, 8);
      } else {
        float narrow = static_cast<float>(value);
        std::memcpy(result.bytes.data() + i * 4, &narrow, 4);
      }
      continue;
    }
    int64_t value;
    if (tensor.isInteger()) {
      value = tensor.getInt(i);
    } else {
      double real = std::trunc(tensor.getDouble(i));
      // 2^63 is the first double past int64_t's range.
      if (!(real >= -0x1p63 && real < 0x1p63)) {
        importer.error() << "element " << i << " (" << tensor.getDouble(i)
                         << ") has no " << om::getDataTypeName(type)
                         << " value";
        return failure();
      }
      value = static_cast<int64_t>(real);
    }
    if (type == om::DataType::Int32 && value != static_cast<int32_t>(value)) {
      importer.error() << "element " << i << " (" << value
                       << ") does not fit INT32";
      return failure();
    }
    result.setInt(i, value);
  }
  return result;
}

static LogicalResult importCast(FunctionImporter &importer,
                                const om::Node &node) {
  if (!node.findAttribute("to"))
    return importer.error() << "attribute 'to' is required";
  FailureOr<int64_t> to = importer.intAttr("to", 0);
  FailureOr<om::DataType> from = importer.inputType(0);
  if (failed(to) || failed(from))
    return failure();
  bool named = *to >= 0 && *to <= static_cast<int64_t>(om::DataType::BFloat16);
  auto type = named ? static_cast<om::DataType>(*to) : om::DataType::Undefined;
  // BOOL values are conditions known at import time (swin's attention
  // mask): fluid has no BOOL tensors.
  bool toKnownBool =
      type == om::DataType::Bool && importer.constantInput(0) != nullptr;
  if (!getElementType(importer.getContext(), type) && !toKnownBool) {
    std::string value = std::to_string(*to);
    if (named)
      value += " (" + std::string(om::getDataTypeName(type)) + ")";
    return importer.attributeError("to", value)
           << ": the importer casts to FLOAT, DOUBLE, INT32 and INT64 (and "
              "to BOOL values known at import time)";
  }
  // A cast to the same type is the value itself (a known value stays
  // known, a parameter stays the parameter).
  if (*from == type) {
    FailureOr<Entry *> entry = importer.lookup(0);
    return failed(entry) ? failure() : importer.define(0, **entry);
  }
  if (const ConstTensor *known = importer.constantInput(0)) {
    FailureOr<ConstTensor> result = castConstant(importer, *known, type);
    return failed(result) ? failure() : importer.define(0, std::move(*result));
  }
  FailureOr<Value> x = importer.input(0);
  if (failed(x))
    return failure();
  RankedTensorType xType = importer.getTensorType(*x);
  auto resultType = RankedTensorType::get(
      xType.getShape(), getElementType(importer.getContext(), type));
  return importer.define(0, CastOp::create(importer.getBuilder(),
                                           importer.getLoc(), resultType, *x)
                                .getOutput());
}

template <typename OpT>
static LogicalResult importSoftmax(FunctionImporter &importer,
                                   const om::Node &node) {
  // Opset 13 normalizes along one axis (default -1); earlier opsets
  // flatten the input to 2-D at `axis` (default 1) and normalize each row.
  bool coerce = importer.getProgram().opset < 13;
  FailureOr<int64_t> axisAttr = importer.intAttr("axis", coerce ? 1 : -1);
  FailureOr<Value> x = importer.floatInput(0);
  if (failed(axisAttr) || failed(x))
    return failure();
  RankedTensorType type = importer.getTensorType(*x);
  int64_t rank = type.getRank();
  if (*axisAttr < -rank || *axisAttr >= std::max<int64_t>(rank, 1))
    return importer.attributeError("axis", Twine(*axisAttr))
           << ": out of range for rank " << rank;
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  Value input = *x;
  if (coerce && axis != rank - 1) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? outer : inner) *= type.getDimSize(d);
    FailureOr<Value> rows = importer.reshape(input, {outer, inner});
    if (failed(rows))
      return failure();
    input = *rows;
    axis = 1;
  }
  OpBuilder &builder = importer.getBuilder();
  Value output = OpT::create(builder, importer.getLoc(), input.getType(), input,
                             builder.getI64IntegerAttr(axis))
                     .getOutput();
  FailureOr<Value> result = importer.reshape(output, type.getShape());
  return failed(result) ? failure() : importer.define(0, *result);
}

static LogicalResult importDropout(FunctionImporter &importer,
                                   const om::Node &node) {
  // Dropout-10 (opset 11) takes the ratio as an attribute and has no
  // training mode; Dropout-12 takes both as inputs.
  bool training = false;
  FailureOr<double> ratio = 0.5;
  if (importer.getProgram().opset < 12) {
    ratio = importer.floatAttr("ratio", 0.5);
  } else {
    if (node.findAttribute("ratio"))
      return importer.error() << "attribute 'ratio' is Dropout-10's; from "
                                 "opset 12 the ratio is input #1";
    if (importer.hasInput(1))
      ratio = importer.scalarInput(1, "the ratio");
    if (importer.hasInput(2)) {
      FailureOr<om::DataType> modeType = importer.inputType(2);
      if (failed(modeType))
        return failure();
      const ConstTensor *mode = importer.constantInput(2);
      if (*modeType != om::DataType::Bool || !mode ||
          mode->getNumElements() != 1)
        return importer.error()
               << "input #2 '" << node.inputs[2]
               << "' (training_mode) must be a BOOL scalar known at import "
                  "time";
      training = mode->getInt(0) != 0;
    }
  }
  FailureOr<SmallVector<int64_t>> shape = importer.inputShape(0);
  if (failed(ratio) || failed(shape))
    return failure();
  if (!(*ratio >= 0 && *ratio < 1))
    return importer.error()
           << "the ratio " << formatNumber(*ratio) << " is not in [0, 1)";
  // Dropping at random is not something fluid does: a Dropout that would
  // drop is an error, not silently the identity.
  if (*ratio > 0 && training)
    return importer.error()
           << "drops elements at random (ratio " << formatNumber(*ratio)
           << ", training_mode true), which fluid does not do; export the "
              "model with its dropout probabilities 0";
  if (*ratio > 0 && importer.getPhase() == Phase::Training)
    return importer.error()
           << "would drop elements at random (ratio " << formatNumber(*ratio)
           << ") in the training program that --loss builds, which fluid "
              "does not do; export the model with its dropout probabilities "
              "0 to train without dropout";
  // The identity: a known value stays known, a parameter the parameter.
  FailureOr<Entry *> entry = importer.lookup(0);
  if (failed(entry) || failed(importer.define(0, **entry)))
    return failure();
  if (!importer.hasOutput(1))
    return success();
  // The mask keeps every element.
  if (!getKnownElementCount(*shape))
    return importer.error()
           << "the mask " << formatShape(*shape) << " has more than "
           << kMaxKnownElements << " elements";
  ConstTensor mask;
  mask.type = om::DataType::Bool;
  mask.shape = *shape;
  mask.bytes.assign(mask.getNumElements(), 1);
  return importer.define(1, std::move(mask));
}

std::vector<OperatorInfo> mlir::fluid::onnx_import::getElementwiseOperators() {
  return {
      {"Add", &importBinary<BinaryKind::Add>, {1, 6, 7, 13, 14}, {}, 2, 1},
      {"Cast", &importCast, {1, 6, 9, 13}, {"to"}, 1, 1},
      {"Clip", &importClip, {1, 6, 11, 12, 13}, {}, 3, 1},
      {"Div", &importBinary<BinaryKind::Div>, {1, 6, 7, 13, 14}, {}, 2, 1},
      {"Dropout",
       &importDropout,
       {1, 6, 7, 10, 12, 13},
       {"ratio", "seed"},
       3,
       2},
      {"Equal", &importEqual, {1, 7, 11, 13}, {}, 2, 1},
      {"Erf", &importUnary<ErfOp>, {9, 13}, {}, 1, 1},
      {"Exp", &importUnary<ExpOp>, {1, 6, 13}, {}, 1, 1},
      {"HardSigmoid", &importHardSigmoid, {1, 6}, {"alpha", "beta"}, 1, 1},
      {"HardSwish", &importHardSwish, {14}, {}, 1, 1},
      {"Log", &importUnary<LogOp>, {1, 6, 13}, {}, 1, 1},
      {"LogSoftmax", &importSoftmax<LogSoftmaxOp>, {1, 11, 13}, {"axis"}, 1, 1},
      {"Mod", &importMod, {10, 13}, {"fmod"}, 2, 1},
      {"Mul", &importBinary<BinaryKind::Mul>, {1, 6, 7, 13, 14}, {}, 2, 1},
      {"Not", &importNot, {1}, {}, 1, 1},
      {"Pow", &importPow, {1, 7, 12, 13, 15}, {}, 2, 1},
      {"Relu", &importUnary<ReluOp>, {1, 6, 13, 14}, {}, 1, 1},
      {"Sigmoid", &importUnary<SigmoidOp>, {1, 6, 13}, {}, 1, 1},
      {"Softmax", &importSoftmax<SoftmaxOp>, {1, 11, 13}, {"axis"}, 1, 1},
      {"Sqrt", &importUnary<SqrtOp>, {1, 6, 13}, {}, 1, 1},
      {"Sub", &importBinary<BinaryKind::Sub>, {1, 6, 7, 13, 14}, {}, 2, 1},
      {"Tanh", &importUnary<TanhOp>, {1, 6, 13}, {}, 1, 1},
      {"Where", &importWhere, {9, 16}, {}, 3, 1},
  };
}
