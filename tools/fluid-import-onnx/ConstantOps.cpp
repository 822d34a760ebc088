//===- ConstantOps.cpp - Constant and ConstantOfShape ---------------------===//
//
// A Constant is a value known at import time: shapes and axes computed on
// stay known, and a constant that reaches a run-time computation becomes a
// fluid.constant where it is first used. So is a ConstantOfShape (of a
// known shape; F.pad's export computes its pads with one), unless it is
// larger than a shape computation is, when it is a broadcast of its value.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

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
  };
}
