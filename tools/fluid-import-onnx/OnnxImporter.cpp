//===- OnnxImporter.cpp - Builds a fluid program from an ONNX graph -------===//
//
// One handler per ONNX operator turns a node into fluid ops, with result
// types from the fluid ops' own shape rules (a rejected shape is reported at
// the node, not aborted on). ONNX values are tracked by name: a value is an
// SSA value of the function being built, a tensor known at import time
// (constants, integer initializers, shapes and the arithmetic on them), or a
// float initializer, which becomes a `fluid.param` read where it is first
// used. Float initializers are never folded, so that every weight stays a
// parameter that training updates. An Identity of a float initializer is a
// parameter of its own (see importIdentity).
//
// Operator versions: the importer reads the definitions that are current
// from opset 11 to opset 17. A model may declare an older opset when every
// operator it uses has not changed since (GlobalAveragePool, say).
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/runtime/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace om = ::fluid::onnx_model;
using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

/// The opsets whose operator definitions the importer reads.
static constexpr int64_t kOldestOpset = 11;
static constexpr int64_t kNewestOpset = 17;
/// The most elements a value computed at import time may have: these are
/// shapes, axes and indices, and the bound keeps a hostile model's
/// broadcast or gather from asking for terabytes.
static constexpr int64_t kMaxKnownElements = int64_t(1) << 24;
/// The most nodes whose errors are reported.
static constexpr unsigned kMaxReportedNodes = 20;
/// The most slices a Gather of a run-time tensor becomes.
static constexpr int64_t kMaxGatherSlices = int64_t(1) << 16;

//===----------------------------------------------------------------------===//
// Tensors known at import time
//===----------------------------------------------------------------------===//

namespace {

/// A tensor whose elements are known while importing: an ONNX element type
/// (FLOAT, DOUBLE, INT32 or INT64), a shape and little-endian bytes.
struct ConstTensor {
  om::DataType type = om::DataType::Undefined;
  SmallVector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t getNumElements() const {
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    return count;
  }
  size_t getElementSize() const {
    return type == om::DataType::Double || type == om::DataType::Int64 ? 8 : 4;
  }
  bool isInteger() const {
    return type == om::DataType::Int32 || type == om::DataType::Int64;
  }
  int64_t getInt(int64_t index) const {
    if (type == om::DataType::Int32) {
      int32_t value;
      std::memcpy(&value, bytes.data() + index * 4, 4);
      return value;
    }
    int64_t value;
    std::memcpy(&value, bytes.data() + index * 8, 8);
    return value;
  }
  SmallVector<int64_t> getInts() const {
    SmallVector<int64_t> values;
    for (int64_t i = 0, e = getNumElements(); i < e; ++i)
      values.push_back(getInt(i));
    return values;
  }
  void setInt(int64_t index, int64_t value) {
    if (type == om::DataType::Int32) {
      int32_t narrow = static_cast<int32_t>(value);
      std::memcpy(bytes.data() + index * 4, &narrow, 4);
    } else {
      std::memcpy(bytes.data() + index * 8, &value, 8);
    }
  }

  static ConstTensor ofInts(ArrayRef<int64_t> values, ArrayRef<int64_t> shape) {
    ConstTensor tensor;
    tensor.type = om::DataType::Int64;
    tensor.shape.assign(shape.begin(), shape.end());
    tensor.bytes.resize(values.size() * 8);
    // memcpy must not see the null data of an empty list.
    if (!values.empty())
      std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
    return tensor;
  }
};

/// What an ONNX value name stands for in the function being built.
struct Entry {
  /// Its SSA value, once materialized.
  Value value;
  /// Its elements, when known at import time.
  std::optional<ConstTensor> constant;
  /// The initializer it is (possibly through Identity nodes).
  const om::Tensor *initializer = nullptr;
  /// For a float initializer, the parameter it reads: the initializer's
  /// name, or that of an Identity output that copies it.
  std::string param;
};

/// Which function is being built.
enum class Phase {
  /// `@forward`: batch norm with the running statistics.
  Inference,
  /// `@loss`: batch norm with the batch's statistics, updating the running
  /// ones.
  Training,
};

class FunctionImporter;
class ProgramImporter;

enum class BinaryKind { Add, Sub, Mul, Div };

using Handler = LogicalResult (FunctionImporter::*)(const om::Node &);

/// A variadic operator's input count.
constexpr size_t kAnyNumber = std::numeric_limits<size_t>::max();

struct OperatorInfo {
  StringLiteral name;
  Handler handler;
  /// The opset versions that (re)defined the operator, up to opset 17.
  std::vector<int64_t> since;
  /// The attributes the importer understands; any other is an error.
  std::vector<StringLiteral> attributes;
  /// The most inputs and outputs a node may list, omitted optional ones
  /// included, in the operator's latest definition (see getArity).
  size_t maxInputs;
  size_t maxOutputs;
};

} // namespace

static const std::vector<OperatorInfo> &getOperators();

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
  // The two operators whose signature changed between opsets 11 and 17.
  if (op.name == "Unsqueeze" && opset < 13)
    return {1, 1}; // the axes became an input in Unsqueeze-13
  if (op.name == "BatchNormalization" && opset < 14)
    return {5, 5}; // Y, mean, var, saved_mean, saved_var until 14
  return {op.maxInputs, op.maxOutputs};
}

