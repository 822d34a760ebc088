//===- HostMemory.cpp - How much host memory this process may still use ---===//

#include "fluid/runtime/HostMemory.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace {

/// The first integer in `path`, or -1 when it is missing or not a number
/// (cgroup v2 writes "max" for no limit).
int64_t readInteger(const char *path) {
  FILE *file = std::fopen(path, "r");
  if (!file)
    return -1;
  char text[64] = {};
  size_t count = std::fread(text, 1, sizeof(text) - 1, file);
  std::fclose(file);
  text[count] = '\0';
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (end == text || value < 0)
    return -1;
  return value;
}

/// MemAvailable in /proc/meminfo, in bytes, or -1.
int64_t memAvailable() {
  FILE *file = std::fopen("/proc/meminfo", "r");
  if (!file)
    return -1;
  char line[256];
  int64_t bytes = -1;
  while (std::fgets(line, sizeof(line), file)) {
    long long kib = 0;
    if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1) {
      bytes = kib > INT64_MAX / 1024 ? INT64_MAX : kib * 1024;
      break;
    }
  }
  std::fclose(file);
  return bytes;
}

/// Room left under a limit, or -1 when there is no readable limit.
int64_t roomUnder(int64_t limit, int64_t used) {
  if (limit < 0)
    return -1;
  if (used < 0)
    return limit;
  return used >= limit ? 0 : limit - used;
}

} // namespace

extern "C" int64_t fluid_available_host_memory(void) {
  int64_t available = INT64_MAX;
  auto consider = [&](int64_t bytes) {
    if (bytes >= 0)
      available = std::min(available, bytes);
  };
  consider(memAvailable());
  consider(roomUnder(readInteger("/sys/fs/cgroup/memory.max"),
                     readInteger("/sys/fs/cgroup/memory.current")));
  // cgroup v1 reports "no limit" as a huge number, which min() ignores.
  consider(
      roomUnder(readInteger("/sys/fs/cgroup/memory/memory.limit_in_bytes"),
                readInteger("/sys/fs/cgroup/memory/memory.usage_in_bytes")));
  struct rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    // The address space already in use counts against RLIMIT_AS.
    long long pages = -1;
    long pageSize = sysconf(_SC_PAGESIZE);
    if (FILE *file = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(file, "%lld", &pages) != 1)
        pages = -1;
      std::fclose(file);
    }
    int64_t cap = limit.rlim_cur > static_cast<rlim_t>(INT64_MAX)
                      ? INT64_MAX
                      : static_cast<int64_t>(limit.rlim_cur);
    consider(
        roomUnder(cap, pages < 0 || pageSize <= 0 ? -1 : pages * pageSize));
  }
  return available;
}
