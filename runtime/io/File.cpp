//===- File.cpp - Checked file access for the runtime's file formats ------===//

#include "File.h"

#include "fluid/runtime/Error.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
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

//===----------------------------------------------------------------------===//
// AtomicFileWriter
//===----------------------------------------------------------------------===//

namespace {

/// Temporary names end in ".tmp-" and this many letters or digits.
constexpr size_t kSuffixLength = 6;
/// Tries at finding an unused temporary name.
constexpr int kNameAttempts = 100;

std::string randomSuffix() {
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[kSuffixLength];
  if (::getrandom(bytes, sizeof(bytes), GRND_NONBLOCK) !=
      static_cast<ssize_t>(sizeof(bytes))) {
    // No entropy yet (early boot): the clock and the process id, mixed.
    static std::atomic<uint64_t> counter{0};
    uint64_t state =
        static_cast<uint64_t>(
            std::chrono::steady_clock::now().time_since_epoch().count()) ^
        (static_cast<uint64_t>(::getpid()) << 32) ^ counter++;
    for (unsigned char &byte : bytes) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      byte = static_cast<unsigned char>(state >> 56);
    }
  }
  std::string suffix;
  for (unsigned char byte : bytes)
    suffix += alphabet[byte % (sizeof(alphabet) - 1)];
  return suffix;
}

std::string joinPath(const std::string &directory, const std::string &name) {
  return directory == "/" ? "/" + name : directory + "/" + name;
}

/// Whether `entry` is `prefix` followed by a temporary suffix.
bool hasTemporarySuffix(const std::string &entry, const std::string &prefix) {
  if (entry.size() != prefix.size() + kSuffixLength ||
      entry.compare(0, prefix.size(), prefix) != 0)
    return false;
  for (size_t i = prefix.size(); i < entry.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(entry[i])))
      return false;
  return true;
}

/// Whether `entry` is a temporary of the file `name`: this version's
/// ".NAME.tmp-XXXXXX" or an older version's "NAME.tmp-XXXXXX".
bool isTemporaryOf(const std::string &entry, const std::string &name) {
  return hasTemporarySuffix(entry, "." + name + ".tmp-") ||
         hasTemporarySuffix(entry, name + ".tmp-");
}

/// Removes the temporaries of `name` in `directory` that no live writer
/// holds locked. Best effort: a temporary that cannot be examined stays.
void removeStaleTemporaries(const std::string &directory,
                            const std::string &name) {
  DIR *listing = ::opendir(directory.c_str());
  if (!listing)
    return;
  while (const dirent *entry = ::readdir(listing)) {
    std::string entryName = entry->d_name;
    if (!isTemporaryOf(entryName, name))
      continue;
    std::string path = joinPath(directory, entryName);
    // Any descriptor can take the lock; a temporary whose mode denies
    // reading (the mode of the file it replaces) may allow writing.
    int flags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
    int fd = ::open(path.c_str(), O_RDONLY | flags);
    if (fd < 0 && errno == EACCES)
      fd = ::open(path.c_str(), O_WRONLY | flags);
    if (fd < 0)
      continue;
    // A writer keeps its lock until it exits; the name must still be the
    // file that was locked.
    struct stat opened, named;
    if (::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode) &&
        ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
        ::lstat(path.c_str(), &named) == 0 && named.st_dev == opened.st_dev &&
        named.st_ino == opened.st_ino)
      ::unlink(path.c_str());
    ::close(fd);
  }
  ::closedir(listing);
}

/// Gives the file `fd` the owner and group of `existing` where this process
/// may: only root may give a file to another user; any user may give it one
/// of its groups. Otherwise the file keeps this process's.
void copyOwner(int fd, const struct stat &existing) {
  if (existing.st_uid == ::geteuid() && existing.st_gid == ::getegid())
    return;
  if (::fchown(fd, existing.st_uid, existing.st_gid) == 0)
    return;
  int groupOnly = ::fchown(fd, static_cast<uid_t>(-1), existing.st_gid);
  (void)groupOnly;
}

} // namespace

AtomicFileWriter::~AtomicFileWriter() { discard(); }

