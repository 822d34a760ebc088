//===- PngDecoder.cpp - PNG files to RGB with libpng ----------------------===//
//
// libpng reports errors by longjmp to the point its caller saved with
// setjmp. The calls into libpng are therefore made from three small
// functions (header, transformations, rows) whose frames hold no object
// with a destructor, each of which saves its own point and returns false
// with the message when libpng fails; everything that owns memory lives in
// decodePng, outside the jumps. The file's bytes are handed to libpng from
// memory; libpng's warnings (bad ancillary chunks, say) are ignored, as PIL
// ignores them.
//
//===----------------------------------------------------------------------===//

#include "ImageDecoder.h"

#include "FileReader.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <png.h>

namespace fluid::rt::data {

namespace {

/// What libpng's callbacks read from and write to: the file's bytes and the
/// message of the error that ends the decoding.
struct PngSource {
  const uint8_t *data;
  size_t size;
  size_t offset;
  bool truncated;
  char message[256];
};

void readBytes(png_structp png, png_bytep destination, size_t count) {
  auto *source = static_cast<PngSource *>(png_get_io_ptr(png));
  if (count > source->size - source->offset) {
    source->truncated = true;
    png_error(png, "the file ends before its image data does");
  }
  std::memcpy(destination, source->data + source->offset, count);
  source->offset += count;
}

void reportError(png_structp png, png_const_charp message) {
  auto *source = static_cast<PngSource *>(png_get_error_ptr(png));
  std::snprintf(source->message, sizeof source->message, "%s", message);
  png_longjmp(png, 1);
}

void ignoreWarning(png_structp, png_const_charp) {}

[[noreturn]] void failPng(const std::string &path, const PngSource &source) {
  failFormat(path, std::string(source.truncated ? "truncated" : "corrupt") +
                       " PNG file: " + source.message);
}

/// The image's header, after the transformations are set up.
struct PngLayout {
  png_uint_32 width, height;
  int bitDepth, colorType;
  size_t rowBytes;
  int channels;
};

bool readHeader(png_structp png, png_infop info, PngLayout *layout) {
  if (setjmp(png_jmpbuf(png)))
    return false;
  png_read_info(png, info);
  int interlace = 0;
  png_get_IHDR(png, info, &layout->width, &layout->height, &layout->bitDepth,
               &layout->colorType, &interlace, nullptr, nullptr);
  return true;
}

/// Asks libpng for 8-bit samples (16-bit gray kept: PIL clips it), palette
/// colors and whole rows of interlaced images.
bool setUpTransformations(png_structp png, png_infop info, PngLayout *layout) {
  if (setjmp(png_jmpbuf(png)))
    return false;
  bool gray16 =
      layout->colorType == PNG_COLOR_TYPE_GRAY && layout->bitDepth == 16;
  if (layout->bitDepth == 16 && !gray16)
    png_set_strip_16(png); // the high byte, as PIL's ";16B" unpackers
  if (layout->colorType == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (layout->colorType == PNG_COLOR_TYPE_GRAY && layout->bitDepth < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  layout->rowBytes = png_get_rowbytes(png, info);
  layout->channels = png_get_channels(png, info);
  layout->bitDepth = png_get_bit_depth(png, info);
  return true;
}

bool readRows(png_structp png, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png)))
    return false;
  png_read_image(png, rows);
  return true;
}

/// Owns libpng's read and info structures.
class PngReader {
public:
  explicit PngReader(PngSource *source)
      : png_(png_create_read_struct(PNG_LIBPNG_VER_STRING, source, reportError,
                                    ignoreWarning)) {
    if (png_)
      info_ = png_create_info_struct(png_);
  }
  ~PngReader() { png_destroy_read_struct(&png_, &info_, nullptr); }
  PngReader(const PngReader &) = delete;
  PngReader &operator=(const PngReader &) = delete;

  png_structp png() const { return png_; }
  png_infop info() const { return info_; }

private:
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

} // namespace

RgbImage decodePng(const std::string &path, const std::vector<uint8_t> &bytes) {
  PngSource source = {bytes.data(), bytes.size(), 0, false, {0}};
  PngReader reader(&source);
  if (!reader.png() || !reader.info())
    throw Error(FLUID_ERROR_UNSUPPORTED,
                "cannot start libpng (built for " PNG_LIBPNG_VER_STRING
                ", running " +
                    std::string(png_get_libpng_ver(nullptr)) + ")");
  png_structp png = reader.png();
  png_set_read_fn(png, &source, readBytes);

  PngLayout layout = {};
  if (!readHeader(png, reader.info(), &layout))
    failPng(path, source);
  requireImageSize(path, layout.height, layout.width);
  if (!setUpTransformations(png, reader.info(), &layout))
    failPng(path, source);

  int64_t height = layout.height, width = layout.width;
  std::vector<uint8_t> decoded(layout.rowBytes * size_t(height));
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y)
    rows[size_t(y)] = decoded.data() + size_t(y) * layout.rowBytes;
  if (!readRows(png, rows.data()))
    failPng(path, source);

  RgbImage image;
  image.height = height;
  image.width = width;
  image.pixels.resize(size_t(height * width * 3));
  uint8_t *out = image.pixels.data();
  if (layout.bitDepth == 16) { // gray: big-endian samples, clipped to 255
    for (int64_t i = 0; i < height * width; ++i, out += 3) {
      int value = decoded[size_t(2 * i)] << 8 | decoded[size_t(2 * i + 1)];
      out[0] = out[1] = out[2] = uint8_t(std::min(value, 255));
    }
    return image;
  }
  // Gray, gray + alpha, RGB or RGB + alpha (palette images with
  // transparency expand to the last): alpha is dropped.
  int channels = layout.channels;
  const uint8_t *in = decoded.data();
  for (int64_t y = 0; y < height; ++y) {
    const uint8_t *row = in + size_t(y) * layout.rowBytes;
    for (int64_t x = 0; x < width; ++x, row += channels, out += 3) {
      if (channels <= 2) {
        out[0] = out[1] = out[2] = row[0];
      } else {
        out[0] = row[0];
        out[1] = row[1];
        out[2] = row[2];
      }
    }
  }
  return image;
}

} // namespace fluid::rt::data
