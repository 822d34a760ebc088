//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//

#include "fluid/runtime/Npy.h"

#include "File.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using fluid::rt::io::failFormat;
using fluid::rt::io::failUnsupported;

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr int64_t magicSize = 6;
constexpr int64_t versionOffset = magicSize;
constexpr int64_t headerLengthOffset = versionOffset + 2;
// numpy aligns the data to 64 bytes; reads hand out buffers aligned the same.
constexpr int64_t alignment = 64;

struct NpyDtype {
  int32_t dtype;
  const char *descr;
};

constexpr NpyDtype npyDtypes[] = {
    {FLUID_F32, "<f4"}, {FLUID_F64, "<f8"}, {FLUID_I32, "<i4"},
    {FLUID_I64, "<i8"}, {FLUID_U8, "|u1"},  {FLUID_F16, "<f2"},
};

std::string supportedDescrs() {
  std::string list;
  for (const NpyDtype &npyDtype : npyDtypes)
    list += (list.empty() ? "'" : ", '") + std::string(npyDtype.descr) + "'";
  return list;
}

int32_t dtypeFromDescr(const std::string &path, const std::string &descr) {
  for (const NpyDtype &npyDtype : npyDtypes)
    if (descr == npyDtype.descr)
      return npyDtype.dtype;
  std::string what = descr.size() > 1 && descr[0] == '>'
                         ? "big-endian dtype '" + descr + "'"
                         : "dtype '" + descr + "'";
  failUnsupported(
      path, what + " is not supported (supported: " + supportedDescrs() + ")");
}

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the header dict: a Python literal as numpy writes it, with string
/// keys and string, bool or tuple-of-int values. Exactly the keys 'descr',
/// 'fortran_order' and 'shape' must appear, as numpy itself requires.
class HeaderParser {
public:
  HeaderParser(const std::string &path, std::string_view text)
      : path_(path), text_(text) {}

  NpyHeader parse() {
    NpyHeader header;
    bool seenDescr = false, seenFortranOrder = false, seenShape = false;
    expect('{');
    while (!consume('}')) {
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        markSeen(seenDescr, key);
        header.descr = parseString();
      } else if (key == "fortran_order") {
        markSeen(seenFortranOrder, key);
        header.fortranOrder = parseBool();
      } else if (key == "shape") {
        markSeen(seenShape, key);
        header.shape = parseShape();
      } else {
        error("unexpected key '" + key + "'");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skipSpace();
    if (position_ != text_.size())
      error("unexpected text after the dict");
    for (auto [seen, key] : {std::pair{seenDescr, "descr"},
                             std::pair{seenFortranOrder, "fortran_order"},
                             std::pair{seenShape, "shape"}})
      if (!seen)
        error(std::string("missing key '") + key + "'");
    return header;
  }

private:
  [[noreturn]] void error(const std::string &problem) const {
    std::string_view shown = text_.substr(0, 200);
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n'))
      shown.remove_suffix(1);
    failFormat(path_, "malformed .npy header: " + problem + " at column " +
                          std::to_string(position_) + " of \"" +
                          std::string(shown) + "\"");
  }

  void skipSpace() {
    while (position_ < text_.size() &&
           (text_[position_] == ' ' || text_[position_] == '\t' ||
            text_[position_] == '\n' || text_[position_] == '\r'))
      ++position_;
  }

  bool consume(char expected) {
    skipSpace();
    if (position_ < text_.size() && text_[position_] == expected) {
      ++position_;
      return true;
    }
    return false;
  }

  void expect(char expected) {
    if (!consume(expected))
      error(std::string("expected '") + expected + "'");
  }

  void markSeen(bool &seen, const std::string &key) const {
    if (seen)
      error("duplicate key '" + key + "'");
    seen = true;
  }

  std::string parseString() {
    skipSpace();
    if (position_ >= text_.size() ||
        (text_[position_] != '\'' && text_[position_] != '"'))
      error("expected a string");
    char quote = text_[position_++];
    std::string::size_type begin = position_;
    for (; position_ < text_.size() && text_[position_] != quote; ++position_)
      if (text_[position_] == '\\')
        error("escape sequences are not supported in header strings");
    if (position_ >= text_.size())
      error("unterminated string");
    return std::string(text_.substr(begin, position_++ - begin));
  }

  bool parseBool() {
    skipSpace();
    for (auto [word, value] :
         {std::pair{"True", true}, std::pair{"False", false}}) {
      std::string_view literal = word;
      if (text_.substr(position_, literal.size()) == literal) {
        position_ += literal.size();
        return value;
      }
    }
    error("expected True or False");
  }

  std::vector<int64_t> parseShape() {
    expect('(');
    std::vector<int64_t> shape;
    bool commaAfterLast = false;
    while (!consume(')')) {
      shape.push_back(parseDimension());
      commaAfterLast = consume(',');
      if (!commaAfterLast) {
        expect(')');
        break;
      }
    }
    if (shape.size() == 1 && !commaAfterLast)
      error("shape (" + std::to_string(shape[0]) + ") is not a tuple");
    return shape;
  }

  int64_t parseDimension() {
    skipSpace();
    if (position_ < text_.size() && text_[position_] == '-')
      error("negative dimension");
    if (position_ >= text_.size() || !isDigit(text_[position_]))
      error("expected a dimension");
    int64_t value = 0;
    for (; position_ < text_.size() && isDigit(text_[position_]); ++position_)
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, text_[position_] - '0', &value))
        error("dimension overflows int64");
    return value;
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  const std::string &path_;
  std::string_view text_;
  std::string::size_type position_ = 0;
};

