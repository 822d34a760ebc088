//===- Idx.cpp - Datasets read from IDX files -----------------------------===//
//
// An IDX file (the MNIST family's format) is a 4-byte magic {0, 0, element
// type, rank}, `rank` big-endian u32 dimensions, then the elements. Both
// files are validated completely and loaded into memory before a dataset
// exists; a header is never trusted with an allocation larger than the file
// can back.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Data.h"

#include "Dataset.h"
#include "FileReader.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

using fluid::rt::data::failFormat;
using fluid::rt::data::failUnsupported;
using fluid::rt::data::FileReader;

namespace {

constexpr uint8_t u8Type = 0x08;
constexpr int32_t imageRank = 3;
constexpr int32_t labelRank = 1;
// Gzip content arrives before its size is proven, so its buffer starts at
// most this large (Fashion-MNIST's 47 MB fit) and doubles as data arrives.
constexpr int64_t initialGzipBuffer = int64_t(64) << 20;

/// The IDX element types, by their code in the magic.
const char *elementTypeName(uint8_t code) {
  switch (code) {
  case 0x08:
    return "u8";
  case 0x09:
    return "i8";
  case 0x0B:
    return "i16";
  case 0x0C:
    return "i32";
  case 0x0D:
    return "f32";
  case 0x0E:
    return "f64";
  default:
    return nullptr;
  }
}

std::string hex(uint32_t value, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*x", digits, value);
  return text;
}

/// What one kind of IDX file holds, for validation and messages.
struct IdxKind {
  const char *noun; // "image" or "label"
  int32_t rank;
  const char *layout;
};

constexpr IdxKind imageKind = {"image", imageRank, "[count, rows, cols]"};
constexpr IdxKind labelKind = {"label", labelRank, "[count]"};

std::string expectedMagic(const IdxKind &kind) {
  return hex(uint32_t(u8Type) << 8 | uint32_t(kind.rank), 8);
}

struct IdxHeader {
  int32_t rank = 0;
  int64_t dims[imageRank] = {};
  int64_t dataSize = 0; // bytes of u8 elements after the header
  int64_t headerSize = 0;

