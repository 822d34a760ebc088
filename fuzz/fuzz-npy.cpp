//===- fuzz-npy.cpp - libFuzzer target: fluid_npy_read --------------------===//
//
// Each input is a .npy file, read through the C ABI as fluid-run reads its
// --input files. A successful read must describe a tensor the caller can use:
// a supported dtype, a rank within FLUID_MAX_RANK and a buffer holding every
// element (touched here, so ASan sees any short allocation).
//
//===----------------------------------------------------------------------===//

#include "FuzzInputFile.h"

#include "fluid/runtime/Npy.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fluid::fuzz::FuzzInputFile file("fuzz-npy");
  file.assign(data, size);

  fluid_tensor t = {};
  if (fluid_npy_read(file.path().c_str(), &t) != FLUID_OK)
    return 0;
  if (t.rank < 0 || t.rank > FLUID_MAX_RANK || fluid_dtype_size(t.dtype) == 0)
    std::abort();
  int64_t bytes = fluid_dtype_size(t.dtype);
  for (int32_t i = 0; i < t.rank; ++i) {
    if (t.shape[i] < 0)
      std::abort();
    bytes *= t.shape[i];
  }
  // The file held exactly these bytes after its header.
  if (bytes > int64_t(size))
    std::abort();
  volatile uint8_t sink = 0;
  const auto *elements = static_cast<const uint8_t *>(t.data);
  for (int64_t i = 0; i < bytes; ++i)
    sink = sink ^ elements[i];
  (void)sink;
  fluid_npy_free(&t);
  if (t.data)
    std::abort();
  return 0;
}
