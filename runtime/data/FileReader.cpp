//===- FileReader.cpp - Sequential reads of raw or gzip-compressed files --===//

#include "FileReader.h"

#include "fluid/runtime/Error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace fluid::rt::data {

namespace {

// Deflate spends at least two bits on a 258-byte match, so no stream expands
// by more than 1032:1 (the limit zlib's technical notes give); a gzip file's
// own header and trailer only lower the ratio further.
constexpr int64_t maxDeflateRatio = 1032;
constexpr size_t inputBufferSize = size_t(1) << 16;
// Single read() and inflate() calls stay well below their size types' limits.
constexpr int64_t maxCallSize = int64_t(1) << 30;

std::string systemError() { return std::strerror(errno); }

} // namespace

void failIo(const std::string &path, const std::string &problem) {
  throw Error(FLUID_ERROR_IO, path + ": " + problem);
}

void failFormat(const std::string &path, const std::string &problem) {
  throw Error(FLUID_ERROR_INVALID_ARGUMENT, path + ": " + problem);
}

void failUnsupported(const std::string &path, const std::string &problem) {
  throw Error(FLUID_ERROR_UNSUPPORTED, path + ": " + problem);
}

FileReader::Descriptor::~Descriptor() {
  if (fd >= 0)
    ::close(fd);
}

FileReader::FileReader(std::string path) : path_(std::move(path)) {
  file_.fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (file_.fd < 0)
    failIo(path_, "cannot open: " + systemError());
  struct stat status;
  if (::fstat(file_.fd, &status) != 0)
    failIo(path_, "cannot stat: " + systemError());
  if (!S_ISREG(status.st_mode))
    failIo(path_, "not a regular file");
  size_ = status.st_size;

  unsigned char magic[2];
  gzip_ = readRaw(magic, 2) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  offset_ = 0;
  if (!gzip_)
    return;
  input_.resize(inputBufferSize);
  stream_.next_in = input_.data();
  stream_.avail_in = 0;
  // 16 + MAX_WBITS: a gzip wrapper (not zlib's), the largest window.
  int initStatus = inflateInit2(&stream_, 16 + MAX_WBITS);
  if (initStatus == Z_MEM_ERROR)
    throw std::bad_alloc();
  if (initStatus != Z_OK)
    failIo(path_, std::string("cannot start zlib: ") + zError(initStatus));
  inflateReady_ = true;
}

FileReader::~FileReader() {
  if (inflateReady_)
    inflateEnd(&stream_);
}

int64_t FileReader::contentSizeLimit() const {
  if (!gzip_)
    return size_;
  if (size_ > std::numeric_limits<int64_t>::max() / maxDeflateRatio)
    return std::numeric_limits<int64_t>::max();
  return size_ * maxDeflateRatio;
}

int64_t FileReader::read(void *destination, int64_t count) {
  auto *bytes = static_cast<unsigned char *>(destination);
  return gzip_ ? readGzip(bytes, count) : readRaw(bytes, count);
}

int64_t FileReader::readRaw(unsigned char *destination, int64_t count) {
  int64_t done = 0;
  while (done < count) {
    ssize_t got =
        ::pread(file_.fd, destination + done,
                size_t(std::min(count - done, maxCallSize)), off_t(offset_));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      failIo(path_, "read failed: " + systemError());
    if (got == 0)
      break;
    done += got;
    offset_ += got;
  }
  return done;
}

bool FileReader::fillInput(size_t count) {
  if (stream_.avail_in >= count)
    return true;
  // Keep the bytes inflate has not consumed, and fill the buffer behind them.
  std::memmove(input_.data(), stream_.next_in, stream_.avail_in);
  stream_.next_in = input_.data();
  stream_.avail_in += uInt(readRaw(input_.data() + stream_.avail_in,
                                   int64_t(input_.size() - stream_.avail_in)));
  return stream_.avail_in >= count;
}

int64_t FileReader::readGzip(unsigned char *destination, int64_t count) {
  int64_t done = 0;
  while (done < count) {
    if (memberEnded_) {
      // The content ends with the file; anything else must be a new member.
      if (!fillInput(1))
        break;
      if (!fillInput(2) || stream_.next_in[0] != 0x1f ||
          stream_.next_in[1] != 0x8b)
        failFormat(path_, "unexpected bytes after the end of the gzip "
                          "stream, at byte " +
                              std::to_string(offset_ - stream_.avail_in));
      inflateReset(&stream_);
      memberEnded_ = false;
    }
    fillInput(1);
    uInt room = uInt(std::min(count - done, maxCallSize));
    stream_.next_out = destination + done;
    stream_.avail_out = room;
    int status = inflate(&stream_, Z_NO_FLUSH);
    done += room - stream_.avail_out;
    if (status == Z_STREAM_END)
      memberEnded_ = true;
    else if (status == Z_BUF_ERROR) // no progress: no input left
      failFormat(path_, "truncated gzip stream: the file ends inside "
                        "compressed data, after " +
                            std::to_string(size_) + " bytes");
    else if (status == Z_MEM_ERROR)
      throw std::bad_alloc();
    else if (status != Z_OK)
      failFormat(path_, std::string("corrupt gzip stream: ") +
                            (stream_.msg ? stream_.msg : zError(status)));
  }
  return done;
}

} // namespace fluid::rt::data
