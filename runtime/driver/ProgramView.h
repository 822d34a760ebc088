//===- ProgramView.h - A checked view of an emitted program ---------------===//
//
// The driver trusts nothing in a fluid_program_info it was handed: the
// constructor checks the ABI version, the backend, every value, every index
// and the calling conventions of Program.h (the training function takes
// "images" f32 [N,C,H,W] and "labels" i64 [N] and returns "loss" and
// "learning_rate"; the predict function takes "images" and returns "logits"
// [N, classes]; images may be stored permuted if each image's pixels stay
// together, nothing else of a function may), and throws an Error naming
// what is wrong. After that the rest of the driver reads the indices it
// found here.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_PROGRAMVIEW_H
#define FLUID_RUNTIME_DRIVER_PROGRAMVIEW_H

#include "fluid/runtime/Program.h"

#include <array>
#include <cstdio>
#include <string>

namespace fluid::rt::driver {

/// Bytes of a dense tensor of `value`'s type.
int64_t valueBytes(const fluid_program_value &value);

/// "[2,3] f32".
std::string describe(const fluid_program_value &value);

/// The training function's conventions, found by name.
struct TrainSignature {
  int64_t imagesArgument = -1, labelsArgument = -1;
  /// How a batch of images is laid out: dimension d of memory is dimension
  /// imagesOrder[d] of [N, C, H, W] (fluid_dataset_batch_ordered).
  std::array<int32_t, 4> imagesOrder = {0, 1, 2, 3};
  int64_t lossBuffer = -1, learningRateBuffer = -1; // buffer indices
  int32_t lossDtype = 0;
};

/// The predict function's conventions.
struct PredictSignature {
  int64_t imagesArgument = -1;
  std::array<int32_t, 4> imagesOrder = {0, 1, 2, 3};
  int64_t logitsBuffer = -1;
  int32_t logitsDtype = 0;
  int64_t batch = 0;
};

class ProgramView {
public:
  /// Checks `program` (see the file comment); throws Error.
  explicit ProgramView(const fluid_program_info *program);

  const fluid_program_info &info() const { return *program_; }
  bool isCuda() const { return program_->backend == FLUID_BACKEND_CUDA; }
  const char *backendName() const { return isCuda() ? "cuda" : "cpu"; }

  const fluid_program_function &train() const {
    return program_->functions[program_->train_function];
  }
  /// The predict function, or null.
  const fluid_program_function *predict() const {
    return program_->predict_function < 0
               ? nullptr
               : &program_->functions[program_->predict_function];
  }
  const TrainSignature &trainSignature() const { return train_; }
  const PredictSignature &predictSignature() const { return predict_; }

  /// The compiled batch and image shape [C, H, W].
  int64_t batch() const { return batch_; }
  const int64_t *imageShape() const { return imageShape_; }
  int64_t classes() const { return program_->classes; }

  int64_t numParams() const { return program_->num_params; }
  const fluid_program_param &param(int64_t i) const {
    return program_->params[i];
  }
  int64_t paramBytes(int64_t i) const { return valueBytes(param(i).value); }
  int64_t totalParamBytes() const;

  /// Prints --info.
  void print(std::FILE *out) const;

private:
  void checkParams();
  void checkFunction(int64_t index);
  void checkTrain();
  void checkPredict();

  const fluid_program_info *program_;
  TrainSignature train_;
  PredictSignature predict_;
  int64_t batch_ = 0;
  int64_t imageShape_[3] = {0, 0, 0};
};

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_PROGRAMVIEW_H
