//===- FluidFolders.cpp - Folders of the elementwise math ops -------------===//
//
// What --canonicalize can fold in the scalar arithmetic of learning-rate
// schedules, without changing a single bit of what the program computes:
//
// - rank-0 constants, for operations every backend rounds the same way
//   (IEEE add, sub, mul, div and sqrt, which are correctly rounded; neg,
//   floor, minimum, maximum, greater_equal, select and casts, which are
//   exact or defined rounding); integer add, sub and mul wrap, as the
//   runtime's do. Transcendental functions (exp, log, cos, pow) are not
//   folded: the host's libm and a GPU's need not agree in the last bit;
// - exact identities: x * 1, 1 * x, x / 1, x - 0, x + 0 for integers, a
//   cast to the same type, select with a constant condition. x + 0.0 is
//   not folded for floats (-0 + 0 is +0); nor is any reassociation such
//   as (x * a) * b -> x * (a * b), which rounds differently.
//
// Constants of other shapes are left alone: folding them could turn a
// small computation into a large constant in the program.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// A scalar value of a supported element type (f32, f64, i32, i64).
struct Scalar {
  Type type;
  double real = 0;
  APInt integer;

  bool isFloat() const { return isa<FloatType>(type); }
};

bool foldable(Type elementType) {
  return elementType.isF32() || elementType.isF64() ||
         elementType.isSignlessInteger(32) || elementType.isSignlessInteger(64);
}

/// The value of a splat constant operand of a supported element type.
std::optional<Scalar> splatValue(Attribute attr) {
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat() || !foldable(dense.getElementType()))
    return std::nullopt;
  Scalar value;
  value.type = dense.getElementType();
  if (value.isFloat())
    value.real = dense.getSplatValue<APFloat>().convertToDouble();
  else
    value.integer = dense.getSplatValue<APInt>();
  return value;
}

/// The rank-0 result type of `op`, if its element type can be folded.
RankedTensorType scalarResultType(Operation *op) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || type.getRank() != 0 || !foldable(type.getElementType()))
    return {};
  return type;
}

/// A rank-0 constant of `type` holding `value` (a float rounded once to
/// the element type: for f32, computed in float already).
Attribute floatResult(RankedTensorType type, double value) {
  if (type.getElementType().isF32())
    return DenseElementsAttr::get(type, APFloat(static_cast<float>(value)));
  return DenseElementsAttr::get(type, APFloat(value));
}

Attribute integerResult(RankedTensorType type, const APInt &value) {
  return DenseElementsAttr::get(type, value);
}

/// Folds a binary op on two rank-0 constants with `real` for floats (in
/// the element type: float for f32, double for f64) and `integer` for
/// integers (null: not folded).
template <typename RealFn, typename IntFn>
OpFoldResult foldBinary(Operation *op, Attribute lhsAttr, Attribute rhsAttr,
                        RealFn real, IntFn integer) {
  RankedTensorType type = scalarResultType(op);
  std::optional<Scalar> lhs = splatValue(lhsAttr), rhs = splatValue(rhsAttr);
  if (!type || !lhs || !rhs || lhs->type != type.getElementType() ||
      rhs->type != type.getElementType())
    return {};
  if (lhs->isFloat()) {
    if (type.getElementType().isF32())
      return floatResult(type, real(static_cast<float>(lhs->real),
                                    static_cast<float>(rhs->real)));
    return floatResult(type, real(lhs->real, rhs->real));
  }
  if constexpr (std::is_same_v<IntFn, std::nullptr_t>) {
    return {};
  } else {
    return integerResult(type, integer(lhs->integer, rhs->integer));
  }
}

/// Folds a unary float op on a rank-0 constant.
template <typename RealFn>
OpFoldResult foldUnary(Operation *op, Attribute inputAttr, RealFn real) {
  RankedTensorType type = scalarResultType(op);
  std::optional<Scalar> input = splatValue(inputAttr);
  if (!type || !input || !input->isFloat() ||
      input->type != type.getElementType())
    return {};
  if (type.getElementType().isF32())
    return floatResult(type, real(static_cast<float>(input->real)));
  return floatResult(type, real(input->real));
}

/// Whether `attr` is a splat constant equal to `value` (1 or 0).
bool isSplatOf(Attribute attr, int value) {
  std::optional<Scalar> scalar = splatValue(attr);
  if (!scalar)
    return false;
  if (scalar->isFloat())
    return scalar->real == value && !std::signbit(scalar->real);
  return scalar->integer == value;
}