uint32_t readLittleEndian(const unsigned char *bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = value << 8 | bytes[i];
  return value;
}

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

fluid_tensor readNpy(const std::string &path) {
  fluid::rt::io::InputFile file(path);

  char prefix[magicSize];
  int64_t available = std::min(file.size(), magicSize);
  file.read(0, prefix, available, "magic");
  if (std::memcmp(prefix, magic, size_t(available)) != 0)
    failFormat(path, "not a .npy file (bad magic; expected \"\\x93NUMPY\")");
  file.read(0, prefix, magicSize, "magic");

  unsigned char version[2];
  file.read(versionOffset, version, 2, "format version");
  int lengthBytes = version[0] == 1 ? 2 : 4;
  if (version[0] < 1 || version[0] > 3 || version[1] != 0)
    failUnsupported(path, "format version " + std::to_string(version[0]) + "." +
                              std::to_string(version[1]) +
                              " is not supported (1.0, 2.0 and 3.0 are)");

  unsigned char lengthField[4];
  file.read(headerLengthOffset, lengthField, lengthBytes, "header length");
  int64_t headerLength = readLittleEndian(lengthField, lengthBytes);
  int64_t headerOffset = headerLengthOffset + lengthBytes;
  // A bogus length larger than the file fails in read() before any byte is
  // stored, so the buffer never needs to be larger than the file.
  std::string text(size_t(std::min(headerLength, file.size())), '\0');
  file.read(headerOffset, text.data(), headerLength, "header");
  NpyHeader header = HeaderParser(path, text).parse();

  if (header.fortranOrder)
    failUnsupported(path, "fortran_order True (column-major data) is not "
                          "supported; save a C-contiguous array");
  int32_t dtype = dtypeFromDescr(path, header.descr);
  if (header.shape.size() > FLUID_MAX_RANK)
    failUnsupported(path, "rank " + std::to_string(header.shape.size()) +
                              " exceeds FLUID_MAX_RANK (" +
                              std::to_string(FLUID_MAX_RANK) + ")");
  int32_t rank = int32_t(header.shape.size());
  std::string shapeText = fluid::rt::io::formatShape(rank, header.shape.data());
  int64_t numel, byteSize;
  if (!fluid::rt::io::checkedNumel(rank, header.shape.data(), &numel) ||
      __builtin_mul_overflow(numel, fluid_dtype_size(dtype), &byteSize))
    failFormat(path, "shape " + shapeText + " of '" + header.descr +
                         "' has a byte size that overflows int64");

  int64_t dataOffset = headerOffset + headerLength;
  int64_t dataAvailable = file.size() - dataOffset;
  if (dataAvailable < byteSize)
    failFormat(path, "truncated data: shape " + shapeText + " of '" +
                         header.descr + "' needs " + std::to_string(byteSize) +
                         " bytes but only " + std::to_string(dataAvailable) +
                         " follow the header");
  if (dataAvailable > byteSize)
    failFormat(path, std::to_string(dataAvailable - byteSize) +
                         " unexpected bytes after the data (a .npy file "
                         "holds exactly one array)");

  size_t allocationSize = size_t(std::max<int64_t>(
      alignment, (byteSize + alignment - 1) / alignment * alignment));
  std::unique_ptr<void, FreeDeleter> data(
      std::aligned_alloc(alignment, allocationSize));
  if (!data)
    throw fluid::rt::Error(FLUID_ERROR_OUT_OF_MEMORY,
                           path + ": cannot allocate " +
                               std::to_string(byteSize) + " bytes");
  file.read(dataOffset, data.get(), byteSize, "data");

  fluid_tensor result = {};
  result.dtype = dtype;
  result.rank = rank;
  std::copy(header.shape.begin(), header.shape.end(), result.shape);
  result.data = data.release();
  return result;
}

