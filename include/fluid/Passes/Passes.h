//===- Passes.h - Fluid's passes ------------------------------------------===//

#ifndef FLUID_PASSES_PASSES_H
#define FLUID_PASSES_PASSES_H

#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::fluid {

#define GEN_PASS_DECL
#include "fluid/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fluid/Passes/Passes.h.inc"

/// Registers --fluid-build-training and the other pass pipelines.
void registerFluidPipelines();

} // namespace mlir::fluid

#endif // FLUID_PASSES_PASSES_H
