//===- FluidDialect.cpp - The fluid dialect -------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/ConvertUTF.h"

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

bool mlir::fluid::isByteTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isUnsignedInteger(8) &&
         hasRepresentableShape(tensor);
}

//===----------------------------------------------------------------------===//
// Attribute verification
//===----------------------------------------------------------------------===//

LogicalResult
mlir::fluid::verifyNoUnknownAttributes(Operation *op,
                                       ArrayRef<StringRef> known) {
  for (NamedAttribute attr : op->getDiscardableAttrs()) {
    StringRef name = attr.getName().getValue();
    if (name.contains('.') || llvm::is_contained(known, name))
      continue;
    InFlightDiagnostic diag = op->emitOpError()
                              << "has unknown attribute '" << name << "'";
    // Suggest a declared attribute within two edits ("dilations").
    StringRef nearest;
    unsigned best = 3;
    for (StringRef candidate : known) {
      unsigned distance = name.edit_distance(candidate, true, best);
      if (distance < best) {
        best = distance;
        nearest = candidate;
      }
    }
    if (!nearest.empty())
      diag << "; did you mean '" << nearest << "'?";
    else if (known.empty())
      diag << "; it takes none";
    else
      diag << "; it takes " << llvm::join(known, ", ");
    return diag;
  }
  return success();
}

LogicalResult
mlir::fluid::verifyExternalName(function_ref<InFlightDiagnostic()> emitError,
                                StringRef what, StringRef name) {
  if (name.empty())
    return emitError() << what << " must not be empty";
  if (name.contains('\0'))
    return emitError() << what << " must not contain a NUL byte";
  const auto *begin = reinterpret_cast<const llvm::UTF8 *>(name.data());
  if (!llvm::isLegalUTF8String(&begin, begin + name.size()))
    return emitError() << what << " must be valid UTF-8 (byte "
                       << (reinterpret_cast<const char *>(begin) - name.data())
                       << " is not)";
  return success();
}

/// Checks that `attr`, a `fluid.*` attribute, is a unit attribute.
static LogicalResult verifyUnit(function_ref<InFlightDiagnostic()> emitError,
                                NamedAttribute attr) {
  if (!isa<UnitAttr>(attr.getValue()))
    return emitError() << "'" << attr.getName().getValue()
                       << "' must be a unit attribute, got " << attr.getValue();
  return success();
}

LogicalResult FluidDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto emitError = [&] { return op->emitOpError(); };
  if (name == kEntryAttrName) {
    if (!isa<FunctionOpInterface>(op))
      return emitError() << "'" << name << "' marks functions only";
    return verifyUnit(emitError, attr);
  }
  if (name == kOptimizerStateAttrName) {
    if (!isa<ParamOp>(op))
      return emitError() << "'" << name << "' marks fluid.param only";
    return verifyUnit(emitError, attr);
  }
  return emitError() << "has unknown attribute '" << name
                     << "'; the fluid dialect's operation attributes are '"
                     << kEntryAttrName << "' and '" << kOptimizerStateAttrName
                     << "'";
}

LogicalResult FluidDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto emitError = [&] {
    return op->emitOpError() << "argument " << argIndex << ": ";
  };
  if (name == kStorageOrderAttrName) {
    auto order = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!function || regionIndex != 0)
      return emitError() << "'" << name << "' marks function arguments only";
    auto type = dyn_cast<ShapedType>(function.getArgumentTypes()[argIndex]);
    if (!order || !type || !type.hasRank() ||
        !isPermutation(order.asArrayRef(), type.getRank()))
      return emitError() << "'" << name
                         << "' must be an array<i64> permutation of the "
                            "argument's dimensions, got "
                         << attr.getValue();
    return success();
  }
  if (name != kNameAttrName)
    return emitError() << "unknown attribute '" << name
                       << "'; the fluid dialect's argument attributes are '"
                       << kNameAttrName << "' and '" << kStorageOrderAttrName
                       << "'";
  auto text = dyn_cast<StringAttr>(attr.getValue());
  if (!text)
    return emitError() << "'" << name << "' must be a string, got "
                       << attr.getValue();
  return verifyExternalName(emitError, "'" + name.str() + "'", text.getValue());
}

LogicalResult FluidDialect::verifyRegionResultAttribute(Operation *op,
                                                        unsigned regionIndex,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto emitError = [&] {
    return op->emitOpError() << "result " << resultIndex << ": ";
  };
  if (name == kLossAttrName || name == kLearningRateResultAttrName)
    return verifyUnit(emitError, attr);
  if (name == kGradOfAttrName || name == kLossScaleAttrName) {
    if (!isa<FlatSymbolRefAttr>(attr.getValue()))
      return emitError() << "'" << name << "' must name a parameter, got "
                         << attr.getValue();
    return success();
  }
  return emitError() << "unknown attribute '" << name
                     << "'; the fluid dialect's result attributes are '"
                     << kLossAttrName << "', '" << kLearningRateResultAttrName
                     << "', '" << kLossScaleAttrName << "' and '"
                     << kGradOfAttrName << "'";
}
