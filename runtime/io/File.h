//===- File.h - Checked file access for the runtime's file formats --------===//
//
// Every failure names the file: a message reads "<path>: <problem>". Status
// codes follow one rule across the io component:
//   FLUID_ERROR_IO               the operating system refused (open, read,
//                                write, rename), or memory ran out;
//   FLUID_ERROR_INVALID_ARGUMENT the content is malformed or truncated;
//   FLUID_ERROR_UNSUPPORTED      well-formed, but a feature the runtime does
//                                not implement (dtype, byte order, rank).
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_IO_FILE_H
#define FLUID_RUNTIME_IO_FILE_H

#include "fluid/runtime/Tensor.h"

#include <cstdint>
#include <string>

// The formats are little-endian and tensor bytes are copied unchanged.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the runtime's file formats assume a little-endian host");

namespace fluid::rt::io {

[[noreturn]] void failIo(const std::string &path, const std::string &problem);
[[noreturn]] void failFormat(const std::string &path,
                             const std::string &problem);
[[noreturn]] void failUnsupported(const std::string &path,
                                  const std::string &problem);

/// "[2, 3]": shapes as error messages print them.
std::string formatShape(int32_t rank, const int64_t *shape);

/// Sets `numel` to the element count of a shape of non-negative dimensions;
/// returns false when the count overflows int64.
bool checkedNumel(int32_t rank, const int64_t *shape, int64_t *numel);

/// A regular file opened for reading, with its size fixed at open time.
class InputFile {
public:
  explicit InputFile(std::string path);
  ~InputFile();
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;

  const std::string &path() const { return path_; }
  int64_t size() const { return size_; }

  /// Reads exactly `count` bytes at `offset`. A file too short for them is a
  /// format error ("truncated ...") that names `what` was being read.
  void read(int64_t offset, void *destination, int64_t count,
            const std::string &what) const;

private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

/// Writes a file so that a crash never leaves a half-written one at `path`:
/// data goes to a temporary file next to it, and commit() syncs it and renames
/// it over `path`. Destroying an uncommitted writer removes the temporary.
class AtomicOutputFile {
public:
  explicit AtomicOutputFile(std::string path);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile &) = delete;
  AtomicOutputFile &operator=(const AtomicOutputFile &) = delete;

  void write(const void *data, int64_t count);
  void commit();

private:
  std::string path_;
  std::string temporaryPath_;
  int fd_ = -1;
  bool committed_ = false;
};

} // namespace fluid::rt::io

#endif // FLUID_RUNTIME_IO_FILE_H
