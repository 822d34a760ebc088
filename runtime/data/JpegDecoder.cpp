//===- JpegDecoder.cpp - JPEG files to RGB with TurboJPEG -----------------===//
//
// TurboJPEG reports recoverable damage as a warning after decoding the whole
// image; PIL decodes such files too, except when the data ends early (its
// "image file is truncated"), which libjpeg reports as the warning "Premature
// end of JPEG file" (JWRN_JPEG_EOF). Hard errors whose libjpeg message says
// "Unsupported" (12-bit samples, unknown processes) are unsupported files;
// any other is a corrupt one.
//
//===----------------------------------------------------------------------===//

#include "ImageDecoder.h"

#include "FileReader.h"

#include <algorithm>
#include <new>
#include <string>
#include <turbojpeg.h>

namespace fluid::rt::data {

namespace {

/// One TurboJPEG decompressor per image. A decompressor keeps the quantization
/// and Huffman tables of the last image it read, and libjpeg lets a later
/// "abbreviated" file use them without defining its own: a handle reused
/// across images would decode such a file, or not, depending on which file
/// the thread read before (PIL opens a fresh decompressor per image too). A
/// handle costs a few allocations, nothing next to decoding.
class Decompressor {
public:
  Decompressor() : handle_(tjInitDecompress()) {
    if (!handle_)
      throw std::bad_alloc(); // tjInitDecompress fails only so
  }
  ~Decompressor() { tjDestroy(handle_); }
  Decompressor(const Decompressor &) = delete;
  Decompressor &operator=(const Decompressor &) = delete;

  tjhandle handle() const { return handle_; }

  /// The error of the last call.
  std::string error() const { return tjGetErrorStr2(handle_); }

private:
  tjhandle handle_;
};

[[noreturn]] void failJpeg(const std::string &path, const std::string &text) {
  if (text.compare(0, 11, "Unsupported") == 0)
    failUnsupported(path, "unsupported JPEG file: " + text);
  failFormat(path, "corrupt JPEG file: " + text);
}

/// PIL's MULDIV255: a * b / 255, rounded, in integers.
int mulDiv255(int a, int b) {
  int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

} // namespace

RgbImage decodeJpeg(const std::string &path,
                    const std::vector<uint8_t> &bytes) {
  Decompressor decompressor;
  tjhandle tj = decompressor.handle();
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(tj, bytes.data(),
                          static_cast<unsigned long>(bytes.size()), &width,
                          &height, &subsampling, &colorspace) != 0)
    failJpeg(path, decompressor.error());
  // A file of tables only has a header and no image.
  if (width == 0 || height == 0)
    failFormat(path, "corrupt JPEG file: the file holds no image");
  requireImageSize(path, height, width);

  bool cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  int format = colorspace == TJCS_GRAY ? TJPF_GRAY
               : cmyk                  ? TJPF_CMYK
                                       : TJPF_RGB;
  int64_t channels = tjPixelSize[format];
  int64_t pixels = int64_t(height) * width;
  std::vector<uint8_t> decoded(size_t(pixels * channels));
  // The accurate IDCT and smooth upsampling: libjpeg's defaults, PIL's.
  // At most 500 progressive scans: more only come from hostile files.
  if (tjDecompress2(tj, bytes.data(), static_cast<unsigned long>(bytes.size()),
                    decoded.data(), width, 0, height, format,
                    TJFLAG_ACCURATEDCT | TJFLAG_LIMITSCANS) != 0) {
    bool warning = tjGetErrorCode(tj) == TJERR_WARNING;
    std::string text = decompressor.error();
    if (!warning)
      failJpeg(path, text);
    if (text.find("Premature end of JPEG file") != std::string::npos)
      failFormat(path, "truncated JPEG file: the file ends before its "
                       "image data does");
  }

  RgbImage image;
  image.height = height;
  image.width = width;
  if (format == TJPF_RGB) {
    image.pixels = std::move(decoded);
    return image;
  }
  image.pixels.resize(size_t(pixels * 3));
  uint8_t *out = image.pixels.data();
  const uint8_t *in = decoded.data();
  if (format == TJPF_GRAY) {
    for (int64_t i = 0; i < pixels; ++i, out += 3)
      out[0] = out[1] = out[2] = in[i];
    return image;
  }
  // PIL inverts what libjpeg stores (Adobe's convention), C = 255 - c, and
  // converts with K = 255 - k, so 255 - K is the stored k.
  for (int64_t i = 0; i < pixels; ++i, in += 4, out += 3) {
    int notBlack = in[3];
    for (int c = 0; c < 3; ++c)
      out[c] = uint8_t(
          std::clamp(notBlack - mulDiv255(255 - in[c], notBlack), 0, 255));
  }
  return image;
}

} // namespace fluid::rt::data
