//===- OnnxImporter.cpp - Builds a fluid program from an ONNX graph -------===//
//
// The importer's machinery: the checks on the model, the functions'
// arguments and parameters, and the function being built node by node,
// each node by the converter of its operator (one file per family of
// operators: ConvPoolOps.cpp, ElementwiseOps.cpp, ...) with result types
// from the fluid ops' own shape rules (a rejected shape is reported at the
// node, not aborted on). ONNX values are tracked by name: a value is an SSA
// value of the function being built, a tensor known at import time
// (constants, integer initializers, shapes and the arithmetic on them), or
// a float initializer, which becomes a `fluid.param` read where it is first
// used. Float initializers are never folded, so that every weight stays a
// parameter that training updates. An Identity of a float initializer is a
// parameter of its own (see importIdentity in ShapeOps.cpp).
//
// Operator versions: the importer reads the definitions that are current
// from opset 11 to opset 17. A model may declare an older opset when every
// operator it uses has not changed since (GlobalAveragePool, say).
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/runtime/Tensor.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

/// The opsets whose operator definitions the importer reads.
static constexpr int64_t kOldestOpset = 11;
static constexpr int64_t kNewestOpset = 17;
/// The most nodes whose errors are reported.
static constexpr unsigned kMaxReportedNodes = 20;

//===----------------------------------------------------------------------===//
// The operator table
//===----------------------------------------------------------------------===//

const std::vector<OperatorInfo> &mlir::fluid::onnx_import::getOperators() {
  static const std::vector<OperatorInfo> operators = [] {
    std::vector<OperatorInfo> all;
    for (std::vector<OperatorInfo> (*family)() :
         {getConstantOperators, getConvPoolOperators, getElementwiseOperators,
          getMatrixOperators, getNormalizationOperators, getReductionOperators,
          getShapeOperators}) {
      std::vector<OperatorInfo> rows = family();
      all.insert(all.end(), std::make_move_iterator(rows.begin()),
                 std::make_move_iterator(rows.end()));
    }
    // By name: --help, --list-operators and the error for an unsupported
    // operator list them in this order.
    llvm::sort(all, [](const OperatorInfo &a, const OperatorInfo &b) {
      return a.name < b.name;
    });
    for (size_t i = 1; i < all.size(); ++i)
      assert(all[i - 1].name != all[i].name && "an operator in two families");
    return all;
  }();
  return operators;
}

static const OperatorInfo *lookupOperator(StringRef name) {
  for (const OperatorInfo &op : getOperators())
    if (op.name == name)
      return &op;
  return nullptr;
}

/// The version of `op`'s definition that opset `opset` uses (0: none).
static int64_t definitionAt(const OperatorInfo &op, int64_t opset) {
  int64_t version = 0;
  for (int64_t since : op.since)
    if (since <= opset)
      version = since;
  return version;
}

/// The most inputs and outputs a node of `op` may list under opset `opset`.
static std::pair<size_t, size_t> getArity(const OperatorInfo &op,
                                          int64_t opset) {
  // The operators whose signature changed between opsets 11 and 17.
  if ((op.name == "Unsqueeze" || op.name == "ReduceSum") && opset < 13)
    return {1, 1}; // the axes became an input in Unsqueeze-13, ReduceSum-13
  if (op.name == "Dropout" && opset < 12)
    return {1, 2}; // the ratio and training mode became inputs in Dropout-12
  if (op.name == "BatchNormalization" && opset < 14)
    return {5, 5}; // Y, mean, var, saved_mean, saved_var until 14
  return {op.maxInputs, op.maxOutputs};
}

std::string mlir::fluid::onnx_import::getSupportedOperators() {
  std::string names;
  for (const OperatorInfo &op : getOperators())
    names += (names.empty() ? "" : ", ") + op.name.str();
  return names;
}

void mlir::fluid::onnx_import::printOperatorTable(raw_ostream &os) {
  for (const OperatorInfo &op : getOperators()) {
    os << op.name << '\t';
    llvm::interleave(op.since, os, ",");
    os << '\t';
    llvm::interleave(op.attributes, os, ",");
    os << '\n';
  }
}

//===----------------------------------------------------------------------===//
// Types, names and shapes
//===----------------------------------------------------------------------===//

Type mlir::fluid::onnx_import::getElementType(MLIRContext *context,
                                              om::DataType type) {
  switch (type) {
  case om::DataType::Float:
    return Float32Type::get(context);
  case om::DataType::Double:
    return Float64Type::get(context);
  case om::DataType::Int32:
    return IntegerType::get(context, 32);
  case om::DataType::Int64:
    return IntegerType::get(context, 64);
  default:
    return nullptr;
  }
}

static om::DataType getDataType(Type type) {
  if (type.isF32())
    return om::DataType::Float;
  if (type.isF64())
    return om::DataType::Double;
  if (type.isInteger(32))
    return om::DataType::Int32;
  if (type.isInteger(64))
    return om::DataType::Int64;
  return om::DataType::Undefined;
}

bool mlir::fluid::onnx_import::isFloatDataType(om::DataType type) {
  return type == om::DataType::Float || type == om::DataType::Double;
}

double mlir::fluid::onnx_import::toDouble(float value) {
  if (!std::isfinite(value))
    return value;
  char buffer[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtof(buffer, nullptr) == value)
      return std::strtod(buffer, nullptr);
  }
  return value;
}

std::string mlir::fluid::onnx_import::formatNumber(double value) {
  // A FLOAT value (0.1f, read as 0.100000001490116) is written as the
  // float it is.
  bool isFloat = static_cast<double>(static_cast<float>(value)) == value;
  char buffer[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value || std::isnan(value) ||
        (isFloat && std::strtof(buffer, nullptr) == static_cast<float>(value)))
      break;
  }
  return buffer;
}

