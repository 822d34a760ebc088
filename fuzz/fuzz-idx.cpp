//===- fuzz-idx.cpp - libFuzzer target: fluid_dataset_open_idx ------------===//
//
// fluid_dataset_open_idx reads two files, so an input packs both:
//
//   byte 0      flags: bit 0 gzips the image file, bit 1 the label file,
//               bit 2 writes each gzipped file as two concatenated members;
//   bytes 1..4  n, little-endian: the image file is the next min(n, rest)
//               bytes, the label file what follows.
//
// Compressing in the harness lets the fuzzer mutate the IDX content behind
// a valid gzip stream; a file that is already gzip (a mutated .gz seed, with
// the flag clear) exercises the corrupt-stream paths. An input shorter than
// 5 bytes is one raw image file with an empty label file. When a dataset
// opens, its info and a batch of its first and last items are read as the
// training driver reads them.
//
//===----------------------------------------------------------------------===//

#include "FuzzInputFile.h"

#include "fluid/runtime/Data.h"

#include <algorithm>
#include <cstdlib>
#include <vector>
#include <zlib.h>

namespace {

enum Flags : uint8_t {
  gzipImages = 1,
  gzipLabels = 2,
  twoMembers = 4,
};

/// Appends `bytes` to `out` as one gzip member.
void appendGzipMember(const uint8_t *bytes, size_t size,
                      std::vector<uint8_t> &out) {
  z_stream stream = {};
  // 16 + MAX_WBITS: a gzip wrapper.
  if (deflateInit2(&stream, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    std::abort();
  size_t start = out.size();
  out.resize(start + deflateBound(&stream, uLong(size)));
  stream.next_in = const_cast<uint8_t *>(bytes);
  stream.avail_in = uInt(size);
  stream.next_out = out.data() + start;
  stream.avail_out = uInt(out.size() - start);
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END)
    std::abort();
  out.resize(start + stream.total_out);
  deflateEnd(&stream);
}

void writeFile(fluid::fuzz::FuzzInputFile &file, const uint8_t *bytes,
               size_t size, bool compress, bool split) {
  if (!compress) {
    file.assign(bytes, size);
    return;
  }
  std::vector<uint8_t> gzip;
  size_t first = split ? size / 2 : size;
  appendGzipMember(bytes, first, gzip);
  if (split)
    appendGzipMember(bytes + first, size - first, gzip);
  file.assign(gzip.data(), gzip.size());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fluid::fuzz::FuzzInputFile images("fuzz-idx-images");
  static fluid::fuzz::FuzzInputFile labels("fuzz-idx-labels");

  uint8_t flags = 0;
  const uint8_t *imageBytes = data, *labelBytes = data + size;
  size_t imageSize = size, labelSize = 0;
  if (size >= 5) {
    flags = data[0];
    size_t n = size_t(data[1]) | size_t(data[2]) << 8 | size_t(data[3]) << 16 |
               size_t(data[4]) << 24;
    imageBytes = data + 5;
    imageSize = std::min(n, size - 5);
    labelBytes = imageBytes + imageSize;
    labelSize = size - 5 - imageSize;
  }
  writeFile(images, imageBytes, imageSize, flags & gzipImages,
            flags & twoMembers);
  writeFile(labels, labelBytes, labelSize, flags & gzipLabels,
            flags & twoMembers);

  fluid_dataset *dataset = nullptr;
  if (fluid_dataset_open_idx(images.path().c_str(), labels.path().c_str(),
                             &dataset) != FLUID_OK)
    return 0;
  int64_t count = 0, shape[3] = {}, classes = 0;
  if (fluid_dataset_info(dataset, &count, shape, &classes) != FLUID_OK ||
      count < 1 || shape[0] != 1 || shape[1] < 1 || shape[2] < 1 ||
      classes < 1 || classes > 256)
    std::abort();
  // Every pixel and label came from the input, so an image is no larger.
  if (shape[1] * shape[2] > int64_t(size) * 1032)
    std::abort();
  int64_t indices[2] = {0, count - 1};
  std::vector<float> pixels(size_t(2 * shape[1] * shape[2]));
  std::vector<int64_t> targets(2);
  fluid_tensor imageTensor = {};
  imageTensor.data = pixels.data();
  imageTensor.dtype = FLUID_F32;
  imageTensor.rank = 4;
  imageTensor.shape[0] = 2;
  imageTensor.shape[1] = 1;
  imageTensor.shape[2] = shape[1];
  imageTensor.shape[3] = shape[2];
  fluid_tensor labelTensor = {};
  labelTensor.data = targets.data();
  labelTensor.dtype = FLUID_I64;
  labelTensor.rank = 1;
  labelTensor.shape[0] = 2;
  if (fluid_dataset_batch(dataset, indices, 2, &imageTensor, &labelTensor, 0.5,
                          0.25) != FLUID_OK)
    std::abort();
  for (int64_t label : targets)
    if (label < 0 || label >= classes)
      std::abort();
  fluid_dataset_free(dataset);
  return 0;
}
