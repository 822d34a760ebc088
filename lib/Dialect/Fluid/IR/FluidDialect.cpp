//===- FluidDialect.cpp - The fluid dialect -------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace mlir::fluid;

#include "fluid/Dialect/Fluid/IR/FluidOpsDialect.cpp.inc"

void FluidDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fluid/Dialect/Fluid/IR/FluidOps.cpp.inc"
      >();
  registerAttributes();
}

Operation *FluidDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

//===----------------------------------------------------------------------===//
// Type predicates
//===----------------------------------------------------------------------===//

/// The runtime's tensor descriptors hold at most this many dimensions.
static constexpr int64_t kMaxRank = 8;

/// A statically shaped tensor of at most kMaxRank dimensions whose size in
/// bytes fits in int64_t, so no later size computation can overflow.
static bool hasRepresentableShape(RankedTensorType type) {
  if (type.getRank() > kMaxRank || !type.hasStaticShape())
    return false;
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  std::optional<int64_t> bytes = static_cast<int64_t>((bits + 7) / 8);
  for (int64_t dim : type.getShape()) {
    bytes = llvm::checkedMul<int64_t>(*bytes, dim);
    if (!bytes)
      return false;
  }
  return true;
}

bool mlir::fluid::isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(
             tensor.getElementType()) &&
         hasRepresentableShape(tensor);
}

bool mlir::fluid::isIntTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return false;
  auto intType = dyn_cast<IntegerType>(tensor.getElementType());
  return intType && intType.isSignless() &&
         (intType.getWidth() == 32 || intType.getWidth() == 64) &&
         hasRepresentableShape(tensor);
}

bool mlir::fluid::isFluidTensor(Type type) {
  return isFloatTensor(type) || isIntTensor(type);
}
