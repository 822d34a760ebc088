//===- OutputFile.cpp - Writing a tool's output file safely ---------------===//

#include "fluid/Support/OutputFile.h"

#include "io/File.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static LogicalResult cannotWrite(StringRef path, StringRef tool,
                                 const Twine &reason) {
  llvm::errs() << tool << ": error: cannot write ";
  if (path == "-")
    llvm::errs() << "to standard output";
  else
    llvm::errs() << "'" << path << "'";
  llvm::errs() << ": " << reason << "\n";
  return failure();
}

/// Prints into `os`, flushes it, and reports a write error.
static LogicalResult printInto(llvm::raw_fd_ostream &os, StringRef path,
                               StringRef tool,
                               function_ref<void(raw_ostream &)> print) {
  print(os);
  os.flush();
  std::error_code ec = os.error();
  os.clear_error();
  if (ec)
    return cannotWrite(path, tool, ec.message());
  return success();
}

LogicalResult mlir::fluid::checkReplaceable(StringRef path, StringRef tool) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(path, status))
    return success(); // Nothing there yet.
  if (llvm::sys::fs::is_directory(status))
    return cannotWrite(path, tool, "it is a directory");
  if (!llvm::sys::fs::is_regular_file(status))
    return cannotWrite(path, tool,
                       "it is not a regular file, and will not be replaced");
  return success();
}

LogicalResult
mlir::fluid::writeOutputFile(StringRef path, StringRef tool,
                             function_ref<void(raw_ostream &)> print) {
  if (path == "-")
    return printInto(llvm::outs(), path, tool, print);

  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status)) {
    if (llvm::sys::fs::is_directory(status))
      return cannotWrite(path, tool, "it is a directory");
    if (!llvm::sys::fs::is_regular_file(status)) {
      // A device or a pipe: write through it.
      std::error_code ec;
      llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
      if (ec)
        return cannotWrite(path, tool, ec.message());
      return printInto(os, path, tool, print);
    }
  }

  // The runtime's writer: an interrupted write leaves neither a partial
  // file nor a temporary one behind.
  ::fluid::rt::io::AtomicFileWriter file;
  std::string problem = file.open(path.str());
  if (!problem.empty())
    return cannotWrite(path, tool, problem);
  {
    llvm::raw_fd_ostream os(file.fd(), /*shouldClose=*/false);
    if (failed(printInto(os, path, tool, print)))
      return failure();
  }
  problem = file.commit();
  if (!problem.empty())
    return cannotWrite(path, tool, problem);
  return success();
}
