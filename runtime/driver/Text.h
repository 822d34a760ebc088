//===- Text.h - Formatting helpers of the training driver -----------------===//
//
// printf-style formatting into std::string, and the way the driver names
// dtypes and shapes in messages: "[10,784] f32", as the interpreter's
// ParamStore does, so that fluid-train and compiled programs report a
// mismatched checkpoint in the same words.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_TEXT_H
#define FLUID_RUNTIME_DRIVER_TEXT_H

#include "fluid/runtime/Tensor.h"

#include <string>

namespace fluid::rt::driver {

/// vsnprintf into a std::string.
std::string format(const char *pattern, ...)
    __attribute__((format(printf, 1, 2)));

/// "f32", "i64", ...; "dtype N" for an unknown value.
std::string dtypeName(int32_t dtype);

/// "[2,3] f32"; "[] f64" for rank 0.
std::string describe(int32_t dtype, int32_t rank, const int64_t *shape);

/// `bytes` in MiB.
inline double mebibytes(int64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_TEXT_H