/// `value` when it has the result's type (no broadcasting hides in it).
OpFoldResult sameType(Operation *op, Value value) {
  if (value.getType() == op->getResult(0).getType())
    return value;
  return {};
}

} // namespace

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  // x + 0 is exact for integers only (-0.0 + 0.0 is +0.0).
  if (!isa<FloatType>(getType().getElementType())) {
    if (isSplatOf(adaptor.getRhs(), 0))
      return sameType(*this, getLhs());
    if (isSplatOf(adaptor.getLhs(), 0))
      return sameType(*this, getRhs());
  }
  return foldBinary(
      *this, adaptor.getLhs(), adaptor.getRhs(),
      [](auto a, auto b) { return a + b; },
      [](const APInt &a, const APInt &b) { return a + b; });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  // x - (+0) is x for every x, -0 included.
  if (isSplatOf(adaptor.getRhs(), 0))
    return sameType(*this, getLhs());
  return foldBinary(
      *this, adaptor.getLhs(), adaptor.getRhs(),
      [](auto a, auto b) { return a - b; },
      [](const APInt &a, const APInt &b) { return a - b; });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    if (OpFoldResult same = sameType(*this, getLhs()))
      return same;
  if (isSplatOf(adaptor.getLhs(), 1))
    if (OpFoldResult same = sameType(*this, getRhs()))
      return same;
  return foldBinary(
      *this, adaptor.getLhs(), adaptor.getRhs(),
      [](auto a, auto b) { return a * b; },
      [](const APInt &a, const APInt &b) { return a * b; });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1))
    return sameType(*this, getLhs());
  return foldBinary(
      *this, adaptor.getLhs(), adaptor.getRhs(),
      [](auto a, auto b) { return a / b; }, nullptr);
}

// The runtime's rules (CpuOptimizerKernels.h): NaN propagates.
OpFoldResult MinimumOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      *this, adaptor.getLhs(), adaptor.getRhs(),
      [](auto a, auto b) { return a < b || a != a ? a : b; }, nullptr);
}

OpFoldResult MaximumOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      *this, adaptor.getLhs(), adaptor.getRhs(),
      [](auto a, auto b) { return a > b || a != a ? a : b; }, nullptr);
}

OpFoldResult GreaterEqualOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      *this, adaptor.getLhs(), adaptor.getRhs(),
      [](auto a, auto b) { return decltype(a)(a >= b ? 1 : 0); }, nullptr);
}

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  return foldUnary(*this, adaptor.getInput(), [](auto x) { return -x; });
}

OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  return foldUnary(*this, adaptor.getInput(),
                   [](auto x) { return std::floor(x); });
}

OpFoldResult SqrtOp::fold(FoldAdaptor adaptor) {
  return foldUnary(*this, adaptor.getInput(),
                   [](auto x) { return std::sqrt(x); });
}

OpFoldResult SelectOp::fold(FoldAdaptor adaptor) {
  // NaN counts as nonzero, as in the runtime.
  std::optional<Scalar> condition = splatValue(adaptor.getCondition());
  if (!condition || !condition->isFloat())
    return {};
  return sameType(*this, condition->real != 0 || std::isnan(condition->real)
                             ? getOnTrue()
                             : getOnFalse());
}

/// Whether every value of element type `from` converts to `to` exactly:
/// a float to a float format that holds it (bf16 or f16 to f32, f32 to f64),
/// an integer to one at least as wide.
static bool widensExactly(Type from, Type to) {
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (fromFloat && toFloat)
    return APFloat::isRepresentableBy(fromFloat.getFloatSemantics(),
                                      toFloat.getFloatSemantics());
  return from.isSignlessInteger() && to.isSignlessInteger() &&
         from.getIntOrFloatBitWidth() <= to.getIntOrFloatBitWidth();
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // Narrowing back what was widened exactly gives the value again:
  // bf16 -> f32 -> bf16 is the bf16 tensor (mixed precision's rounding
  // makes such pairs where a 16-bit value meets a narrowing cast).
  if (auto widen = getInput().getDefiningOp<CastOp>();
      widen && widen.getInput().getType() == getType() &&
      widensExactly(getElementTypeOrSelf(getType()),
                    getElementTypeOrSelf(widen.getType())))
    return widen.getInput();
  RankedTensorType type = scalarResultType(*this);
  std::optional<Scalar> input = splatValue(adaptor.getInput());
  if (!type || !input)
    return {};
  Type to = type.getElementType();
  if (isa<FloatType>(to)) {
    // Rounded to nearest, as the runtime's C++ conversions do.
    APFloat value = input->isFloat() ? APFloat(input->real) : APFloat(0.0);
    if (!input->isFloat())
      value.convertFromAPInt(input->integer, /*IsSigned=*/true,
                             APFloat::rmNearestTiesToEven);
    bool losesInfo = false;
    value.convert(cast<FloatType>(to).getFloatSemantics(),
                  APFloat::rmNearestTiesToEven, &losesInfo);
    return DenseElementsAttr::get(type, value);
  }
  unsigned width = to.getIntOrFloatBitWidth();
  if (!input->isFloat()) {
    // Out of range is a run-time error: left to the runtime to report.
    if (!input->integer.isSignedIntN(width))
      return {};
    return integerResult(type, input->integer.sextOrTrunc(width));
  }
  // Toward zero; NaN, infinities and out-of-range values are run-time
  // errors, left to the runtime.
  APSInt result(width, /*isUnsigned=*/false);
  bool exact = false;
  APFloat::opStatus status =
      APFloat(input->real)
          .convertToInteger(result, APFloat::rmTowardZero, &exact);
  if (status != APFloat::opOK && status != APFloat::opInexact)
    return {};
  return integerResult(type, result);
}