/// The MLIR element type of an ONNX one, or null when fluid has none.
static Type getElementType(MLIRContext *context, om::DataType type) {
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

static bool isFloatDataType(om::DataType type) {
  return type == om::DataType::Float || type == om::DataType::Double;
}

/// A float attribute as the decimal number it was written as: 0.9f is
/// 0.899999976 as a float but was meant as 0.9.
static double toDouble(float value) {
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

/// "[2, 3]" for a message; a list from a hostile model may have millions
/// of values, of which the first few are shown.
static std::string formatShape(ArrayRef<int64_t> shape) {
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

/// "node #3 'name' (Conv)", or "node #3 (Conv)" for an unnamed node.
static std::string describeNode(const om::Node &node, int index) {
  std::string text = "node #" + std::to_string(index);
  if (!node.name.empty())
    text += " '" + node.name + "'";
  return text + " (" + node.opType + ")";
}

//===----------------------------------------------------------------------===//
// The program: checks, arguments, parameters
//===----------------------------------------------------------------------===//

namespace {

/// A graph input that becomes a function argument.
struct Argument {
  std::string name;
  RankedTensorType type;
};

class ProgramImporter {
public:
  ProgramImporter(MLIRContext &context, const om::Model &model,
                  const ImportOptions &options)
      : context(context), model(model), options(options) {}

  ImportedProgram run();
  /// Whether a diagnostic has been printed.
  bool hasReported() const { return reported; }

  MLIRContext &context;
  const om::Model &model;
  const ImportOptions &options;
  /// The default domain's opset version.
  int64_t opset = 0;
  /// The node being imported (for error messages), or -1.
  int currentNode = -1;
  /// The initializers by name.
  llvm::StringMap<const om::Tensor *> initializers;
  /// The initializers used as parameters, and whether each is trainable.
  llvm::StringMap<bool> paramTrainable;

private:
  void report(Diagnostic &diag);
  bool reported = false;
  LogicalResult checkModel();
  /// Checks that the graph's inputs, outputs and node outputs are named
  /// once each, and fills `producers`.
  LogicalResult checkGraphValues();
  /// Checks the operator, version, arity and attribute names of `node`,
  /// and that its inputs are computed before it.
  LogicalResult checkNode(const om::Node &node, int index);
  /// What defines each value: a node's index, or one of these.
  static constexpr int kGraphInput = -1;
  static constexpr int kInitializer = -2;
  llvm::StringMap<int> producers;
  LogicalResult collectArguments(SmallVectorImpl<Argument> &arguments);
  func::FuncOp createFunction(OpBuilder &builder, StringRef name,
                              ArrayRef<Argument> arguments,
                              ArrayRef<Type> extraArguments);
  LogicalResult checkOutputTypes(ArrayRef<Value> outputs);
};

//===----------------------------------------------------------------------===//
// One function: the graph's nodes as fluid ops
//===----------------------------------------------------------------------===//

/// The window attributes of a convolution or pooling node, for 1 or 2
/// spatial dimensions.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padBegin, padEnd;
  bool ceilMode = false;

  /// In fluid's 2-D form: a 1-D window is a 2-D one of height 1; padding
  /// is [top, left, bottom, right], ONNX's order.
  SmallVector<int64_t> kernel2D() const { return lift(kernel, 1); }
  SmallVector<int64_t> strides2D() const { return lift(strides, 1); }
  SmallVector<int64_t> dilations2D() const { return lift(dilations, 1); }
  SmallVector<int64_t> padding2D() const {
    SmallVector<int64_t> begin = lift(padBegin, 0), end = lift(padEnd, 0);
    return {begin[0], begin[1], end[0], end[1]};
  }

private:
  static SmallVector<int64_t> lift(ArrayRef<int64_t> values, int64_t height) {
    if (values.size() == 2)
      return SmallVector<int64_t>(values);
    return {height, values[0]};
  }
};

class FunctionImporter {
public:
  FunctionImporter(ProgramImporter &program, func::FuncOp func, Phase phase)
      : program(program), context(&program.context),
        builder(OpBuilder::atBlockEnd(&func.getBody().front())), phase(phase),
        loc(func.getLoc()) {}

  /// Imports every node, then returns the values of the graph's outputs.
  FailureOr<SmallVector<Value>> importGraph(ArrayRef<Argument> arguments,
                                            Block::BlockArgListType values);

  OpBuilder &getBuilder() { return builder; }

  // One handler per operator (the table in getOperators() maps names).
  LogicalResult importConv(const om::Node &node);
  LogicalResult importBatchNorm(const om::Node &node);
  template <typename OpT> LogicalResult importUnary(const om::Node &node);
  template <BinaryKind kind> LogicalResult importBinary(const om::Node &node);
  template <bool isMax> LogicalResult importPool(const om::Node &node);
  LogicalResult importGlobalAveragePool(const om::Node &node);
  LogicalResult importGemm(const om::Node &node);
  LogicalResult importMatMul(const om::Node &node);
  LogicalResult importFlatten(const om::Node &node);
  LogicalResult importReshape(const om::Node &node);
  LogicalResult importConcat(const om::Node &node);
  template <typename OpT> LogicalResult importSoftmax(const om::Node &node);
  LogicalResult importConstant(const om::Node &node);
  LogicalResult importIdentity(const om::Node &node);
  LogicalResult importShape(const om::Node &node);
  LogicalResult importGather(const om::Node &node);
  LogicalResult importUnsqueeze(const om::Node &node);

private:
  InFlightDiagnostic error() {
    InFlightDiagnostic diag = emitError(loc);
    diag << where;
    return diag;
  }

  // Inputs and outputs of the current node.
  bool hasInput(unsigned index) const {
    return index < node->inputs.size() && !node->inputs[index].empty();
  }
  FailureOr<Entry *> lookup(unsigned index);
  FailureOr<Value> materialize(Entry &entry, StringRef name);
  FailureOr<Value> input(unsigned index);
  FailureOr<Value> floatInput(unsigned index);
  /// The input's elements when known at import time (else null).
  const ConstTensor *constantInput(unsigned index);
  /// An integer input that must be known at import time (`what` says what
  /// it is for the error).
  FailureOr<SmallVector<int64_t>> intsInput(unsigned index, StringRef what);
  FailureOr<SmallVector<int64_t>> inputShape(unsigned index);
  FailureOr<om::DataType> inputType(unsigned index);
  LogicalResult define(unsigned index, Entry entry);
  LogicalResult define(unsigned index, Value value) {
    Entry entry;
    entry.value = value;
    return define(index, std::move(entry));
  }
  LogicalResult define(unsigned index, ConstTensor constant) {
    Entry entry;
    entry.constant = std::move(constant);
    return define(index, std::move(entry));
  }
  /// Fails when the node has a non-empty output beyond the first `count`.
  LogicalResult expectOutputs(unsigned count, StringRef what);

  // Attributes of the current node.
  const om::Attribute *attribute(StringRef name, om::Attribute::Kind kind,
                                 bool &kindError);
  FailureOr<int64_t> intAttr(StringRef name, int64_t defaultValue);
  FailureOr<double> floatAttr(StringRef name, double defaultValue);
  FailureOr<std::string> stringAttr(StringRef name, StringRef defaultValue);
  FailureOr<SmallVector<int64_t>>
  intsAttr(StringRef name, ArrayRef<int64_t> defaultValue, bool *present);
  FailureOr<bool> boolAttr(StringRef name);
  InFlightDiagnostic attributeError(StringRef name, const Twine &value);

  // Building blocks.
  template <typename OpT>
  FailureOr<OpT> create(ValueRange operands,
                        const typename OpT::Properties &properties = {});
  FailureOr<Value> reshape(Value value, ArrayRef<int64_t> shape);
  FailureOr<Value> constant(const ConstTensor &tensor);
  Value scalar(Type elementType, double value);
  /// Reads the parameter `name`, whose initial value is `tensor`.
  FailureOr<Value> getParam(const om::Tensor &tensor, StringRef name);
  RankedTensorType getTensorType(Value value) {
    return cast<RankedTensorType>(value.getType());
  }

  FailureOr<Window> readWindow(ArrayRef<int64_t> inputSpatial,
                               ArrayRef<int64_t> weightKernel, bool isPool,
                               bool allowDilations);
  /// Checks the output of a window op on `input` (given to windowInput)
  /// against ONNX's extent and reshapes it back to 1-D if it was lifted.
  FailureOr<Value> windowOutput(const Window &window, RankedTensorType input,
                                Value output);
  /// A 1-D input [N, C, L] as a 2-D one [N, C, 1, L]; 2-D as it is.
  FailureOr<Value> windowInput(Value input);
  /// Defines output 0 as input 0 with a new shape: a known value stays
  /// known, anything else becomes a fluid.reshape.
  LogicalResult defineReshaped(ArrayRef<int64_t> shape);

  ProgramImporter &program;
  MLIRContext *context;
  OpBuilder builder;
  Phase phase;
  /// The current node and its location.
  const om::Node *node = nullptr;
  Location loc;
  /// What errors concern outside nodes ("graph output 'y': ").
  std::string where;
  llvm::StringMap<Entry> entries;
  /// The running statistics that batch norms update, and the index of the
  /// node that does.
  llvm::StringMap<int> statWriters;
  /// Whether the current window node has auto_pad SAME_* or VALID.
  bool autoPadded = false;
};

} // namespace

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
  if (entry.initializer && isFloatDataType(entry.initializer->type))
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

FailureOr<SmallVector<int64_t>> FunctionImporter::inputShape(unsigned index) {
  FailureOr<Entry *> entry = lookup(index);
  if (failed(entry))
    return failure();
  if ((*entry)->value)
    return SmallVector<int64_t>(getTensorType((*entry)->value).getShape());
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

template <typename OpT>
FailureOr<OpT>
FunctionImporter::create(ValueRange operands,
                         const typename OpT::Properties &properties) {
  SmallVector<Type, 5> resultTypes;
  typename OpT::Adaptor adaptor(operands, DictionaryAttr(), properties);
  if (failed(OpT::inferReturnTypes(context, loc, adaptor, resultTypes)))
    return failure();
  return OpT::create(builder, loc, resultTypes, operands, properties);
}

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
    if (failed((this->*op->handler)(current)))
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
// Convolution and pooling
//===----------------------------------------------------------------------===//

FailureOr<Window> FunctionImporter::readWindow(ArrayRef<int64_t> inputSpatial,
                                               ArrayRef<int64_t> weightKernel,
                                               bool isPool,
                                               bool allowDilations) {
  size_t rank = inputSpatial.size();
  Window window;
  SmallVector<int64_t> ones(rank, 1), zeros(2 * rank, 0);
  bool hasKernel = false;
  FailureOr<SmallVector<int64_t>> kernel =
      intsAttr("kernel_shape", weightKernel, &hasKernel);
  if (failed(kernel))
    return failure();
  if (isPool && !hasKernel) {
    error() << "attribute 'kernel_shape' is required";
    return failure();
  }
  if (!isPool && *kernel != weightKernel) {
    error() << "attribute 'kernel_shape' " << formatShape(*kernel)
            << " differs from the weight's kernel "
            << formatShape(weightKernel);
    return failure();
  }
  FailureOr<SmallVector<int64_t>> strides = intsAttr("strides", ones, nullptr);
  FailureOr<SmallVector<int64_t>> dilations =
      allowDilations ? intsAttr("dilations", ones, nullptr)
                     : FailureOr<SmallVector<int64_t>>(ones);
  FailureOr<SmallVector<int64_t>> pads = intsAttr("pads", zeros, nullptr);
  FailureOr<std::string> autoPad = stringAttr("auto_pad", "NOTSET");
  if (failed(strides) || failed(dilations) || failed(pads) || failed(autoPad))
    return failure();
  for (auto [name, values, size, minimum] :
       {std::tuple<StringRef, ArrayRef<int64_t>, size_t, int64_t>{
            "kernel_shape", *kernel, rank, 1},
        {"strides", *strides, rank, 1},
        {"dilations", *dilations, rank, 1},
        {"pads", *pads, 2 * rank, 0}}) {
    if (values.size() != size) {
      attributeError(name, formatShape(values))
          << ": the input has " << rank << " spatial dimension"
          << (rank == 1 ? "" : "s") << ", so it needs " << size << " values";
      return failure();
    }
    // The bound keeps the window arithmetic below within 64 bits.
    for (int64_t value : values)
      if (value < minimum || value > std::numeric_limits<int32_t>::max()) {
        attributeError(name, formatShape(values))
            << ": values must be in [" << minimum << ", "
            << std::numeric_limits<int32_t>::max() << "]";
        return failure();
      }
  }
  window.kernel = *kernel;
  window.strides = *strides;
  window.dilations = *dilations;
  window.padBegin.assign(pads->begin(), pads->begin() + rank);
  window.padEnd.assign(pads->begin() + rank, pads->end());

  autoPadded = *autoPad != "NOTSET";
  if (*autoPad == "VALID") {
    window.padBegin.assign(rank, 0);
    window.padEnd.assign(rank, 0);
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    // The output is ceil(in / stride); the padding that takes, split evenly
    // with the odd cell at the end (SAME_UPPER) or the beginning.
    for (size_t d = 0; d < rank; ++d) {
      int64_t extent = (window.kernel[d] - 1) * window.dilations[d] + 1;
      int64_t out =
          (inputSpatial[d] + window.strides[d] - 1) / window.strides[d];
      int64_t total = std::max<int64_t>(0, (out - 1) * window.strides[d] +
                                               extent - inputSpatial[d]);
      int64_t small = total / 2, large = total - small;
      bool upper = *autoPad == "SAME_UPPER";
      window.padBegin[d] = upper ? small : large;
      window.padEnd[d] = upper ? large : small;
    }
  } else if (*autoPad != "NOTSET") {
    attributeError("auto_pad", "'" + *autoPad + "'")
        << " (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)";
    return failure();
  }
  return window;
}

FailureOr<Value> FunctionImporter::windowInput(Value input) {
  RankedTensorType type = getTensorType(input);
  if (type.getRank() == 4)
    return input;
  return reshape(
      input, {type.getDimSize(0), type.getDimSize(1), 1, type.getDimSize(2)});
}

/// Checks fluid's output extent (PyTorch's rule) against ONNX's.
FailureOr<Value> FunctionImporter::windowOutput(const Window &window,
                                                RankedTensorType input,
                                                Value output) {
  ArrayRef<int64_t> inputSpatial = input.getShape().drop_front(2);
  RankedTensorType outType = getTensorType(output);
  SmallVector<int64_t> shape(outType.getShape());
  if (input.getRank() == 3)
    shape.erase(shape.begin() + 2);
  for (size_t d = 0; d < inputSpatial.size(); ++d) {
    int64_t extent = (window.kernel[d] - 1) * window.dilations[d] + 1;
    int64_t span =
        inputSpatial[d] + window.padBegin[d] + window.padEnd[d] - extent;
    int64_t stride = window.strides[d];
    int64_t expected =
        window.ceilMode ? (span + stride - 1) / stride + 1 : span / stride + 1;
    if (expected != shape[d + 2]) {
      error() << "ONNX gives this window an output extent of " << expected
              << " along spatial dimension " << d << ", fluid gives "
              << shape[d + 2]
              << ": in ceil_mode fluid (like PyTorch) drops a last window "
                 "that would start in the padding";
      return failure();
    }
  }
  return reshape(output, shape);
}

LogicalResult FunctionImporter::importConv(const om::Node &node) {
  FailureOr<Value> x = floatInput(0), w = floatInput(1);
  if (failed(x) || failed(w))
    return failure();
  Value bias;
  if (hasInput(2)) {
    FailureOr<Value> b = floatInput(2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  RankedTensorType xType = getTensorType(*x), wType = getTensorType(*w);
  int64_t rank = xType.getRank();
  if (rank != 3 && rank != 4)
    return error() << "only 1-D and 2-D convolutions are supported (inputs "
                      "of rank 3 or 4), got "
                   << xType;
  if (wType.getRank() != rank)
    return error() << "the weight must have rank " << rank << " like the "
                   << "input, got " << wType;
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  FailureOr<Window> window = readWindow(spatial, wType.getShape().drop_front(2),
                                        /*isPool=*/false,
                                        /*allowDilations=*/true);
  FailureOr<int64_t> groups = intAttr("group", 1);
  if (failed(window) || failed(groups))
    return failure();

  // A 1-D convolution is a 2-D one over images of height 1.
  FailureOr<Value> input = windowInput(*x), filter = windowInput(*w);
  if (failed(input) || failed(filter))
    return failure();
  Conv2DOp::Properties properties;
  properties.setStrides(builder.getDenseI64ArrayAttr(window->strides2D()));
  properties.setDilation(builder.getDenseI64ArrayAttr(window->dilations2D()));
  properties.setPadding(builder.getDenseI64ArrayAttr(window->padding2D()));
  properties.setGroups(builder.getI64IntegerAttr(*groups));
  SmallVector<Value, 3> operands = {*input, *filter};
  if (bias)
    operands.push_back(bias);
  FailureOr<Conv2DOp> conv = create<Conv2DOp>(operands, properties);
  if (failed(conv))
    return failure();
  FailureOr<Value> result = windowOutput(*window, xType, conv->getOutput());
  return failed(result) ? failure() : define(0, *result);
}

template <bool isMax>
LogicalResult FunctionImporter::importPool(const om::Node &node) {
  FailureOr<Value> x = floatInput(0);
  if (failed(x))
    return failure();
  RankedTensorType xType = getTensorType(*x);
  int64_t rank = xType.getRank();
  if (rank != 3 && rank != 4)
    return error() << "only 1-D and 2-D pooling is supported (inputs of rank "
                      "3 or 4), got "
                   << xType;
  FailureOr<bool> ceilMode = boolAttr("ceil_mode");
  if (failed(ceilMode))
    return failure();
  bool countIncludePad = false;
  if constexpr (isMax) {
    FailureOr<int64_t> storageOrder = intAttr("storage_order", 0);
    if (failed(storageOrder))
      return failure();
    if (*storageOrder != 0)
      return attributeError("storage_order", Twine(*storageOrder))
             << " (only 0, row-major)";
    if (failed(expectOutputs(1, "the Indices of the maxima")))
      return failure();
  } else {
    FailureOr<bool> include = boolAttr("count_include_pad");
    if (failed(include))
      return failure();
    countIncludePad = *include;
  }
  ArrayRef<int64_t> spatial = xType.getShape().drop_front(2);
  FailureOr<Window> window =
      readWindow(spatial, {}, /*isPool=*/true, /*allowDilations=*/isMax);
  if (failed(window))
    return failure();
  // With auto_pad the padding already gives ONNX's output extent.
  window->ceilMode = *ceilMode && !autoPadded;

  FailureOr<Value> input = windowInput(*x);
  if (failed(input))
    return failure();
  DenseI64ArrayAttr kernel = builder.getDenseI64ArrayAttr(window->kernel2D());
  DenseI64ArrayAttr strides = builder.getDenseI64ArrayAttr(window->strides2D());
  DenseI64ArrayAttr padding = builder.getDenseI64ArrayAttr(window->padding2D());
  UnitAttr ceil = window->ceilMode ? builder.getUnitAttr() : UnitAttr();
  Value output;
  if constexpr (isMax) {
    MaxPool2DOp::Properties properties;
    properties.setKernelSize(kernel);
    properties.setStrides(strides);
    properties.setPadding(padding);
    properties.setDilation(builder.getDenseI64ArrayAttr(window->dilations2D()));
    properties.setCeilMode(ceil);
    FailureOr<MaxPool2DOp> pool = create<MaxPool2DOp>(*input, properties);
    if (failed(pool))
      return failure();
    output = pool->getOutput();
  } else {
    AvgPool2DOp::Properties properties;
    properties.setKernelSize(kernel);
    properties.setStrides(strides);
    properties.setPadding(padding);
    properties.setCeilMode(ceil);
    if (countIncludePad)
      properties.setCountIncludePad(builder.getUnitAttr());
    FailureOr<AvgPool2DOp> pool = create<AvgPool2DOp>(*input, properties);
    if (failed(pool))
      return failure();
    output = pool->getOutput();
  }
  FailureOr<Value> result = windowOutput(*window, xType, output);
  return failed(result) ? failure() : define(0, *result);
}

LogicalResult FunctionImporter::importGlobalAveragePool(const om::Node &node) {
  FailureOr<Value> x = floatInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = getTensorType(*x);
  if (type.getRank() != 3 && type.getRank() != 4)
    return error() << "only inputs of rank 3 or 4 are supported, got " << type;
  FailureOr<Value> input = windowInput(*x);
  if (failed(input))
    return failure();
  FailureOr<GlobalAvgPoolOp> pool = create<GlobalAvgPoolOp>(*input);
  if (failed(pool))
    return failure();
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[0] = type.getDimSize(0);
  shape[1] = type.getDimSize(1);
  FailureOr<Value> result = reshape(pool->getOutput(), shape);
  return failed(result) ? failure() : define(0, *result);
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

LogicalResult FunctionImporter::importBatchNorm(const om::Node &node) {
  FailureOr<double> epsilon = floatAttr("epsilon", 1e-5);
  FailureOr<double> momentum = floatAttr("momentum", 0.9);
  FailureOr<int64_t> trainingMode = intAttr("training_mode", 0);
  if (failed(epsilon) || failed(momentum) || failed(trainingMode))
    return failure();
  if (*trainingMode != 0)
    return attributeError("training_mode", Twine(*trainingMode))
           << ": import the inference graph (training_mode = 0); with "
              "--loss the training program uses the batch statistics";
  if (failed(expectOutputs(1, "a training-mode statistic")))
    return failure();
  SmallVector<Value, 5> operands;
  for (unsigned i = 0; i < 5; ++i) {
    FailureOr<Value> operand = floatInput(i);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  // The running statistics are state, not weights.
  std::string statNames[2];
  for (unsigned i = 3; i < 5; ++i) {
    const std::string &param = entries.find(node.inputs[i])->second.param;
    if (!param.empty()) {
      program.paramTrainable[param] = false;
      statNames[i - 3] = param;
    }
  }

  RankedTensorType type = getTensorType(operands[0]);
  int64_t rank = type.getRank();
  if (rank < 2 || rank > 4)
    return error() << "only inputs of rank 2, 3 or 4 are supported, got "
                   << type;
  if (rank == 3) {
    FailureOr<Value> lifted =
        reshape(operands[0], {type.getDimSize(0), type.getDimSize(1), 1,
                              type.getDimSize(2)});
    if (failed(lifted))
      return failure();
    operands[0] = *lifted;
  }

  Value output;
  if (phase == Phase::Inference) {
    BatchNormInferenceOp::Properties properties;
    properties.setEpsilon(builder.getF64FloatAttr(*epsilon));
    FailureOr<BatchNormInferenceOp> norm =
        create<BatchNormInferenceOp>(operands, properties);
    if (failed(norm))
      return failure();
    output = norm->getOutput();
  } else {
    if (statNames[0].empty() || statNames[1].empty())
      return error() << "the running mean and variance (inputs #3 and #4) "
                        "must be initializers, so that training can update "
                        "them";
    // Each batch norm updates statistics of its own (torch.onnx's merged
    // ones are read through Identity copies, which are).
    for (unsigned i = 3; i < 5; ++i) {
      auto [it, inserted] =
          statWriters.try_emplace(statNames[i - 3], program.currentNode);
      if (!inserted)
        return error() << "input #" << i << " '" << node.inputs[i]
                       << "' is the running statistic @" << statNames[i - 3]
                       << ", which "
                       << (it->second == program.currentNode
                               ? std::string("this node")
                               : describeNode(program.model.nodes[it->second],
                                              it->second))
                       << " updates already: a training step would write it "
                          "twice";
    }
    // ONNX weighs the running statistic by `momentum`, PyTorch and fluid
    // the batch's. The attribute has float precision, and so has the
    // result: 1 - 0.9 is 0.1, not 0.09999999999999998.
    BatchNormOp::Properties properties;
    properties.setEpsilon(builder.getF64FloatAttr(*epsilon));
    properties.setMomentum(
        builder.getF64FloatAttr(toDouble(static_cast<float>(1.0 - *momentum))));
    FailureOr<BatchNormOp> norm = create<BatchNormOp>(operands, properties);
    if (failed(norm))
      return failure();
    SetParamOp::create(builder, loc,
                       FlatSymbolRefAttr::get(context, statNames[0]),
                       norm->getNewRunningMean());
    SetParamOp::create(builder, loc,
                       FlatSymbolRefAttr::get(context, statNames[1]),
                       norm->getNewRunningVar());
    output = norm->getOutput();
  }
  FailureOr<Value> result = reshape(output, type.getShape());
  return failed(result) ? failure() : define(0, *result);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename OpT>
LogicalResult FunctionImporter::importUnary(const om::Node &node) {
  FailureOr<Value> x = floatInput(0);
  if (failed(x))
    return failure();
  return define(0, OpT::create(builder, loc, *x).getOutput());
}

/// The number of elements of `shape` when it is at most kMaxKnownElements.
static std::optional<int64_t> getKnownElementCount(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    std::optional<int64_t> product = llvm::checkedMul(count, dim);
    if (!product || *product > kMaxKnownElements)
      return std::nullopt;
    count = *product;
  }
  return count;
}

/// The NumPy broadcast of two shapes, or nullopt.
static std::optional<SmallVector<int64_t>>
broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
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

template <BinaryKind kind>
LogicalResult FunctionImporter::importBinary(const om::Node &node) {
  FailureOr<om::DataType> lhsType = inputType(0), rhsType = inputType(1);
  if (failed(lhsType) || failed(rhsType))
    return failure();
  if (*lhsType != *rhsType)
    return error() << "the operands have different element types ("
                   << om::getDataTypeName(*lhsType) << " and "
                   << om::getDataTypeName(*rhsType) << ")";

  // Integer arithmetic on known values: shape computations.
  const ConstTensor *a = constantInput(0), *b = constantInput(1);
  if (a && b && a->isInteger()) {
    std::optional<SmallVector<int64_t>> shape =
        broadcastShapes(a->shape, b->shape);
    if (!shape)
      return error() << "the operands " << formatShape(a->shape) << " and "
                     << formatShape(b->shape)
                     << " are not broadcast-compatible";
    if (!getKnownElementCount(*shape))
      return error() << "the result " << formatShape(*shape)
                     << " of this computation at import time has more than "
                     << kMaxKnownElements << " elements";
    ConstTensor result;
    result.type = a->type;
    result.shape = *shape;
    result.bytes.resize(result.getNumElements() * result.getElementSize());
    for (int64_t i = 0, e = result.getNumElements(); i < e; ++i) {
      int64_t x = a->getInt(broadcastIndex(i, *shape, a->shape));
      int64_t y = b->getInt(broadcastIndex(i, *shape, b->shape));
      std::optional<int64_t> value;
      switch (kind) {
      case BinaryKind::Add:
        value = llvm::checkedAdd(x, y);
        break;
      case BinaryKind::Sub:
        value = llvm::checkedSub(x, y);
        break;
      case BinaryKind::Mul:
        value = llvm::checkedMul(x, y);
        break;
      case BinaryKind::Div:
        if (y == 0)
          return error() << "integer division by zero";
        if (y != -1 || x != std::numeric_limits<int64_t>::min())
          value = x / y;
        break;
      }
      if (!value || (result.type == om::DataType::Int32 &&
                     *value != static_cast<int32_t>(*value)))
        return error() << "integer overflow computing with " << x << " and "
                       << y;
      result.setInt(i, *value);
    }
    return define(0, std::move(result));
  }

  FailureOr<Value> lhs = input(0), rhs = input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  Value operands[] = {*lhs, *rhs};
  FailureOr<Value> result = failure();
  switch (kind) {
  case BinaryKind::Add:
    if (FailureOr<AddOp> op = create<AddOp>(operands); succeeded(op))
      result = op->getOutput();
    break;
  case BinaryKind::Sub:
    if (FailureOr<SubOp> op = create<SubOp>(operands); succeeded(op))
      result = op->getOutput();
    break;
  case BinaryKind::Mul:
    if (FailureOr<MulOp> op = create<MulOp>(operands); succeeded(op))
      result = op->getOutput();
    break;
  case BinaryKind::Div:
    if (!isFloatDataType(*lhsType))
      return error() << "integer division is supported only on values known "
                        "at import time";
    if (FailureOr<DivOp> op = create<DivOp>(operands); succeeded(op))
      result = op->getOutput();
    break;
  }
  return failed(result) ? failure() : define(0, *result);
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult FunctionImporter::importGemm(const om::Node &node) {
  FailureOr<double> alpha = floatAttr("alpha", 1.0);
  FailureOr<double> beta = floatAttr("beta", 1.0);
  FailureOr<bool> transA = boolAttr("transA"), transB = boolAttr("transB");
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  FailureOr<Value> a = floatInput(0), b = floatInput(1);
  if (failed(a) || failed(b))
    return failure();
  Value c;
  if (hasInput(2)) {
    FailureOr<Value> bias = floatInput(2);
    if (failed(bias))
      return failure();
    c = *bias;
  }
  RankedTensorType aType = getTensorType(*a), bType = getTensorType(*b);
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return error() << "A and B must be matrices, got " << aType << " and "
                   << bType;
  int64_t n = *transB ? bType.getDimSize(0) : bType.getDimSize(1);

  // nn.Linear: x W^T + b.
  if (!*transA && *transB && *alpha == 1.0 &&
      (!c ||
       (*beta == 1.0 && getTensorType(c).getShape() == ArrayRef<int64_t>{n}))) {
    SmallVector<Value, 3> operands = {*a, *b};
    if (c)
      operands.push_back(c);
    FailureOr<LinearOp> linear = create<LinearOp>(operands);
    return failed(linear) ? failure() : define(0, linear->getOutput());
  }

  MatmulOp::Properties properties;
  if (*transA)
    properties.setTransposeLhs(builder.getUnitAttr());
  if (*transB)
    properties.setTransposeRhs(builder.getUnitAttr());
  FailureOr<MatmulOp> product = create<MatmulOp>({*a, *b}, properties);
  if (failed(product))
    return failure();
  Value result = product->getOutput();
  Type element = aType.getElementType();
  if (*alpha != 1.0) {
    FailureOr<MulOp> scaled = create<MulOp>({result, scalar(element, *alpha)});
    if (failed(scaled))
      return failure();
    result = scaled->getOutput();
  }
  if (c && *beta != 0.0) {
    if (*beta != 1.0) {
      FailureOr<MulOp> scaled = create<MulOp>({c, scalar(element, *beta)});
      if (failed(scaled))
        return failure();
      c = scaled->getOutput();
    }
    RankedTensorType productType = getTensorType(result);
    FailureOr<AddOp> sum = create<AddOp>({result, c});
    if (failed(sum))
      return failure();
    if (getTensorType(sum->getOutput()) != productType)
      return error() << "C of type " << getTensorType(c)
                     << " does not broadcast to the product " << productType;
    result = sum->getOutput();
  }
  return define(0, result);
}

LogicalResult FunctionImporter::importMatMul(const om::Node &node) {
  FailureOr<Value> a = floatInput(0), b = floatInput(1);
  if (failed(a) || failed(b))
    return failure();
  RankedTensorType aType = getTensorType(*a), bType = getTensorType(*b);
  SmallVector<int64_t> aShape(aType.getShape()), bShape(bType.getShape());
  if (aShape.empty() || bShape.empty())
    return error() << "MatMul of a scalar is not defined, got " << aType
                   << " and " << bType;
  // Vectors become matrices; their added dimension is dropped at the end.
  bool vectorA = aShape.size() == 1, vectorB = bShape.size() == 1;
  if (vectorA)
    aShape.insert(aShape.begin(), 1);
  if (vectorB)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back();
  int64_t n = bShape.back();
  if (bShape[bShape.size() - 2] != k)
    return error() << "the contraction dimensions differ: " << aType << " x "
                   << bType;
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(aShape).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bShape).drop_back(2);
  std::optional<SmallVector<int64_t>> batch = broadcastShapes(aBatch, bBatch);
  if (!batch)
    return error() << "the batch dimensions of " << aType << " and " << bType
                   << " are not broadcast-compatible";
  // The product is at most as large as a broadcast operand, which must be a
  // fluid tensor.
  SmallVector<int64_t> productShape(*batch);
  productShape.append({m, n});
  for (ArrayRef<int64_t> shape :
       {ArrayRef<int64_t>(productShape), ArrayRef<int64_t>(aShape),
        ArrayRef<int64_t>(bShape)}) {
    SmallVector<int64_t> full(*batch);
    full.append(shape.end() - 2, shape.end());
    if (!isFluidTensor(RankedTensorType::get(full, aType.getElementType())))
      return error() << "the batched product of " << aType << " and " << bType
                     << " is too large";
  }
  int64_t batchSize = 1;
  for (int64_t dim : *batch)
    batchSize *= dim;

  Value lhs = *a, rhs = *b, product;
  if (bBatch.empty()) {
    // [..., M, K] x [K, N]: one matrix product over all rows.
    FailureOr<Value> rows = reshape(lhs, {batchSize * m, k});
    FailureOr<Value> matrix = reshape(rhs, {k, n});
    if (failed(rows) || failed(matrix))
      return failure();
    FailureOr<MatmulOp> op = create<MatmulOp>({*rows, *matrix});
    if (failed(op))
      return failure();
    product = op->getOutput();
  } else {
    // Broadcast both to the batch shape, then one batched product.
    auto toBatch = [&](Value value, ArrayRef<int64_t> shape, int64_t rows,
                       int64_t cols) -> FailureOr<Value> {
      FailureOr<Value> full = reshape(value, shape);
      if (failed(full))
        return failure();
      SmallVector<int64_t> target(*batch);
      target.append({rows, cols});
      Value broadcast = *full;
      if (ArrayRef<int64_t>(target) != ArrayRef<int64_t>(shape)) {
        SmallVector<int64_t> padded(target.size() - shape.size(), 1);
        padded.append(shape.begin(), shape.end());
        FailureOr<Value> aligned = reshape(*full, padded);
        if (failed(aligned))
          return failure();
        auto type = RankedTensorType::get(
            target, getTensorType(value).getElementType());
        broadcast =
            BroadcastToOp::create(builder, loc, type, *aligned).getOutput();
      }
      return reshape(broadcast, {batchSize, rows, cols});
    };
    FailureOr<Value> lhs3 = toBatch(lhs, aShape, m, k);
    FailureOr<Value> rhs3 = toBatch(rhs, bShape, k, n);
    if (failed(lhs3) || failed(rhs3))
      return failure();
    FailureOr<MatmulOp> op = create<MatmulOp>({*lhs3, *rhs3});
    if (failed(op))
      return failure();
    product = op->getOutput();
  }
  SmallVector<int64_t> shape(*batch);
  if (!vectorA)
    shape.push_back(m);
  if (!vectorB)
    shape.push_back(n);
  FailureOr<Value> result = reshape(product, shape);
  return failed(result) ? failure() : define(0, *result);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

LogicalResult FunctionImporter::defineReshaped(ArrayRef<int64_t> shape) {
  // Float initializers are not known values: they stay parameters.
  if (const ConstTensor *known = constantInput(0)) {
    ConstTensor result = *known;
    result.shape.assign(shape.begin(), shape.end());
    return define(0, std::move(result));
  }
  FailureOr<Value> x = input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> result = reshape(*x, shape);
  return failed(result) ? failure() : define(0, *result);
}

LogicalResult FunctionImporter::importFlatten(const om::Node &node) {
  FailureOr<int64_t> axis = intAttr("axis", 1);
  FailureOr<SmallVector<int64_t>> shape = inputShape(0);
  if (failed(axis) || failed(shape))
    return failure();
  int64_t rank = shape->size();
  if (*axis < -rank || *axis > rank)
    return attributeError("axis", Twine(*axis))
           << ": out of range for rank " << rank;
  int64_t split = *axis < 0 ? *axis + rank : *axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    ((d < split) ? outer : inner) *= (*shape)[d];
  return defineReshaped({outer, inner});
}

LogicalResult FunctionImporter::importReshape(const om::Node &node) {
  FailureOr<bool> allowZero = boolAttr("allowzero");
  FailureOr<SmallVector<int64_t>> inShape = inputShape(0);
  FailureOr<SmallVector<int64_t>> target = intsInput(1, "the target shape");
  if (failed(allowZero) || failed(inShape) || failed(target))
    return failure();
  if (target->size() > FLUID_MAX_RANK)
    return error() << "the target shape has " << target->size()
                   << " dimensions; fluid tensors have rank at most "
                   << FLUID_MAX_RANK;
  int64_t total = 1;
  for (int64_t dim : *inShape)
    total *= dim;
  SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  bool hasZero = false;
  int64_t known = 1;
  for (auto [i, dim] : llvm::enumerate(*target)) {
    if (dim == -1) {
      if (inferred)
        return error() << "the target shape " << formatShape(*target)
                       << " has more than one -1";
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (dim < -1)
      return error() << "the target shape " << formatShape(*target)
                     << " has a negative dimension other than -1";
    if (dim == 0 && !*allowZero) {
      if (i >= inShape->size())
        return error() << "the target shape " << formatShape(*target)
                       << " copies dimension " << i << " (0) of the input "
                       << formatShape(*inShape) << ", which has no such "
                       << "dimension";
      dim = (*inShape)[i];
    } else if (dim == 0) {
      hasZero = true;
    }
    shape.push_back(dim);
    std::optional<int64_t> product = llvm::checkedMul(known, dim);
    if (!product)
      return error() << "the target shape " << formatShape(*target)
                     << " overflows";
    known = *product;
  }
  if (inferred) {
    if (hasZero)
      return error() << "the target shape " << formatShape(*target)
                     << " has both -1 and a literal 0 (allowzero)";
    if (known == 0 || total % known != 0)
      return error() << "cannot reshape " << formatShape(*inShape) << " to "
                     << formatShape(*target)
                     << ": the -1 dimension is not a whole number";
    shape[*inferred] = total / known;
  } else if (known != total) {
    return error() << "cannot reshape " << formatShape(*inShape) << " ("
                   << total << " elements) to " << formatShape(*target) << " ("
                   << known << " elements)";
  }
  return defineReshaped(shape);
}

LogicalResult FunctionImporter::importUnsqueeze(const om::Node &node) {
  FailureOr<SmallVector<int64_t>> axes = failure();
  if (program.opset >= 13) {
    axes = intsInput(1, "the axes");
  } else {
    bool present = false;
    axes = intsAttr("axes", {}, &present);
    if (succeeded(axes) && !present)
      return error() << "attribute 'axes' is required";
  }
  FailureOr<SmallVector<int64_t>> inShape = inputShape(0);
  if (failed(axes) || failed(inShape))
    return failure();
  int64_t rank = inShape->size() + axes->size();
  if (rank > FLUID_MAX_RANK)
    return error() << "the result would have rank " << rank
                   << "; fluid tensors have rank at most " << FLUID_MAX_RANK;
  llvm::SmallBitVector inserted(rank);
  for (int64_t axis : *axes) {
    if (axis < -rank || axis >= rank)
      return error() << "axis " << axis << " is out of range for the output "
                     << "rank " << rank;
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (inserted.test(normalized))
      return error() << "axis " << axis << " is given twice";
    inserted.set(normalized);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0, next = 0; d < rank; ++d)
    shape.push_back(inserted.test(d) ? 1 : (*inShape)[next++]);
  return defineReshaped(shape);
}

LogicalResult FunctionImporter::importIdentity(const om::Node &node) {
  FailureOr<Entry *> entry = lookup(0);
  if (failed(entry))
    return failure();
  // torch.onnx merges initializers of equal values (a fresh model's
  // batch-norm weights, running means and variances) into one, read through
  // Identity nodes whose outputs carry the state-dict names. Each of those
  // is a weight of its own, which training updates apart from the others:
  // a parameter named after the output, with its own copy of the value.
  // An Identity of anything else (a copy among them) is that same value.
  const om::Tensor *initializer = (*entry)->initializer;
  if (initializer && isFloatDataType(initializer->type) &&
      node.inputs[0] == initializer->name) {
    Entry copy;
    copy.initializer = initializer;
    copy.param = node.outputs[0];
    return define(0, std::move(copy));
  }
  return define(0, **entry);
}

LogicalResult FunctionImporter::importShape(const om::Node &node) {
  FailureOr<int64_t> start = intAttr("start", 0);
  FailureOr<SmallVector<int64_t>> shape = inputShape(0);
  if (failed(start) || failed(shape))
    return failure();
  int64_t rank = shape->size();
  FailureOr<int64_t> end = intAttr("end", rank);
  if (failed(end))
    return failure();
  auto clamp = [&](int64_t index) {
    if (index < 0)
      index += rank;
    return std::min(std::max<int64_t>(index, 0), rank);
  };
  int64_t first = clamp(*start), last = std::max(first, clamp(*end));
  SmallVector<int64_t> dims(shape->begin() + first, shape->begin() + last);
  return define(0, ConstTensor::ofInts(dims, {last - first}));
}

LogicalResult FunctionImporter::importConcat(const om::Node &node) {
  FailureOr<int64_t> axis = intAttr("axis", 0);
  if (failed(axis))
    return failure();
  if (!node.findAttribute("axis"))
    return error() << "attribute 'axis' is required";
  if (node.inputs.empty())
    return error() << "needs at least one input";

  // Known values (shapes being assembled) are concatenated here.
  bool allKnown = true;
  for (unsigned i = 0; i < node.inputs.size(); ++i) {
    if (failed(lookup(i)))
      return failure();
    allKnown &= constantInput(i) != nullptr;
  }
  if (allKnown) {
    const ConstTensor *first = constantInput(0);
    int64_t rank = first->shape.size();
    if (*axis < -rank || *axis >= rank)
      return attributeError("axis", Twine(*axis))
             << ": out of range for rank " << rank;
    int64_t d = *axis < 0 ? *axis + rank : *axis;
    ConstTensor result = *first;
    result.shape[d] = 0;
    int64_t outer = 1;
    for (int64_t i = 0; i < d; ++i)
      outer *= first->shape[i];
    SmallVector<const ConstTensor *> parts;
    for (unsigned i = 0; i < node.inputs.size(); ++i) {
      const ConstTensor *part = constantInput(i);
      if (part->type != first->type ||
          part->shape.size() != first->shape.size())
        return error() << "input #" << i << " differs from input #0 in "
                       << "element type or rank";
      for (int64_t k = 0; k < rank; ++k)
        if (k != d && part->shape[k] != first->shape[k])
          return error() << "input #" << i << " " << formatShape(part->shape)
                         << " differs from input #0 "
                         << formatShape(first->shape) << " outside the axis";
      result.shape[d] += part->shape[d];
      if (!getKnownElementCount(result.shape))
        return error() << "the result of this concatenation at import time "
                          "has more than "
                       << kMaxKnownElements << " elements";
      parts.push_back(part);
    }
    result.bytes.clear();
    for (int64_t o = 0; o < outer; ++o)
      for (const ConstTensor *part : parts) {
        size_t chunk = part->bytes.size() / std::max<int64_t>(outer, 1);
        result.bytes.insert(result.bytes.end(), part->bytes.begin() + o * chunk,
                            part->bytes.begin() + (o + 1) * chunk);
      }
    return define(0, std::move(result));
  }

  SmallVector<Value> operands;
  for (unsigned i = 0; i < node.inputs.size(); ++i) {
    FailureOr<Value> operand = input(i);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  ConcatOp::Properties properties;
  properties.setAxis(builder.getI64IntegerAttr(*axis));
  FailureOr<ConcatOp> concat = create<ConcatOp>(operands, properties);
  return failed(concat) ? failure() : define(0, concat->getOutput());
}

LogicalResult FunctionImporter::importGather(const om::Node &node) {
  FailureOr<int64_t> axisAttr = intAttr("axis", 0);
  FailureOr<SmallVector<int64_t>> dataShape = inputShape(0);
  FailureOr<SmallVector<int64_t>> indices = intsInput(1, "the indices");
  if (failed(axisAttr) || failed(dataShape) || failed(indices))
    return failure();
  ArrayRef<int64_t> indicesShape = constantInput(1)->shape;
  int64_t rank = dataShape->size();
  if (rank == 0)
    return error() << "the data must have rank >= 1";
  if (*axisAttr < -rank || *axisAttr >= rank)
    return attributeError("axis", Twine(*axisAttr))
           << ": out of range for rank " << rank;
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  int64_t extent = (*dataShape)[axis];
  for (int64_t &index : *indices) {
    if (index < -extent || index >= extent)
      return error() << "index " << index << " is out of range for dimension "
                     << axis << " of size " << extent;
    if (index < 0)
      index += extent;
  }
  SmallVector<int64_t> shape(dataShape->begin(), dataShape->begin() + axis);
  shape.append(indicesShape.begin(), indicesShape.end());
  shape.append(dataShape->begin() + axis + 1, dataShape->end());

  if (const ConstTensor *data = constantInput(0)) {
    if (!getKnownElementCount(shape))
      return error() << "the result " << formatShape(shape)
                     << " of this gather at import time has more than "
                     << kMaxKnownElements << " elements";
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (d < axis)
        outer *= (*dataShape)[d];
      else if (d > axis)
        inner *= (*dataShape)[d];
    size_t chunk = inner * data->getElementSize();
    ConstTensor result;
    result.type = data->type;
    result.shape = shape;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t index : *indices) {
        auto begin = data->bytes.begin() + (o * extent + index) * chunk;
        result.bytes.insert(result.bytes.end(), begin, begin + chunk);
      }
    return define(0, std::move(result));
  }

  // Known indices into a run-time tensor: one slice per index, joined.
  if (indices->empty())
    return error() << "gathering no elements (empty indices) is not "
                      "supported";
  if (static_cast<int64_t>(indices->size()) > kMaxGatherSlices)
    return error() << "gathering " << indices->size()
                   << " indices of a run-time tensor is not supported (at "
                      "most "
                   << kMaxGatherSlices << ", one slice each)";
  FailureOr<Value> data = input(0);
  if (failed(data))
    return failure();
  RankedTensorType dataType = getTensorType(*data);
  SmallVector<int64_t> sliceShape(*dataShape);
  sliceShape[axis] = 1;
  auto sliceType = RankedTensorType::get(sliceShape, dataType.getElementType());
  SmallVector<Value> slices;
  for (int64_t index : *indices)
    slices.push_back(SliceOp::create(builder, loc, sliceType, *data,
                                     builder.getI64IntegerAttr(axis),
                                     builder.getI64IntegerAttr(index))
                         .getOutput());
  Value joined = slices.front();
  if (slices.size() > 1) {
    ConcatOp::Properties properties;
    properties.setAxis(builder.getI64IntegerAttr(axis));
    FailureOr<ConcatOp> concat = create<ConcatOp>(slices, properties);
    if (failed(concat))
      return failure();
    joined = concat->getOutput();
  }
  FailureOr<Value> result = reshape(joined, shape);
  return failed(result) ? failure() : define(0, *result);
}

//===----------------------------------------------------------------------===//
// Softmax, constants
//===----------------------------------------------------------------------===//

template <typename OpT>
LogicalResult FunctionImporter::importSoftmax(const om::Node &node) {
  // Opset 13 normalizes along one axis (default -1); earlier opsets
  // flatten the input to 2-D at `axis` (default 1) and normalize each row.
  bool coerce = program.opset < 13;
  FailureOr<int64_t> axisAttr = intAttr("axis", coerce ? 1 : -1);
  FailureOr<Value> x = floatInput(0);
  if (failed(axisAttr) || failed(x))
    return failure();
  RankedTensorType type = getTensorType(*x);
  int64_t rank = type.getRank();
  if (*axisAttr < -rank || *axisAttr >= std::max<int64_t>(rank, 1))
    return attributeError("axis", Twine(*axisAttr))
           << ": out of range for rank " << rank;
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  Value input = *x;
  if (coerce && axis != rank - 1) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? outer : inner) *= type.getDimSize(d);
    FailureOr<Value> rows = reshape(input, {outer, inner});
    if (failed(rows))
      return failure();
    input = *rows;
    axis = 1;
  }
  Value output = OpT::create(builder, loc, input.getType(), input,
                             builder.getI64IntegerAttr(axis))
                     .getOutput();
  FailureOr<Value> result = reshape(output, type.getShape());
  return failed(result) ? failure() : define(0, *result);
}

LogicalResult FunctionImporter::importConstant(const om::Node &node) {
  if (node.attributes.size() != 1)
    return error() << "needs exactly one value attribute, got "
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
      return error() << "constants of element type "
                     << om::getDataTypeName(attr.t.type)
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
    return error() << "attribute '" << attr.name << "' of type "
                   << om::getAttributeKindName(attr.kind)
                   << " is not supported (strings and sparse tensors are "
                      "not)";
  }
  return define(0, std::move(result));
}

//===----------------------------------------------------------------------===//
// The operator table
//===----------------------------------------------------------------------===//

static const std::vector<OperatorInfo> &getOperators() {
  using F = FunctionImporter;
  static const std::vector<OperatorInfo> operators = {
      {"Add", &F::importBinary<BinaryKind::Add>, {1, 6, 7, 13, 14}, {}, 2, 1},
      {"AveragePool",
       &F::importPool<false>,
       {1, 7, 10, 11},
       {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads",
        "strides"},
       1,
       1},
      {"BatchNormalization",
       &F::importBatchNorm,
       {1, 6, 7, 9, 14, 15},
       {"epsilon", "momentum", "training_mode"},
       5,
       3},
      {"Concat", &F::importConcat, {1, 4, 11, 13}, {"axis"}, kAnyNumber, 1},
      {"Constant",
       &F::importConstant,
       {1, 9, 11, 12, 13},
       {"value", "value_float", "value_floats", "value_int", "value_ints",
        "value_string", "value_strings", "sparse_value"},
       0,
       1},
      {"Conv",
       &F::importConv,
       {1, 11},
       {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
       3,
       1},
      {"Div", &F::importBinary<BinaryKind::Div>, {1, 6, 7, 13, 14}, {}, 2, 1},
      {"Flatten", &F::importFlatten, {1, 9, 11, 13}, {"axis"}, 1, 1},
      {"Gather", &F::importGather, {1, 11, 13}, {"axis"}, 2, 1},
      {"Gemm",
       &F::importGemm,
       {1, 6, 7, 9, 11, 13},
       {"alpha", "beta", "transA", "transB"},
       3,
       1},
      {"GlobalAveragePool", &F::importGlobalAveragePool, {1}, {}, 1, 1},
      {"Identity", &F::importIdentity, {1, 13, 14, 16}, {}, 1, 1},
      {"LogSoftmax",
       &F::importSoftmax<LogSoftmaxOp>,
       {1, 11, 13},
       {"axis"},
       1,
       1},
      {"MatMul", &F::importMatMul, {1, 9, 13}, {}, 2, 1},
      {"MaxPool",
       &F::importPool<true>,
       {1, 8, 10, 11, 12},
       {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
        "storage_order", "strides"},
       1,
       2},
      {"Mul", &F::importBinary<BinaryKind::Mul>, {1, 6, 7, 13, 14}, {}, 2, 1},
      {"Relu", &F::importUnary<ReluOp>, {1, 6, 13, 14}, {}, 1, 1},
      {"Reshape", &F::importReshape, {1, 5, 13, 14}, {"allowzero"}, 2, 1},
      {"Shape", &F::importShape, {1, 13, 15}, {"end", "start"}, 1, 1},
      {"Sigmoid", &F::importUnary<SigmoidOp>, {1, 6, 13}, {}, 1, 1},
      {"Softmax", &F::importSoftmax<SoftmaxOp>, {1, 11, 13}, {"axis"}, 1, 1},
      {"Sub", &F::importBinary<BinaryKind::Sub>, {1, 6, 7, 13, 14}, {}, 2, 1},
      {"Tanh", &F::importUnary<TanhOp>, {1, 6, 13}, {}, 1, 1},
      {"Unsqueeze", &F::importUnsqueeze, {1, 11, 13}, {"axes"}, 2, 1},
  };
  return operators;
}

std::string mlir::fluid::onnx_import::getSupportedOperators() {
  std::string names;
  for (const OperatorInfo &op : getOperators())
    names += (names.empty() ? "" : ", ") + op.name.str();
  return names;
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
  for (auto [output, value] : llvm::zip(model.outputs, outputs)) {
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
