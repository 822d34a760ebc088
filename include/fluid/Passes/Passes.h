//===- Passes.h - Fluid's passes ------------------------------------------===//

#ifndef FLUID_PASSES_PASSES_H
#define FLUID_PASSES_PASSES_H

#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>

namespace mlir::fluid {

#define GEN_PASS_DECL
#include "fluid/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "fluid/Passes/Passes.h.inc"

/// Registers --fluid-build-training and the other pass pipelines.
void registerFluidPipelines();

/// The optimizations --fluid-build-training runs after the optimizer,
/// each switched off by its option (`fold-lr-math=false`,
/// `group-optimizer=false`).
struct TrainingOptimizations {
  bool foldLrMath = true;
  bool groupOptimizer = true;
};

/// Adds --fluid-build-training{OPTIONS} to `pm`: --fluid-append-backward,
/// --fluid-append-optimizer with `options` (less the pipeline's own), then
/// --fluid-fold-lr-math and --fluid-group-optimizer unless switched off.
/// With `optimizations`, those two are not added but their switches are
/// stored there, for a caller that adds them itself. A bad option is
/// reported once, through `errorHandler` (or, for a value that does not
/// parse, by llvm::cl itself, with an empty message to `errorHandler`).
LogicalResult
buildTrainingPipeline(OpPassManager &pm, StringRef options,
                      function_ref<LogicalResult(const Twine &)> errorHandler,
                      TrainingOptimizations *optimizations = nullptr);

/// A pass option error as users should read it.
std::string describePassOptionError(StringRef message);

/// An error handler for pass options that prints "TOOL: error: FLAG:
/// PROBLEM", or nothing when llvm::cl has already printed the problem.
std::function<LogicalResult(const Twine &)> optionErrorPrinter(StringRef tool,
                                                               StringRef flag);

/// If `arg` is `--NAME=OPTIONS` for a registered pass or pipeline, checks
/// the options as the pipeline parser would, printing "TOOL: error: --NAME:
/// PROBLEM" once when one is bad. Other arguments pass.
LogicalResult checkPassOptions(StringRef arg, StringRef tool);

/// The dialects, conversion interfaces, NVVM target and LLVM IR
/// translations that --fluid-generate-gpu-kernels and
/// --fluid-lower-gpu-kernels need.
void registerGpuCodegenDialects(DialectRegistry &registry);

/// --fluid-lower-gpu-kernels: gpu.module -> NVVM -> PTX for sm_90 (a
/// gpu.binary holding PTX text), with libdevice from `toolkitPath` (the
/// CUDA toolkit; empty: MLIR's default search). The index is 64-bit; the
/// kernels themselves divide in 32 bits where their indices allow.
void buildGpuLoweringPipeline(OpPassManager &pm, StringRef toolkitPath);

/// Rounds `value` (an f32 tensor) to `element` (bf16 or f16) where it is
/// made: a narrowing `fluid.cast` after its producer and an exact widening
/// cast that its readers read instead, except a reader that is itself a
/// cast to `element`, which reads the narrow value. Shared by
/// --fluid-mixed-precision (activations) and --fluid-narrow-gradients.
void roundWhereMade(Value value, Type element);

/// Whether `value` is written to memory once fused: more than one op, or
/// one op that is not elementwise, reads it (a value one elementwise op
/// reads stays inside their fused region). The rule by which
/// --fluid-mixed-precision and --fluid-narrow-gradients choose the values
/// they store in 16 bits.
bool isReadBeyondOneRegion(Value value);

/// Where the CUDA toolkit is for libdevice: $CUDA_HOME, else
/// /usr/local/cuda.
std::string defaultCudaToolkitPath();

} // namespace mlir::fluid

#endif // FLUID_PASSES_PASSES_H