std::string mlir::fluid::onnx_import::formatShape(ArrayRef<int64_t> shape) {
  constexpr size_t kShown = 8;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(shape.take_front(kShown), os);
  if (shape.size() > kShown)
    os << ", ... (" << shape.size() << " values)";
  os << "]";
  return text;
}

void mlir::fluid::onnx_import::printEscaped(raw_ostream &os, StringRef text) {
  static const char hexDigits[] = "0123456789ABCDEF";
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(text.data());
  const llvm::UTF8 *end = begin + text.size();
  for (const llvm::UTF8 *p = begin; p < end;) {
    unsigned length = llvm::getNumBytesForUTF8(*p);
    if (*p >= 0x80 && length <= end - p &&
        llvm::isLegalUTF8Sequence(p, p + length)) {
      os.write(reinterpret_cast<const char *>(p), length);
      p += length;
      continue;
    }
    if (*p < 0x20 || *p >= 0x7f)
      os << '\\' << hexDigits[*p >> 4] << hexDigits[*p & 0xf];
    else
      os << static_cast<char>(*p);
    ++p;
  }
}

std::string mlir::fluid::onnx_import::describeNode(const om::Node &node,
                                                   int index) {
  std::string text = "node #" + std::to_string(index);
  if (!node.name.empty())
    text += " '" + node.name + "'";
  return text + " (" + node.opType + ")";
}

std::optional<int64_t>
mlir::fluid::onnx_import::getKnownElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    std::optional<int64_t> product = llvm::checkedMul(count, dim);
    if (!product || *product > kMaxKnownElements)
      return std::nullopt;
    count = *product;
  }
  return count;
}

std::optional<SmallVector<int64_t>>
mlir::fluid::onnx_import::broadcastShapes(ArrayRef<int64_t> a,
                                          ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[rank - 1 - i] = da == 1 ? db : da;
  }
  return result;
}

//===----------------------------------------------------------------------===//
// FunctionImporter: values
//===----------------------------------------------------------------------===//

FailureOr<Entry *> FunctionImporter::lookup(unsigned index) {
  if (!hasInput(index)) {
    error() << "input #" << index << " is required but missing";
    return failure();
  }
  const std::string &name = node->inputs[index];
  auto it = entries.find(name);
  if (it == entries.end()) {
    error() << "input #" << index << " '" << name
            << "' is not a graph input, an initializer or the output of an "
               "earlier node";
    return failure();
  }
  return &it->second;
}

FailureOr<Value> FunctionImporter::getParam(const om::Tensor &tensor,
                                            StringRef name) {
  Type element = getElementType(context, tensor.type);
  if (!element || !isFloatDataType(tensor.type)) {
    error() << "initializer '" << tensor.name << "' has element type "
            << om::getDataTypeName(tensor.type)
            << "; parameters must be FLOAT or DOUBLE";
    return failure();
  }
  if (tensor.dims.size() > FLUID_MAX_RANK) {
    error() << "initializer '" << tensor.name << "' has rank "
            << tensor.dims.size() << "; fluid tensors have rank at most "
            << FLUID_MAX_RANK;
    return failure();
  }
  auto type = RankedTensorType::get(tensor.dims, element);
  if (!isFloatTensor(type)) {
    error() << "initializer '" << tensor.name << "' of type " << type
            << " cannot be a parameter: fluid tensors have a size in bytes "
               "that fits in 64 bits";
    return failure();
  }
  if (type.getNumElements() == 0) {
    error() << "initializer '" << tensor.name << "' has the shape "
            << formatShape(tensor.dims)
            << ": a parameter holds at least one element";
    return failure();
  }
  // The name is the parameter's symbol and its key in checkpoints and
  // safetensors files (UTF-8 JSON, read by C code).
  std::string what = name == tensor.name
                         ? "initializer '" + tensor.name + "'"
                         : "'" + name.str() +
                               "' (an Identity of initializer '" + tensor.name +
                               "')";
  if (failed(verifyExternalName([&] { return error(); },
                                what + " cannot be a parameter: its name",
                                name)))
    return failure();
  if (name == "__metadata__") {
    error() << what
            << " cannot be a parameter (safetensors files reserve the name)";
    return failure();
  }
  if (name == "forward" || name == "loss") {
    error() << what
            << " cannot be a parameter: its symbol would clash with the "
               "function @"
            << name;
    return failure();
  }
  program.paramTrainable.try_emplace(name, true);
  return GetParamOp::create(builder, loc, type,
                            FlatSymbolRefAttr::get(context, name))
      .getResult();
}

FailureOr<Value> FunctionImporter::materialize(Entry &entry, StringRef name) {
  if (entry.value)
    return entry.value;
  FailureOr<Value> value = failure();
  if (entry.pendingPad) {
    // Built where the Pad is, in the program's order: the padded tensor
    // only needs the Pad's input.
    Location use = loc;
    loc = entry.pendingPad->loc;
    value = pad(entry.pendingPad->input, entry.pendingPad->pads,
                entry.pendingPad->value);
    loc = use;
    if (succeeded(value))
      entry.pendingPad.reset();
  } else if (entry.initializer && isFloatDataType(entry.initializer->type))
    value = getParam(*entry.initializer, entry.param);
  else if (entry.constant)
    value = constant(*entry.constant);
  else if (entry.initializer) {
    error() << "initializer '" << name << "' has element type "
            << om::getDataTypeName(entry.initializer->type)
            << ", which fluid does not support (FLOAT, DOUBLE, INT32 or "
               "INT64)";
    return failure();
  } else {
    error() << "'" << name << "' has no value";
    return failure();
  }
  if (succeeded(value))
    entry.value = *value;
  return value;
}

