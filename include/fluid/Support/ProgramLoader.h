//===- ProgramLoader.h - Reads a fluid program for the tools --------------===//

#ifndef FLUID_SUPPORT_PROGRAMLOADER_H
#define FLUID_SUPPORT_PROGRAMLOADER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>

namespace mlir::fluid {

/// Opens, checks (InputGuards), parses and verifies a program file, and
/// keeps reporting later diagnostics (e.g. the interpreter's) against its
/// source lines, without echoing ops in generic form.
class ProgramLoader {
public:
  ProgramLoader(MLIRContext &context, StringRef toolName);

  /// The module, or null after printing why ("TOOL: error: ..." for file
  /// errors, "FILE:LINE:COL: error: ..." for everything in the file).
  OwningOpRef<ModuleOp> load(StringRef path);

private:
  MLIRContext &context;
  std::string toolName;
  std::shared_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> handler;
};

} // namespace mlir::fluid

#endif // FLUID_SUPPORT_PROGRAMLOADER_H
