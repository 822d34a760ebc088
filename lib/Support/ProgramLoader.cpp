//===- ProgramLoader.cpp - Reads a fluid program for the tools ------------===//

#include "fluid/Support/ProgramLoader.h"
#include "fluid/Support/InputFile.h"
#include "fluid/Support/InputGuards.h"

#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fluid;

ProgramLoader::ProgramLoader(MLIRContext &context, StringRef toolName)
    : context(context), toolName(toolName.str()),
      sourceMgr(std::make_shared<llvm::SourceMgr>()),
      handler(
          std::make_unique<SourceMgrDiagnosticHandler>(*sourceMgr, &context)) {
  // The source line and caret locate an op; its generic form adds noise.
  context.printOpOnDiagnostic(false);
}

OwningOpRef<ModuleOp> ProgramLoader::load(StringRef path) {
  std::unique_ptr<llvm::MemoryBuffer> buffer =
      openCheckedInput(path, toolName, kMlirTextLimit);
  if (!buffer)
    return nullptr;
  if (failed(checkTextInput(*buffer)))
    return nullptr;
  sourceMgr->AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}