FailureOr<Value> FunctionImporter::input(unsigned index) {
  FailureOr<Entry *> entry = lookup(index);
  if (failed(entry))
    return failure();
  return materialize(**entry, node->inputs[index]);
}

FailureOr<Value> FunctionImporter::floatInput(unsigned index) {
  FailureOr<Value> value = input(index);
  if (failed(value))
    return failure();
  if (!isFloatTensor(value->getType())) {
    error() << "input #" << index << " '" << node->inputs[index]
            << "' must be a FLOAT or DOUBLE tensor, got " << value->getType();
    return failure();
  }
  return value;
}

const ConstTensor *FunctionImporter::constantInput(unsigned index) {
  if (!hasInput(index))
    return nullptr;
  auto it = entries.find(node->inputs[index]);
  if (it == entries.end() || !it->second.constant)
    return nullptr;
  return &*it->second.constant;
}

FailureOr<SmallVector<int64_t>> FunctionImporter::intsInput(unsigned index,
                                                            StringRef what) {
  if (failed(lookup(index)))
    return failure();
  const ConstTensor *tensor = constantInput(index);
  if (!tensor) {
    error() << "input #" << index << " '" << node->inputs[index] << "' ("
            << what
            << ") must be known at import time: a constant, an integer "
               "initializer or a computation on shapes; fluid programs are "
               "statically shaped";
    return failure();
  }
  if (!tensor->isInteger()) {
    error() << "input #" << index << " '" << node->inputs[index] << "' ("
            << what << ") must be INT32 or INT64, got "
            << om::getDataTypeName(tensor->type);
    return failure();
  }
  return tensor->getInts();
}

FailureOr<double> FunctionImporter::scalarInput(unsigned index,
                                                StringRef what) {
  FailureOr<Entry *> entry = lookup(index);
  if (failed(entry))
    return failure();
  const std::string &name = node->inputs[index];
  // A float initializer is read as a value here, not as a parameter.
  std::optional<ConstTensor> fromInitializer;
  const ConstTensor *tensor = constantInput(index);
  if (!tensor && (*entry)->initializer && (*entry)->initializer->hasData &&
      getElementType(context, (*entry)->initializer->type)) {
    const om::Tensor &init = *(*entry)->initializer;
    fromInitializer.emplace();
    fromInitializer->type = init.type;
    fromInitializer->shape.assign(init.dims.begin(), init.dims.end());
    fromInitializer->bytes.assign(init.bytes.begin(), init.bytes.end());
    tensor = &*fromInitializer;
  }
  if (!tensor) {
    error() << "input #" << index << " '" << name << "' (" << what
            << ") must be known at import time: a Constant or an initializer";
    return failure();
  }
  if (tensor->getNumElements() != 1) {
    error() << "input #" << index << " '" << name << "' (" << what
            << ") must be a scalar, got the shape "
            << formatShape(tensor->shape);
    return failure();
  }
  return tensor->getDouble(0);
}

const PendingPad *FunctionImporter::pendingPadInput(unsigned index) {
  if (!hasInput(index))
    return nullptr;
  auto it = entries.find(node->inputs[index]);
  if (it == entries.end() || !it->second.pendingPad)
    return nullptr;
  return &*it->second.pendingPad;
}

FailureOr<SmallVector<int64_t>> FunctionImporter::inputShape(unsigned index) {
  FailureOr<Entry *> entry = lookup(index);
  if (failed(entry))
    return failure();
  if ((*entry)->value)
    return SmallVector<int64_t>(getTensorType((*entry)->value).getShape());
  if ((*entry)->pendingPad)
    return (*entry)->pendingPad->shape;
  if ((*entry)->constant)
    return (*entry)->constant->shape;
  return SmallVector<int64_t>((*entry)->initializer->dims.begin(),
                              (*entry)->initializer->dims.end());
}

FailureOr<om::DataType> FunctionImporter::inputType(unsigned index) {
  FailureOr<Entry *> entry = lookup(index);
  if (failed(entry))
    return failure();
  if ((*entry)->value)
    return getDataType(getTensorType((*entry)->value).getElementType());
  if ((*entry)->pendingPad)
    return getDataType(
        getTensorType((*entry)->pendingPad->input).getElementType());
  if ((*entry)->constant)
    return (*entry)->constant->type;
  return (*entry)->initializer->type;
}

LogicalResult FunctionImporter::define(unsigned index, Entry entry) {
  if (index >= node->outputs.size() || node->outputs[index].empty())
    return success();
  const std::string &name = node->outputs[index];
  // A tensor with a zero dimension: a mean over it is NaN, and no model
  // trains with one.
  if (entry.value && getTensorType(entry.value).getNumElements() == 0)
    return error() << "output #" << index << " '" << name << "' would be "
                   << entry.value.getType()
                   << ", which has no elements; fluid does not compute on "
                      "empty tensors";
  if (!entries.try_emplace(name, std::move(entry)).second)
    return error() << "output #" << index << " '" << name
                   << "' is already defined (ONNX values are assigned once)";
  return success();
}

LogicalResult FunctionImporter::expectOutputs(unsigned count, StringRef what) {
  for (unsigned i = count; i < node->outputs.size(); ++i)
    if (!node->outputs[i].empty())
      return error() << "output #" << i << " '" << node->outputs[i] << "' ("
                     << what << ") is not supported";
  return success();
}

