//===- CpuMemory.h - Host memory for a program's temporaries --------------===//
//
// A program that frees each temporary at its last use allocates it at run
// time: fluid_cpu_allocate at its first write, fluid_cpu_release after its
// last read (the cuda backend's fluid_cuda_allocate and fluid_cuda_release
// in CudaRuntime.h do the same, ordered on the stream). The counters are
// process-wide: the training driver allocates its own memory (parameters,
// buffers, batches) here too, so the peak it reports covers both.
//
// FLUID_POISON_MEMORY=1 in the environment (read once, at the first
// allocation) fills new memory with 0xFF bytes, and memory being released
// too: a NaN in f32 and f64, -1 in integers, so that a kernel reading a
// temporary before it is written, or after it is released, shows in the
// results. The driver then fills every function buffer with 0xFF instead
// of zeros (docs/COMPILE.md).
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPUMEMORY_H
#define FLUID_RUNTIME_CPUMEMORY_H

#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Host memory of `bytes`, 256-byte aligned (as every buffer the driver
/// hands a program), its contents undefined (0xFF bytes with poisoning);
/// 0 bytes gives NULL. Negative bytes, or more than 2^47 (128 TiB, beyond
/// any address space), are FLUID_ERROR_INVALID_ARGUMENT; more than the
/// process can still allocate (HostMemory.h) or a failed allocation is
/// FLUID_ERROR_OUT_OF_MEMORY. Thread-safe.
fluid_status fluid_cpu_allocate(int64_t bytes, void **out);

/// Releases memory from fluid_cpu_allocate. Accepts NULL; a pointer that
/// fluid_cpu_allocate did not return (or that was already released) sets
/// fluid_last_error() and is left alone. Thread-safe.
void fluid_cpu_release(void *data);

/// The bytes of fluid_cpu_allocate in this process: requested sizes, not
/// rounded up to the alignment.
typedef struct fluid_cpu_memory_stats {
  int64_t allocated_bytes;      /* allocated and not yet released */
  int64_t peak_allocated_bytes; /* the most allocated at once */
} fluid_cpu_memory_stats;
fluid_status fluid_cpu_get_memory_stats(fluid_cpu_memory_stats *out);

#ifdef __cplusplus
} // extern "C"

namespace fluid::rt {

/// Whether FLUID_POISON_MEMORY=1 was set when this was first called (by
/// any backend): then new and released memory is filled with
/// kPoisonByte.
bool poisonMemory();
constexpr unsigned char kPoisonByte = 0xFF;

} // namespace fluid::rt
#endif

#endif // FLUID_RUNTIME_CPUMEMORY_H
