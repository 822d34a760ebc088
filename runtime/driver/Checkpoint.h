//===- Checkpoint.h - Host copies of parameters and safetensors I/O -------===//
//
// The driver keeps a host copy of every parameter: it is initialized here
// exactly as fluid-train's ParamStore does (fluid_init_tensor with the
// parameter's name hashed as the stream for floating-point parameters, the
// integer initial value for step counters), loaded from and saved to
// safetensors files with every parameter under its own name, and copied to
// and from the device by the driver. The checkpoints are fluid-train's:
// either tool resumes from the other's. A parameter the program stores
// permuted (a channels-last filter, fluid_program_value::storage_order)
// is held here as the device holds it, and is drawn, loaded and saved in
// its checkpoint (PyTorch) order and shape, permuted on the way: its
// values and files are those of the program that does not permute it.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_CHECKPOINT_H
#define FLUID_RUNTIME_DRIVER_CHECKPOINT_H

#include "InitFrom.h"
#include "ProgramView.h"

#include <memory>
#include <string>
#include <vector>

namespace fluid::rt::driver {

/// 256-byte aligned, zero-filled host memory.
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(int64_t bytes);
  void *data() const { return data_.get(); }
  int64_t bytes() const { return bytes_; }

private:
  struct Free {
    void operator()(void *p) const;
  };
  std::unique_ptr<void, Free> data_;
  int64_t bytes_ = 0;
};

class HostParameters {
public:
  /// Allocates a zeroed host copy of every parameter of `program`.
  explicit HostParameters(const ProgramView &program);

  /// Sets every parameter to its initial value under `seed`.
  void initialize(uint64_t seed);

  /// Replaces the values by those of the safetensors file `path`. A missing
  /// tensor is an error, except for optimizer state and the learning rate
  /// (fluid-train's checkpoints have none), which keep their values; a
  /// tensor of another dtype or shape is an error naming both, and so is a
  /// floating-point tensor holding a nan or an infinity. Returns the
  /// names of the file's tensors that are no parameter. Throws Error.
  std::vector<std::string> load(const std::string &path);

  /// Replaces the values of the model parameters that the safetensors file
  /// `path` holds, by --init-from's rules (InitFrom.h): the others, and the
  /// optimizer state, keep theirs. Throws Error.
  InitFromResult initFrom(const std::string &path);

  /// Writes every parameter under its name (atomically). Throws Error.
  void save(const std::string &path) const;

  /// Parameter i as the device holds it: stored permuted if the program
  /// says so.
  void *data(int64_t i) const { return values_[i].data(); }
  int64_t bytes(int64_t i) const { return values_[i].bytes(); }

private:
  /// Parameter i's checkpoint shape (its shape unpermuted) over `data`.
  fluid_tensor checkpointDescriptor(int64_t i, void *data) const;

  const ProgramView &program_;
  std::vector<AlignedBuffer> values_;
};

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_CHECKPOINT_H
