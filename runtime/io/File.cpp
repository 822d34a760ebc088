//===- File.cpp - Checked file access for the runtime's file formats ------===//

#include "File.h"

#include "fluid/runtime/Error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fluid::rt::io {

void failIo(const std::string &path, const std::string &problem) {
  throw Error(FLUID_ERROR_IO, path + ": " + problem);
}

void failFormat(const std::string &path, const std::string &problem) {
  throw Error(FLUID_ERROR_INVALID_ARGUMENT, path + ": " + problem);
}

void failUnsupported(const std::string &path, const std::string &problem) {
  throw Error(FLUID_ERROR_UNSUPPORTED, path + ": " + problem);
}

std::string formatShape(int32_t rank, const int64_t *shape) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool checkedNumel(int32_t rank, const int64_t *shape, int64_t *numel) {
  *numel = 1;
  for (int32_t i = 0; i < rank; ++i)
    if (__builtin_mul_overflow(*numel, shape[i], numel))
      return false;
  return true;
}

namespace {
std::string systemError() { return std::strerror(errno); }
} // namespace

InputFile::InputFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    failIo(path_, "cannot open: " + systemError());
  struct stat status;
  if (::fstat(fd_, &status) != 0) {
    std::string problem = "cannot stat: " + systemError();
    ::close(fd_);
    failIo(path_, problem);
  }
  if (!S_ISREG(status.st_mode)) {
    ::close(fd_);
    failIo(path_, "not a regular file");
  }
  size_ = status.st_size;
}

InputFile::~InputFile() { ::close(fd_); }

void InputFile::read(int64_t offset, void *destination, int64_t count,
                     const std::string &what) const {
  if (offset > size_ || count > size_ - offset)
    failFormat(path_, "truncated " + what + ": needs bytes [" +
                          std::to_string(offset) + ", " +
                          std::to_string(offset + count) +
                          ") but the file has " + std::to_string(size_) +
                          " bytes");
  auto *bytes = static_cast<char *>(destination);
  while (count > 0) {
    ssize_t got = ::pread(fd_, bytes, size_t(count), off_t(offset));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      failIo(path_, "read failed: " + systemError());
    if (got == 0)
      failFormat(path_, "truncated " + what + ": the file shrank while " +
                            "being read");
    bytes += got;
    offset += got;
    count -= got;
  }
}

AtomicOutputFile::AtomicOutputFile(std::string path)
    : path_(std::move(path)), temporaryPath_(path_ + ".tmp-XXXXXX") {
  // Renaming over a device or a directory would replace it (/dev/null
  // becoming a regular file): only regular files are replaced.
  struct stat existing;
  if (::stat(path_.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode))
    failIo(path_, "exists and is not a regular file; refusing to replace it");
  fd_ = ::mkostemp(temporaryPath_.data(), O_CLOEXEC);
  if (fd_ < 0)
    failIo(path_, "cannot create temporary file " + temporaryPath_ + ": " +
                      systemError());
  // mkostemp creates the file private (0600); a checkpoint or output tensor is
  // an ordinary file.
  ::fchmod(fd_, 0644);
}

AtomicOutputFile::~AtomicOutputFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!committed_)
    ::unlink(temporaryPath_.c_str());
}

void AtomicOutputFile::write(const void *data, int64_t count) {
  const auto *bytes = static_cast<const char *>(data);
  while (count > 0) {
    ssize_t written = ::write(fd_, bytes, size_t(count));
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0)
      failIo(path_, "write to " + temporaryPath_ + " failed: " + systemError());
    bytes += written;
    count -= written;
  }
}

void AtomicOutputFile::commit() {
  // The data must be on disk before the rename is, or a crash could leave
  // the new name pointing at an empty file.
  if (::fsync(fd_) != 0)
    failIo(path_, "fsync of " + temporaryPath_ + " failed: " + systemError());
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    failIo(path_, "close of " + temporaryPath_ + " failed: " + systemError());
  if (::rename(temporaryPath_.c_str(), path_.c_str()) != 0)
    failIo(path_,
           "cannot rename " + temporaryPath_ + " over it: " + systemError());
  committed_ = true;
  // Make the rename itself durable. The new file is complete either way, so a
  // directory that cannot be synced is not an error worth failing for.
  std::string::size_type slash = path_.rfind('/');
  std::string directory =
      slash == std::string::npos ? "." : path_.substr(0, slash + 1);
  int directoryFd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (directoryFd >= 0) {
    ::fsync(directoryFd);
    ::close(directoryFd);
  }
}

} // namespace fluid::rt::io
