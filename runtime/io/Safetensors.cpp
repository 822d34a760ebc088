//===- Safetensors.cpp - Reading and writing safetensors files ------------===//

#include "fluid/runtime/Safetensors.h"

#include "File.h"
#include "Json.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

using fluid::rt::fail;
using fluid::rt::io::failFormat;
using fluid::rt::io::failUnsupported;
using fluid::rt::io::formatShape;

namespace {

constexpr int64_t headerLengthSize = 8;
// The reference implementation refuses larger headers; so do we, before
// allocating anything that size.
constexpr int64_t maxHeaderLength = 100'000'000;
constexpr char metadataKey[] = "__metadata__";

struct DtypeName {
  int32_t dtype;
  const char *name;
};

constexpr DtypeName dtypeNames[] = {
    {FLUID_F32, "F32"}, {FLUID_F64, "F64"}, {FLUID_I32, "I32"},
    {FLUID_I64, "I64"}, {FLUID_F16, "F16"}, {FLUID_BF16, "BF16"},
    {FLUID_U8, "U8"},
};

const char *dtypeName(int32_t dtype) {
  for (const DtypeName &entry : dtypeNames)
    if (entry.dtype == dtype)
      return entry.name;
  return nullptr;
}

std::string describe(int32_t dtype, int32_t rank, const int64_t *shape) {
  const char *name = dtypeName(dtype);
  return (name ? std::string(name) : "dtype " + std::to_string(dtype)) + " " +
         formatShape(rank, shape);
}

std::string quoteName(const std::string &name) { return "'" + name + "'"; }

/// Fails when a string of the header holds a NUL character (JSON's \u0000):
/// the C interface hands out and looks up names, keys and values as
/// NUL-terminated strings, so "a\u0000b" would be listed as "a" and could
/// not be read, or would read tensor "a" instead.
void checkNoNul(const std::string &path, const std::string &what,
                const std::string &text) {
  if (text.find('\0') == std::string::npos)
    return;
  std::string shown;
  for (char c : text)
    shown += c ? std::string(1, c) : "\\u0000";
  failFormat(path, what + " \"" + shown +
                       "\" contains a NUL character, which the C interface's "
                       "names, keys and values cannot hold");
}

struct TensorEntry {
  std::string name;
  int32_t dtype = 0;
  int32_t rank = 0;
  int64_t shape[FLUID_MAX_RANK] = {};
  int64_t begin = 0;
  int64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> tensors;
  std::map<std::string, std::string> metadata;
};

int32_t parseDtype(const std::string &path, const std::string &tensor,
                   const std::string &name) {
  for (const DtypeName &entry : dtypeNames)
    if (name == entry.name)
      return entry.dtype;
  std::string supported;
  for (const DtypeName &entry : dtypeNames)
    supported += (supported.empty() ? "" : ", ") + std::string(entry.name);
  failUnsupported(path, "tensor " + quoteName(tensor) + ": dtype \"" + name +
                            "\" is not supported (supported: " + supported +
                            ")");
}

TensorEntry parseTensor(const std::string &path,
                        fluid::rt::io::JsonReader &json,
                        const std::string &name) {
  TensorEntry entry;
  entry.name = name;
  std::set<std::string> seen;
  json.readObject([&](const std::string &field) {
    if (!seen.insert(field).second)
      json.error("tensor " + quoteName(name) + ": duplicate field \"" + field +
                 "\"");
    if (field == "dtype") {
      entry.dtype = parseDtype(path, name, json.readString());
    } else if (field == "shape") {
      std::vector<int64_t> shape;
      json.readArray([&] {
        int64_t dimension = json.readNonNegativeInteger();
        if (shape.size() == FLUID_MAX_RANK)
          failUnsupported(path, "tensor " + quoteName(name) +
                                    ": rank exceeds FLUID_MAX_RANK (" +
                                    std::to_string(FLUID_MAX_RANK) + ")");
        shape.push_back(dimension);
      });
      entry.rank = int32_t(shape.size());
      std::copy(shape.begin(), shape.end(), entry.shape);
    } else if (field == "data_offsets") {
      std::vector<int64_t> offsets;
      json.readArray([&] {
        int64_t offset = json.readNonNegativeInteger();
        if (offsets.size() == 2)
          json.error("tensor " + quoteName(name) +
                     ": data_offsets must have exactly 2 entries");
        offsets.push_back(offset);
      });
      if (offsets.size() != 2)
        json.error("tensor " + quoteName(name) +
                   ": data_offsets must have exactly 2 entries");
      entry.begin = offsets[0];
      entry.end = offsets[1];
    } else {
      json.error("tensor " + quoteName(name) + ": unknown field \"" + field +
                 "\"");
    }
  });
  for (const char *field : {"dtype", "shape", "data_offsets"})
    if (!seen.count(field))
      json.error("tensor " + quoteName(name) + ": missing field \"" + field +
                 "\"");
  return entry;
}

Header parseHeader(const std::string &path, const std::string &text) {
  fluid::rt::io::JsonReader json(path, text);
  if (text.empty() || text[0] != '{')
    json.error("the header must start with '{'");
  Header header;
  std::set<std::string> names;
  bool seenMetadata = false;
  json.readObject([&](const std::string &key) {
    if (key == metadataKey) {
      if (seenMetadata)
        json.error("duplicate \"__metadata__\"");
      seenMetadata = true;
      json.readObject([&](const std::string &metadataName) {
        checkNoNul(path, "metadata key", metadataName);
        if (header.metadata.count(metadataName))
          json.error("duplicate metadata key \"" + metadataName + "\"");
        std::string value = json.readString();
        checkNoNul(path, "the value of metadata key \"" + metadataName + "\"",
                   value);
        header.metadata[metadataName] = std::move(value);
      });
      return;
    }
    checkNoNul(path, "tensor name", key);
    if (!names.insert(key).second)
      json.error("duplicate tensor name " + quoteName(key));
    header.tensors.push_back(parseTensor(path, json, key));
  });
  json.expectEnd();
  return header;
}

/// Checks each tensor's extent against its dtype and shape, and that the
/// tensors tile the buffer exactly: no overlaps, no holes, nothing after the
/// last (the format forbids holes so a file cannot hide extra content).
void validateLayout(const std::string &path,
                    const std::vector<TensorEntry> &tensors,
                    int64_t bufferSize) {
  for (const TensorEntry &t : tensors) {
    std::string offsets = "data_offsets [" + std::to_string(t.begin) + ", " +
                          std::to_string(t.end) + "]";
    std::string prefix = "tensor " + quoteName(t.name) + ": ";
    int64_t numel, byteSize;
    if (!fluid::rt::io::checkedNumel(t.rank, t.shape, &numel) ||
        __builtin_mul_overflow(numel, fluid_dtype_size(t.dtype), &byteSize))
      failFormat(path, prefix + "byte size of shape " +
                           formatShape(t.rank, t.shape) + " overflows int64");
    if (t.end < t.begin)
      failFormat(path, prefix + offsets + " end before they begin");
    if (t.end > bufferSize)
      failFormat(path, prefix + offsets + " exceed the " +
                           std::to_string(bufferSize) + "-byte data buffer");
    if (t.end - t.begin != byteSize)
      failFormat(path, prefix + offsets + " span " +
                           std::to_string(t.end - t.begin) + " bytes but " +
                           describe(t.dtype, t.rank, t.shape) + " needs " +
                           std::to_string(byteSize));
  }
  std::vector<const TensorEntry *> byOffset;
  for (const TensorEntry &t : tensors)
    byOffset.push_back(&t);
  std::sort(byOffset.begin(), byOffset.end(),
            [](const TensorEntry *a, const TensorEntry *b) {
              return std::pair(a->begin, a->end) < std::pair(b->begin, b->end);
            });
  int64_t covered = 0;
  const TensorEntry *previous = nullptr;
  for (const TensorEntry *t : byOffset) {
    if (t->begin < covered)
      failFormat(path, "tensor " + quoteName(t->name) + " (bytes [" +
                           std::to_string(t->begin) + ", " +
                           std::to_string(t->end) + ")) overlaps tensor " +
                           quoteName(previous->name) + " (bytes [" +
                           std::to_string(previous->begin) + ", " +
                           std::to_string(previous->end) + "))");
    if (t->begin > covered)
      failFormat(path, "bytes [" + std::to_string(covered) + ", " +
                           std::to_string(t->begin) +
                           ") of the data buffer belong to no tensor (the "
                           "format allows no holes)");
    covered = t->end;
    previous = t;
  }
  if (covered != bufferSize)
    failFormat(path, "bytes [" + std::to_string(covered) + ", " +
                         std::to_string(bufferSize) +
                         ") of the data buffer belong to no tensor (the "
                         "format allows no holes)");
}

uint64_t readUint64LittleEndian(const unsigned char *bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = value << 8 | bytes[i];
  return value;
}

} // namespace

