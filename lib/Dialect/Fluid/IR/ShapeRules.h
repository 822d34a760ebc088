//===- ShapeRules.h - Shared pieces of the ops' shape rules ---*- C++ -*-===//
//
// Internal to the dialect library: the error reporter and the window and
// broadcast arithmetic that forward and gradient ops share.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_LIB_DIALECT_FLUID_IR_SHAPERULES_H
#define FLUID_LIB_DIALECT_FLUID_IR_SHAPERULES_H

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/CheckedArithmetic.h"

namespace mlir::fluid::detail {

/// Reports shape errors of one op, prefixed like the op's own diagnostics.
/// Without a location (a builder probing types) nothing is printed.
class ShapeErrors {
public:
  ShapeErrors(std::optional<Location> loc, StringRef opName)
      : loc(loc), opName(opName) {}

  template <typename... Args> LogicalResult fail(Args &&...args) const {
    return emitOptionalError(loc, "'", opName, "' op ",
                             std::forward<Args>(args)...);
  }

  /// The operand `v` as a tensor of a fluid element type, or a failure that
  /// names it. Parsing calls shape rules before operand types are verified.
  FailureOr<RankedTensorType> tensor(Value v, StringRef what,
                                     bool requireFloat = true) const {
    Type type = v.getType();
    if (requireFloat ? isFloatTensor(type) : isFluidTensor(type))
      return cast<RankedTensorType>(type);
    if (failed(fail(what, " must be a statically shaped ",
                    requireFloat ? "floating-point " : "",
                    "tensor whose size fits in 64 bits, got ", type)))
      return failure();
    return failure();
  }

  LogicalResult expectRank(RankedTensorType type, StringRef what,
                           ArrayRef<int64_t> ranks, StringRef layout) const {
    if (llvm::is_contained(ranks, type.getRank()))
      return success();
    std::string expected;
    llvm::raw_string_ostream os(expected);
    llvm::interleave(ranks, os, " or ");
    return fail(what, " must have rank ", expected, layout, ", got ", type);
  }

  LogicalResult sameElementType(RankedTensorType a, StringRef aName,
                                RankedTensorType b, StringRef bName) const {
    if (a.getElementType() == b.getElementType())
      return success();
    return fail(aName, " and ", bName, " must have the same element type, got ",
                a.getElementType(), " and ", b.getElementType());
  }

  /// Checks that an array attribute has `size` entries, each >= `minimum`.
  LogicalResult expectArray(ArrayRef<int64_t> values, StringRef name,
                            size_t size, int64_t minimum) const {
    if (values.size() != size)
      return fail("'", name, "' must have ", size, " values, got ",
                  values.size());
    for (int64_t v : values)
      if (v < minimum)
        return fail("'", name, "' values must be >= ", minimum, ", got ", v);
    return success();
  }

  /// An axis in [-rank, rank) (or [-rank, rank] when `inclusive`), made
  /// non-negative.
  FailureOr<int64_t> axis(int64_t axis, int64_t rank, StringRef name,
                          bool inclusive = false) const {
    int64_t upper = inclusive ? rank : rank - 1;
    if (axis < -rank || axis > upper) {
      (void)fail("'", name, "' ", axis, " is out of range for rank ", rank,
                 " (expected ", -rank, " to ", upper, ")");
      return failure();
    }
    return axis < 0 ? axis + rank : axis;
  }

private:
  std::optional<Location> loc;
  StringRef opName;
};

/// Output extent of a sliding window along one dimension, by PyTorch's rule
/// (see below), so that shapes agree with PyTorch's in both rounding modes.
inline FailureOr<int64_t> windowOutputSize(const ShapeErrors &errors,
                                           StringRef dim, int64_t in,
                                           int64_t kernel, int64_t stride,
                                           int64_t padBefore, int64_t padAfter,
                                           int64_t dilation, bool ceilMode) {
  if (in < 1) {
    (void)errors.fail("input ", dim, " must be >= 1, got ", in);
    return failure();
  }
  if (kernel < 1) {
    (void)errors.fail("window ", dim, " must be >= 1, got ", kernel);
    return failure();
  }
  std::optional<int64_t> padded = llvm::checkedAdd<int64_t>(in, padBefore);
  if (padded)
    padded = llvm::checkedAdd<int64_t>(*padded, padAfter);
  std::optional<int64_t> extent =
      llvm::checkedMul<int64_t>(dilation, kernel - 1);
  if (extent)
    extent = llvm::checkedAdd<int64_t>(*extent, 1);
  if (!padded || !extent) {
    (void)errors.fail("window arithmetic along ", dim, " overflows 64 bits");
    return failure();
  }
  // PyTorch's rule: floor((padded - extent + (ceil ? stride - 1 : 0)) /
  // stride) + 1; in ceil mode a window may overhang the padded input as
  // long as it starts inside it.
  std::optional<int64_t> numerator = *padded - *extent;
  if (ceilMode)
    numerator = llvm::checkedAdd<int64_t>(*numerator, stride - 1);
  if (!numerator) {
    (void)errors.fail("window arithmetic along ", dim, " overflows 64 bits");
    return failure();
  }
  int64_t steps = *numerator >= 0 ? *numerator / stride
                                  : -((-*numerator + stride - 1) / stride);
  // A last window that would start inside the trailing padding is dropped.
  // steps * stride can only overflow when it is far past the input.
  if (ceilMode && steps > 0) {
    std::optional<int64_t> start = llvm::checkedMul<int64_t>(steps, stride);
    if (!start || *start >= in + padBefore)
      --steps;
  }
  if (steps < 0) {
    (void)errors.fail("window extent ", *extent, " along ", dim,
                      " exceeds the padded input size ", *padded);
    return failure();
  }
  return steps + 1;
}

/// NumPy broadcasting of two shapes, or a failure naming the first
/// mismatching dimension (counted from the end).
inline FailureOr<SmallVector<int64_t>>
broadcastShapes(const ShapeErrors &errors, RankedTensorType lhs,
                RankedTensorType rhs) {
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape();
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      (void)errors.fail("operands are not broadcast-compatible: ", lhs, " and ",
                        rhs, " differ in dimension -", i + 1, " (", da, " vs ",
                        db, ")");
      return failure();
    }
    result[rank - 1 - i] = da == 1 ? db : da;
  }
  return result;
}

