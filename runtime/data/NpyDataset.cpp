//===- NpyDataset.cpp - Datasets of a pair of NumPy files -----------------===//
//
// For exact comparisons with PyTorch: the images a PyTorch loop would feed
// its model, saved with numpy.save, are batched as they are (no crop, no
// flip). u8 pixels are normalized as every dataset's are; f32 values are
// taken to be normalized already and are written unchanged. Both files are
// validated whole and held in memory.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Data.h"

#include "Dataset.h"
#include "FileReader.h"
#include "fluid/runtime/Error.h"
#include "fluid/runtime/Npy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

using fluid::rt::data::failFormat;
using fluid::rt::data::failUnsupported;

namespace {

/// An array read by fluid_npy_read, released with it.
class NpyArray {
public:
  explicit NpyArray(const std::string &path) {
    fluid_status status = fluid_npy_read(path.c_str(), &tensor_);
    if (status != FLUID_OK) {
      // The message names the file; fluid_npy_read's name adds nothing.
      std::string message = fluid_last_error();
      const std::string prefix = "fluid_npy_read: ";
      if (message.compare(0, prefix.size(), prefix) == 0)
        message.erase(0, prefix.size());
      throw fluid::rt::Error(status, message);
    }
  }
  ~NpyArray() { fluid_npy_free(&tensor_); }
  NpyArray(const NpyArray &) = delete;
  NpyArray &operator=(const NpyArray &) = delete;

  const fluid_tensor &tensor() const { return tensor_; }

  int64_t elements() const {
    int64_t n = 1;
    for (int32_t d = 0; d < tensor_.rank; ++d)
      n *= tensor_.shape[d];
    return n;
  }

  /// "u8 [2, 3]": the array's dtype and shape, for messages.
  std::string describe() const {
    std::string text;
    switch (tensor_.dtype) {
    case FLUID_U8:
      text = "u8";
      break;
    case FLUID_F16:
      text = "f16";
      break;
    case FLUID_F32:
      text = "f32";
      break;
    case FLUID_F64:
      text = "f64";
      break;
    case FLUID_I32:
      text = "i32";
      break;
    case FLUID_I64:
      text = "i64";
      break;
    default:
      text = "dtype " + std::to_string(tensor_.dtype);
    }
    text += " [";
    for (int32_t d = 0; d < tensor_.rank; ++d)
      text += (d ? ", " : "") + std::to_string(tensor_.shape[d]);
    return text + "]";
  }

private:
  fluid_tensor tensor_ = {};
};

class NpyDataset final : public fluid_dataset {
public:
  NpyDataset(std::unique_ptr<NpyArray> images, std::vector<int32_t> labels,
             int64_t classes)
      : fluid_dataset(images->tensor().shape[0], images->tensor().shape[1],
                      images->tensor().shape[2], images->tensor().shape[3],
                      classes),
        images_(std::move(images)), labels_(std::move(labels)) {}

  Item item(int64_t index, uint64_t, uint8_t *) const override {
    const fluid_tensor &images = images_->tensor();
    Item item;
    if (images.dtype == FLUID_U8)
      item.pixels =
          static_cast<const uint8_t *>(images.data) + index * imageSize();
    else
      item.values =
          static_cast<const float *>(images.data) + index * imageSize();
    item.label = labels_[size_t(index)];
    return item;
  }

private:
  std::unique_ptr<NpyArray> images_;
  std::vector<int32_t> labels_;
};

std::unique_ptr<fluid_dataset> openNpy(const std::string &imagesPath,
                                       const std::string &labelsPath) {
  auto images = std::make_unique<NpyArray>(imagesPath);
  const fluid_tensor &pixels = images->tensor();
  if (pixels.dtype != FLUID_U8 && pixels.dtype != FLUID_F32)
    failUnsupported(imagesPath,
                    "images must be u8 or f32, got " + images->describe());
  if (pixels.rank != 4 || images->elements() == 0)
    failFormat(imagesPath, "images must be [N, C, H, W] with no dimension 0, "
                           "got " +
                               images->describe());
  if (pixels.dtype == FLUID_F32) {
    const float *values = static_cast<const float *>(pixels.data);
    const float *bad =
        std::find_if(values, values + images->elements(),
                     [](float value) { return !std::isfinite(value); });
    if (bad != values + images->elements())
      failFormat(imagesPath, "element " + std::to_string(bad - values) +
                                 " is " + std::to_string(*bad) +
                                 "; the images must be finite");
  }

  NpyArray labelArray(labelsPath);
  const fluid_tensor &labelTensor = labelArray.tensor();
  if ((labelTensor.dtype != FLUID_I64 && labelTensor.dtype != FLUID_I32) ||
      labelTensor.rank != 1)
    failUnsupported(labelsPath, "labels must be i64 (or i32) [N], got " +
                                    labelArray.describe());
  int64_t count = pixels.shape[0];
  if (labelTensor.shape[0] != count)
    fluid::rt::fail(imagesPath + " holds " + std::to_string(count) +
                    " images but " + labelsPath + " holds " +
                    std::to_string(labelTensor.shape[0]) + " labels");
  std::vector<int32_t> labels(static_cast<size_t>(count));
  int64_t largest = 0;
  for (int64_t i = 0; i < count; ++i) {
    int64_t label = labelTensor.dtype == FLUID_I64
                        ? static_cast<const int64_t *>(labelTensor.data)[i]
                        : static_cast<const int32_t *>(labelTensor.data)[i];
    if (label < 0 || label > std::numeric_limits<int32_t>::max())
      failFormat(labelsPath, "label " + std::to_string(i) + " is " +
                                 std::to_string(label) +
                                 "; labels must be from 0 to 2147483647");
    labels[size_t(i)] = int32_t(label);
    largest = std::max(largest, label);
  }
  return std::make_unique<NpyDataset>(std::move(images), std::move(labels),
                                      largest + 1);
}

} // namespace

extern "C" fluid_status fluid_dataset_open_npy(const char *images_path,
                                               const char *labels_path,
                                               fluid_dataset **out) {
  return fluid::rt::guard("fluid_dataset_open_npy", [&] {
    if (!images_path || !labels_path || !out)
      fluid::rt::fail("images_path, labels_path and out must not be null");
    *out = openNpy(images_path, labels_path).release();
  });
}