//===----------------------------------------------------------------------===//
// FunctionImporter: attributes
//===----------------------------------------------------------------------===//

const om::Attribute *FunctionImporter::attribute(StringRef name,
                                                 om::Attribute::Kind kind,
                                                 bool &kindError) {
  kindError = false;
  const om::Attribute *attr = node->findAttribute(name.str());
  if (attr && attr->kind != kind) {
    error() << "attribute '" << name << "' must be of type "
            << om::getAttributeKindName(kind) << ", got "
            << om::getAttributeKindName(attr->kind);
    kindError = true;
    return nullptr;
  }
  return attr;
}

FailureOr<int64_t> FunctionImporter::intAttr(StringRef name,
                                             int64_t defaultValue) {
  bool kindError;
  const om::Attribute *attr =
      attribute(name, om::Attribute::Kind::Int, kindError);
  if (kindError)
    return failure();
  return attr ? attr->i : defaultValue;
}

FailureOr<bool> FunctionImporter::boolAttr(StringRef name) {
  FailureOr<int64_t> value = intAttr(name, 0);
  if (failed(value))
    return failure();
  if (*value != 0 && *value != 1) {
    attributeError(name, Twine(*value)) << " (expected 0 or 1)";
    return failure();
  }
  return *value == 1;
}

FailureOr<double> FunctionImporter::floatAttr(StringRef name,
                                              double defaultValue) {
  bool kindError;
  const om::Attribute *attr =
      attribute(name, om::Attribute::Kind::Float, kindError);
  if (kindError)
    return failure();
  return attr ? toDouble(attr->f) : defaultValue;
}

FailureOr<std::string> FunctionImporter::stringAttr(StringRef name,
                                                    StringRef defaultValue) {
  bool kindError;
  const om::Attribute *attr =
      attribute(name, om::Attribute::Kind::String, kindError);
  if (kindError)
    return failure();
  return attr ? attr->s : defaultValue.str();
}

FailureOr<SmallVector<int64_t>>
FunctionImporter::intsAttr(StringRef name, ArrayRef<int64_t> defaultValue,
                           bool *present) {
  bool kindError;
  const om::Attribute *attr =
      attribute(name, om::Attribute::Kind::Ints, kindError);
  if (kindError)
    return failure();
  if (present)
    *present = attr != nullptr;
  if (!attr)
    return SmallVector<int64_t>(defaultValue);
  return SmallVector<int64_t>(attr->ints.begin(), attr->ints.end());
}

InFlightDiagnostic FunctionImporter::attributeError(StringRef name,
                                                    const Twine &value) {
  return error() << "attribute '" << name << "' = " << value
                 << " is not supported";
}

//===----------------------------------------------------------------------===//
// FunctionImporter: building blocks
//===----------------------------------------------------------------------===//

FailureOr<Value> FunctionImporter::reshape(Value value,
                                           ArrayRef<int64_t> shape) {
  RankedTensorType type = getTensorType(value);
  if (type.getShape() == shape)
    return value;
  if (shape.size() > FLUID_MAX_RANK) {
    error() << "cannot reshape " << type << " to rank " << shape.size()
            << ": fluid tensors have rank at most " << FLUID_MAX_RANK;
    return failure();
  }
  auto result = RankedTensorType::get(shape, type.getElementType());
  if (result.getNumElements() != type.getNumElements() ||
      !isFluidTensor(result)) {
    error() << "cannot reshape " << type << " to " << formatShape(shape);
    return failure();
  }
  return ReshapeOp::create(builder, loc, result, value).getResult();
}

FailureOr<Value> FunctionImporter::constant(const ConstTensor &tensor) {
  Type element = getElementType(context, tensor.type);
  if (!element) {
    error() << "a constant of element type " << om::getDataTypeName(tensor.type)
            << " is not supported";
    return failure();
  }
  if (tensor.shape.size() > FLUID_MAX_RANK) {
    error() << "a constant of rank " << tensor.shape.size()
            << " is not supported: fluid tensors have rank at most "
            << FLUID_MAX_RANK;
    return failure();
  }
  auto type = RankedTensorType::get(tensor.shape, element);
  if (!isFluidTensor(type)) {
    error() << "a constant of type " << type << " is not supported";
    return failure();
  }
  if (type.getNumElements() == 0) {
    error() << "a constant of type " << type
            << " is not supported: it has no elements";
    return failure();
  }
  ArrayRef<char> raw(reinterpret_cast<const char *>(tensor.bytes.data()),
                     tensor.bytes.size());
  auto value = DenseElementsAttr::getFromRawBuffer(type, raw);
  return ConstantOp::create(builder, loc, value).getResult();
}

Value FunctionImporter::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  float narrow = static_cast<float>(value);
  DenseElementsAttr attr =
      elementType.isF64()
          ? DenseElementsAttr::get(type, ArrayRef<double>(value))
          : DenseElementsAttr::get(type, ArrayRef<float>(narrow));
  return ConstantOp::create(builder, loc, attr).getResult();
}

Value FunctionImporter::slice(Value value, int64_t axis, int64_t offset,
                              int64_t size) {
  RankedTensorType type = getTensorType(value);
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = size;
  return SliceOp::create(builder, loc,
                         RankedTensorType::get(shape, type.getElementType()),
                         value, builder.getI64IntegerAttr(axis),
                         builder.getI64IntegerAttr(offset))
      .getOutput();
}

