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

#include "fluid/Dialect/FluidRt/IR/FluidRtOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h.inc"

#endif // FLUID_DIALECT_FLUIDRT_IR_FLUIDRTOPS_H
