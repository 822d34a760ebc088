//===- OutputFile.cpp - Writing a tool's output file safely ---------------===//

#include "fluid/Support/OutputFile.h"

#include "llvm/Support/Error.h"
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

  llvm::Expected<llvm::sys::fs::TempFile> temp =
      llvm::sys::fs::TempFile::create(path + ".tmp-%%%%%%");
  if (!temp)
    return cannotWrite(path, tool, llvm::toString(temp.takeError()));
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    if (failed(printInto(os, path, tool, print))) {
      llvm::consumeError(temp->discard());
      return failure();
    }
  }
  // keep() removes the temporary file itself when it cannot rename it.
  if (llvm::Error renameError = temp->keep(path))
    return cannotWrite(path, tool, llvm::toString(std::move(renameError)));
  return success();
}
