//===- OnnxImporterInternals.h - What converters build on -------*- C++ -*-===//
//
// The importer as the operator converters see it. OnnxImporter.cpp holds
// the machinery declared here: the program (checks, arguments,
// parameters), the function being built (the node's inputs, outputs and
// attributes, and building blocks that report their errors at the node) and
// the operator table. Each *Ops.cpp file converts one family of operators
// and contributes its rows to that table.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXIMPORTERINTERNALS_H
#define FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXIMPORTERINTERNALS_H

#include "OnnxImporter.h"
#include "OnnxModel.h"

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"

#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fluid::onnx_import {

namespace om = ::fluid::onnx_model;

/// The most elements a value computed at import time may have: these are
/// shapes, axes and indices, and the bound keeps a hostile model's
/// broadcast or gather from asking for terabytes.
constexpr int64_t kMaxKnownElements = int64_t(1) << 24;

//===----------------------------------------------------------------------===//
// Tensors known at import time
//===----------------------------------------------------------------------===//

/// A tensor whose elements are known while importing: an ONNX element type
/// (FLOAT, DOUBLE, INT32 or INT64, or BOOL, one byte of 0 or 1, which
/// Equal, Not, Cast and Dropout's mask compute and Where reads), a shape
/// and little-endian bytes.
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
    if (type == om::DataType::Bool)
      return 1;
    return type == om::DataType::Double || type == om::DataType::Int64 ? 8 : 4;
  }
  bool isInteger() const {
    return type == om::DataType::Int32 || type == om::DataType::Int64;
  }
  int64_t getInt(int64_t index) const {
    if (type == om::DataType::Bool)
      return bytes[index] != 0;
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
  /// Element `index` of any of the five types, as a double.
  double getDouble(int64_t index) const {
    if (isInteger() || type == om::DataType::Bool)
      return static_cast<double>(getInt(index));
    if (type == om::DataType::Float) {
      float value;
      std::memcpy(&value, bytes.data() + index * 4, 4);
      return value;
    }
    double value;
    std::memcpy(&value, bytes.data() + index * 8, 8);
    return value;
  }
  void setInt(int64_t index, int64_t value) {
    if (type == om::DataType::Bool) {
      bytes[index] = value != 0;
    } else if (type == om::DataType::Int32) {
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

/// The output of a Pad whose result has not been built: a convolution or
/// an average pool may take a padding of zeros into its own instead, and
/// any other use builds the padded tensor (see FunctionImporter::pad).
struct PendingPad {
  /// The tensor padded, and the padding: the elements added before each
  /// dimension, then after each (ONNX's order), all >= 0.
  Value input;
  SmallVector<int64_t> pads;
  /// The value of the added elements.
  double value = 0;
  /// The padded shape.
  SmallVector<int64_t> shape;
  /// The Pad node's location, where the padded tensor is built.
  Location loc;
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
  /// For the output of a Pad, until a use other than a convolution or an
  /// average pool that takes the padding builds the padded tensor.
  std::optional<PendingPad> pendingPad;
};

/// Which function is being built.
enum class Phase {
  /// `@forward`: batch norm with the running statistics.
  Inference,
  /// `@loss`: batch norm with the batch's statistics, updating the running
  /// ones.
  Training,
};

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

bool isFloatDataType(om::DataType type);

/// The MLIR element type of an ONNX one (FLOAT, DOUBLE, INT32 or INT64),
/// or null when the importer has none.
Type getElementType(MLIRContext *context, om::DataType type);

/// A float attribute as the decimal number it was written as: 0.9f is
/// 0.899999976 as a float but was meant as 0.9.
double toDouble(float value);

/// "[2, 3]" for a message; a list from a hostile model may have millions
/// of values, of which the first few are shown.
std::string formatShape(ArrayRef<int64_t> shape);

/// "0.75", "1e-08", "inf": the shortest decimal that reads back as `value`.
std::string formatNumber(double value);

/// "node #3 'name' (Conv)", or "node #3 (Conv)" for an unnamed node.
std::string describeNode(const om::Node &node, int index);

/// The number of elements of `shape` when it is at most kMaxKnownElements.
std::optional<int64_t> getKnownElementCount(ArrayRef<int64_t> shape);

/// The NumPy broadcast of two shapes, or nullopt.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b);

/// `tensor` broadcast NumPy-style to `shape` (which it must broadcast to,
/// with at most kMaxKnownElements elements).
ConstTensor broadcastConstant(const ConstTensor &tensor,
                              ArrayRef<int64_t> shape);

//===----------------------------------------------------------------------===//
// The program: checks, arguments, parameters
//===----------------------------------------------------------------------===//

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

/// Builds one function, node by node. A converter sees the node being
/// imported through this class: its inputs (SSA values, or tensors known at
/// import time), its outputs and its attributes. Every error is reported at
/// the node and leaves a failure to return.
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
  MLIRContext *getContext() const { return context; }
  /// The location of the node being imported.
  Location getLoc() const { return loc; }
  Phase getPhase() const { return phase; }
  ProgramImporter &getProgram() { return program; }
  /// The running statistics that batch norms update, and the index of the
  /// node that does.
  llvm::StringMap<int> &getStatWriters() { return statWriters; }

  /// An error about the node being imported.
  InFlightDiagnostic error() {
    InFlightDiagnostic diag = emitError(loc);
    diag << where;
    return diag;
  }

  // Inputs and outputs of the current node.
  bool hasInput(unsigned index) const {
    return index < node->inputs.size() && !node->inputs[index].empty();
  }
  bool hasOutput(unsigned index) const {
    return index < node->outputs.size() && !node->outputs[index].empty();
  }
  FailureOr<Entry *> lookup(unsigned index);
  FailureOr<Value> input(unsigned index);
  FailureOr<Value> floatInput(unsigned index);
  /// The input's elements when known at import time (else null).
  const ConstTensor *constantInput(unsigned index);
  /// An integer input that must be known at import time (`what` says what
  /// it is for the error).
  FailureOr<SmallVector<int64_t>> intsInput(unsigned index, StringRef what);
  /// A float or integer scalar (or one-element tensor) input that must be
  /// known at import time: a Constant's output or an initializer, read as
  /// a value rather than as a parameter (`what` says what it is for the
  /// error).
  FailureOr<double> scalarInput(unsigned index, StringRef what);
  /// The Pad that defines the input, while its padded tensor is not built.
  const PendingPad *pendingPadInput(unsigned index);
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
  FailureOr<int64_t> intAttr(StringRef name, int64_t defaultValue);
  FailureOr<double> floatAttr(StringRef name, double defaultValue);
  FailureOr<std::string> stringAttr(StringRef name, StringRef defaultValue);
  FailureOr<SmallVector<int64_t>>
  intsAttr(StringRef name, ArrayRef<int64_t> defaultValue, bool *present);
  FailureOr<bool> boolAttr(StringRef name);
  InFlightDiagnostic attributeError(StringRef name, const Twine &value);

  // Building blocks.
  /// Creates an `OpT` with the result types of its shape rules, which
  /// report a rejected shape at the node.
  template <typename OpT>
  FailureOr<OpT> create(ValueRange operands,
                        const typename OpT::Properties &properties = {}) {
    SmallVector<Type, 5> resultTypes;
    typename OpT::Adaptor adaptor(operands, DictionaryAttr(), properties);
    if (failed(OpT::inferReturnTypes(context, loc, adaptor, resultTypes)))
      return failure();
    return OpT::create(builder, loc, resultTypes, operands, properties);
  }
  FailureOr<Value> reshape(Value value, ArrayRef<int64_t> shape);
  FailureOr<Value> constant(const ConstTensor &tensor);
  Value scalar(Type elementType, double value);
  /// `value` with `pads` (ONNX's order: begins, then ends; negative ones
  /// crop) elements of `fill` added: for each padded dimension, a
  /// concatenation with broadcast constants, which has a gradient.
  FailureOr<Value> pad(Value value, ArrayRef<int64_t> pads, double fill);
  /// Creates a `fluid.slice` of `size` elements of `value` from `offset`
  /// along `axis`.
  Value slice(Value value, int64_t axis, int64_t offset, int64_t size);
  RankedTensorType getTensorType(Value value) {
    return cast<RankedTensorType>(value.getType());
  }

private:
  FailureOr<Value> materialize(Entry &entry, StringRef name);
  /// Reads the parameter `name`, whose initial value is `tensor`.
  FailureOr<Value> getParam(const om::Tensor &tensor, StringRef name);
  const om::Attribute *attribute(StringRef name, om::Attribute::Kind kind,
                                 bool &kindError);

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
  llvm::StringMap<int> statWriters;
};

//===----------------------------------------------------------------------===//
// The operator table
//===----------------------------------------------------------------------===//

/// Turns `node`, the node that `importer` is importing, into fluid ops and
/// defines its outputs.
using Converter = LogicalResult (*)(FunctionImporter &importer,
                                    const om::Node &node);

/// A variadic operator's input count.
constexpr size_t kAnyNumber = std::numeric_limits<size_t>::max();

struct OperatorInfo {
  StringLiteral name;
  Converter converter;
  /// The opset versions that (re)defined the operator, up to opset 17.
  std::vector<int64_t> since;
  /// The attributes the importer understands; any other is an error.
  std::vector<StringLiteral> attributes;
  /// The most inputs and outputs a node may list, omitted optional ones
  /// included, in the operator's latest definition (see getArity).
  size_t maxInputs;
  size_t maxOutputs;
};

/// Every supported operator, sorted by name: the rows of each family.
const std::vector<OperatorInfo> &getOperators();

/// Each family's rows, from the file of its name.
std::vector<OperatorInfo> getConstantOperators();
std::vector<OperatorInfo> getConvPoolOperators();
std::vector<OperatorInfo> getElementwiseOperators();
std::vector<OperatorInfo> getMatrixOperators();
std::vector<OperatorInfo> getNormalizationOperators();
std::vector<OperatorInfo> getReductionOperators();
std::vector<OperatorInfo> getShapeOperators();

} // namespace mlir::fluid::onnx_import

#endif // FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXIMPORTERINTERNALS_H
