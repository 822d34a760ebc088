//===- OnnxReader.cpp - Reads an ONNX file into plain C++ data ------------===//
//
// The only code of fluid-import-onnx that sees protobuf, and the only code
// that opens a file the model names (its external data). It is compiled with
// exceptions (protobuf and ONNX's headers need them) and catches everything:
// readModel reports failures through its error string.
//
//===----------------------------------------------------------------------===//

#include "OnnxModel.h"

#include "fluid/runtime/HostMemory.h"

#include "onnx/onnx_pb.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace fluid::onnx_model;
using fluid::rt::formatBytes;

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
static void copyValues(const Field &field, int64_t count, std::string &out,
                       const std::string &what) {
  if (static_cast<int64_t>(field.size()) != count)
    fail(what + " has " + std::to_string(field.size()) + " values, but its " +
         "shape needs " + std::to_string(count));
  out.resize(static_cast<size_t>(count) * sizeof(T));
  for (int64_t i = 0; i < count; ++i) {
    T value = static_cast<T>(field.Get(static_cast<int>(i)));
    std::memcpy(out.data() + i * sizeof(T), &value, sizeof(T));
  }
}

//===----------------------------------------------------------------------===//
// External data
//===----------------------------------------------------------------------===//

namespace {

/// Where a tensor's bytes lie according to its external_data entries.
struct ExternalLocation {
  std::string location;
  uint64_t offset = 0;
  /// Absent: the data runs to the end of the file.
  std::optional<uint64_t> length;
};

/// A file of external data, open for reading.
struct ExternalFile {
  int fd = -1;
  uint64_t size = 0;
};

/// A tensor's bytes to read once every tensor has been checked.
struct ExternalRead {
  Tensor *tensor;
  const ExternalFile *file;
  uint64_t offset;
  uint64_t length;
  std::string where;
};

/// Reads tensors' data from the files their external_data entries name.
/// The model is hostile input, so a location is only opened when it is a
/// relative path without '..' that stays inside the model's directory once
/// symbolic links are resolved, and names a regular file (checked before
/// it is opened, so that a FIFO or a device is never opened). Each file is
/// opened once; only the bytes the tensors need are read, after every
/// tensor has been checked and the memory they take has been.
class ExternalDataReader {
public:
  /// `directory`: the model's directory; empty when the model was not read
  /// from a file, and external data is then an error.
  explicit ExternalDataReader(std::string directory)
      : directory(std::move(directory)) {}
  ExternalDataReader(const ExternalDataReader &) = delete;
  ExternalDataReader &operator=(const ExternalDataReader &) = delete;
  ~ExternalDataReader() {
    for (auto &entry : files)
      ::close(entry.second.fd);
  }

  /// Checks that the `bytes` bytes of `tensor` (`what`) lie in the file
  /// `location` names, and records them to be read. `tensor` must stay
  /// where it is until readAll.
  void add(const ExternalLocation &location, uint64_t bytes, Tensor &tensor,
           const std::string &what);
  /// Reads the recorded tensors' bytes.
  void readAll();

  size_t getNumTensors() const { return reads.size(); }
  uint64_t getTotalBytes() const { return totalBytes; }

private:
  const ExternalFile &open(const std::string &location,
                           const std::string &where);

  std::string directory;
  /// `directory` with its symbolic links resolved; empty until needed.
  std::string realDirectory;
  /// The files opened, by resolved path.
  std::map<std::string, ExternalFile> files;
  std::vector<ExternalRead> reads;
  uint64_t totalBytes = 0;
};

} // namespace

/// `text` as a count of bytes: decimal digits only, at most 2^63 - 1.
static bool parseByteCount(const std::string &text, uint64_t &value) {
  if (text.empty())
    return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (static_cast<uint64_t>(INT64_MAX) - digit) / 10)
      return false;
    value = value * 10 + digit;
  }
  return true;
}