struct fluid_safetensors_reader {
  explicit fluid_safetensors_reader(std::string path) : file(std::move(path)) {}

  const TensorEntry &find(const char *name) const {
    if (!name)
      fail(file.path() + ": tensor name must not be null");
    auto it = std::lower_bound(
        tensors.begin(), tensors.end(), name,
        [](const TensorEntry &t, const char *key) { return t.name < key; });
    if (it == tensors.end() || it->name != name)
      fail(file.path() + ": no tensor named " + quoteName(name));
    return *it;
  }

  fluid::rt::io::InputFile file;
  int64_t dataOffset = 0;
  std::vector<TensorEntry> tensors; // sorted by name
  std::map<std::string, std::string> metadata;
};

struct fluid_safetensors_writer {
  struct Entry {
    std::string name;
    fluid_tensor tensor;
    int64_t byteSize;
  };
  std::vector<Entry> tensors;
  std::set<std::string> names;
  std::map<std::string, std::string> metadata;
};

namespace {

std::unique_ptr<fluid_safetensors_reader> openReader(const std::string &path) {
  auto reader = std::make_unique<fluid_safetensors_reader>(path);
  const fluid::rt::io::InputFile &file = reader->file;
  if (file.size() < headerLengthSize)
    failFormat(path, "truncated: the file has " + std::to_string(file.size()) +
                         " bytes, fewer than the 8-byte header length");
  unsigned char lengthField[headerLengthSize];
  file.read(0, lengthField, headerLengthSize, "header length");
  uint64_t headerLength = readUint64LittleEndian(lengthField);
  uint64_t available = uint64_t(file.size() - headerLengthSize);
  if (headerLength > available)
    failFormat(path, "header length " + std::to_string(headerLength) +
                         " exceeds the " + std::to_string(available) +
                         " bytes that follow it");
  if (headerLength > uint64_t(maxHeaderLength))
    failFormat(path, "header length " + std::to_string(headerLength) +
                         " exceeds the limit of " +
                         std::to_string(maxHeaderLength) + " bytes");
  std::string text(size_t(headerLength), '\0');
  file.read(headerLengthSize, text.data(), int64_t(headerLength), "header");
  Header header = parseHeader(path, text);
  reader->dataOffset = headerLengthSize + int64_t(headerLength);
  validateLayout(path, header.tensors, file.size() - reader->dataOffset);
  std::sort(header.tensors.begin(), header.tensors.end(),
            [](const TensorEntry &a, const TensorEntry &b) {
              return a.name < b.name;
            });
  reader->tensors = std::move(header.tensors);
  reader->metadata = std::move(header.metadata);
  return reader;
}

void readTensor(const fluid_safetensors_reader &reader, const char *name,
                const fluid_tensor *destination) {
  const TensorEntry &entry = reader.find(name);
  const std::string &path = reader.file.path();
  if (!destination)
    fail(path + ": destination must not be null");
  bool sameShape =
      destination->rank == entry.rank &&
      std::equal(entry.shape, entry.shape + entry.rank, destination->shape);
  if (destination->dtype != entry.dtype || !sameShape)
    fail(path + ": tensor " + quoteName(entry.name) + " is " +
         describe(entry.dtype, entry.rank, entry.shape) +
         " in the file but the destination is " +
         describe(destination->dtype,
                  std::clamp(destination->rank, 0, FLUID_MAX_RANK),
                  destination->shape));
  int64_t byteSize = entry.end - entry.begin;
  if (byteSize > 0 && !destination->data)
    fail(path + ": destination data for tensor " + quoteName(entry.name) +
         " is null");
  reader.file.read(reader.dataOffset + entry.begin, destination->data, byteSize,
                   "tensor " + quoteName(entry.name));
}

void addTensor(fluid_safetensors_writer &writer, const char *name,
               const fluid_tensor *t) {
  if (!name || !*name)
    fail("tensor name must not be null or empty");
  std::string prefix = "tensor " + quoteName(name) + ": ";
  if (name == std::string(metadataKey))
    fail(prefix + "the name is reserved for the file's metadata");
  if (writer.names.count(name))
    fail(prefix + "duplicate tensor name");
  if (!t)
    fail(prefix + "tensor must not be null");
  if (!dtypeName(t->dtype))
    throw fluid::rt::Error(FLUID_ERROR_UNSUPPORTED,
                           prefix + "unknown dtype " +
                               std::to_string(t->dtype));
  if (t->rank < 0 || t->rank > FLUID_MAX_RANK)
    fail(prefix + "rank " + std::to_string(t->rank) + " is outside [0, " +
         std::to_string(FLUID_MAX_RANK) + "]");
  if (std::any_of(t->shape, t->shape + t->rank,
                  [](int64_t d) { return d < 0; }))
    fail(prefix + "negative dimension in shape " +
         formatShape(t->rank, t->shape));
  int64_t numel, byteSize;
  if (!fluid::rt::io::checkedNumel(t->rank, t->shape, &numel) ||
      __builtin_mul_overflow(numel, fluid_dtype_size(t->dtype), &byteSize))
    fail(prefix + "byte size of shape " + formatShape(t->rank, t->shape) +
         " overflows int64");
  if (byteSize > 0 && !t->data)
    fail(prefix + "tensor data is null");
  writer.names.insert(name);
  writer.tensors.push_back({name, *t, byteSize});
}

void writeFile(const fluid_safetensors_writer &writer,
               const std::string &path) {
  using Entry = fluid_safetensors_writer::Entry;
  std::vector<const Entry *> order;
  for (const Entry &entry : writer.tensors)
    order.push_back(&entry);
  std::sort(order.begin(), order.end(), [](const Entry *a, const Entry *b) {
    int64_t sizeA = fluid_dtype_size(a->tensor.dtype);
    int64_t sizeB = fluid_dtype_size(b->tensor.dtype);
    return sizeA != sizeB ? sizeA > sizeB : a->name < b->name;
  });

  using fluid::rt::io::jsonQuote;
  std::string header = "{";
  if (!writer.metadata.empty()) {
    header += jsonQuote(metadataKey) + ":{";
    for (const auto &[key, value] : writer.metadata)
      header += (header.back() == '{' ? "" : ",") + jsonQuote(key) + ":" +
                jsonQuote(value);
    header += "}";
  }
  int64_t offset = 0;
  for (const Entry *entry : order) {
    const fluid_tensor &t = entry->tensor;
    std::string shape;
    for (int32_t i = 0; i < t.rank; ++i)
      shape += (i ? "," : "") + std::to_string(t.shape[i]);
    header += (header.size() > 1 ? "," : "") + jsonQuote(entry->name) +
              ":{\"dtype\":\"" + dtypeName(t.dtype) + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + entry->byteSize) + "]}";
    offset += entry->byteSize;
  }
  header += "}";
  // Spaces pad the header so the data buffer starts 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');

