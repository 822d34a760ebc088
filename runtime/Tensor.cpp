//===- Tensor.cpp - Tensor descriptors and error state --------------------===//

#include "fluid/runtime/Tensor.h"
#include "fluid/runtime/Error.h"

#include <string>

namespace {
thread_local std::string lastError;
} // namespace

void fluid::rt::setLastError(const std::string &message) {
  lastError = message;
}

extern "C" const char *fluid_last_error(void) { return lastError.c_str(); }

extern "C" int64_t fluid_dtype_size(int32_t dtype) {
  switch (dtype) {
  case FLUID_F32:
  case FLUID_I32:
    return 4;
  case FLUID_F64:
  case FLUID_I64:
    return 8;
  case FLUID_F16:
  case FLUID_BF16:
    return 2;
  case FLUID_U8:
    return 1;
  default:
    return 0;
  }
}

extern "C" const char *fluid_dtype_name(int32_t dtype) {
  switch (dtype) {
  case FLUID_F32:
    return "f32";
  case FLUID_F64:
    return "f64";
  case FLUID_I32:
    return "i32";
  case FLUID_I64:
    return "i64";
  case FLUID_F16:
    return "f16";
  case FLUID_BF16:
    return "bf16";
  case FLUID_U8:
    return "u8";
  default:
    return nullptr;
  }
}

extern "C" int64_t fluid_tensor_numel(const fluid_tensor *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; ++i)
    n *= t->shape[i];
  return n;
}
