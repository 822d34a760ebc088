//===- StorageOrder.h - Tensors stored with their dimensions permuted -----===//
//
// A program may store a parameter or an argument with its dimensions
// permuted (fluid_program_value::storage_order, e.g. a filter [O, C, KH,
// KW] stored [O, KH, KW, C]); everything the driver exchanges with the
// outside (checkpoints, initial values, data) keeps the value's own order.
// These helpers convert between the two on the host, for any rank and
// dtype (a permutation of bytes, through fluid_cpu_transpose).
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_STORAGEORDER_H
#define FLUID_RUNTIME_DRIVER_STORAGEORDER_H

#include "fluid/runtime/Program.h"

#include <array>
#include <string>

namespace fluid::rt::driver {

/// Whether `value` is stored permuted (storage_order not all zeros).
bool isPermuted(const fluid_program_value &value);

/// `value`'s storage order, the identity when it is not permuted.
std::array<int32_t, FLUID_MAX_RANK>
storageOrder(const fluid_program_value &value);

/// An empty string if `value`'s storage_order is all zeros or a
/// permutation of [0, rank) (zeros past the rank), else why not.
std::string checkStorageOrder(const fluid_program_value &value);

/// "{0, 2, 3, 1}".
std::string describeOrder(const fluid_program_value &value);

/// Copies `value`'s elements from its own order (`from`) into its stored
/// order (`to`); the buffers do not overlap. Throws Error.
void toStorage(const fluid_program_value &value, const void *from, void *to);

/// The inverse of toStorage. Throws Error.
void fromStorage(const fluid_program_value &value, const void *from, void *to);

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_STORAGEORDER_H