  unsigned char lengthField[headerLengthSize];
  for (int i = 0; i < headerLengthSize; ++i)
    lengthField[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
  fluid::rt::io::AtomicOutputFile out(path);
  out.write(lengthField, headerLengthSize);
  out.write(header.data(), int64_t(header.size()));
  for (const Entry *entry : order)
    out.write(entry->tensor.data, entry->byteSize);
  out.commit();
}

} // namespace

extern "C" fluid_status fluid_safetensors_open(const char *path,
                                               fluid_safetensors_reader **out) {
  return fluid::rt::guard("fluid_safetensors_open", [&] {
    if (!path || !out)
      fail("path and out must not be null");
    *out = openReader(path).release();
  });
}

extern "C" void fluid_safetensors_close(fluid_safetensors_reader *reader) {
  delete reader;
}

extern "C" fluid_status
fluid_safetensors_count(const fluid_safetensors_reader *reader,
                        int64_t *count) {
  return fluid::rt::guard("fluid_safetensors_count", [&] {
    if (!reader || !count)
      fail("reader and count must not be null");
    *count = int64_t(reader->tensors.size());
  });
}

extern "C" fluid_status
fluid_safetensors_name(const fluid_safetensors_reader *reader, int64_t index,
                       const char **name) {
  return fluid::rt::guard("fluid_safetensors_name", [&] {
    if (!reader || !name)
      fail("reader and name must not be null");
    if (index < 0 || index >= int64_t(reader->tensors.size()))
      fail(reader->file.path() + ": tensor index " + std::to_string(index) +
           " is outside [0, " + std::to_string(reader->tensors.size()) + ")");
    *name = reader->tensors[size_t(index)].name.c_str();
  });
}