std::string shapeTuple(const fluid_tensor &t) {
  std::string text = "(";
  for (int32_t i = 0; i < t.rank; ++i)
    text += (i ? ", " : "") + std::to_string(t.shape[i]);
  return text + (t.rank == 1 ? ",)" : ")");
}

void writeNpy(const std::string &path, const fluid_tensor &t) {
  const NpyDtype *npyDtype = nullptr;
  for (const NpyDtype &candidate : npyDtypes)
    if (candidate.dtype == t.dtype)
      npyDtype = &candidate;
  if (!npyDtype)
    failUnsupported(path, t.dtype == FLUID_BF16
                              ? "BF16 has no .npy dtype"
                              : "unknown dtype " + std::to_string(t.dtype));
  if (t.rank < 0 || t.rank > FLUID_MAX_RANK)
    fluid::rt::fail(path + ": rank " + std::to_string(t.rank) +
                    " is outside [0, " + std::to_string(FLUID_MAX_RANK) + "]");
  std::string shapeText = fluid::rt::io::formatShape(t.rank, t.shape);
  int64_t numel, byteSize;
  if (std::any_of(t.shape, t.shape + t.rank, [](int64_t d) { return d < 0; }))
    fluid::rt::fail(path + ": negative dimension in shape " + shapeText);
  if (!fluid::rt::io::checkedNumel(t.rank, t.shape, &numel) ||
      __builtin_mul_overflow(numel, fluid_dtype_size(t.dtype), &byteSize))
    fluid::rt::fail(path + ": byte size of shape " + shapeText +
                    " overflows int64");
  if (byteSize > 0 && !t.data)
    fluid::rt::fail(path + ": tensor data is null");

  // numpy's own layout: the dict, spaces, and a newline, padded so the data
  // starts 64-byte aligned. With rank <= FLUID_MAX_RANK the header is far
  // below version 1.0's 65535-byte limit.
  std::string header = "{'descr': '" + std::string(npyDtype->descr) +
                       "', 'fortran_order': False, 'shape': " + shapeTuple(t) +
                       ", }";
  int64_t prefixSize = headerLengthOffset + 2;
  int64_t unpadded = prefixSize + int64_t(header.size()) + 1;
  header.append(size_t((alignment - unpadded % alignment) % alignment), ' ');
  header += '\n';
  unsigned char prefix[headerLengthOffset + 2];
  std::memcpy(prefix, magic, magicSize);
  prefix[versionOffset] = 1;
  prefix[versionOffset + 1] = 0;
  prefix[headerLengthOffset] = uint8_t(header.size());
  prefix[headerLengthOffset + 1] = uint8_t(header.size() >> 8);

  fluid::rt::io::AtomicOutputFile out(path);
  out.write(prefix, prefixSize);
  out.write(header.data(), int64_t(header.size()));
  out.write(t.data, byteSize);
  out.commit();
}

} // namespace

extern "C" fluid_status fluid_npy_read(const char *path, fluid_tensor *out) {
  return fluid::rt::guard("fluid_npy_read", [&] {
    if (!path || !out)
      fluid::rt::fail("path and out must not be null");
    *out = readNpy(path);
  });
}

extern "C" void fluid_npy_free(fluid_tensor *t) {
  if (!t)
    return;
  std::free(t->data);
  t->data = nullptr;
}

extern "C" fluid_status fluid_npy_write(const char *path,
                                        const fluid_tensor *t) {
  return fluid::rt::guard("fluid_npy_write", [&] {
    if (!path || !t)
      fluid::rt::fail("path and tensor must not be null");
    writeNpy(path, *t);
  });
}