FailureOr<Value> FunctionImporter::pad(Value value, ArrayRef<int64_t> pads,
                                       double fill) {
  RankedTensorType type = getTensorType(value);
  int64_t rank = type.getRank();
  Type element = type.getElementType();
  if (!isFloatTensor(type)) {
    error() << "padding is supported on FLOAT and DOUBLE tensors, got " << type;
    return failure();
  }
  Value result = value, fillValue;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t before = pads[d], after = pads[rank + d];
    int64_t extent = getTensorType(result).getDimSize(d);
    // Cropping first: a dimension cropped to nothing is an error, not a
    // concatenation with an empty tensor.
    int64_t kept =
        extent + std::min<int64_t>(before, 0) + std::min<int64_t>(after, 0);
    if (kept <= 0) {
      error() << "the padding " << formatShape(pads) << " removes all "
              << extent << " elements of dimension " << d;
      return failure();
    }
    if (kept != extent)
      result = slice(result, d, -std::min<int64_t>(before, 0), kept);
    SmallVector<Value, 3> parts;
    auto filled = [&](int64_t count) -> FailureOr<Value> {
      SmallVector<int64_t> shape(getTensorType(result).getShape());
      shape[d] = count;
      auto partType = RankedTensorType::get(shape, element);
      if (!isFluidTensor(partType)) {
        error() << "the padding " << formatShape(pads) << " of " << type
                << " is too large";
        return failure();
      }
      if (!fillValue)
        fillValue = scalar(element, fill);
      return BroadcastToOp::create(builder, loc, partType, fillValue)
          .getOutput();
    };
    if (before > 0) {
      FailureOr<Value> part = filled(before);
      if (failed(part))
        return failure();
      parts.push_back(*part);
    }
    parts.push_back(result);
    if (after > 0) {
      FailureOr<Value> part = filled(after);
      if (failed(part))
        return failure();
      parts.push_back(*part);
    }
    if (parts.size() == 1)
      continue;
    ConcatOp::Properties properties;
    properties.setAxis(builder.getI64IntegerAttr(d));
    FailureOr<ConcatOp> concat = create<ConcatOp>(parts, properties);
    if (failed(concat))
      return failure();
    result = concat->getOutput();
  }
  return result;
}

//===----------------------------------------------------------------------===//
// FunctionImporter: the graph
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Value>>
FunctionImporter::importGraph(ArrayRef<Argument> arguments,
                              Block::BlockArgListType values) {
  const om::Model &model = program.model;
  for (const om::Tensor &tensor : model.initializers) {
    Entry entry;
    entry.initializer = &tensor;
    if (isFloatDataType(tensor.type))
      entry.param = tensor.name;
    // Integer initializers are shapes, axes and indices: known values.
    if (tensor.hasData && !isFloatDataType(tensor.type)) {
      ConstTensor known;
      known.type = tensor.type;
      known.shape.assign(tensor.dims.begin(), tensor.dims.end());
      known.bytes.assign(tensor.bytes.begin(), tensor.bytes.end());
      entry.constant = std::move(known);
    }
    entries[tensor.name] = std::move(entry);
  }
  for (auto [argument, value] : llvm::zip(arguments, values)) {
    Entry entry;
    entry.value = value;
    entries[argument.name] = std::move(entry);
  }

  for (auto [index, current] : llvm::enumerate(model.nodes)) {
    node = &current;
    program.currentNode = static_cast<int>(index);
    loc = NameLoc::get(builder.getStringAttr(
        current.name.empty() ? current.opType + "_" + std::to_string(index)
                             : current.name));
    const OperatorInfo *op = lookupOperator(current.opType);
    for (const om::Attribute &attr : current.attributes) {
      if (!llvm::is_contained(op->attributes, attr.name))
        return error() << "attribute '" << attr.name
                       << "' is not supported by the importer";
      if (!attr.refAttrName.empty())
        return error() << "attribute '" << attr.name
                       << "' refers to a function attribute, which is not "
                          "supported";
    }
    if (failed(op->converter(*this, current)))
      return failure();
  }
  program.currentNode = -1;

  SmallVector<Value> outputs;
  for (const om::ValueInfo &output : model.outputs) {
    auto it = entries.find(output.name);
    if (it == entries.end()) {
      emitError(builder.getUnknownLoc())
          << "graph output '" << output.name << "' is never computed";
      return failure();
    }
    loc = NameLoc::get(builder.getStringAttr(output.name));
    where = "graph output '" + output.name + "': ";
    FailureOr<Value> value = materialize(it->second, output.name);
    where.clear();
    if (failed(value))
      return failure();
    outputs.push_back(*value);
  }
  return outputs;
}
//===----------------------------------------------------------------------===//
// ProgramImporter
//===----------------------------------------------------------------------===//

void ProgramImporter::report(Diagnostic &diag) {
  reported = true;
  llvm::raw_ostream &os = llvm::errs();
  os << options.toolName << ": ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  std::string message = options.modelName + ": ";
  if (currentNode >= 0)
    message += describeNode(model.nodes[currentNode], currentNode) + ": ";
  message += diag.str();
  printEscaped(os, message);
  os << "\n";
  for (Diagnostic &note : diag.getNotes())
    report(note);
}

