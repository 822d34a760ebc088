//===- OnnxReader.cpp - Reads an ONNX file into plain C++ data ------------===//
//
// The only code of fluid-import-onnx that sees protobuf. It is compiled with
// exceptions (protobuf and ONNX's headers need them) and catches everything:
// readModel reports failures through its error string.
//
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"

#include "onnx/onnx_pb.h"

#include <google/protobuf/stubs/logging.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

using namespace fluid::onnx_model;

const char *fluid::onnx_model::getDataTypeName(DataType type) {
  switch (type) {
  case DataType::Undefined:
    return "UNDEFINED";
  case DataType::Float:
    return "FLOAT";
  case DataType::UInt8:
    return "UINT8";
  case DataType::Int8:
    return "INT8";
  case DataType::UInt16:
    return "UINT16";
  case DataType::Int16:
    return "INT16";
  case DataType::Int32:
    return "INT32";
  case DataType::Int64:
    return "INT64";
  case DataType::String:
    return "STRING";
  case DataType::Bool:
    return "BOOL";
  case DataType::Float16:
    return "FLOAT16";
  case DataType::Double:
    return "DOUBLE";
  case DataType::UInt32:
    return "UINT32";
  case DataType::UInt64:
    return "UINT64";
  case DataType::Complex64:
    return "COMPLEX64";
  case DataType::Complex128:
    return "COMPLEX128";
  case DataType::BFloat16:
    return "BFLOAT16";
  }
  return "UNKNOWN";
}

const char *fluid::onnx_model::getAttributeKindName(Attribute::Kind kind) {
  switch (kind) {
  case Attribute::Kind::Float:
    return "FLOAT";
  case Attribute::Kind::Int:
    return "INT";
  case Attribute::Kind::String:
    return "STRING";
  case Attribute::Kind::Tensor:
    return "TENSOR";
  case Attribute::Kind::Graph:
    return "GRAPH";
  case Attribute::Kind::Floats:
    return "FLOATS";
  case Attribute::Kind::Ints:
    return "INTS";
  case Attribute::Kind::Strings:
    return "STRINGS";
  case Attribute::Kind::Tensors:
    return "TENSORS";
  case Attribute::Kind::Graphs:
    return "GRAPHS";
  case Attribute::Kind::SparseTensor:
    return "SPARSE_TENSOR";
  case Attribute::Kind::SparseTensors:
    return "SPARSE_TENSORS";
  case Attribute::Kind::TypeProto:
    return "TYPE_PROTO";
  case Attribute::Kind::TypeProtos:
    return "TYPE_PROTOS";
  case Attribute::Kind::Undefined:
    return "UNDEFINED";
  }
  return "UNKNOWN";
}

int64_t Tensor::getNumElements() const {
  int64_t count = 1;
  for (int64_t dim : dims)
    count *= dim;
  return count;
}

const Attribute *Node::findAttribute(const std::string &attrName) const {
  for (const Attribute &attribute : attributes)
    if (attribute.name == attrName)
      return &attribute;
  return nullptr;
}

namespace {

/// Thrown on the first problem; readModel turns it into the error string.
struct ReadError {
  std::string message;
};

} // namespace

[[noreturn]] static void fail(std::string message) {
  throw ReadError{std::move(message)};
}

/// Copies `count` values of a repeated field as little-endian bytes of `T`.
template <typename T, typename Field>
static void copyValues(const Field &field, int64_t count,
                       std::vector<uint8_t> &out, const std::string &what) {
  if (static_cast<int64_t>(field.size()) != count)
    fail(what + " has " + std::to_string(field.size()) + " values, but its " +
         "shape needs " + std::to_string(count));
  out.resize(static_cast<size_t>(count) * sizeof(T));
  for (int64_t i = 0; i < count; ++i) {
    T value = static_cast<T>(field.Get(static_cast<int>(i)));
    std::memcpy(out.data() + i * sizeof(T), &value, sizeof(T));
  }
}

