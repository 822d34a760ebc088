//===- Batch.cpp - Normalized batches, info and release of datasets -------===//
//
// The entry points every kind of dataset shares. A batch is validated whole
// (descriptors, normalization, every index) before its first element is
// written, and reads nothing but the immutable dataset (an image dataset
// also counts its bad images, under a lock), so any number of threads may
// fill batches from one dataset at once.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Data.h"

#include "Dataset.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
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

/// Fails unless pixels normalize to finite values of the destination type
/// in every channel; messages name the channel when the values are
/// `perChannel`.
void requireNormalization(const double *mean, const double *std,
                          int64_t channels, bool perChannel, int32_t dtype) {
  if (!mean || !std)
    fail("mean and std must not be null");
  for (int64_t c = 0; c < channels; ++c) {
    std::string which =
        perChannel ? " of channel " + std::to_string(c) : std::string();
    if (!std::isfinite(mean[c]))
      fail("mean" + which + " must be finite, got " + std::to_string(mean[c]));
    if (!std::isfinite(std[c]) || !(std[c] > 0))
      fail("std" + which + " must be finite and > 0, got " +
           std::to_string(std[c]));
    // (p / 255 - mean) / std is monotonic in p, so p = 0 and p = 255 bound
    // it.
    double largest = std::fmax(std::fabs((0 / 255.0 - mean[c]) / std[c]),
                               std::fabs((255 / 255.0 - mean[c]) / std[c]));
    double limit = dtype == FLUID_F32 ? FLT_MAX : DBL_MAX;
    if (!(largest <= limit))
      fail("mean " + std::to_string(mean[c]) + " and std " +
           std::to_string(std[c]) + which +
           " normalize pixels to magnitudes beyond the range of " +
           dtypeName(dtype));
  }
}

/// Where the elements of [n, C, H, W] lie in a batch laid out in `order`:
/// the element strides of n, C, H and W.
struct BatchStrides {
  int64_t image, channel, row, column;
};

BatchStrides stridesOf(const int64_t dims[4], const int32_t order[4]) {
  int64_t strides[4];
  int64_t stride = 1;
  for (int d = 3; d >= 0; --d) {
    strides[order[d]] = stride;
    stride *= dims[order[d]];
  }
  return {strides[0], strides[1], strides[2], strides[3]};
}

template <typename Pixel, typename Label>
void fillBatch(const fluid_dataset &dataset, uint64_t epoch,
               const int64_t *indices, int64_t n, Pixel *images, Label *labels,
               const double *mean, const double *std,
               const BatchStrides &strides) {
  // Each channel's 256 normalized values.
  int64_t channels = dataset.channels;
  std::vector<Pixel> normalized(size_t(channels * 256));
  for (int64_t c = 0; c < channels; ++c)
    for (int value = 0; value < 256; ++value)
      normalized[size_t(c * 256 + value)] =
          Pixel((double(value) / 255.0 - mean[c]) / std[c]);
  int64_t plane = dataset.height * dataset.width;
  bool contiguous = strides.column == 1 && strides.row == dataset.width &&
                    strides.channel == plane;
  std::vector<uint8_t> scratch(static_cast<size_t>(dataset.imageSize()));
  for (int64_t k = 0; k < n; ++k) {
    fluid_dataset::Item item = dataset.item(indices[k], epoch, scratch.data());
    Pixel *image = images + k * strides.image;
    // Writes value(i, c) for element i of the item, of channel c.
    auto place = [&](auto value) {
      int64_t i = 0;
      if (contiguous) {
        for (int64_t c = 0; c < channels; ++c)
          for (int64_t j = 0; j < plane; ++j, ++i)
            image[i] = value(i, c);
        return;
      }
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t h = 0; h < dataset.height; ++h)
          for (int64_t w = 0; w < dataset.width; ++w, ++i)
            image[c * strides.channel + h * strides.row + w * strides.column] =
                value(i, c);
    };
    if (item.values)
      place([&](int64_t i, int64_t) { return Pixel(item.values[i]); });
    else
      place([&](int64_t i, int64_t c) {
        return normalized[size_t(c * 256 + item.pixels[i])];
      });
    labels[k] = Label(item.label);
  }
}

template <typename Pixel>
void dispatchLabels(const fluid_dataset &dataset, uint64_t epoch,
                    const int64_t *indices, int64_t n, Pixel *images,
                    const fluid_tensor &labels, const double *mean,
                    const double *std, const BatchStrides &strides) {
  if (labels.dtype == FLUID_I32)
    fillBatch(dataset, epoch, indices, n, images,
              static_cast<int32_t *>(labels.data), mean, std, strides);
  else
    fillBatch(dataset, epoch, indices, n, images,
              static_cast<int64_t *>(labels.data), mean, std, strides);
}