/// Reads and checks `proto`'s external_data entries, without touching the
/// file system.
static ExternalLocation parseExternalData(const onnx::TensorProto &proto,
                                          const std::string &what) {
  ExternalLocation result;
  std::set<std::string> keys;
  for (const onnx::StringStringEntryProto &entry : proto.external_data()) {
    const std::string &key = entry.key();
    const std::string &value = entry.value();
    if (!keys.insert(key).second)
      fail(what + " has the external_data key '" + key + "' twice");
    if (key == "location") {
      result.location = value;
    } else if (key == "offset" || key == "length") {
      uint64_t count;
      if (!parseByteCount(value, count))
        fail(what + " has the external_data " + key + " '" + value +
             "', which is not a number of bytes (a decimal integer from 0 " +
             "to 2^63 - 1)");
      if (key == "offset")
        result.offset = count;
      else
        result.length = count;
    } else if (key != "checksum") {
      // ONNX defines the checksum as a SHA-1 digest "of the file", which
      // exporters do not write and readers do not agree on: not checked.
      fail(what + " has the unknown external_data key '" + key +
           "' (ONNX defines location, offset, length and checksum)");
    }
  }
  if (!keys.count("location"))
    fail(what + " keeps its data in an external file, but names none " +
         "(it has no external_data 'location')");
  const std::string &location = result.location;
  std::string where = what + ": the external data location '" + location + "'";
  if (location.empty())
    fail(what + " keeps its data in an external file whose location is " +
         "empty");
  if (location.find('\0') != std::string::npos)
    fail(where + " contains a NUL byte");
  if (location.front() == '/')
    fail(where + " is an absolute path; a location is relative to the " +
         "model's directory");
  for (size_t begin = 0; begin <= location.size();) {
    size_t end = std::min(location.find('/', begin), location.size());
    if (location.compare(begin, end - begin, "..") == 0)
      fail(where + " has a '..' component; a location stays inside the " +
           "model's directory");
    begin = end + 1;
  }
  return result;
}

const ExternalFile &ExternalDataReader::open(const std::string &location,
                                             const std::string &where) {
  if (directory.empty())
    fail(where + " cannot be read: the model was not read from a file, so " +
         "it has no directory to find its external data in");
  auto cannotOpen = [&](const std::string &reason) {
    fail(where + " cannot be opened: " + reason);
  };
  if (realDirectory.empty()) {
    char *resolved = ::realpath(directory.c_str(), nullptr);
    if (!resolved)
      cannotOpen("the model's directory '" + directory +
                 "' cannot be resolved: " + std::strerror(errno));
    realDirectory = resolved;
    std::free(resolved);
  }
  std::string prefix =
      realDirectory == "/" ? realDirectory : realDirectory + "/";
  char *resolvedPath = ::realpath((prefix + location).c_str(), nullptr);
  if (!resolvedPath)
    cannotOpen(std::strerror(errno));
  std::string path = resolvedPath;
  std::free(resolvedPath);
  if (path != realDirectory && path.compare(0, prefix.size(), prefix) != 0)
    fail(where + " leads outside the model's directory '" + realDirectory +
         "' (to '" + path + "', through a symbolic link)");

  auto found = files.find(path);
  if (found != files.end())
    return found->second;
  // Checked before it is opened: opening a FIFO would block, a device
  // would never end.
  struct stat before;
  if (::stat(path.c_str(), &before) != 0)
    cannotOpen(std::strerror(errno));
  if (S_ISDIR(before.st_mode))
    fail(where + " is a directory, not a file");
  if (!S_ISREG(before.st_mode))
    fail(where + " is not a regular file (a device, a pipe or a socket)");
  // The resolved path has no symbolic link left; O_NOFOLLOW and O_NONBLOCK
  // keep it so should the file be replaced by one, or by a FIFO, meanwhile.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0)
    cannotOpen(std::strerror(errno));
  ExternalFile &file = files[path];
  file.fd = fd;
  struct stat after;
  if (::fstat(fd, &after) != 0 || !S_ISREG(after.st_mode) ||
      after.st_dev != before.st_dev || after.st_ino != before.st_ino)
    cannotOpen("it was replaced while it was being opened");
  file.size = static_cast<uint64_t>(after.st_size);
  return file;
}