LogicalResult ProgramImporter::checkModel() {
  Location unknown = UnknownLoc::get(&context);
  bool hasDefault = false;
  for (const om::OpsetImport &import : model.opsets)
    if (import.domain.empty() || import.domain == "ai.onnx") {
      hasDefault = true;
      opset = import.version;
    }
  if (!hasDefault)
    return emitError(unknown) << "the model imports no opset of the default "
                                 "ONNX domain";
  if (opset > kNewestOpset || opset < 1)
    return emitError(unknown)
           << "opset " << opset << " is not supported (opsets " << kOldestOpset
           << " to " << kNewestOpset << ")";
  if (!model.sparseInitializerNames.empty())
    return emitError(unknown)
           << "sparse initializers (such as '"
           << model.sparseInitializerNames.front() << "') are not supported";
  for (const om::Tensor &tensor : model.initializers)
    if (!initializers.try_emplace(tensor.name, &tensor).second)
      return emitError(unknown)
             << "two initializers are named '" << tensor.name << "'";
  if (failed(checkGraphValues()))
    return failure();

  // Every node with an error is reported, up to a bound: a model of a
  // million unknown nodes is not a million lines.
  unsigned failures = 0;
  for (auto [index, node] : llvm::enumerate(model.nodes)) {
    currentNode = static_cast<int>(index);
    if (succeeded(checkNode(node, static_cast<int>(index))))
      continue;
    if (++failures == kMaxReportedNodes && index + 1 < model.nodes.size()) {
      currentNode = -1;
      return emitError(unknown) << "stopped after " << kMaxReportedNodes
                                << " nodes with errors; the graph has "
                                << model.nodes.size() << " nodes";
    }
  }
  currentNode = -1;
  return failure(failures > 0);
}

LogicalResult ProgramImporter::checkGraphValues() {
  Location unknown = UnknownLoc::get(&context);
  // Where each value comes from: kGraphInput, kInitializer or the index of
  // the node that computes it.
  for (const om::Tensor &tensor : model.initializers)
    producers.try_emplace(tensor.name, kInitializer);
  llvm::StringSet<> inputs;
  for (auto [index, input] : llvm::enumerate(model.inputs)) {
    if (input.name.empty())
      return emitError(unknown) << "graph input #" << index << " has no name";
    if (!inputs.insert(input.name).second)
      return emitError(unknown)
             << "graph input '" << input.name << "' is listed twice";
    // Before IR version 4 initializers were listed as inputs too; since,
    // an initializer is the default value of the input of its name.
    producers.try_emplace(input.name, kGraphInput);
  }
  if (model.outputs.empty())
    return emitError(unknown) << "the graph has no outputs, so there is "
                                 "nothing to compute";
  llvm::StringSet<> outputs;
  for (auto [index, output] : llvm::enumerate(model.outputs)) {
    if (output.name.empty())
      return emitError(unknown) << "graph output #" << index << " has no name";
    if (!outputs.insert(output.name).second)
      return emitError(unknown)
             << "graph output '" << output.name << "' is listed twice";
  }

  // ONNX values are assigned once: by the graph's inputs, its initializers
  // or one node output.
  for (auto [index, node] : llvm::enumerate(model.nodes)) {
    currentNode = static_cast<int>(index);
    for (auto [i, name] : llvm::enumerate(node.outputs)) {
      if (name.empty())
        continue;
      auto [it, inserted] = producers.try_emplace(name, index);
      if (inserted)
        continue;
      std::string earlier =
          it->second == kGraphInput ? std::string("a graph input")
          : it->second == kInitializer
              ? std::string("an initializer")
              : "the output of " +
                    describeNode(model.nodes[it->second], it->second);
      emitError(unknown) << "output #" << i << " '" << name << "' is already "
                         << earlier << " (ONNX values are assigned once)";
      currentNode = -1;
      return failure();
    }
  }
  currentNode = -1;
  for (const om::ValueInfo &output : model.outputs)
    if (!producers.count(output.name))
      return emitError(unknown)
             << "graph output '" << output.name
             << "' is not a graph input, an initializer or the output of a "
                "node";
  return success();
}

LogicalResult ProgramImporter::checkNode(const om::Node &node, int index) {
  Location unknown = UnknownLoc::get(&context);
  if (!node.domain.empty() && node.domain != "ai.onnx")
    return emitError(unknown)
           << "operators of domain '" << node.domain << "' are not supported";
  const OperatorInfo *op = lookupOperator(node.opType);
  if (!op)
    return emitError(unknown) << "operator '" << node.opType
                              << "' is not supported; the importer supports "
                              << getSupportedOperators();
  int64_t used = definitionAt(*op, opset);
  int64_t oldest = definitionAt(*op, kOldestOpset);
  if (used == 0)
    return emitError(unknown)
           << "opset " << opset << " does not define " << node.opType
           << " (added in opset " << op->since.front() << ")";
  if (used < oldest)
    return emitError(unknown)
           << "opset " << opset << " defines " << node.opType << " as "
           << node.opType << "-" << used << ", but the importer reads "
           << node.opType << "-" << oldest << " (opset " << kOldestOpset
           << ") and later";

  auto [maxInputs, maxOutputs] = getArity(*op, opset);
  if (node.inputs.size() > maxInputs)
    return emitError(unknown) << "has " << node.inputs.size() << " inputs, but "
                              << node.opType << " takes at most " << maxInputs;
  if (node.outputs.size() > maxOutputs)
    return emitError(unknown)
           << "has " << node.outputs.size() << " outputs, but " << node.opType
           << " has at most " << maxOutputs;
  if (node.outputs.empty())
    return emitError(unknown) << "has no outputs";
  if (node.outputs.front().empty())
    return emitError(unknown)
           << "output #0 has no name, but it is not optional";

  llvm::StringSet<> attributes;
  for (const om::Attribute &attr : node.attributes)
    if (!attributes.insert(attr.name).second)
      return emitError(unknown)
             << "attribute '" << attr.name << "' is given twice";

  // Each input is computed before it is used: nodes are in topological
  // order.
  for (auto [i, name] : llvm::enumerate(node.inputs)) {
    if (name.empty())
      continue;
    auto it = producers.find(name);
    if (it == producers.end())
      return emitError(unknown)
             << "input #" << i << " '" << name
             << "' is not a graph input, an initializer or the output of a "
                "node";
    if (it->second >= index)
      return emitError(unknown)
             << "input #" << i << " '" << name << "' is the output of "
             << (it->second == index
                     ? std::string("this node")
                     : describeNode(model.nodes[it->second], it->second))
             << ": nodes must be listed in topological order, and a graph "
                "has no cycles";
  }
  return success();
}

