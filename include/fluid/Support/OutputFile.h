//===- OutputFile.h - Writing a tool's output file safely -----------------===//

#ifndef FLUID_SUPPORT_OUTPUTFILE_H
#define FLUID_SUPPORT_OUTPUTFILE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::fluid {

/// Writes what `print` prints to `path`:
/// - "-" is standard output;
/// - an existing path that is not a regular file (/dev/null, a pipe, a
///   terminal) is written in place, never replaced;
/// - otherwise the text goes to a new file that replaces `path` once
///   complete (the runtime's AtomicFileWriter), so a failure, or a kill,
///   leaves an older file as it was and no temporary file behind; the
///   replaced file's permissions carry over.
/// Errors are printed as "<tool>: error: cannot write '<path>': <reason>".
LogicalResult writeOutputFile(StringRef path, StringRef tool,
                              function_ref<void(raw_ostream &)> print);

/// Whether `path` may be replaced by renaming a new file over it: it does
/// not exist or is a regular file. Otherwise prints why not (as above).
LogicalResult checkReplaceable(StringRef path, StringRef tool);

} // namespace mlir::fluid

#endif // FLUID_SUPPORT_OUTPUTFILE_H
