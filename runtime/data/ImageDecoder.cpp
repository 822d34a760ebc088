//===- ImageDecoder.cpp - Image files read whole and told apart -----------===//

#include "ImageDecoder.h"

#include "FileReader.h"

#include <cstring>

namespace fluid::rt::data {

namespace {

// No JPEG or PNG of PIL's largest size needs more; a larger file is refused
// before it is read.
constexpr int64_t kMaxFileBytes = int64_t(1) << 30;

const uint8_t kJpegMagic[3] = {0xFF, 0xD8, 0xFF};
const uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

bool startsWith(const std::vector<uint8_t> &bytes, const uint8_t *magic,
                size_t size) {
  return bytes.size() >= size && std::memcmp(bytes.data(), magic, size) == 0;
}

} // namespace

void requireImageSize(const std::string &path, int64_t height, int64_t width) {
  if (height < 1 || width < 1)
    failFormat(path, "an image of " + std::to_string(width) + "x" +
                         std::to_string(height) + " pixels, empty");
  if (height > kMaxImagePixels / width)
    failFormat(path, "an image of " + std::to_string(width) + "x" +
                         std::to_string(height) + " pixels, more than " +
                         std::to_string(kMaxImagePixels) +
                         " (PIL's decompression-bomb limit)");
}

RgbImage decodeImageFile(const std::string &path) {
  FileReader file(path);
  if (file.fileSize() > kMaxFileBytes)
    failFormat(path, "a file of " + std::to_string(file.fileSize()) +
                         " bytes, larger than an image file may be (" +
                         std::to_string(kMaxFileBytes) + ")");
  if (file.fileSize() == 0)
    failUnsupported(path, "an empty file, not a JPEG or PNG image");
  // (FileReader would inflate a gzip file; no image starts as one.)
  if (file.isGzip())
    failUnsupported(path, "not a JPEG or PNG image");
  std::vector<uint8_t> bytes(size_t(file.fileSize()));
  bytes.resize(size_t(file.read(bytes.data(), file.fileSize())));
  if (startsWith(bytes, kJpegMagic, sizeof kJpegMagic))
    return decodeJpeg(path, bytes);
  if (startsWith(bytes, kPngMagic, sizeof kPngMagic))
    return decodePng(path, bytes);
  failUnsupported(path, "not a JPEG or PNG image");
}

} // namespace fluid::rt::data
