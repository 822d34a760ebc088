//===- StorageOrder.cpp - Tensors stored with their dimensions permuted ---===//

#include "StorageOrder.h"

#include "fluid/runtime/CpuGradKernels.h"
#include "fluid/runtime/Error.h"

#include <algorithm>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

/// Transposes `from` (shape `shape`) into `to` by `permutation` (output
/// dimension d is input dimension permutation[d]).
void transpose(const fluid_program_value &value, const int64_t *shape,
               const std::array<int32_t, FLUID_MAX_RANK> &permutation,
               const void *from, void *to) {
  fluid_tensor input = {};
  input.data = const_cast<void *>(from);
  input.dtype = value.dtype;
  input.rank = value.rank;
  std::copy_n(shape, value.rank, input.shape);
  fluid_tensor output = input;
  output.data = to;
  fluid_transpose_params params = {};
  params.rank = value.rank;
  for (int32_t d = 0; d < value.rank; ++d) {
    params.perm[d] = permutation[d];
    output.shape[d] = shape[permutation[d]];
  }
  if (fluid_cpu_transpose(&input, &output, &params) != FLUID_OK)
    fail(std::string("cannot permute '") + value.name +
         "': " + fluid_last_error());
}

} // namespace

bool driver::isPermuted(const fluid_program_value &value) {
  return std::any_of(value.storage_order, value.storage_order + FLUID_MAX_RANK,
                     [](int32_t d) { return d != 0; });
}

std::array<int32_t, FLUID_MAX_RANK>
driver::storageOrder(const fluid_program_value &value) {
  std::array<int32_t, FLUID_MAX_RANK> order = {};
  for (int32_t d = 0; d < FLUID_MAX_RANK; ++d)
    order[d] = isPermuted(value) ? value.storage_order[d] : d;
  return order;
}

std::string driver::checkStorageOrder(const fluid_program_value &value) {
  if (!isPermuted(value))
    return "";
  bool seen[FLUID_MAX_RANK] = {};
  for (int32_t d = 0; d < FLUID_MAX_RANK; ++d) {
    int32_t from = value.storage_order[d];
    bool valid = d < value.rank ? from >= 0 && from < value.rank && !seen[from]
                                : from == 0;
    if (!valid)
      return "has storage order " + describeOrder(value) +
             ", not a permutation of its " + std::to_string(value.rank) +
             " dimensions";
    if (d < value.rank)
      seen[from] = true;
  }
  return "";
}

std::string driver::describeOrder(const fluid_program_value &value) {
  std::string text = "{";
  for (int32_t d = 0; d < value.rank; ++d)
    text += (d ? ", " : "") + std::to_string(value.storage_order[d]);
  return text + "}";
}

void driver::toStorage(const fluid_program_value &value, const void *from,
                       void *to) {
  transpose(value, value.shape, storageOrder(value), from, to);
}

void driver::fromStorage(const fluid_program_value &value, const void *from,
                         void *to) {
  std::array<int32_t, FLUID_MAX_RANK> order = storageOrder(value), inverse = {};
  int64_t stored[FLUID_MAX_RANK] = {};
  for (int32_t d = 0; d < value.rank; ++d) {
    inverse[order[d]] = d;
    stored[d] = value.shape[order[d]];
  }
  transpose(value, stored, inverse, from, to);
}