static void convertTensor(const onnx::TensorProto &proto, Tensor &out,
                          const std::string &what) {
  out.name = proto.name();
  int32_t type = proto.data_type();
  if (type < 0 || type > static_cast<int32_t>(DataType::BFloat16))
    fail(what + " has the unknown data_type " + std::to_string(type));
  out.type = static_cast<DataType>(type);
  if (proto.has_segment())
    fail(what + " is segmented, which is not supported");
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    fail(what + " keeps its data in an external file, which is not supported");

  int64_t count = 1;
  for (int64_t dim : proto.dims()) {
    if (dim < 0)
      fail(what + " has a negative dimension (" + std::to_string(dim) + ")");
    if (__builtin_mul_overflow(count, dim, &count) ||
        count > (int64_t(1) << 58))
      fail(what + " has too many elements");
    out.dims.push_back(dim);
  }

  size_t elementSize = 0;
  switch (out.type) {
  case DataType::Float:
  case DataType::Int32:
    elementSize = 4;
    break;
  case DataType::Double:
  case DataType::Int64:
    elementSize = 8;
    break;
  default:
    // Described, not converted: the importer rejects these element types.
    return;
  }
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (raw.size() != static_cast<size_t>(count) * elementSize)
      fail(what + " has " + std::to_string(raw.size()) +
           " bytes of raw_data, but " + getDataTypeName(out.type) + " " +
           "elements of its shape need " +
           std::to_string(static_cast<size_t>(count) * elementSize));
    out.bytes.assign(raw.begin(), raw.end());
  } else {
    switch (out.type) {
    case DataType::Float:
      copyValues<float>(proto.float_data(), count, out.bytes, what);
      break;
    case DataType::Double:
      copyValues<double>(proto.double_data(), count, out.bytes, what);
      break;
    case DataType::Int32:
      copyValues<int32_t>(proto.int32_data(), count, out.bytes, what);
      break;
    default:
      copyValues<int64_t>(proto.int64_data(), count, out.bytes, what);
      break;
    }
  }
  out.hasData = true;
}

static Attribute::Kind convertKind(const onnx::AttributeProto &proto) {
  using A = onnx::AttributeProto;
  switch (proto.type()) {
  case A::FLOAT:
    return Attribute::Kind::Float;
  case A::INT:
    return Attribute::Kind::Int;
  case A::STRING:
    return Attribute::Kind::String;
  case A::TENSOR:
    return Attribute::Kind::Tensor;
  case A::GRAPH:
    return Attribute::Kind::Graph;
  case A::FLOATS:
    return Attribute::Kind::Floats;
  case A::INTS:
    return Attribute::Kind::Ints;
  case A::STRINGS:
    return Attribute::Kind::Strings;
  case A::TENSORS:
    return Attribute::Kind::Tensors;
  case A::GRAPHS:
    return Attribute::Kind::Graphs;
  case A::SPARSE_TENSOR:
    return Attribute::Kind::SparseTensor;
  case A::SPARSE_TENSORS:
    return Attribute::Kind::SparseTensors;
  case A::TYPE_PROTO:
    return Attribute::Kind::TypeProto;
  case A::TYPE_PROTOS:
    return Attribute::Kind::TypeProtos;
  default:
    break;
  }
  // Models older than IR version 2 leave the type out: take the field set.
  if (proto.has_f())
    return Attribute::Kind::Float;
  if (proto.has_i())
    return Attribute::Kind::Int;
  if (proto.has_s())
    return Attribute::Kind::String;
  if (proto.has_t())
    return Attribute::Kind::Tensor;
  if (proto.has_g())
    return Attribute::Kind::Graph;
  if (proto.floats_size())
    return Attribute::Kind::Floats;
  if (proto.ints_size())
    return Attribute::Kind::Ints;
  if (proto.strings_size())
    return Attribute::Kind::Strings;
  return Attribute::Kind::Undefined;
}

static void convertAttribute(const onnx::AttributeProto &proto, Attribute &out,
                             const std::string &where) {
  out.name = proto.name();
  out.kind = convertKind(proto);
  out.refAttrName = proto.ref_attr_name();
  out.f = proto.f();
  out.i = proto.i();
  out.s = proto.s();
  out.floats.assign(proto.floats().begin(), proto.floats().end());
  out.ints.assign(proto.ints().begin(), proto.ints().end());
  out.strings.assign(proto.strings().begin(), proto.strings().end());
  if (out.kind == Attribute::Kind::Tensor)
    convertTensor(proto.t(), out.t,
                  where + ": the tensor of attribute '" + out.name + "'");
}