void ExternalDataReader::add(const ExternalLocation &location, uint64_t bytes,
                             Tensor &tensor, const std::string &what) {
  std::string where =
      what + ": the external data location '" + location.location + "'";
  std::string need = std::to_string(tensor.getNumElements()) + " " +
                     getDataTypeName(tensor.type) +
                     " elements (its shape) need " + std::to_string(bytes);
  if (location.length && *location.length != bytes)
    fail(what + " has the external_data length " +
         std::to_string(*location.length) + ", but " + need);
  const ExternalFile &file = open(location.location, where);
  std::string fileSize = " (" + std::to_string(file.size) + " bytes)";
  if (location.offset > file.size)
    fail(where + ": the offset " + std::to_string(location.offset) +
         " is past the end of the file" + fileSize);
  uint64_t rest = file.size - location.offset;
  if (!location.length && rest != bytes)
    fail(what + " has no external_data length, so its data is the " +
         std::to_string(rest) + " bytes from offset " +
         std::to_string(location.offset) + " to the end of the file, but " +
         need);
  if (bytes > rest)
    fail(where + ": the " + std::to_string(bytes) + " bytes from offset " +
         std::to_string(location.offset) + " go past the end of the file" +
         fileSize);
  reads.push_back({&tensor, &file, location.offset, bytes, where});
  totalBytes =
      totalBytes > UINT64_MAX - bytes ? UINT64_MAX : totalBytes + bytes;
}

void ExternalDataReader::readAll() {
  for (const ExternalRead &read : reads) {
    std::string &bytes = read.tensor->bytes;
    bytes.resize(static_cast<size_t>(read.length));
    for (uint64_t done = 0; done < read.length;) {
      // Linux reads at most about 2 GiB at a time.
      size_t chunk =
          static_cast<size_t>(std::min<uint64_t>(read.length - done, 1 << 30));
      ssize_t got = ::pread(read.file->fd, bytes.data() + done, chunk,
                            static_cast<off_t>(read.offset + done));
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        fail(read.where + " cannot be read: " + std::strerror(errno));
      if (got == 0)
        fail(read.where + " cannot be read: the file became shorter while " +
             "it was being read");
      done += static_cast<uint64_t>(got);
    }
    read.tensor->hasData = true;
  }
}

