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

#include <cstdio>
#include <string>

namespace fluid::rt {

/// "1.5 GiB" or "123 bytes", as messages about sizes print them.
inline std::string formatBytes(uint64_t bytes) {
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  return text;
}

} // namespace fluid::rt
#endif

#endif // FLUID_RUNTIME_HOSTMEMORY_H