/// Parsing with inferred result types and building both call shape rules
/// before the op's properties are complete: while parsing, the attributes
/// are still a dictionary, and default-valued ones are not filled in yet.
/// This adaptor sees complete properties, so each default is written once,
/// in ODS. (None of these ops has regions.)
template <typename OpT>
typename OpT::Adaptor withDefaults(MLIRContext *context,
                                   typename OpT::Adaptor adaptor,
                                   typename OpT::Properties &storage) {
  storage = adaptor.getProperties();
  DictionaryAttr attrs = adaptor.getAttributes();
  if (attrs && storage == typename OpT::Properties()) {
    // Parsing: the attributes are only in the dictionary. A malformed one
    // is reported by the op's own verifier; here it takes its default.
    typename OpT::Properties fromAttrs;
    if (succeeded(OpT::setPropertiesFromAttr(
            fromAttrs, attrs, [&] { return InFlightDiagnostic(); })))
      storage = fromAttrs;
  }
  OpT::populateDefaultProperties(
      OperationName(OpT::getOperationName(), context), storage);
  return typename OpT::Adaptor(adaptor.getOperands(), adaptor.getAttributes(),
                               storage);
}

/// The shape rule of gather, on types: `input` with dimension `axis`
/// replaced by the 1-D `indices`' length, or a failure reported through
/// `errors`.
FailureOr<RankedTensorType> inferGatherType(const ShapeErrors &errors,
                                            RankedTensorType input,
                                            RankedTensorType indices,
                                            int64_t axis);

/// Fails, naming the first, when `indices` is a constant with a value
/// outside [0, extent), the size of dimension `axis` it indexes.
LogicalResult verifyConstantIndices(Operation *op, Value indices,
                                    int64_t extent, int64_t axis);

/// The shape rule of conv2d, on types: the output type, or a failure
/// reported through `errors`. `bias` may be null.
FailureOr<RankedTensorType> inferConv2DType(
    const ShapeErrors &errors, RankedTensorType input, RankedTensorType filter,
    RankedTensorType bias, ArrayRef<int64_t> strides, ArrayRef<int64_t> padding,
    ArrayRef<int64_t> dilation, int64_t groups, bool channelsLast = false);

/// The shape rule of the 2-D pooling ops, on types: [N, C, H, W] ->
/// [N, C, OH, OW], or with `channelsLast` [N, H, W, C] -> [N, OH, OW, C].
FailureOr<RankedTensorType>
inferPool2DType(const ShapeErrors &errors, RankedTensorType input,
                ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                ArrayRef<int64_t> padding, ArrayRef<int64_t> dilation,
                bool ceilMode, bool channelsLast = false);

/// The shape rule of fluid.max_pool2d_with_indices and its gradient: the
/// output type (as inferPool2DType) and that of the indices (its shape,
/// ui8), once the kernel has at most kMaxPoolIndexCells cells.
FailureOr<std::pair<RankedTensorType, RankedTensorType>>
inferMaxPool2DWithIndicesTypes(const ShapeErrors &errors,
                               RankedTensorType input, ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> padding,
                               ArrayRef<int64_t> dilation, bool ceilMode,
                               bool channelsLast);

/// A normalized axis in [0, rank) (callers have verified the range).
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

} // namespace mlir::fluid::detail

#endif // FLUID_LIB_DIALECT_FLUID_IR_SHAPERULES_H
