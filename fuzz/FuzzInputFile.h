//===- FuzzInputFile.h - A fuzzer input as a file the parsers can open ----===//
//
// The parsers under test take paths, as the tools call them. A FuzzInputFile
// is an anonymous in-memory file (memfd) whose content is replaced by each
// input and whose path is /proc/self/fd/N: nothing touches the disk, and a
// crashed run leaves no files behind.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_FUZZ_FUZZINPUTFILE_H
#define FLUID_FUZZ_FUZZINPUTFILE_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace fluid::fuzz {

class FuzzInputFile {
public:
  explicit FuzzInputFile(const char *name) {
    fd_ = ::memfd_create(name, MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~FuzzInputFile() { ::close(fd_); }
  FuzzInputFile(const FuzzInputFile &) = delete;
  FuzzInputFile &operator=(const FuzzInputFile &) = delete;

  /// Makes `bytes` the whole content of the file.
  void assign(const uint8_t *bytes, size_t size) {
    if (::ftruncate(fd_, 0) != 0) {
      std::perror("ftruncate");
      std::abort();
    }
    size_t done = 0;
    while (done < size) {
      ssize_t wrote = ::pwrite(fd_, bytes + done, size - done, off_t(done));
      if (wrote <= 0) {
        std::perror("pwrite");
        std::abort();
      }
      done += size_t(wrote);
    }
  }

  const std::string &path() const { return path_; }

private:
  int fd_ = -1;
  std::string path_;
};

} // namespace fluid::fuzz

#endif // FLUID_FUZZ_FUZZINPUTFILE_H