/// Fails unless `order` is a permutation of {0, 1, 2, 3}.
void requireOrder(const int32_t *order) {
  if (!order)
    fail("order must not be null");
  bool seen[4] = {false, false, false, false};
  for (int d = 0; d < 4; ++d) {
    if (order[d] < 0 || order[d] > 3 || seen[order[d]])
      fail("order {" + std::to_string(order[0]) + ", " +
           std::to_string(order[1]) + ", " + std::to_string(order[2]) + ", " +
           std::to_string(order[3]) + "} is not a permutation of {0, 1, 2, 3}");
    seen[order[d]] = true;
  }
}

/// Fills a batch after checking every argument; `mean` and `std` hold one
/// value per channel (all equal unless `perChannel`).
void batchIn(const fluid_dataset *dataset, uint64_t epoch,
             const int64_t *indices, int64_t n, fluid_tensor *images,
             fluid_tensor *labels, const double *mean, const double *std,
             bool perChannel, const int32_t *order) {
  const fluid_dataset &d = requireDataset(dataset);
  requireOrder(order);
  if (n < 0)
    fail("n must be >= 0, got " + std::to_string(n));
  if (n > 0 && !indices)
    fail("indices must not be null when n > 0");
  int64_t elements;
  if (__builtin_mul_overflow(n, d.imageSize(), &elements))
    fail("a batch of " + std::to_string(n) + " images of " +
         std::to_string(d.imageSize()) + " pixels overflows int64");
  const int64_t dims[4] = {n, d.channels, d.height, d.width};
  static const char *const kNames[4] = {"n", "C", "H", "W"};
  std::vector<int64_t> expected;
  std::string layout = "[";
  for (int i = 0; i < 4; ++i) {
    expected.push_back(dims[order[i]]);
    layout += std::string(i ? ", " : "") + kNames[order[i]];
  }
  layout += "]";
  requireDestination(images, "images", FLUID_F32, FLUID_F64, expected,
                     layout.c_str());
  requireDestination(labels, "labels", FLUID_I32, FLUID_I64, {n}, "[n]");
  requireNormalization(mean, std, d.channels, perChannel, images->dtype);
  for (int64_t k = 0; k < n; ++k)
    if (indices[k] < 0 || indices[k] >= d.count)
      fail("indices[" + std::to_string(k) +
           "] = " + std::to_string(indices[k]) +
           " is outside the dataset's [0, " + std::to_string(d.count) + ")");
  BatchStrides strides = stridesOf(dims, order);
  if (images->dtype == FLUID_F32)
    dispatchLabels(d, epoch, indices, n, static_cast<float *>(images->data),
                   *labels, mean, std, strides);
  else
    dispatchLabels(d, epoch, indices, n, static_cast<double *>(images->data),
                   *labels, mean, std, strides);
}

/// batchIn with one mean and std for every channel, in epoch 0.
void uniformBatchIn(const fluid_dataset *dataset, const int64_t *indices,
                    int64_t n, fluid_tensor *images, fluid_tensor *labels,
                    double mean, double std, const int32_t *order) {
  const fluid_dataset &d = requireDataset(dataset);
  std::vector<double> means(size_t(d.channels), mean),
      stds(size_t(d.channels), std);
  batchIn(dataset, 0, indices, n, images, labels, means.data(), stds.data(),
          false, order);
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
  static const int32_t kInOrder[4] = {0, 1, 2, 3};
  return fluid::rt::guard("fluid_dataset_batch", [&] {
    uniformBatchIn(dataset, indices, n, images, labels, mean, std, kInOrder);
  });
}

extern "C" fluid_status
fluid_dataset_batch_ordered(const fluid_dataset *dataset,
                            const int64_t *indices, int64_t n,
                            fluid_tensor *images, fluid_tensor *labels,
                            double mean, double std, const int32_t order[4]) {
  return fluid::rt::guard("fluid_dataset_batch_ordered", [&] {
    uniformBatchIn(dataset, indices, n, images, labels, mean, std, order);
  });
}

extern "C" fluid_status fluid_dataset_epoch_batch(
    const fluid_dataset *dataset, uint64_t epoch, const int64_t *indices,
    int64_t n, fluid_tensor *images, fluid_tensor *labels, const double *mean,
    const double *std, const int32_t order[4]) {
  return fluid::rt::guard("fluid_dataset_epoch_batch", [&] {
    batchIn(dataset, epoch, indices, n, images, labels, mean, std, true, order);
  });
}

extern "C" fluid_status fluid_dataset_bad_images(const fluid_dataset *dataset,
                                                 int64_t *count, char *latest,
                                                 int64_t capacity) {
  return fluid::rt::guard("fluid_dataset_bad_images", [&] {
    const fluid_dataset &d = requireDataset(dataset);
    if (!count)
      fail("count must not be null");
    if (latest && capacity < 1)
      fail("capacity must be >= 1 when latest is not null, got " +
           std::to_string(capacity));
    std::string message;
    *count = d.badImages(message);
    if (latest) {
      size_t kept = std::min(message.size(), size_t(capacity - 1));
      std::memcpy(latest, message.data(), kept);
      latest[kept] = '\0';
    }
  });
}
