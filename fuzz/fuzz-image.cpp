//===- fuzz-image.cpp - libFuzzer target: image files as the loader reads -===//
//
// The input is one image file. fluid_image_decode decodes it (the
// decodeImageFile of ImageDecoder.h that the image datasets call: TurboJPEG
// or libpng, then PIL's conversions to RGB); a file that decodes is then
// read as the training driver reads an image dataset: a list file naming
// it opens a dataset (fluid_dataset_open_images) whose one item a batch
// decodes again and transforms (the random resized crop and flip, or the
// resize and centre crop) and normalizes. The input's size picks the
// transform, the output size (1 to 16 pixels a side), the epoch, the batch
// layout and whether bad images are skipped, so that every path runs.
//
// A header that declares an image of more than kMaxFuzzPixels is not
// decoded (unless it exceeds PIL's limit, which the decoder refuses before
// decoding): decoding and resizing an image of a hundred million pixels
// takes seconds, and the fuzzer would spend its time there rather than on
// the code. The harness reads the size as the decoders do: TurboJPEG's
// header for a JPEG file, the IHDR chunk (the first, by libpng's rules)
// for a PNG file.
//
// Besides the sanitizers, the harness aborts when the C interface breaks a
// promise: a decoded image must have 1 to kMaxImagePixels pixels, as many
// as its header declares, and decode alike twice; a file that
// fluid_image_decode decodes must fill a batch, with label 0, and only finite
// values.
//
//===----------------------------------------------------------------------===//

#include "FuzzInputFile.h"

#include "fluid/runtime/Data.h"

#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <turbojpeg.h>
#include <vector>

namespace {

constexpr int64_t kMaxFuzzPixels = int64_t(1) << 20;
// PIL's decompression-bomb limit (ImageDecoder.h).
constexpr int64_t kMaxImagePixels = 178956970;

/// The width and height the file's header declares, when it is a JPEG or
/// PNG file whose header reads; 0 x 0 otherwise.
void declaredSize(const uint8_t *data, size_t size, int64_t &width,
                  int64_t &height) {
  width = height = 0;
  static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (size >= 24 && std::memcmp(data, png, 8) == 0 &&
      std::memcmp(data + 12, "IHDR", 4) == 0) {
    auto bigEndian = [](const uint8_t *p) {
      return int64_t(p[0]) << 24 | int64_t(p[1]) << 16 | int64_t(p[2]) << 8 |
             int64_t(p[3]);
    };
    width = bigEndian(data + 16);
    height = bigEndian(data + 20);
    return;
  }
  if (size < 3 || data[0] != 0xFF || data[1] != 0xD8)
    return;
  // A fresh handle, as the decoder uses (JpegDecoder.cpp).
  tjhandle handle = tjInitDecompress();
  int w = 0, h = 0, subsampling = 0, colorspace = 0;
  bool read = handle && tjDecompressHeader3(
                            handle, data, static_cast<unsigned long>(size), &w,
                            &h, &subsampling, &colorspace) == 0;
  if (handle)
    tjDestroy(handle);
  if (!read)
    return;
  width = w;
  height = h;
}

struct DatasetFree {
  void operator()(fluid_dataset *d) const { fluid_dataset_free(d); }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fluid::fuzz::FuzzInputFile image("fuzz-image");
  static fluid::fuzz::FuzzInputFile list("fuzz-image-list");
  static const bool listWritten = [] {
    std::string line = image.path() + " 0\n";
    list.assign(reinterpret_cast<const uint8_t *>(line.data()), line.size());
    return true;
  }();
  (void)listWritten;

  int64_t declaredWidth = 0, declaredHeight = 0;
  declaredSize(data, size, declaredWidth, declaredHeight);
  // PNG's sides go up to 2^32 - 1.
  int64_t declared = 0;
  if (__builtin_mul_overflow(declaredWidth, declaredHeight, &declared))
    declared = INT64_MAX;
  if (declared > kMaxFuzzPixels && declared <= kMaxImagePixels)
    return 0;
  image.assign(data, size);

  // Decoded alone first: the promises of fluid_image_decode.
  int64_t height = 0, width = 0;
  if (fluid_image_decode(image.path().c_str(), nullptr, 0, &height, &width) !=
      FLUID_OK)
    return 0;
  if (height < 1 || width < 1 || height > kMaxImagePixels / width)
    std::abort();
  // A file decodes to the size its header declares.
  if (declared > 0 && (height != declaredHeight || width != declaredWidth))
    std::abort();
  std::vector<uint8_t> rgb(size_t(height * width * 3));
  int64_t height2 = 0, width2 = 0;
  if (fluid_image_decode(image.path().c_str(), rgb.data(), int64_t(rgb.size()),
                         &height2, &width2) != FLUID_OK ||
      height2 != height || width2 != width)
    std::abort();

  // Then as the loader reads it.
  fluid_image_options options = {};
  options.height = 1 + int64_t(size >> 1) % 16;
  options.width = 1 + int64_t(size >> 5) % 16;
  options.transform = (size & 1) ? FLUID_IMAGE_TRAIN : FLUID_IMAGE_EVAL;
  options.skip_bad_images = int32_t(size >> 9) & 1;
  options.seed = size;
  fluid_dataset *raw = nullptr;
  if (fluid_dataset_open_images(list.path().c_str(), &options, &raw) !=
      FLUID_OK)
    std::abort();
  std::unique_ptr<fluid_dataset, DatasetFree> dataset(raw);
  bool channelsLast = (size >> 10) & 1;
  int32_t order[4] = {0, 1, 2, 3};
  if (channelsLast) {
    order[1] = 2;
    order[2] = 3;
    order[3] = 1;
  }
  const int64_t dims[4] = {1, 3, options.height, options.width};
  std::vector<float> pixels(size_t(3 * options.height * options.width));
  int64_t label = -1;
  fluid_tensor images = {};
  images.data = pixels.data();
  images.dtype = FLUID_F32;
  images.rank = 4;
  for (int d = 0; d < 4; ++d)
    images.shape[d] = dims[order[d]];
  fluid_tensor labels = {};
  labels.data = &label;
  labels.dtype = FLUID_I64;
  labels.rank = 1;
  labels.shape[0] = 1;
  const int64_t index = 0;
  const double mean[3] = {0.485, 0.456, 0.406}, std[3] = {0.229, 0.224, 0.225};
  if (fluid_dataset_epoch_batch(dataset.get(), size >> 2, &index, 1, &images,
                                &labels, mean, std, order) != FLUID_OK ||
      label != 0)
    std::abort();
  for (float value : pixels)
    if (!std::isfinite(value))
      std::abort();
  return 0;
}
