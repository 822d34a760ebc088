//===- InputFile.h - Opening a tool's input file with its limits ----------===//
//
// Every file a tool reads is checked before a byte of it is read: it must be
// a regular file (or standard input, read up to the same limit), no larger
// than the stated limit of its format, and small enough that parsing it fits
// in the host memory still available. So /dev/zero, a directory or a 20 GB
// file is a one-line error, not an out-of-memory abort.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_SUPPORT_INPUTFILE_H
#define FLUID_SUPPORT_INPUTFILE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <memory>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir::fluid {

/// A file format's limits.
struct InputLimit {
  /// What the file holds, for messages ("MLIR text").
  const char *what;
  /// The largest accepted file, in bytes.
  uint64_t maxBytes;
  /// Host memory needed to read a file of N bytes: about N times this.
  unsigned memoryFactor;
};

/// Textual IR: 1 GiB; MLIR's parser holds the text and the IR built from it.
constexpr InputLimit kMlirTextLimit = {"MLIR text", uint64_t(1) << 30, 4};
/// ONNX models: protobuf cannot parse a message of 2 GiB or more, and the
/// importer holds the parsed model and the parameters it copies out (it
/// also bounds protobuf's expansion of the file before parsing it).
constexpr InputLimit kOnnxModelLimit = {"ONNX models", (uint64_t(1) << 31) - 1,
                                        3};

/// Checks that `path` may be read as `limit.what`: it exists, is a regular
/// file, is at most `limit.maxBytes` long and needs less host memory than is
/// available. On failure prints "TOOL: error: cannot read 'PATH': REASON".
LogicalResult checkInputFile(StringRef path, StringRef tool,
                             const InputLimit &limit);

/// Reads `path` ("-" is standard input, read up to the limit) after
/// checkInputFile. Returns null after printing why.
std::unique_ptr<llvm::MemoryBuffer>
openCheckedInput(StringRef path, StringRef tool, const InputLimit &limit);

} // namespace mlir::fluid

#endif // FLUID_SUPPORT_INPUTFILE_H