/// Converts `proto` into `out`, which must stay where it is until
/// `external` has read its data, if it keeps it in an external file.
static void convertTensor(onnx::TensorProto &proto, Tensor &out,
                          const std::string &what,
                          ExternalDataReader &external) {
  out.name = proto.name();
  bool isExternal = proto.data_location() == onnx::TensorProto::EXTERNAL;
  std::optional<ExternalLocation> location;
  if (isExternal) {
    if (proto.has_raw_data() || proto.float_data_size() ||
        proto.int32_data_size() || proto.string_data_size() ||
        proto.int64_data_size() || proto.double_data_size() ||
        proto.uint64_data_size())
      fail(what + " keeps its data both in an external file and in the " +
           "model (raw_data or a typed field): which is meant is ambiguous");
    location = parseExternalData(proto, what);
  } else if (proto.external_data_size() > 0) {
    fail(what + " has external_data entries, but its data_location is not " +
         "EXTERNAL: whether its data is in the model or in a file is " +
         "ambiguous");
  }
  int32_t type = proto.data_type();
  if (type < 0 || type > static_cast<int32_t>(DataType::BFloat16))
    fail(what + " has the unknown data_type " + std::to_string(type));
  out.type = static_cast<DataType>(type);
  if (proto.has_segment())
    fail(what + " is segmented, which is not supported");

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
  case DataType::Bool:
    elementSize = 1;
    break;
  default:
    // Described, not converted: the importer rejects these element types.
    return;
  }
  if (location) {
    external.add(*location, static_cast<uint64_t>(count) * elementSize, out,
                 what);
    return;
  }
  if (proto.has_raw_data()) {
    std::string *raw = proto.mutable_raw_data();
    if (raw->size() != static_cast<size_t>(count) * elementSize)
      fail(what + " has " + std::to_string(raw->size()) +
           " bytes of raw_data, but " + std::to_string(count) + " " +
           getDataTypeName(out.type) + " elements (its shape) need " +
           std::to_string(static_cast<size_t>(count) * elementSize));
    out.bytes.swap(*raw);
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
    case DataType::Bool:
      // One byte each, as in raw_data; ONNX stores them in int32_data.
      copyValues<uint8_t>(proto.int32_data(), count, out.bytes, what);
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

static void convertAttribute(onnx::AttributeProto &proto, Attribute &out,
                             const std::string &where,
                             ExternalDataReader &external) {
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
    convertTensor(*proto.mutable_t(), out.t,
                  where + ": the tensor of attribute '" + out.name + "'",
                  external);
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

static void convertModel(onnx::ModelProto &proto, Model &model,
                         ExternalDataReader &external) {
  model.irVersion = proto.ir_version();
  model.producerName = proto.producer_name();
  model.producerVersion = proto.producer_version();
  for (const onnx::OperatorSetIdProto &opset : proto.opset_import())
    model.opsets.push_back({opset.domain(), opset.version()});

  onnx::GraphProto &graph = *proto.mutable_graph();
  model.graphName = graph.name();
  // Exact sizes: a vector grown by doubling can take twice the memory. And
  // no vector of tensors grows once they are in it: `external` keeps
  // pointers to them.
  model.initializers.reserve(graph.initializer_size());
  model.inputs.reserve(graph.input_size());
  model.outputs.reserve(graph.output_size());
  model.nodes.reserve(graph.node_size());
  for (onnx::TensorProto &initializer : *graph.mutable_initializer()) {
    model.initializers.emplace_back();
    convertTensor(initializer, model.initializers.back(),
                  "initializer '" + initializer.name() + "'", external);
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
    onnx::NodeProto &proto = *graph.mutable_node(index);
    Node &node = model.nodes.emplace_back();
    node.name = proto.name();
    node.opType = proto.op_type();
    node.domain = proto.domain();
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    std::string where = "node #" + std::to_string(index) + " '" + node.name +
                        "' (" + node.opType + ")";
    node.attributes.reserve(proto.attribute_size());
    for (onnx::AttributeProto &attribute : *proto.mutable_attribute()) {
      node.attributes.emplace_back();
      convertAttribute(attribute, node.attributes.back(), where, external);
    }
  }
}

//===----------------------------------------------------------------------===//
// The memory that parsing takes
//===----------------------------------------------------------------------===//

namespace {

/// Walks the protobuf wire format of a message, guided by its descriptor,
/// and adds up what parsing it would allocate: an object per message, a
/// slot per repeated element, the characters of long strings, and the
/// records of unknown fields. Builds nothing, so that a small file that
/// would expand to more memory than there is can be refused before
/// protobuf aborts on it or the kernel kills the process.
class ParseCostEstimator {
public:
  /// Adds the cost of the message in [begin, end) of type `type`; false
  /// when the bytes are not well-formed wire format.
  bool walk(const uint8_t *begin, const uint8_t *end,
            const google::protobuf::Descriptor *type, int depth);

  /// The estimate, and the part of it that is tensors' raw_data (moved
  /// into the model, not copied).
  uint64_t bytes = 0;
  uint64_t rawDataBytes = 0;
  uint64_t messages = 0;
  uint64_t repeatedValues = 0;

private:
  struct TypeInfo {
    uint64_t objectSize = 0;
    /// The fields by number (null: unknown to this version of ONNX).
    std::vector<const google::protobuf::FieldDescriptor *> fields;
  };
  const TypeInfo &getInfo(const google::protobuf::Descriptor *type);
  void add(uint64_t cost) {
    bytes = bytes > UINT64_MAX - cost ? UINT64_MAX : bytes + cost;
  }

  std::map<const google::protobuf::Descriptor *, TypeInfo> infos;
  const google::protobuf::FieldDescriptor *rawData =
      onnx::TensorProto::descriptor()->FindFieldByName("raw_data");
};

/// protobuf's own recursion limit: deeper messages do not parse.
constexpr int kMaxDepth = 100;
/// A std::string, a pointer slot, and what malloc adds to each block.
constexpr uint64_t kStringSize = sizeof(std::string);
constexpr uint64_t kSlotSize = sizeof(void *);
constexpr uint64_t kMallocOverhead = 16;
/// An unknown field's record, with room for its vector to grow.
constexpr uint64_t kUnknownFieldSize = 64;

bool readVarint(const uint8_t *&p, const uint8_t *end, uint64_t &value) {
  value = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    uint8_t byte = *p++;
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

/// The wire type of `field`'s values (for repeated scalars, unpacked).
unsigned getWireType(const google::protobuf::FieldDescriptor *field) {
  using F = google::protobuf::FieldDescriptor;
  switch (field->type()) {
  case F::TYPE_MESSAGE:
  case F::TYPE_STRING:
  case F::TYPE_BYTES:
    return 2;
  case F::TYPE_DOUBLE:
  case F::TYPE_FIXED64:
  case F::TYPE_SFIXED64:
    return 1;
  case F::TYPE_FLOAT:
  case F::TYPE_FIXED32:
  case F::TYPE_SFIXED32:
    return 5;
  default:
    return 0;
  }
}

/// The bytes a repeated scalar element of `field` takes in a RepeatedField.
uint64_t getScalarSize(const google::protobuf::FieldDescriptor *field) {
  using F = google::protobuf::FieldDescriptor;
  switch (field->cpp_type()) {
  case F::CPPTYPE_INT64:
  case F::CPPTYPE_UINT64:
  case F::CPPTYPE_DOUBLE:
    return 8;
  case F::CPPTYPE_BOOL:
    return 1;
  default:
    return 4;
  }
}

} // namespace

const ParseCostEstimator::TypeInfo &
ParseCostEstimator::getInfo(const google::protobuf::Descriptor *type) {
  auto [it, inserted] = infos.try_emplace(type);
  if (inserted) {
    const google::protobuf::Message *prototype =
        google::protobuf::MessageFactory::generated_factory()->GetPrototype(
            type);
    it->second.objectSize = prototype ? prototype->SpaceUsedLong() : 256;
    for (int i = 0; i < type->field_count(); ++i) {
      const google::protobuf::FieldDescriptor *field = type->field(i);
      // ONNX numbers its fields below 100.
      if (field->number() >= 1024)
        continue;
      if (it->second.fields.size() <= static_cast<size_t>(field->number()))
        it->second.fields.resize(field->number() + 1);
      it->second.fields[field->number()] = field;
    }
  }
  return it->second;
}

bool ParseCostEstimator::walk(const uint8_t *p, const uint8_t *end,
                              const google::protobuf::Descriptor *type,
                              int depth) {
  using F = google::protobuf::FieldDescriptor;
  if (depth > kMaxDepth)
    return false;
  const TypeInfo &info = getInfo(type);
  while (p < end) {
    uint64_t tag;
    if (!readVarint(p, end, tag) || (tag >> 3) == 0)
      return false;
    uint64_t number = tag >> 3;
    unsigned wireType = tag & 7;
    const F *field =
        number < info.fields.size() ? info.fields[number] : nullptr;
    uint64_t length = 0, value = 0;
    switch (wireType) {
    case 0: // varint
      if (!readVarint(p, end, value))
        return false;
      break;
    case 1: // fixed64
      if (end - p < 8)
        return false;
      length = 8;
      break;
    case 5: // fixed32
      if (end - p < 4)
        return false;
      length = 4;
      break;
    case 2: // length-delimited
      if (!readVarint(p, end, length) ||
          length > static_cast<uint64_t>(end - p))
        return false;
      break;
    default: // groups: not in ONNX
      return false;
    }
    const uint8_t *payload = p;
    if (wireType != 0)
      p += length;

    // protobuf keeps a field of an unknown number or the wrong wire type,
    // and an enum's unknown value, as an unknown field.
    unsigned expected = field ? getWireType(field) : 0;
    bool repeated = field && field->is_repeated();
    bool packed = repeated && expected != 2 && wireType == 2;
    bool unknownEnum =
        field && field->type() == F::TYPE_ENUM && wireType == 0 &&
        (value > INT32_MAX ||
         !field->enum_type()->FindValueByNumber(static_cast<int>(value)));
    if (!field || (wireType != expected && !packed) || unknownEnum) {
      add(kUnknownFieldSize + (wireType == 2 ? kStringSize + length : 0));
    } else if (field->type() == F::TYPE_MESSAGE) {
      ++messages;
      add(getInfo(field->message_type()).objectSize + kMallocOverhead +
          (repeated ? kSlotSize : 0));
      if (!walk(payload, p, field->message_type(), depth + 1))
        return false;
    } else if (expected == 2) {
      add(length + 1 + kMallocOverhead +
          (repeated ? kSlotSize + kStringSize : 0));
      if (field == rawData)
        rawDataBytes += length;
    } else if (packed) {
      uint64_t count = 0;
      if (expected == 0) {
        for (const uint8_t *q = payload; q < p; ++q)
          count += !(*q & 0x80);
      } else {
        count = length / (expected == 1 ? 8 : 4);
      }
      repeatedValues += count;
      // Varints are read one by one into a field that doubles as it grows.
      add(count * getScalarSize(field) * (expected == 0 ? 2 : 1));
    } else if (repeated) {
      ++repeatedValues;
      add(2 * getScalarSize(field));
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

bool fluid::onnx_model::readModel(const char *data, size_t size,
                                  const std::string &path,
                                  int64_t availableMemory, Model &model,
                                  std::string &error,
                                  const std::string &directory) noexcept {
  try {
    const std::string notOnnx =
        "'" + path + "' is not a valid ONNX file: it does not parse as a " +
        "protobuf ModelProto (malformed or truncated)";
    // protobuf cannot parse 2 GiB or more.
    if (size > static_cast<size_t>(INT32_MAX))
      fail("'" + path + "' is " + formatBytes(size) +
           ", more than the 2 GiB that protobuf can parse");

    // The parsed message, then the model converted from it.
    ParseCostEstimator estimator;
    const auto *begin = reinterpret_cast<const uint8_t *>(data);
    if (!estimator.walk(begin, begin + size, onnx::ModelProto::descriptor(), 0))
      fail(notOnnx);
    // The converted model holds what the message does in structures a
    // little larger, except the raw data, which moves from one to the other.
    uint64_t structures = estimator.bytes - estimator.rawDataBytes;
    uint64_t needed = structures > UINT64_MAX / 4
                          ? UINT64_MAX
                          : structures / 2 * 5 + estimator.rawDataBytes;
    // Checked before parsing, then with the data of the tensors kept in
    // external files (`externalTensors`, `externalBytes`) before reading it.
    auto checkMemory = [&](size_t externalTensors, uint64_t externalBytes) {
      uint64_t total = needed > UINT64_MAX - externalBytes
                           ? UINT64_MAX
                           : needed + externalBytes;
      if (availableMemory < 0 ||
          total <= static_cast<uint64_t>(availableMemory))
        return;
      std::string external =
          externalTensors ? ", and " + formatBytes(externalBytes) +
                                " of data in external files for " +
                                std::to_string(externalTensors) +
                                (externalTensors == 1 ? " tensor" : " tensors")
                          : std::string();
      fail("'" + path + "': reading this ONNX model needs about " +
           formatBytes(total) + " of memory (its " + formatBytes(size) +
           " hold " + std::to_string(estimator.messages) +
           " protobuf messages and " +
           std::to_string(estimator.repeatedValues) + " repeated values" +
           external + "), and only " +
           formatBytes(static_cast<uint64_t>(availableMemory)) +
           " is available");
    };
    checkMemory(0, 0);

    // Parse failures are reported below, once; protobuf's own log lines
    // would only repeat them.
    google::protobuf::SetLogHandler(nullptr);
    auto proto = std::make_unique<onnx::ModelProto>();
    if (!proto->ParseFromArray(data, static_cast<int>(size)))
      fail(notOnnx);
    if (!proto->has_graph() || proto->ir_version() <= 0)
      fail("'" + path + "' is not an ONNX model: it has no " +
           (proto->has_graph() ? "IR version" : "graph") +
           " (empty, truncated or another kind of file)");
    model = Model();
    ExternalDataReader external(directory);
    try {
      convertModel(*proto, model, external);
    } catch (const ReadError &e) {
      fail(path + ": " + e.message);
    }
    checkMemory(external.getNumTensors(), external.getTotalBytes());
    try {
      external.readAll();
    } catch (const ReadError &e) {
      fail(path + ": " + e.message);
    }
    return true;
  } catch (const ReadError &e) {
    error = e.message;
  } catch (const std::bad_alloc &) {
    error = "'" + path + "': out of memory while reading the model";
  } catch (const std::exception &e) {
    error = "cannot read '" + path + "': " + e.what();
  } catch (...) {
    error = "cannot read '" + path + "': unexpected failure";
  }
  return false;
}
