//===- FluidOps.h - The fluid dialect, its attributes and ops -------------===//

#ifndef FLUID_DIALECT_FLUID_IR_FLUIDOPS_H
#define FLUID_DIALECT_FLUID_IR_FLUIDOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fluid/Dialect/Fluid/IR/FluidOpsDialect.h.inc"

#include "fluid/Dialect/Fluid/IR/FluidEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fluid/Dialect/Fluid/IR/FluidAttrs.h.inc"

namespace mlir::fluid {

/// The state of all `fluid.param`s, as a side-effect resource.
struct ParamResource : public SideEffects::Resource::Base<ParamResource> {
  StringRef getName() final { return "<FluidParam>"; }
};

/// Whether `type` is a statically shaped tensor of a floating-point element
/// type (f16, bf16, f32, f64) whose size in bytes fits in int64_t.
bool isFloatTensor(Type type);
/// Likewise for i32 and i64 (labels, counters).
bool isIntTensor(Type type);
/// Either of the above.
bool isFluidTensor(Type type);
/// Likewise for ui8 (the picks of fluid.max_pool2d_with_indices); not a
/// fluid tensor: no parameter, argument or constant has this type.
bool isByteTensor(Type type);

/// The most cells the kernel of fluid.max_pool2d_with_indices (and of its
/// gradient) may have: each window's pick is a ui8 offset in the window.
constexpr int64_t kMaxPoolIndexCells = 256;

/// Fails, naming the attribute and the nearest declared one, if `op` carries
/// an attribute without a dialect prefix that is not among `known`.
LogicalResult verifyNoUnknownAttributes(Operation *op,
                                        ArrayRef<StringRef> known);

/// Fails with "WHAT must ..." unless `name`, which leaves the program as a
/// checkpoint key or a data file's name, is non-empty UTF-8 without NUL.
LogicalResult verifyExternalName(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef what, StringRef name);

/// Whether `order` is a permutation of [0, rank).
bool isPermutation(ArrayRef<int64_t> order, int64_t rank);
/// The type a tensor stored as `stored` with its dimensions permuted by
/// `order` (stored dimension d is dimension order[d]) has unpermuted.
RankedTensorType unpermutedType(RankedTensorType stored,
                                ArrayRef<int64_t> order);

/// Whether `op` is elementwise with NumPy broadcasting and names no axis,
/// so that it computes the same elements whatever the order of the
/// dimensions its operands share (passes/Layout.cpp,
/// passes/PermuteStorage.cpp).
bool isLayoutAgnosticElementwise(Operation *op);

/// Whether `op` may be part of a `fluid.fusion` body: an elementwise op on
/// f32 or f64 tensors whose generated code computes what its kernel does
/// (FluidFusionOps.td).
bool isFusibleElementwise(Operation *op);
/// Whether `op` is a per-channel sum a `fluid.fusion` body may end in: a
/// `fluid.reduce_sum` of an f32 or f64 tensor of rank 2 or 4 over every
/// axis but 1, or of rank 4 over every axis but the last (channels-last),
/// with or without keep_dims.
bool isFusibleReduction(Operation *op);
/// Whether a sum of `input` elements may give `result` elements: the same
/// type, or f32 for f16 or bf16 (a widening sum).
bool isReductionElementType(Type input, Type result);
/// Whether `actual` is a reduction's `inferred` result type, or its
/// widening (isReductionElementType).
bool isReductionResultType(TypeRange inferred, TypeRange actual);
/// The axis a fusible sum keeps (1, or 3 for a channels-last sum of rank
/// 4); none for any other op.
std::optional<int64_t> fusedSumChannelAxis(Operation *op);
/// Whether `op` is a view a `fluid.fusion` body may apply to one of its
/// arguments: a `fluid.slice` at offset 0, or a `fluid.reshape` that only
/// inserts or removes dimensions of size 1, of an f32 or f64 tensor; or a
/// `fluid.cast` from f16 or bf16 to f32 or f64, which is exact, so every
/// region that reads the wide value reads the 16-bit one and widens it as it
/// loads (a mixed-precision program's activations never exist in f32). A
/// view computes nothing: the ops that read it read the argument's buffer
/// at other strides (fusedAccessStrides in fluid/Target/FusedKernels.h),
/// converted to the view's element type.
bool isFusibleView(Operation *op);

/// Whether `op`, in a `fluid.fusion` body, is a view its readers load
/// through: an isFusibleView op applied to an argument or to such a view.
/// A widening cast of a value the region computes is not one: the region
/// computes it like an elementwise op (the 16-bit value it widens is one of
/// the region's results, rounded once).
bool isLoadedView(Operation *op);

/// Whether `op` is a `fluid.cast` from f16 or bf16 to f32 or f64 (exact).
bool isWideningStorageCast(Operation *op);

namespace OpTrait {
/// See Fluid_NoUnknownAttributes in FluidBase.td.
template <typename ConcreteType>
class NoUnknownAttributes
    : public ::mlir::OpTrait::TraitBase<ConcreteType, NoUnknownAttributes> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return verifyNoUnknownAttributes(op, ConcreteType::getAttributeNames());
  }
};
} // namespace OpTrait

} // namespace mlir::fluid

#define GET_OP_CLASSES
#include "fluid/Dialect/Fluid/IR/FluidOps.h.inc"

#endif // FLUID_DIALECT_FLUID_IR_FLUIDOPS_H
