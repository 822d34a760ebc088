//===- CommandLine.h - Checks on a tool's parsed command line -------------===//

#ifndef FLUID_SUPPORT_COMMANDLINE_H
#define FLUID_SUPPORT_COMMANDLINE_H

#include "mlir/Support/LLVM.h"

namespace mlir::fluid {

/// LLVM's command line keeps the last of repeated single-valued flags
/// (`--backend cpu --backend cuda`); Fluid's tools refuse them. After
/// llvm::cl has parsed the command line, prints "TOOL: error: --NAME given
/// N times; give it once" for the first single-valued flag given more than
/// once, and fails. Flags that take a list (cl::list) may repeat.
LogicalResult checkRepeatedOptions(StringRef tool);

} // namespace mlir::fluid

#endif // FLUID_SUPPORT_COMMANDLINE_H
