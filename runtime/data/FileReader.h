//===- FileReader.h - Sequential reads of raw or gzip-compressed files ----===//
//
// Dataset files ship either raw or gzip-compressed (Fashion-MNIST's Debian
// package holds .gz files). A FileReader hands out a file's content, inflated
// on the fly when the file starts with the gzip magic 0x1f 0x8b, so the
// parser above it never knows which it was. Errors name the file and follow
// the io component's rule (FLUID_ERROR_IO when the system refuses,
// FLUID_ERROR_INVALID_ARGUMENT for malformed, truncated or corrupt content,
// FLUID_ERROR_UNSUPPORTED for well-formed content the runtime cannot use).
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_FILEREADER_H
#define FLUID_RUNTIME_DATA_FILEREADER_H

#include <cstdint>
#include <string>
#include <vector>
#include <zlib.h>

namespace fluid::rt::data {

[[noreturn]] void failIo(const std::string &path, const std::string &problem);
[[noreturn]] void failFormat(const std::string &path,
                             const std::string &problem);
[[noreturn]] void failUnsupported(const std::string &path,
                                  const std::string &problem);

/// The content of a regular file, read front to back. A gzip file is one
/// or more concatenated gzip members; each member's CRC and length are
/// checked when the reader reaches its end, and anything after the last
/// member is an error.
class FileReader {
public:
  explicit FileReader(std::string path);
  ~FileReader();
  FileReader(const FileReader &) = delete;
  FileReader &operator=(const FileReader &) = delete;

  const std::string &path() const { return path_; }
  bool isGzip() const { return gzip_; }
  int64_t fileSize() const { return size_; }

  /// The most content the file can hold: its size, or for gzip the largest
  /// expansion deflate allows (1032:1), so a header promising more can be
  /// rejected before anything is allocated or inflated.
  int64_t contentSizeLimit() const;

  /// Reads up to `count` bytes of content; fewer only at its end.
  int64_t read(void *destination, int64_t count);

private:
  int64_t readRaw(unsigned char *destination, int64_t count);
  int64_t readGzip(unsigned char *destination, int64_t count);
  /// Makes at least `count` compressed bytes available to inflate unless the
  /// file ends first; returns whether it did.
  bool fillInput(size_t count);

  /// Closes the file, also when the constructor fails part-way.
  struct Descriptor {
    int fd = -1;
    ~Descriptor();
  };

  std::string path_;
  Descriptor file_;
  int64_t size_ = 0;
  int64_t offset_ = 0; // of the next byte read from the file
  bool gzip_ = false;
  z_stream stream_ = {};
  bool inflateReady_ = false;
  bool memberEnded_ = false;
  std::vector<unsigned char> input_;
};

} // namespace fluid::rt::data

#endif // FLUID_RUNTIME_DATA_FILEREADER_H
