//===- CommandLine.cpp - Checks on a tool's parsed command line -----------===//

#include "fluid/Support/CommandLine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

LogicalResult mlir::fluid::checkRepeatedOptions(StringRef tool) {
  // cl::opt is cl::Optional (LLVM no longer enforces it); cl::list is
  // cl::ZeroOrMore. Several names may map to one option: report it once.
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    if (option->getNumOccurrencesFlag() != llvm::cl::Optional ||
        option->getNumOccurrences() <= 1 || entry.first != option->ArgStr)
      continue;
    llvm::errs() << tool
                 << ": error: " << (option->ArgStr.size() == 1 ? "-" : "--")
                 << option->ArgStr << " given " << option->getNumOccurrences()
                 << " times; give it once\n";
    return failure();
  }
  return success();
}