extern "C" fluid_status
fluid_safetensors_info(const fluid_safetensors_reader *reader, const char *name,
                       fluid_tensor *info) {
  return fluid::rt::guard("fluid_safetensors_info", [&] {
    if (!reader || !info)
      fail("reader and info must not be null");
    const TensorEntry &entry = reader->find(name);
    *info = {};
    info->dtype = entry.dtype;
    info->rank = entry.rank;
    std::copy(entry.shape, entry.shape + entry.rank, info->shape);
  });
}

extern "C" fluid_status
fluid_safetensors_read(const fluid_safetensors_reader *reader, const char *name,
                       const fluid_tensor *destination) {
  return fluid::rt::guard("fluid_safetensors_read", [&] {
    if (!reader)
      fail("reader must not be null");
    readTensor(*reader, name, destination);
  });
}

extern "C" fluid_status
fluid_safetensors_metadata(const fluid_safetensors_reader *reader,
                           const char *key, const char **value) {
  return fluid::rt::guard("fluid_safetensors_metadata", [&] {
    if (!reader || !key || !value)
      fail("reader, key and value must not be null");
    auto it = reader->metadata.find(key);
    *value = it == reader->metadata.end() ? nullptr : it->second.c_str();
  });
}

extern "C" fluid_status
fluid_safetensors_writer_create(fluid_safetensors_writer **out) {
  return fluid::rt::guard("fluid_safetensors_writer_create", [&] {
    if (!out)
      fail("out must not be null");
    *out = new fluid_safetensors_writer();
  });
}

extern "C" void
fluid_safetensors_writer_free(fluid_safetensors_writer *writer) {
  delete writer;
}

extern "C" fluid_status
fluid_safetensors_writer_add(fluid_safetensors_writer *writer, const char *name,
                             const fluid_tensor *t) {
  return fluid::rt::guard("fluid_safetensors_writer_add", [&] {
    if (!writer)
      fail("writer must not be null");
    addTensor(*writer, name, t);
  });
}

extern "C" fluid_status
fluid_safetensors_writer_set_metadata(fluid_safetensors_writer *writer,
                                      const char *key, const char *value) {
  return fluid::rt::guard("fluid_safetensors_writer_set_metadata", [&] {
    if (!writer || !key || !value)
      fail("writer, key and value must not be null");
    writer->metadata[key] = value;
  });
}

extern "C" fluid_status
fluid_safetensors_writer_write(const fluid_safetensors_writer *writer,
                               const char *path) {
  return fluid::rt::guard("fluid_safetensors_writer_write", [&] {
    if (!writer || !path)
      fail("writer and path must not be null");
    writeFile(*writer, path);
  });
}