static void convertValueInfo(const onnx::ValueInfoProto &proto,
                             ValueInfo &out) {
  out.name = proto.name();
  const onnx::TypeProto &type = proto.type();
  switch (type.value_case()) {
  case onnx::TypeProto::kTensorType: {
    out.isTensor = true;
    const onnx::TypeProto::Tensor &tensor = type.tensor_type();
    out.elementType = static_cast<DataType>(tensor.elem_type());
    if (tensor.elem_type() < 0 ||
        tensor.elem_type() > static_cast<int32_t>(DataType::BFloat16))
      out.elementType = DataType::Undefined;
    out.hasShape = tensor.has_shape();
    for (const onnx::TensorShapeProto::Dimension &dim : tensor.shape().dim()) {
      Dimension converted;
      converted.hasValue = dim.has_dim_value();
      converted.value = dim.dim_value();
      converted.param = dim.dim_param();
      out.dims.push_back(std::move(converted));
    }
    return;
  }
  case onnx::TypeProto::kSequenceType:
    out.typeKind = "sequence";
    return;
  case onnx::TypeProto::kMapType:
    out.typeKind = "map";
    return;
  case onnx::TypeProto::kOptionalType:
    out.typeKind = "optional";
    return;
  case onnx::TypeProto::kSparseTensorType:
    out.typeKind = "sparse tensor";
    return;
  default:
    out.typeKind = "untyped value";
    return;
  }
}

static void convertModel(const onnx::ModelProto &proto, Model &model) {
  model.irVersion = proto.ir_version();
  model.producerName = proto.producer_name();
  model.producerVersion = proto.producer_version();
  for (const onnx::OperatorSetIdProto &opset : proto.opset_import())
    model.opsets.push_back({opset.domain(), opset.version()});

  const onnx::GraphProto &graph = proto.graph();
  model.graphName = graph.name();
  for (const onnx::TensorProto &initializer : graph.initializer()) {
    Tensor tensor;
    convertTensor(initializer, tensor,
                  "initializer '" + initializer.name() + "'");
    model.initializers.push_back(std::move(tensor));
  }
  for (const onnx::SparseTensorProto &sparse : graph.sparse_initializer())
    model.sparseInitializerNames.push_back(sparse.values().name());
  for (const onnx::ValueInfoProto &input : graph.input()) {
    model.inputs.emplace_back();
    convertValueInfo(input, model.inputs.back());
  }
  for (const onnx::ValueInfoProto &output : graph.output()) {
    model.outputs.emplace_back();
    convertValueInfo(output, model.outputs.back());
  }
  for (int index = 0; index < graph.node_size(); ++index) {
    const onnx::NodeProto &proto = graph.node(index);
    Node node;
    node.name = proto.name();
    node.opType = proto.op_type();
    node.domain = proto.domain();
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    std::string where = "node #" + std::to_string(index) + " '" + node.name +
                        "' (" + node.opType + ")";
    for (const onnx::AttributeProto &attribute : proto.attribute()) {
      node.attributes.emplace_back();
      convertAttribute(attribute, node.attributes.back(), where);
    }
    model.nodes.push_back(std::move(node));
  }
}

/// Reads the whole file, or fails naming the system's reason.
static std::string readFile(const std::string &path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> file(
      std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file)
    fail("cannot open '" + path + "': " + std::strerror(errno));
  std::string contents;
  char buffer[1 << 16];
  size_t read;
  while ((read = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0)
    contents.append(buffer, read);
  if (std::ferror(file.get()))
    fail("cannot read '" + path + "': " + std::strerror(errno));
  return contents;
}

bool fluid::onnx_model::readModel(const std::string &path, Model &model,
                                  std::string &error) noexcept {
  try {
    // Parse failures are reported below, once; protobuf's own log lines
    // would only repeat them.
    google::protobuf::SetLogHandler(nullptr);
    std::string contents = readFile(path);
    onnx::ModelProto proto;
    if (!proto.ParseFromString(contents))
      fail("'" + path + "' is not a valid ONNX file: it does not parse as " +
           "a protobuf ModelProto (malformed or truncated)");
    if (!proto.has_graph() || proto.ir_version() <= 0)
      fail("'" + path + "' is not an ONNX model: it has no " +
           (proto.has_graph() ? "IR version" : "graph") +
           " (empty, truncated or another kind of file)");
    model = Model();
    try {
      convertModel(proto, model);
    } catch (const ReadError &e) {
      fail(path + ": " + e.message);
    }
    return true;
  } catch (const ReadError &e) {
    error = e.message;
  } catch (const std::exception &e) {
    error = "cannot read '" + path + "': " + e.what();
  } catch (...) {
    error = "cannot read '" + path + "': unexpected failure";
  }
  return false;
}
