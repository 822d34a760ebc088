//===- FluidRtOps.h - The buffer-level fluid_rt dialect -------------------===//

#ifndef FLUID_DIALECT_FLUIDRT_IR_FLUIDRTOPS_H
#define FLUID_DIALECT_FLUIDRT_IR_FLUIDRTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <optional>

#include "fluid/Dialect/FluidRt/IR/FluidRtOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h.inc"

namespace mlir::fluid_rt {

/// On a function, after --fluid-plan-memory: its arena's size, and the
/// largest sum of bytes of temporaries live at one op (i64).
constexpr StringLiteral kArenaBytesAttrName = "fluid_rt.arena_bytes";
constexpr StringLiteral kArenaLowerBoundAttrName = "fluid_rt.arena_lower_bound";
/// On the module: the cuDNN workspace limit the memory plan assumes, in
/// bytes (i64; absent: none).
constexpr StringLiteral kWorkspaceLimitAttrName = "fluid_rt.workspace_limit";
/// On a launch of "fusion", after --fluid-generate-gpu-kernels: the name of
/// its kernel in the module's gpu.module @fluid_kernels (a string).
constexpr StringLiteral kGpuKernelAttrName = "fluid_rt.gpu_kernel";
/// On such a launch of a region with sums: the blocks per channel (per tile
/// of channels) its kernel was generated for (i64; fusedReductionSplits).
constexpr StringLiteral kGpuSumSplitsAttrName = "fluid_rt.gpu_sum_splits";

/// Whether output `output` of a launch of `kernel` may be the buffer of one
/// of the launch's inputs that has the output's shape and element type
/// (the other inputs may be broadcast): the runtime's aliasing rules, the
/// same on both backends (documented per entry point in the runtime's
/// headers and tested in test/Runtime/*-in-place.py).
bool mayWriteOverInput(StringRef kernel, unsigned output);

/// For a grouped update (sgd_group, momentum_group, adam_group) with
/// `outputs` outputs: the input whose buffer output `output` may be, the
/// same entry's parameter (a new parameter) or state (new state); entries
/// must not share buffers. None for other kernels.
std::optional<unsigned> groupedInPlaceInput(StringRef kernel, unsigned outputs,
                                            unsigned output);

} // namespace mlir::fluid_rt

#endif // FLUID_DIALECT_FLUIDRT_IR_FLUIDRTOPS_H