LogicalResult
ProgramImporter::collectArguments(SmallVectorImpl<Argument> &arguments) {
  Location unknown = UnknownLoc::get(&context);
  for (const om::ValueInfo &input : model.inputs) {
    // Before IR version 4 initializers were listed as inputs too.
    if (initializers.count(input.name))
      continue;
    auto fail = [&]() {
      return emitError(unknown) << "graph input '" << input.name << "' ";
    };
    if (!input.isTensor)
      return fail() << "is of " << input.typeKind
                    << " type; only tensor inputs are supported";
    Type element = getElementType(&context, input.elementType);
    if (!element)
      return fail() << "has element type "
                    << om::getDataTypeName(input.elementType)
                    << ", which fluid does not support (FLOAT, DOUBLE, INT32 "
                       "or INT64)";
    if (!input.hasShape)
      return fail() << "has no shape; fluid programs are statically shaped";
    if (input.dims.size() > FLUID_MAX_RANK)
      return fail() << "has rank " << input.dims.size()
                    << "; fluid tensors have rank at most " << FLUID_MAX_RANK;
    // The name is the argument's fluid.name, which names the input of the
    // compiled program.
    if (failed(verifyExternalName(
            [&] {
              return emitError(unknown)
                     << "graph input '" << input.name << "': its name";
            },
            "", input.name)))
      return failure();
    SmallVector<int64_t> shape;
    for (auto [d, dim] : llvm::enumerate(input.dims)) {
      if (dim.hasValue) {
        if (dim.value < 0)
          return fail() << "has a negative dimension " << dim.value;
        if (dim.value == 0)
          return fail() << "has a zero dimension at index " << d
                        << "; fluid tensors hold at least one element (the "
                           "mean loss over an empty batch is NaN)";
        shape.push_back(dim.value);
        continue;
      }
      std::string what = dim.param.empty()
                             ? "an unnamed dynamic dimension"
                             : "the dynamic dimension '" + dim.param + "'";
      if (d != 0)
        return fail() << "has " << what << " at index " << d
                      << "; only the batch dimension (index 0) may be "
                         "dynamic, and --batch sets it";
      if (!options.batch)
        return fail() << "has " << what
                      << " as its batch dimension; pass --batch N";
      shape.push_back(*options.batch);
    }
    auto type = RankedTensorType::get(shape, element);
    if (!isFluidTensor(type))
      return fail() << "of type " << type
                    << " is not supported: fluid tensors have rank at most 8 "
                       "and a size in bytes that fits in 64 bits";
    arguments.push_back({input.name, type});
  }
  return success();
}

func::FuncOp ProgramImporter::createFunction(OpBuilder &builder, StringRef name,
                                             ArrayRef<Argument> arguments,
                                             ArrayRef<Type> extraArguments) {
  SmallVector<Type> types;
  for (const Argument &argument : arguments)
    types.push_back(argument.type);
  types.append(extraArguments.begin(), extraArguments.end());
  Location loc = NameLoc::get(builder.getStringAttr(
      model.graphName.empty() ? "graph" : model.graphName));
  auto func = func::FuncOp::create(builder, loc, name,
                                   builder.getFunctionType(types, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, argument] : llvm::enumerate(arguments)) {
    func.setArgAttr(i, "fluid.name", builder.getStringAttr(argument.name));
    entry->getArgument(i).setLoc(
        NameLoc::get(builder.getStringAttr(argument.name)));
  }
  return func;
}

LogicalResult ProgramImporter::checkOutputTypes(ArrayRef<Value> outputs) {
  for (auto [declared, value] : llvm::zip(model.outputs, outputs)) {
    const auto &output = declared;
    auto type = cast<RankedTensorType>(value.getType());
    auto fail = [&]() {
      return emitError(UnknownLoc::get(&context))
             << "graph output '" << output.name << "' ";
    };
    if (!output.isTensor)
      return fail() << "is of " << output.typeKind
                    << " type; only tensor outputs are supported";
    if (output.elementType != om::DataType::Undefined &&
        output.elementType != getDataType(type.getElementType()))
      return fail() << "is declared " << om::getDataTypeName(output.elementType)
                    << " but computed as " << type;
    if (!output.hasShape)
      continue;
    if (output.dims.size() != static_cast<size_t>(type.getRank()))
      return fail() << "is declared with rank " << output.dims.size()
                    << " but computed as " << type;
    bool matches = true;
    for (size_t d = 0; matches && d < output.dims.size(); ++d)
      matches = !output.dims[d].hasValue ||
                output.dims[d].value == type.getDimSize(d);
    if (!matches) {
      std::string declared = "[";
      for (auto [d, dim] : llvm::enumerate(output.dims))
        declared += (d ? "," : "") + (dim.hasValue ? std::to_string(dim.value)
                                      : dim.param.empty() ? "?"
                                                          : dim.param);
      return fail() << "is declared with shape " << declared
                    << "] but computed as " << type;
    }
  }
  return success();
}

