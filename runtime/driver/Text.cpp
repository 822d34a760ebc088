//===- Text.cpp - Formatting helpers of the training driver ---------------===//

#include "Text.h"

#include <cstdarg>
#include <cstdio>

using namespace fluid::rt;

std::string driver::format(const char *pattern, ...) {
  va_list args;
  va_start(args, pattern);
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, pattern, copy);
  va_end(copy);
  std::string text;
  if (length > 0) {
    text.resize(static_cast<size_t>(length) + 1);
    std::vsnprintf(text.data(), text.size(), pattern, args);
    text.resize(static_cast<size_t>(length));
  }
  va_end(args);
  return text;
}

std::string driver::dtypeName(int32_t dtype) {
  const char *name = fluid_dtype_name(dtype);
  return name ? name : "dtype " + std::to_string(dtype);
}

std::string driver::describe(int32_t dtype, int32_t rank,
                             const int64_t *shape) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "] " + dtypeName(dtype);
}