std::string AtomicFileWriter::open(const std::string &path) {
  discard();
  path_ = path;
  std::string::size_type slash = path.rfind('/');
  directory_ = slash == std::string::npos ? "."
               : slash == 0               ? "/"
                                          : path.substr(0, slash);
  name_ = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name_.empty() || name_ == "." || name_ == "..")
    return "not a file name";

  // Renaming over a device or a directory would replace it (/dev/null
  // becoming a regular file): only regular files are replaced.
  struct stat existing;
  bool replacing = ::stat(path.c_str(), &existing) == 0;
  if (replacing && !S_ISREG(existing.st_mode))
    return "exists and is not a regular file; refusing to replace it";
  removeStaleTemporaries(directory_, name_);

  fd_ = ::open(directory_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd_ >= 0) {
    // The lock keeps other writers from removing the hidden name commit()
    // may give the file.
    ::flock(fd_, LOCK_EX);
  } else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
    // No O_TMPFILE here (EISDIR: a kernel older than 3.11): a hidden name.
    for (int attempt = 0; attempt < kNameAttempts && fd_ < 0; ++attempt) {
      std::string candidate =
          joinPath(directory_, "." + name_ + ".tmp-" + randomSuffix());
      int fd = ::open(candidate.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd < 0 && errno == EEXIST)
        continue;
      if (fd < 0)
        return systemError() + " (cannot create temporary file " + candidate +
               ")";
      // Another writer's clean-up may have removed it before it was locked.
      struct stat created;
      ::flock(fd, LOCK_EX);
      if (::fstat(fd, &created) != 0 || created.st_nlink == 0) {
        ::close(fd);
        continue;
      }
      fd_ = fd;
      temporaryPath_ = candidate;
    }
    if (fd_ < 0)
      return "cannot create temporary file in " + directory_ + ": no free name";
  } else {
    // The reason first: the tools print "cannot write 'PATH': <reason>".
    return systemError() + " (cannot create temporary file in " + directory_ +
           ")";
  }

  if (replacing) {
    // Owner and group first: changing them clears the set-user-ID and
    // set-group-ID bits.
    copyOwner(fd_, existing);
    if (::fchmod(fd_, existing.st_mode & 07777) != 0) {
      std::string problem = "cannot copy the permissions: " + systemError();
      discard();
      return problem;
    }
  }
  return "";
}

std::string AtomicFileWriter::write(const void *data, int64_t count) {
  if (fd_ < 0)
    return "write to a file that is not open";
  const auto *bytes = static_cast<const char *>(data);
  while (count > 0) {
    ssize_t written = ::write(fd_, bytes, size_t(count));
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0)
      return "write failed: " + systemError();
    bytes += written;
    count -= written;
  }
  return "";
}

std::string AtomicFileWriter::linkInPlace() {
  std::string procPath = "/proc/self/fd/" + std::to_string(fd_);
  auto link = [&](const std::string &to) {
    if (::linkat(AT_FDCWD, procPath.c_str(), AT_FDCWD, to.c_str(),
                 AT_SYMLINK_FOLLOW) == 0)
      return true;
    // Without /proc, AT_EMPTY_PATH does the same for a privileged process.
    return errno == ENOENT &&
           ::linkat(fd_, "", AT_FDCWD, to.c_str(), AT_EMPTY_PATH) == 0;
  };
  // Nothing there yet: the file appears complete under its name at once,
  // and never has another.
  if (link(path_))
    return "";
  if (errno != EEXIST)
    return "cannot link the new file into " + directory_ + ": " + systemError();
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    std::string candidate =
        joinPath(directory_, "." + name_ + ".tmp-" + randomSuffix());
    if (link(candidate)) {
      temporaryPath_ = candidate;
      return "";
    }
    if (errno != EEXIST)
      return "cannot link the new file to " + candidate + ": " + systemError();
  }
  return "cannot link the new file into " + directory_ + ": no free name";
}

std::string AtomicFileWriter::commit() {
  if (fd_ < 0)
    return "commit of a file that is not open";
  // The data must be on disk before the name is, or a crash could leave
  // the name pointing at an empty file.
  if (::fsync(fd_) != 0) {
    std::string problem = "fsync failed: " + systemError();
    discard();
    return problem;
  }
  if (temporaryPath_.empty()) {
    std::string problem = linkInPlace();
    if (!problem.empty()) {
      discard();
      return problem;
    }
  }
  if (!temporaryPath_.empty() &&
      ::rename(temporaryPath_.c_str(), path_.c_str()) != 0) {
    std::string problem =
        "cannot rename " + temporaryPath_ + " over it: " + systemError();
    discard();
    return problem;
  }
  temporaryPath_.clear();
  // The descriptor (and its lock) stayed open until the file had its name.
  // Its data is synced, so closing it cannot lose any.
  ::close(fd_);
  fd_ = -1;
  // Make the new name durable. The new file is complete either way, so a
  // directory that cannot be synced is not an error worth failing for.
  int directoryFd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY);
  if (directoryFd >= 0) {
    ::fsync(directoryFd);
    ::close(directoryFd);
  }
  return "";
}

void AtomicFileWriter::discard() {
  if (!temporaryPath_.empty())
    ::unlink(temporaryPath_.c_str());
  temporaryPath_.clear();
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
}

//===----------------------------------------------------------------------===//
// AtomicOutputFile
//===----------------------------------------------------------------------===//

AtomicOutputFile::AtomicOutputFile(std::string path) : path_(std::move(path)) {
  std::string problem = file_.open(path_);
  if (!problem.empty())
    failIo(path_, problem);
}

void AtomicOutputFile::write(const void *data, int64_t count) {
  std::string problem = file_.write(data, count);
  if (!problem.empty())
    failIo(path_, problem);
}

void AtomicOutputFile::commit() {
  std::string problem = file_.commit();
  if (!problem.empty())
    failIo(path_, problem);
}

} // namespace fluid::rt::io