ImportedProgram ProgramImporter::run() {
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    report(diag);
    return success();
  });
  ImportedProgram result;
  SmallVector<Argument> arguments;
  if (failed(checkModel()) || failed(collectArguments(arguments)))
    return result;

  OpBuilder builder(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
  builder.setInsertionPointToEnd(module->getBody());

  func::FuncOp forward = createFunction(builder, "forward", arguments, {});
  FunctionImporter forwardImporter(*this, forward, Phase::Inference);
  FailureOr<SmallVector<Value>> outputs = forwardImporter.importGraph(
      arguments, forward.getBody().front().getArguments());
  if (failed(outputs) || failed(checkOutputTypes(*outputs)))
    return result;
  OpBuilder &forwardBuilder = forwardImporter.getBuilder();
  func::ReturnOp::create(forwardBuilder, forward.getLoc(), *outputs);
  forward.setType(builder.getFunctionType(forward.getArgumentTypes(),
                                          ValueRange(*outputs).getTypes()));

  if (!options.softmaxCrossEntropyLoss) {
    forward->setAttr(kEntryAttrName, builder.getUnitAttr());
  } else {
    Location unknown = UnknownLoc::get(&context);
    if (outputs->size() != 1) {
      emitError(unknown) << "--loss needs a graph with one output (the "
                            "logits), this one has "
                         << outputs->size();
      return result;
    }
    auto logits = cast<RankedTensorType>(outputs->front().getType());
    if (logits.getRank() != 2 || !isFloatTensor(logits)) {
      emitError(unknown) << "--loss needs logits of shape [batch, classes], "
                            "the graph output is "
                         << logits;
      return result;
    }
    if (llvm::any_of(arguments, [](const Argument &argument) {
          return argument.name == "labels";
        })) {
      emitError(unknown) << "graph input 'labels' would clash with the "
                            "labels argument that --loss adds";
      return result;
    }
    auto labelsType =
        RankedTensorType::get({logits.getDimSize(0)}, builder.getI64Type());
    func::FuncOp loss =
        createFunction(builder, "loss", arguments, {labelsType});
    unsigned labelsIndex = arguments.size();
    loss.setArgAttr(labelsIndex, "fluid.name", builder.getStringAttr("labels"));
    loss.getArgument(labelsIndex)
        .setLoc(NameLoc::get(builder.getStringAttr("labels")));
    loss->setAttr(kEntryAttrName, builder.getUnitAttr());
    FunctionImporter lossImporter(*this, loss, Phase::Training);
    FailureOr<SmallVector<Value>> lossOutputs = lossImporter.importGraph(
        arguments, loss.getBody().front().getArguments().drop_back());
    if (failed(lossOutputs))
      return result;
    OpBuilder &lossBuilder = lossImporter.getBuilder();
    Location lossLoc = NameLoc::get(builder.getStringAttr("loss"));
    SoftmaxCrossEntropyOp::Properties properties;
    properties.setReduction(ReductionAttr::get(&context, Reduction::Mean));
    Value operands[] = {lossOutputs->front(), loss.getArgument(labelsIndex)};
    SmallVector<Type, 1> lossTypes;
    if (failed(SoftmaxCrossEntropyOp::inferReturnTypes(
            &context, lossLoc,
            SoftmaxCrossEntropyOp::Adaptor(operands, DictionaryAttr(),
                                           properties),
            lossTypes)))
      return result;
    Value value = SoftmaxCrossEntropyOp::create(lossBuilder, lossLoc, lossTypes,
                                                operands, properties)
                      .getLoss();
    func::ReturnOp::create(lossBuilder, lossLoc, value);
    loss.setType(
        builder.getFunctionType(loss.getArgumentTypes(), {value.getType()}));
  }

  // Parameters ahead of the functions: the initializers in their order,
  // then the Identity copies of initializers in node order.
  OpBuilder params = OpBuilder::atBlockBegin(module->getBody());
  auto zeros =
      InitializerAttr::get(&context, InitKind::Zeros, 0.0, 0.0, FanMode::FanIn);
  auto declareParam = [&](const std::string &name, const om::Tensor &tensor) {
    auto it = paramTrainable.find(name);
    if (it == paramTrainable.end())
      return;
    auto type = RankedTensorType::get(tensor.dims,
                                      getElementType(&context, tensor.type));
    ParamOp::create(params, NameLoc::get(params.getStringAttr(name)),
                    params.getStringAttr(name), TypeAttr::get(type), zeros,
                    it->second ? BoolAttr() : params.getBoolAttr(false),
                    FloatAttr(), FloatAttr(), DenseI64ArrayAttr());
    result.params.push_back({name, &tensor});
  };
  for (const om::Tensor &tensor : model.initializers)
    declareParam(tensor.name, tensor);
  for (const om::Node &node : model.nodes) {
    if (node.opType != "Identity" || node.inputs.empty() ||
        node.outputs.empty())
      continue;
    auto it = initializers.find(node.inputs[0]);
    if (it != initializers.end())
      declareParam(node.outputs[0], *it->second);
  }

  if (failed(verify(*module))) {
    result.params.clear();
    return result;
  }
  result.module = std::move(module);
  return result;
}

ImportedProgram
mlir::fluid::onnx_import::importModel(MLIRContext &context,
                                      const om::Model &model,
                                      const ImportOptions &options) {
  context.loadDialect<FluidDialect, func::FuncDialect>();
  ProgramImporter importer(context, model, options);
  ImportedProgram program = importer.run();
  if (!program.module && !importer.hasReported())
    llvm::errs() << options.toolName << ": error: " << options.modelName
                 << ": the import failed\n";
  return program;
}
