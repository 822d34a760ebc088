//===- HostMemory.h - How much host memory this process may still use -----===//
//
// Sizes read from flags and file headers are checked against this before
// anything is allocated, so that an absurd size is an error naming it rather
// than an out-of-memory abort.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_HOSTMEMORY_H
#define FLUID_RUNTIME_HOSTMEMORY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The bytes this process can still allocate: the smallest of the kernel's
/// MemAvailable (/proc/meminfo), the room left under the cgroup's memory
/// limit (v2 memory.max, or v1 memory.limit_in_bytes) and the address-space
/// limit (RLIMIT_AS). INT64_MAX when none of them can be read.
int64_t fluid_available_host_memory(void);

#ifdef __cplusplus
}
#endif

#endif // FLUID_RUNTIME_HOSTMEMORY_H
