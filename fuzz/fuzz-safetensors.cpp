//===- fuzz-safetensors.cpp - libFuzzer target: the safetensors reader ----===//
//
// Each input is a safetensors file, opened and read through the C ABI as
// fluid-run --params and the training driver's --load read checkpoints:
// open, then for every tensor its name, info and bytes, and a metadata
// lookup. The reader validates the whole layout at open, so every read of a
// listed tensor into a destination of its own dtype and shape must succeed.
//
//===----------------------------------------------------------------------===//

#include "FuzzInputFile.h"

#include "fluid/runtime/Safetensors.h"

#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fluid::fuzz::FuzzInputFile file("fuzz-safetensors");
  file.assign(data, size);

  fluid_safetensors_reader *reader = nullptr;
  if (fluid_safetensors_open(file.path().c_str(), &reader) != FLUID_OK)
    return 0;
  int64_t count = 0;
  if (fluid_safetensors_count(reader, &count) != FLUID_OK || count < 0)
    std::abort();
  const char *previous = nullptr;
  for (int64_t i = 0; i < count; ++i) {
    const char *name = nullptr;
    if (fluid_safetensors_name(reader, i, &name) != FLUID_OK || !name)
      std::abort();
    // Names come in byte-wise ascending order, without duplicates.
    if (previous && std::strcmp(previous, name) >= 0)
      std::abort();
    previous = name;
    fluid_tensor info = {};
    if (fluid_safetensors_info(reader, name, &info) != FLUID_OK ||
        info.rank < 0 || info.rank > FLUID_MAX_RANK || info.data)
      std::abort();
    int64_t bytes = fluid_dtype_size(info.dtype);
    for (int32_t d = 0; d < info.rank; ++d)
      bytes *= info.shape[d];
    // Every tensor lies inside the file.
    if (bytes < 0 || bytes > int64_t(size))
      std::abort();
    // Exactly the tensor's size, so ASan catches a read that writes more.
    std::vector<uint8_t> buffer(static_cast<size_t>(bytes));
    info.data = buffer.data();
    if (fluid_safetensors_read(reader, name, &info) != FLUID_OK)
      std::abort();
  }
  const char *value = nullptr;
  if (fluid_safetensors_metadata(reader, "format", &value) != FLUID_OK)
    std::abort();
  if (count > 0 && fluid_safetensors_name(reader, count, &previous) == FLUID_OK)
    std::abort();
  fluid_safetensors_close(reader);
  return 0;
}
