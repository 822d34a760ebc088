//===- Batch.cpp - Normalized batches, info and release of datasets -------===//
//
// The entry points every kind of dataset shares. A batch is validated whole
// (descriptors, normalization, every index) before its first element is
// written, and reads nothing but the immutable dataset, so any number of
// threads may fill batches from one dataset at once.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Data.h"

#include "Dataset.h"
#include "fluid/runtime/Error.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using fluid::rt::fail;

namespace {

const fluid_dataset &requireDataset(const fluid_dataset *dataset) {
  if (!dataset)
    fail("dataset must not be null");
  return *dataset;
}

std::string dtypeName(int32_t dtype) {
  switch (dtype) {
  case FLUID_F32:
    return "F32";
  case FLUID_F64:
    return "F64";
  case FLUID_I32:
    return "I32";
  case FLUID_I64:
    return "I64";
  case FLUID_F16:
    return "F16";
  case FLUID_BF16:
    return "BF16";
  case FLUID_U8:
    return "U8";
  default:
    return "dtype " + std::to_string(dtype);
  }
}

std::string formatShape(int32_t rank, const int64_t *shape) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// Checks a destination: non-null, one of two dtypes, exactly `expected`
/// as its shape, and data unless it is empty.
void requireDestination(const fluid_tensor *t, const char *name,
                        int32_t firstDtype, int32_t secondDtype,
                        const std::vector<int64_t> &expected,
                        const char *layout) {
  if (!t)
    fail(std::string(name) + " must not be null");
  if (t->dtype != firstDtype && t->dtype != secondDtype)
    throw fluid::rt::Error(
        FLUID_ERROR_UNSUPPORTED,
        std::string(name) + " must be " + dtypeName(firstDtype) + " or " +
            dtypeName(secondDtype) + ", got " + dtypeName(t->dtype));
  std::string wanted = formatShape(int32_t(expected.size()), expected.data());
  if (t->rank < 0 || t->rank > FLUID_MAX_RANK)
    fail(std::string(name) + " has rank " + std::to_string(t->rank) +
         " but the batch needs " + layout + " = " + wanted);
  if (std::vector<int64_t>(t->shape, t->shape + t->rank) != expected)
    fail(std::string(name) + " has shape " + formatShape(t->rank, t->shape) +
         " but the batch needs " + layout + " = " + wanted);
  bool empty = false;
  for (int64_t size : expected)
    empty |= size == 0;
  if (!empty && !t->data)
    fail(std::string(name) + " data is null");
}

/// Fails unless pixels normalize to finite values of the destination type.
void requireNormalization(double mean, double std, int32_t dtype) {
  if (!std::isfinite(mean))
    fail("mean must be finite, got " + std::to_string(mean));
  if (!std::isfinite(std) || !(std > 0))
    fail("std must be finite and > 0, got " + std::to_string(std));
  // (p / 255 - mean) / std is monotonic in p, so p = 0 and p = 255 bound it.
  double largest = std::fmax(std::fabs((0 / 255.0 - mean) / std),
                             std::fabs((255 / 255.0 - mean) / std));
  double limit = dtype == FLUID_F32 ? FLT_MAX : DBL_MAX;
  if (!(largest <= limit))
    fail("mean " + std::to_string(mean) + " and std " + std::to_string(std) +
         " normalize pixels to magnitudes beyond the range of " +
         dtypeName(dtype));
}

template <typename Pixel, typename Label>
void fillBatch(const fluid_dataset &dataset, const int64_t *indices, int64_t n,
               Pixel *images, Label *labels, double mean, double std) {
  Pixel normalized[256];
  for (int value = 0; value < 256; ++value)
    normalized[value] = Pixel((double(value) / 255.0 - mean) / std);
  int64_t size = dataset.imageSize();
  std::vector<uint8_t> scratch(static_cast<size_t>(size));
  for (int64_t k = 0; k < n; ++k) {
    const uint8_t *pixels = dataset.pixels(indices[k], scratch.data());
    Pixel *image = images + k * size;
    for (int64_t i = 0; i < size; ++i)
      image[i] = normalized[pixels[i]];
    labels[k] = Label(dataset.label(indices[k]));
  }
}

template <typename Pixel>
void dispatchLabels(const fluid_dataset &dataset, const int64_t *indices,
                    int64_t n, Pixel *images, const fluid_tensor &labels,
                    double mean, double std) {
  if (labels.dtype == FLUID_I32)
    fillBatch(dataset, indices, n, images, static_cast<int32_t *>(labels.data),
              mean, std);
  else
    fillBatch(dataset, indices, n, images, static_cast<int64_t *>(labels.data),
              mean, std);
}

} // namespace

extern "C" void fluid_dataset_free(fluid_dataset *dataset) { delete dataset; }

extern "C" fluid_status fluid_dataset_info(const fluid_dataset *dataset,
                                           int64_t *count, int64_t shape[3],
                                           int64_t *classes) {
  return fluid::rt::guard("fluid_dataset_info", [&] {
    const fluid_dataset &d = requireDataset(dataset);
    if (count)
      *count = d.count;
    if (shape) {
      shape[0] = d.channels;
      shape[1] = d.height;
      shape[2] = d.width;
    }
    if (classes)
      *classes = d.classes;
  });
}

extern "C" fluid_status fluid_dataset_batch(const fluid_dataset *dataset,
                                            const int64_t *indices, int64_t n,
                                            fluid_tensor *images,
                                            fluid_tensor *labels, double mean,
                                            double std) {
  return fluid::rt::guard("fluid_dataset_batch", [&] {
    const fluid_dataset &d = requireDataset(dataset);
    if (n < 0)
      fail("n must be >= 0, got " + std::to_string(n));
    if (n > 0 && !indices)
      fail("indices must not be null when n > 0");
    int64_t elements;
    if (__builtin_mul_overflow(n, d.imageSize(), &elements))
      fail("a batch of " + std::to_string(n) + " images of " +
           std::to_string(d.imageSize()) + " pixels overflows int64");
    requireDestination(images, "images", FLUID_F32, FLUID_F64,
                       {n, d.channels, d.height, d.width}, "[n, C, H, W]");
    requireDestination(labels, "labels", FLUID_I32, FLUID_I64, {n}, "[n]");
    requireNormalization(mean, std, images->dtype);
    for (int64_t k = 0; k < n; ++k)
      if (indices[k] < 0 || indices[k] >= d.count)
        fail("indices[" + std::to_string(k) +
             "] = " + std::to_string(indices[k]) +
             " is outside the dataset's [0, " + std::to_string(d.count) + ")");
    if (images->dtype == FLUID_F32)
      dispatchLabels(d, indices, n, static_cast<float *>(images->data), *labels,
                     mean, std);
    else
      dispatchLabels(d, indices, n, static_cast<double *>(images->data),
                     *labels, mean, std);
  });
}
