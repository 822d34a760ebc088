//===- Memory.cpp - Host memory for a program's temporaries ---------------===//
//
// Every allocation is recorded with its size under one mutex, so that a
// release can be checked and counted, and so that the process-wide current
// and peak counts are exact. A program allocates per temporary, not per
// element, so the lock is cheap next to the kernels between the calls.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/CpuMemory.h"
#include "fluid/runtime/Error.h"
#include "fluid/runtime/HostMemory.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>

using namespace fluid::rt;

namespace {

constexpr int64_t kAlignment = 256;
/// Larger requests cannot be met on any 64-bit machine (x86-64 and AArch64
/// give a process at most 2^47 or 2^48 bytes of address space).
constexpr int64_t kLargestAllocation = int64_t(1) << 47;
/// From this size on, a request is checked against the memory the process
/// may still use (which reads /proc), so that an overcommitted allocation
/// fails here rather than by the OOM killer when the pages are touched.
constexpr int64_t kCheckAvailableFrom = int64_t(64) << 20;

struct HostAllocations {
  std::mutex mutex;
  std::unordered_map<void *, int64_t> bytes;
  int64_t allocated = 0;
  int64_t peak = 0;
};

/// Never destroyed: a static destructor elsewhere may still release.
HostAllocations &allocations() {
  static HostAllocations *all = new HostAllocations;
  return *all;
}

int64_t roundedUp(int64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

std::string pointerText(const void *pointer) {
  std::ostringstream s;
  s << pointer;
  return s.str();
}

} // namespace

bool fluid::rt::poisonMemory() {
  static const bool poison = [] {
    const char *value = std::getenv("FLUID_POISON_MEMORY");
    return value && std::strcmp(value, "1") == 0;
  }();
  return poison;
}

extern "C" fluid_status fluid_cpu_allocate(int64_t bytes, void **out) {
  return guard("fluid_cpu_allocate", [&] {
    if (!out)
      fail("out is null");
    *out = nullptr;
    if (bytes < 0)
      fail("bytes must be >= 0, got " + std::to_string(bytes));
    if (bytes > kLargestAllocation)
      fail(std::to_string(bytes) + " bytes (" +
           formatBytes(static_cast<uint64_t>(bytes)) +
           ") is more than any address space holds");
    if (bytes == 0)
      return;
    if (bytes >= kCheckAvailableFrom) {
      int64_t available = fluid_available_host_memory();
      if (bytes > available)
        throw Error(FLUID_ERROR_OUT_OF_MEMORY,
                    "out of host memory for " + std::to_string(bytes) +
                        " bytes (" + formatBytes(static_cast<uint64_t>(bytes)) +
                        "; " + formatBytes(static_cast<uint64_t>(available)) +
                        " available)");
    }
    const int64_t rounded = roundedUp(bytes);
    void *data = std::aligned_alloc(kAlignment, static_cast<size_t>(rounded));
    if (!data)
      throw Error(FLUID_ERROR_OUT_OF_MEMORY,
                  "out of host memory for " + std::to_string(bytes) +
                      " bytes (" + formatBytes(static_cast<uint64_t>(bytes)) +
                      ")");
    if (poisonMemory())
      std::memset(data, kPoisonByte, static_cast<size_t>(rounded));
    HostAllocations &all = allocations();
    {
      std::lock_guard<std::mutex> lock(all.mutex);
      try {
        all.bytes.emplace(data, bytes);
      } catch (...) {
        std::free(data);
        throw;
      }
      all.allocated += bytes;
      if (all.allocated > all.peak)
        all.peak = all.allocated;
    }
    *out = data;
  });
}

extern "C" void fluid_cpu_release(void *data) {
  (void)guard("fluid_cpu_release", [&] {
    if (!data)
      return;
    HostAllocations &all = allocations();
    int64_t bytes = 0;
    {
      std::lock_guard<std::mutex> lock(all.mutex);
      auto it = all.bytes.find(data);
      if (it == all.bytes.end())
        fail("pointer " + pointerText(data) +
             " was not allocated by fluid_cpu_allocate (or is already "
             "released)");
      bytes = it->second;
      all.bytes.erase(it);
      all.allocated -= bytes;
    }
    if (poisonMemory())
      std::memset(data, kPoisonByte, static_cast<size_t>(roundedUp(bytes)));
    std::free(data);
  });
}

extern "C" fluid_status
fluid_cpu_get_memory_stats(fluid_cpu_memory_stats *out) {
  return guard("fluid_cpu_get_memory_stats", [&] {
    if (!out)
      fail("out is null");
    HostAllocations &all = allocations();
    std::lock_guard<std::mutex> lock(all.mutex);
    out->allocated_bytes = all.allocated;
    out->peak_allocated_bytes = all.peak;
  });
}
