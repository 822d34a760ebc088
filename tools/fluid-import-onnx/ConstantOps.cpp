//===- ConstantOps.cpp - Constant, ConstantOfShape and Range --------------===//
//
// A Constant is a value known at import time: shapes and axes computed on
// stay known, and a constant that reaches a run-time computation becomes a
// fluid.constant where it is first used. So is a ConstantOfShape (of a
// known shape; F.pad's export computes its pads with one), unless it is
// larger than a shape computation is, when it is a broadcast of its value.
// A Range, whose length depends on its values, is computed here from known
// start, limit and delta.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

static LogicalResult importConstant(FunctionImporter &importer,
                                    const om::Node &node) {
  if (node.attributes.size() != 1)
    return importer.error() << "needs exactly one value attribute, got "
                            << node.attributes.size();
  const om::Attribute &attr = node.attributes.front();
  ConstTensor result;
  auto floats = [&](ArrayRef<float> values, ArrayRef<int64_t> shape) {
    result.type = om::DataType::Float;
    result.shape.assign(shape.begin(), shape.end());
    result.bytes.resize(values.size() * 4);
    if (!values.empty())
      std::memcpy(result.bytes.data(), values.data(), result.bytes.size());
  };
  if (attr.name == "value" && attr.kind == om::Attribute::Kind::Tensor) {
    if (!attr.t.hasData)
      return importer.error()
             << "constants of element type " << om::getDataTypeName(attr.t.type)
             << " are not supported";
    result.type = attr.t.type;
    result.shape.assign(attr.t.dims.begin(), attr.t.dims.end());
    result.bytes.assign(attr.t.bytes.begin(), attr.t.bytes.end());
  } else if (attr.name == "value_float" &&
             attr.kind == om::Attribute::Kind::Float) {
    floats({attr.f}, {});
  } else if (attr.name == "value_floats" &&
             attr.kind == om::Attribute::Kind::Floats) {
    floats(attr.floats, {static_cast<int64_t>(attr.floats.size())});
  } else if (attr.name == "value_int" &&
             attr.kind == om::Attribute::Kind::Int) {
    result = ConstTensor::ofInts({attr.i}, {});
  } else if (attr.name == "value_ints" &&
             attr.kind == om::Attribute::Kind::Ints) {
    result = ConstTensor::ofInts(attr.ints,
                                 {static_cast<int64_t>(attr.ints.size())});
  } else {
    return importer.error()
           << "attribute '" << attr.name << "' of type "
           << om::getAttributeKindName(attr.kind)
           << " is not supported (strings and sparse tensors are not)";
  }
  return importer.define(0, std::move(result));
}

static LogicalResult importConstantOfShape(FunctionImporter &importer,
                                           const om::Node &node) {
  FailureOr<SmallVector<int64_t>> shape = importer.intsInput(0, "the shape");
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t dim) { return dim < 0; }))
    return importer.error() << "the shape " << formatShape(*shape)
                            << " has a negative dimension";
  // The value: one element, 0.0f by default.
  ConstTensor value;
  value.type = om::DataType::Float;
  value.bytes.assign(4, 0);
  if (const om::Attribute *attr = node.findAttribute("value")) {
    if (attr->kind != om::Attribute::Kind::Tensor)
      return importer.error()
             << "attribute 'value' must be of type "
             << om::getAttributeKindName(om::Attribute::Kind::Tensor)
             << ", got " << om::getAttributeKindName(attr->kind);
    if (!attr->t.hasData)
      return importer.error()
             << "a value of element type " << om::getDataTypeName(attr->t.type)
             << " is not supported";
    if (attr->t.getNumElements() != 1)
      return importer.error() << "attribute 'value' must hold one element, "
                                 "got the shape "
                              << formatShape(attr->t.dims);
    value.type = attr->t.type;
    value.bytes.assign(attr->t.bytes.begin(), attr->t.bytes.end());
  }

  std::optional<int64_t> count = getKnownElementCount(*shape);
  if (count) {
    ConstTensor result;
    result.type = value.type;
    result.shape = *shape;
    for (int64_t i = 0; i < *count; ++i)
      result.bytes.insert(result.bytes.end(), value.bytes.begin(),
                          value.bytes.end());
    return importer.define(0, std::move(result));
  }
  // Too large for a value known at import time: a float tensor at run time.
  Type element = getElementType(importer.getContext(), value.type);
  auto type = RankedTensorType::get(*shape, element);
  if (!isFloatDataType(value.type) || !isFluidTensor(type))
    return importer.error()
           << "a " << om::getDataTypeName(value.type) << " tensor of shape "
           << formatShape(*shape) << " is not supported";
  return importer.define(
      0, BroadcastToOp::create(importer.getBuilder(), importer.getLoc(), type,
                               importer.scalar(element, value.getDouble(0)))
             .getOutput());
}

