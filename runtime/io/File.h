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

/// Replaces a file atomically, without exceptions: the core that
/// AtomicOutputFile wraps and that the compiler's tools (built without
/// exceptions) use through lib/Support/OutputFile.cpp. Every step returns ""
/// or the problem, without the path (the caller names it).
///
/// The data goes to an unnamed file in the target's directory (Linux
/// O_TMPFILE), so a writer that dies before commit(), even by SIGKILL,
/// leaves nothing behind. commit() syncs the data and names the file: with a
/// link straight to the target when nothing is there, else with a link to a
/// hidden name ".NAME.tmp-XXXXXX" renamed over the target at once (a link
/// cannot replace a file, and rename is the only atomic replacement), so a
/// kill leaves a name only between those two calls. Where the file system
/// has no O_TMPFILE, the data goes to such a hidden name from the start.
/// A writer holds an flock on its file; open() removes the unlocked
/// temporaries of the same target, left by a killed writer (or, named
/// "NAME.tmp-XXXXXX", by an older version of Fluid).
///
/// A replaced file's permission bits carry over to the new one, and so do
/// its owner and group where this process may set them; a new file gets
/// 0666 less the umask. A symbolic link at the target is replaced by the
/// file, not followed.
class AtomicFileWriter {
public:
  AtomicFileWriter() = default;
  /// Discards an uncommitted file.
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter &) = delete;
  AtomicFileWriter &operator=(const AtomicFileWriter &) = delete;

  /// Starts a new version of `path`, which must be absent or a regular file.
  std::string open(const std::string &path);
  /// The descriptor the data is written to, between open() and commit().
  int fd() const { return fd_; }
  std::string write(const void *data, int64_t count);
  /// Puts the file written so far in place of `path`.
  std::string commit();
  /// Drops the file written so far; `path` is left as it was.
  void discard();

private:
  std::string linkInPlace();

  std::string path_, directory_, name_;
  std::string temporaryPath_; // while the new file has a temporary name
  int fd_ = -1;
};

/// Writes a file so that a crash never leaves a half-written one at `path`
/// (see AtomicFileWriter). Destroying an uncommitted writer discards the
/// data. Failures throw Error (FLUID_ERROR_IO) naming `path`.
class AtomicOutputFile {
public:
  explicit AtomicOutputFile(std::string path);
  AtomicOutputFile(const AtomicOutputFile &) = delete;
  AtomicOutputFile &operator=(const AtomicOutputFile &) = delete;

  void write(const void *data, int64_t count);
  void commit();

private:
  std::string path_;
  AtomicFileWriter file_;
};

} // namespace fluid::rt::io

#endif // FLUID_RUNTIME_IO_FILE_H
