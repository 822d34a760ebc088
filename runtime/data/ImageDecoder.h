//===- ImageDecoder.h - JPEG and PNG files to RGB, as PIL decodes them ----===//
//
// torchvision's ImageFolder loads an image as PIL's
// Image.open(path).convert("RGB"), and a model trained in Fluid must see the
// same pixels. JPEG files are decoded by libjpeg-turbo's TurboJPEG API (the
// library PIL is built on: accurate integer IDCT, smooth upsampling) and PNG
// files by libpng; what PIL does after decoding is reproduced here:
//
//   JPEG  YCbCr, RGB     libjpeg's RGB, as it is
//         grayscale      the gray value in R, G and B
//         CMYK, YCCK     PIL assumes Adobe's inverted CMYK: with libjpeg's
//                        CMYK values c, m, y, k (as stored), K = 255 - k,
//                        C = 255 - c, ...; then R = (255 - K) - muldiv(C,
//                        255 - K) etc., muldiv(a, b) = (t + (t >> 8)) >> 8,
//                        t = a * b + 128 (PIL's CMYK to RGB)
//   PNG   RGB, RGBA      8-bit: the color, alpha dropped (never blended);
//                        16-bit: the high byte of each sample
//         gray, gray+alpha  the gray value in R, G and B (1, 2 and 4-bit
//                        gray scaled to 0..255, 16-bit gray+alpha by its
//                        high byte); 16-bit gray without alpha is clipped
//                        to 255, not scaled (PIL reads it as a 32-bit
//                        integer image, whose RGB conversion clips)
//         palette        the palette's color (transparency ignored)
//
// Gamma, color profiles and EXIF orientation are ignored, as PIL's
// convert("RGB") ignores them. A file is decoded by its content, whatever
// its name says.
//
// Errors name the file: FLUID_ERROR_IO when it cannot be read;
// FLUID_ERROR_INVALID_ARGUMENT when it is corrupt or truncated (a JPEG that
// ends before its image data does, as PIL's "image file is truncated"; a
// JPEG with other recoverable damage decodes, as in PIL), or holds more than
// PIL's limit of 178956970 pixels (2 * Image.MAX_IMAGE_PIXELS, past which
// PIL refuses a "decompression bomb"); FLUID_ERROR_UNSUPPORTED when it is
// neither a JPEG nor a PNG file, or a kind of JPEG TurboJPEG cannot decode.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_IMAGEDECODER_H
#define FLUID_RUNTIME_DATA_IMAGEDECODER_H

#include "Resize.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fluid::rt::data {

/// PIL's decompression-bomb limit.
constexpr int64_t kMaxImagePixels = 178956970;

/// Decodes the JPEG or PNG file at `path` (told apart by its first bytes).
RgbImage decodeImageFile(const std::string &path);

/// Decodes the bytes of a JPEG file; `path` names it in errors.
RgbImage decodeJpeg(const std::string &path, const std::vector<uint8_t> &bytes);

/// Decodes the bytes of a PNG file; `path` names it in errors.
RgbImage decodePng(const std::string &path, const std::vector<uint8_t> &bytes);

/// Fails unless an image of height x width pixels has pixels and stays
/// within kMaxImagePixels.
void requireImageSize(const std::string &path, int64_t height, int64_t width);

} // namespace fluid::rt::data

#endif // FLUID_RUNTIME_DATA_IMAGEDECODER_H