/// The values start, start + delta, ... up to `limit` (excluded) in `T`:
/// element i is start + i * delta, rounded once to T.
template <typename T>
static ConstTensor rangeOf(om::DataType type, T start, T delta, int64_t count) {
  ConstTensor result;
  result.type = type;
  result.shape = {count};
  result.bytes.resize(count * sizeof(T));
  for (int64_t i = 0; i < count; ++i) {
    T value = start + static_cast<T>(i) * delta;
    std::memcpy(result.bytes.data() + i * sizeof(T), &value, sizeof(T));
  }
  return result;
}

static LogicalResult importRange(FunctionImporter &importer,
                                 const om::Node &node) {
  static const char *const names[] = {"the start", "the limit", "the delta"};
  om::DataType type = om::DataType::Undefined;
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<om::DataType> inputType = importer.inputType(i);
    if (failed(inputType))
      return failure();
    if (i == 0)
      type = *inputType;
    else if (*inputType != type)
      return importer.error()
             << "input #" << i << " '" << node.inputs[i] << "' (" << names[i]
             << ") is " << om::getDataTypeName(*inputType) << ", input #0 is "
             << om::getDataTypeName(type);
  }
  if (!getElementType(importer.getContext(), type))
    return importer.error() << "ranges of " << om::getDataTypeName(type)
                            << " are not supported (FLOAT, DOUBLE, INT32 or "
                               "INT64)";
  // The result's length depends on the values: they must be known.
  auto tooLong = [&]() {
    return importer.error() << "the range has more than " << kMaxKnownElements
                            << " elements (the most a value computed at "
                               "import time has)";
  };
  if (!isFloatDataType(type)) {
    int64_t values[3];
    for (unsigned i = 0; i < 3; ++i) {
      FailureOr<SmallVector<int64_t>> ints = importer.intsInput(i, names[i]);
      if (failed(ints))
        return failure();
      if (!importer.constantInput(i)->shape.empty())
        return importer.error()
               << "input #" << i << " '" << node.inputs[i] << "' (" << names[i]
               << ") must be a scalar, got the shape "
               << formatShape(importer.constantInput(i)->shape);
      values[i] = ints->front();
    }
    int64_t start = values[0], limit = values[1], delta = values[2];
    if (delta == 0)
      return importer.error() << "the delta is 0";
    // ceil((limit - start) / delta); a span beyond 64 bits is too long.
    std::optional<int64_t> span = llvm::checkedSub(limit, start);
    if (!span)
      return tooLong();
    int64_t steps = *span / delta;
    if (*span % delta != 0 && (*span < 0) == (delta < 0))
      ++steps;
    if (steps > kMaxKnownElements)
      return tooLong();
    int64_t count = std::max<int64_t>(steps, 0);
    ConstTensor result;
    result.type = type;
    result.shape = {count};
    result.bytes.resize(count * result.getElementSize());
    for (int64_t i = 0; i < count; ++i)
      result.setInt(i, start + i * delta);
    return importer.define(0, std::move(result));
  }
  double values[3];
  for (unsigned i = 0; i < 3; ++i) {
    FailureOr<double> value = importer.scalarInput(i, names[i]);
    if (failed(value))
      return failure();
    values[i] = *value;
  }
  double start = values[0], limit = values[1], delta = values[2];
  if (delta == 0)
    return importer.error() << "the delta is 0";
  double steps = std::ceil((limit - start) / delta);
  if (!std::isfinite(start) || !std::isfinite(steps))
    return importer.error() << "the range from " << formatNumber(start)
                            << " to " << formatNumber(limit) << " by "
                            << formatNumber(delta) << " is not finite";
  if (steps > kMaxKnownElements)
    return tooLong();
  int64_t count = steps > 0 ? static_cast<int64_t>(steps) : 0;
  if (type == om::DataType::Float)
    return importer.define(0, rangeOf<float>(type, start, delta, count));
  return importer.define(0, rangeOf<double>(type, start, delta, count));
}

std::vector<OperatorInfo> mlir::fluid::onnx_import::getConstantOperators() {
  return {
      {"Constant",
       &importConstant,
       {1, 9, 11, 12, 13},
       {"value", "value_float", "value_floats", "value_int", "value_ints",
        "value_string", "value_strings", "sparse_value"},
       0,
       1},
      {"ConstantOfShape", &importConstantOfShape, {9}, {"value"}, 1, 1},
      {"Range", &importRange, {11}, {}, 3, 1},
  };
}
