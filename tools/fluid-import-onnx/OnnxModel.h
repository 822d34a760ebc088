//===- OnnxModel.h - An ONNX model as plain C++ data ------------*- C++ -*-===//
//
// What fluid-import-onnx needs of an ONNX file, in plain structures: the
// graph's nodes with their attributes, its inputs and outputs with their
// types, and its initializers as raw little-endian bytes with an element
// type and a shape. The reader (OnnxReader.cpp) is the only code that sees
// protobuf; it is compiled with exceptions, in a library of its own, so that
// the MLIR side (built without exceptions) includes only this header.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXMODEL_H
#define FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXMODEL_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fluid::onnx_model {

/// Element types, numbered as ONNX's TensorProto.DataType.
enum class DataType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
};

/// ONNX's name of an element type ("FLOAT", "INT64", ...).
const char *getDataTypeName(DataType type);

/// A tensor: an initializer or the value of a Constant node.
struct Tensor {
  std::string name;
  DataType type = DataType::Undefined;
  std::vector<int64_t> dims;
  /// The elements, row-major and little-endian, when `hasData`: the reader
  /// converts FLOAT, DOUBLE, INT32 and INT64 tensors, and BOOL ones as a
  /// byte of 0 or 1 each (from raw_data, which it moves rather than copies,
  /// the typed fields, or an external file). Other element types are
  /// described but not converted.
  std::string bytes;
  bool hasData = false;

  int64_t getNumElements() const;
};

/// One attribute of a node. Only the fields of its kind are meaningful.
struct Attribute {
  enum class Kind {
    Float,
    Int,
    String,
    Tensor,
    Graph,
    Floats,
    Ints,
    Strings,
    Tensors,
    Graphs,
    SparseTensor,
    SparseTensors,
    TypeProto,
    TypeProtos,
    Undefined,
  };
  std::string name;
  Kind kind = Kind::Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  onnx_model::Tensor t;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  /// Set in function bodies: the attribute refers to one of the caller's.
  std::string refAttrName;
};

/// ONNX's name of an attribute kind ("INT", "FLOATS", ...).
const char *getAttributeKindName(Attribute::Kind kind);

struct Node {
  std::string name;
  std::string opType;
  std::string domain;
  /// Value names; an empty name is an omitted optional input or output.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;

  /// The attribute `name`, or null.
  const Attribute *findAttribute(const std::string &attrName) const;
};

/// One dimension of a declared shape: a number, a symbol or unknown.
struct Dimension {
  bool hasValue = false;
  int64_t value = 0;
  /// The symbolic name (e.g. "batch_size"); empty when unnamed.
  std::string param;
};

/// A graph input or output and its declared type.
struct ValueInfo {
  std::string name;
  /// Whether the type is a tensor (not a sequence, map, optional, ...).
  bool isTensor = false;
  /// For other types: what it is ("sequence", "optional", ...).
  std::string typeKind;
  DataType elementType = DataType::Undefined;
  bool hasShape = false;
  std::vector<Dimension> dims;
};

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
};

struct Model {
  int64_t irVersion = 0;
  std::string producerName;
  std::string producerVersion;
  std::vector<OpsetImport> opsets;
  std::string graphName;
  std::vector<Node> nodes;
  std::vector<Tensor> initializers;
  /// Sparse initializers are not supported; the importer reports them.
  std::vector<std::string> sparseInitializerNames;
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
};

/// Reads the ONNX model in `data` (`size` bytes, read from `path`) into
/// `model`. Before parsing, the wire format is walked to bound the memory
/// that parsing and converting it take: protobuf turns a 2-byte empty
/// message into an object of a hundred bytes or more, and a 1-byte varint
/// of a repeated field into 8 bytes. When that bound exceeds
/// `availableMemory` (negative: unknown) nothing is parsed.
///
/// Tensors whose data lies in external files (ONNX external data, which
/// models over protobuf's 2 GiB need) are read from files in `directory`,
/// the model's: a location must be a relative path without '..' that stays
/// inside `directory` once symbolic links are resolved, and name a regular
/// file holding the tensor's bytes at its offset; each file is opened once
/// and only the bytes needed are read, once every tensor has been checked
/// and their total fits in `availableMemory` with the model. With an empty
/// `directory` (a model not read from a file) external data is an error and
/// no file is opened.
///
/// On failure returns false with `error` saying why: the model needs too
/// much memory, is not a protobuf ModelProto (malformed or truncated), has
/// no graph, or holds a tensor whose data does not match its type and shape
/// or whose external data cannot be read as above. Never throws.
bool readModel(const char *data, size_t size, const std::string &path,
               int64_t availableMemory, Model &model, std::string &error,
               const std::string &directory = std::string()) noexcept;

} // namespace fluid::onnx_model

#endif // FLUID_TOOLS_FLUID_IMPORT_ONNX_ONNXMODEL_H