  std::string shape() const {
    std::string text = "[";
    for (int32_t i = 0; i < rank; ++i)
      text += (i ? ", " : "") + std::to_string(dims[i]);
    return text + "]";
  }
};

void readExactly(FileReader &file, void *destination, int64_t count,
                 const std::string &what) {
  if (file.read(destination, count) != count)
    failFormat(file.path(), "truncated " + what + ": the " +
                                (file.isGzip() ? "decompressed " : "") +
                                "content ends inside it");
}

IdxHeader readHeader(FileReader &file, const IdxKind &kind) {
  const std::string &path = file.path();
  unsigned char magic[4];
  readExactly(file, magic, 4, "magic");
  uint32_t magicValue = uint32_t(magic[0]) << 24 | uint32_t(magic[1]) << 16 |
                        uint32_t(magic[2]) << 8 | magic[3];
  if (magic[0] != 0 || magic[1] != 0 || !elementTypeName(magic[2]))
    failFormat(path, "not an IDX file (bad magic " + hex(magicValue, 8) +
                         "; an IDX " + kind.noun + " file starts with " +
                         expectedMagic(kind) + ")");
  if (magic[2] != u8Type)
    failUnsupported(path, std::string("element type ") + hex(magic[2], 2) +
                              " (" + elementTypeName(magic[2]) +
                              ") is not supported; IDX " + kind.noun +
                              " files must hold u8 (0x08)");
  if (magic[3] != kind.rank) {
    std::string hint = magic[3] == imageRank || magic[3] == labelRank
                           ? " (are the image and label files swapped?)"
                           : "";
    failFormat(path, "rank " + std::to_string(magic[3]) + " (magic " +
                         hex(magicValue, 8) + "), but an IDX " + kind.noun +
                         " file has rank " + std::to_string(kind.rank) + " " +
                         kind.layout + hint);
  }

  IdxHeader header;
  header.rank = kind.rank;
  header.headerSize = 4 + 4 * kind.rank;
  unsigned char dims[4 * imageRank];
  readExactly(file, dims, 4 * kind.rank, "header");
  header.dataSize = 1;
  bool overflow = false;
  for (int32_t i = 0; i < kind.rank; ++i) {
    const unsigned char *bytes = dims + 4 * i;
    header.dims[i] =
        int64_t(uint32_t(bytes[0]) << 24 | uint32_t(bytes[1]) << 16 |
                uint32_t(bytes[2]) << 8 | bytes[3]);
    overflow |= __builtin_mul_overflow(header.dataSize, header.dims[i],
                                       &header.dataSize);
  }
  if (overflow)
    failFormat(path, "shape " + header.shape() +
                         " has a byte size that overflows int64");
  return header;
}

/// Reads the header's dataSize bytes and checks that nothing follows them.
std::vector<uint8_t> readData(FileReader &file, const IdxHeader &header) {
  const std::string &path = file.path();
  int64_t needed = header.dataSize;
  std::string needs =
      "shape " + header.shape() + " needs " + std::to_string(needed) + " bytes";
  int64_t limit = file.contentSizeLimit() - header.headerSize;
  if (needed > limit)
    failFormat(
        path,
        "truncated data: " + needs + " but " +
            (file.isGzip()
                 ? "a gzip file of " + std::to_string(file.fileSize()) +
                       " bytes inflates to at most " + std::to_string(limit) +
                       " after the header"
                 : "only " + std::to_string(limit) + " follow the header"));
  if (!file.isGzip() && needed < limit)
    failFormat(path, std::to_string(limit - needed) +
                         " unexpected bytes after the data (" + needs + ")");

  std::vector<uint8_t> data;
  try {
    int64_t capacity =
        file.isGzip() ? std::min(needed, initialGzipBuffer) : needed;
    while (int64_t(data.size()) < needed) {
      if (int64_t(data.size()) == capacity)
        capacity = capacity > needed / 2 ? needed : 2 * capacity;
      data.reserve(size_t(capacity));
      int64_t filled = int64_t(data.size());
      data.resize(size_t(capacity));
      int64_t got = file.read(data.data() + filled, capacity - filled);
      data.resize(size_t(filled + got));
      if (filled + got < capacity)
        failFormat(path, "truncated data: " + needs + " but only " +
                             std::to_string(filled + got) +
                             (file.isGzip() ? " decompress after the header"
                                            : " follow the header"));
    }
  } catch (const std::bad_alloc &) {
    throw fluid::rt::Error(FLUID_ERROR_OUT_OF_MEMORY,
                           path + ": cannot allocate " +
                               std::to_string(needed) + " bytes for its data");
  }
  unsigned char extra;
  if (file.read(&extra, 1) != 0)
    failFormat(path, std::string("the ") +
                         (file.isGzip() ? "decompressed " : "") +
                         "content continues after the data (" + needs + ")");
  return data;
}

class IdxDataset final : public fluid_dataset {
public:
  IdxDataset(int64_t count, int64_t rows, int64_t cols, int64_t classes,
             std::vector<uint8_t> images, std::vector<uint8_t> labels)
      : fluid_dataset(count, 1, rows, cols, classes),
        images_(std::move(images)), labels_(std::move(labels)) {}

  Item item(int64_t index, uint64_t, uint8_t *) const override {
    Item item;
    item.pixels = images_.data() + index * imageSize();
    item.label = labels_[size_t(index)];
    return item;
  }

private:
  std::vector<uint8_t> images_;
  std::vector<uint8_t> labels_;
};

std::unique_ptr<fluid_dataset> openIdx(const std::string &imagesPath,
                                       const std::string &labelsPath) {
  FileReader imageFile(imagesPath);
  IdxHeader images = readHeader(imageFile, imageKind);
  int64_t count = images.dims[0], rows = images.dims[1], cols = images.dims[2];
  if (count == 0)
    failFormat(imagesPath, "holds no images (shape " + images.shape() + ")");
  if (rows == 0 || cols == 0)
    failFormat(imagesPath, "images of " + std::to_string(rows) + " x " +
                               std::to_string(cols) +
                               " pixels are empty (shape " + images.shape() +
                               ")");
  FileReader labelFile(labelsPath);
  IdxHeader labels = readHeader(labelFile, labelKind);
  // Compare the headers before the (large) image data is read.
  if (labels.dims[0] != count)
    fluid::rt::fail(imagesPath + " holds " + std::to_string(count) +
                    " images but " + labelsPath + " holds " +
                    std::to_string(labels.dims[0]) + " labels");

  std::vector<uint8_t> labelData = readData(labelFile, labels);
  std::vector<uint8_t> imageData = readData(imageFile, images);
  int64_t classes =
      int64_t(*std::max_element(labelData.begin(), labelData.end())) + 1;
  return std::make_unique<IdxDataset>(
      count, rows, cols, classes, std::move(imageData), std::move(labelData));
}

} // namespace

extern "C" fluid_status fluid_dataset_open_idx(const char *images_path,
                                               const char *labels_path,
                                               fluid_dataset **out) {
  return fluid::rt::guard("fluid_dataset_open_idx", [&] {
    if (!images_path || !labels_path || !out)
      fluid::rt::fail("images_path, labels_path and out must not be null");
    *out = openIdx(images_path, labels_path).release();
  });
}
