//===- InputFile.cpp - Opening a tool's input file with its limits --------===//

#include "fluid/Support/InputFile.h"

#include "fluid/runtime/HostMemory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <unistd.h>

using namespace mlir;
using namespace mlir::fluid;
using ::fluid::rt::formatBytes;

static LogicalResult cannotRead(StringRef path, StringRef tool,
                                const Twine &reason) {
  llvm::errs() << tool << ": error: cannot read ";
  if (path == "-")
    llvm::errs() << "standard input";
  else
    llvm::errs() << "'" << path << "'";
  llvm::errs() << ": " << reason << "\n";
  return failure();
}

/// Fails unless `bytes` of `limit.what` are within its limits.
static LogicalResult checkSize(StringRef path, StringRef tool,
                               const InputLimit &limit, uint64_t bytes) {
  if (bytes > limit.maxBytes)
    return cannotRead(path, tool,
                      Twine("the file is ") + formatBytes(bytes) +
                          ", more than the " + formatBytes(limit.maxBytes) +
                          " limit for " + limit.what);
  int64_t available = fluid_available_host_memory();
  // The factor is small and maxBytes below 2^63 / 16: no overflow.
  uint64_t needed = bytes * limit.memoryFactor;
  if (available >= 0 && needed > static_cast<uint64_t>(available))
    return cannotRead(
        path, tool,
        Twine("reading this ") + formatBytes(bytes) + " file needs about " +
            formatBytes(needed) + " of memory, and only " +
            formatBytes(static_cast<uint64_t>(available)) + " is available");
  return success();
}

LogicalResult mlir::fluid::checkInputFile(StringRef path, StringRef tool,
                                          const InputLimit &limit) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return cannotRead(path, tool, ec.message());
  if (llvm::sys::fs::is_directory(status))
    return cannotRead(path, tool, "it is a directory");
  if (!llvm::sys::fs::is_regular_file(status))
    return cannotRead(
        path, tool,
        Twine("it is not a regular file (a device or a pipe); only ") +
            "regular files are read as " + limit.what);
  return checkSize(path, tool, limit, status.getSize());
}

/// Standard input, read in chunks until its end or just past the limit.
static std::unique_ptr<llvm::MemoryBuffer>
readStandardInput(StringRef tool, const InputLimit &limit) {
  llvm::SmallString<0> text;
  char chunk[1 << 16];
  while (true) {
    ssize_t count = ::read(STDIN_FILENO, chunk, sizeof(chunk));
    if (count < 0) {
      if (errno == EINTR)
        continue;
      (void)cannotRead(
          "-", tool, std::error_code(errno, std::generic_category()).message());
      return nullptr;
    }
    if (count == 0)
      break;
    text.append(chunk, chunk + count);
    if (text.size() > limit.maxBytes) {
      (void)cannotRead("-", tool,
                       Twine("more than the ") + formatBytes(limit.maxBytes) +
                           " limit for " + limit.what);
      return nullptr;
    }
  }
  if (failed(checkSize("-", tool, limit, text.size())))
    return nullptr;
  return llvm::MemoryBuffer::getMemBufferCopy(text, "<stdin>");
}

std::unique_ptr<llvm::MemoryBuffer>
mlir::fluid::openCheckedInput(StringRef path, StringRef tool,
                              const InputLimit &limit) {
  if (path == "-")
    return readStandardInput(tool, limit);
  if (failed(checkInputFile(path, tool, limit)))
    return nullptr;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/true);
  if (!buffer) {
    (void)cannotRead(path, tool, buffer.getError().message());
    return nullptr;
  }
  // The file may have grown since it was checked.
  if (failed(checkSize(path, tool, limit, (*buffer)->getBufferSize())))
    return nullptr;
  return std::move(*buffer);
}
