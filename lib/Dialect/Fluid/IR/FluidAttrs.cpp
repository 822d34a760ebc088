//===- FluidAttrs.cpp - Attributes of the fluid dialect -------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fluid;

#include "fluid/Dialect/Fluid/IR/FluidEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "fluid/Dialect/Fluid/IR/FluidAttrs.cpp.inc"

void FluidDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "fluid/Dialect/Fluid/IR/FluidAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// InitializerAttr
//===----------------------------------------------------------------------===//

bool InitializerAttr::usesFans() const {
  switch (getKind()) {
  case InitKind::KaimingNormal:
  case InitKind::KaimingUniform:
  case InitKind::XavierUniform:
    return true;
  default:
    return false;
  }
}

LogicalResult
InitializerAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        InitKind kind, llvm::APFloat aFloat,
                        llvm::APFloat bFloat, FanMode) {
  double a = aFloat.convertToDouble(), b = bFloat.convertToDouble();
  if (!std::isfinite(a) || !std::isfinite(b))
    return emitError() << "initializer parameters must be finite";
  switch (kind) {
  case InitKind::Normal:
    if (a <= 0)
      return emitError() << "normal initializer needs std > 0, got " << a;
    break;
  case InitKind::Uniform:
    if (a > b)
      return emitError() << "uniform initializer needs low <= high, got (" << a
                         << ", " << b << ")";
    break;
  case InitKind::KaimingNormal:
  case InitKind::KaimingUniform:
  case InitKind::XavierUniform:
    if (a <= 0)
      return emitError() << stringifyInitKind(kind)
                         << " initializer needs gain > 0, got " << a;
    break;
  default:
    break;
  }
  return success();
}

/// Parses `gain = G`.
static ParseResult parseGain(AsmParser &parser, double &gain) {
  return failure(parser.parseKeyword("gain") || parser.parseEqual() ||
                 parser.parseFloat(gain));
}

Attribute InitializerAttr::parseBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseKeyword(&kindName))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(kindName);
  if (!kind) {
    parser.emitError(loc) << "unknown initializer '" << kindName
                          << "'; expected zeros, ones, constant, normal, "
                             "uniform, kaiming_normal, kaiming_uniform or "
                             "xavier_uniform";
    return {};
  }
  double a = 0, b = 0;
  FanMode fanMode = FanMode::FanIn;
  ParseResult result = success();
  switch (*kind) {
  case InitKind::Zeros:
  case InitKind::Ones:
    break;
  case InitKind::Constant:
    result = failure(parser.parseLParen() || parser.parseFloat(a) ||
                     parser.parseRParen());
    break;
  case InitKind::Normal:
    result = failure(parser.parseLParen() || parser.parseKeyword("std") ||
                     parser.parseEqual() || parser.parseFloat(a) ||
                     parser.parseRParen());
    break;
  case InitKind::Uniform:
    result = failure(parser.parseLParen() || parser.parseFloat(a) ||
                     parser.parseComma() || parser.parseFloat(b) ||
                     parser.parseRParen());
    break;
  case InitKind::KaimingNormal:
  case InitKind::KaimingUniform: {
    StringRef fanName;
    SMLoc fanLoc;
    if (parser.parseLParen()) {
      result = failure();
      break;
    }
    fanLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&fanName)) {
      result = failure();
      break;
    }
    std::optional<FanMode> mode = symbolizeFanMode(fanName);
    if (!mode) {
      parser.emitError(fanLoc)
          << "expected fan_in or fan_out, got '" << fanName << "'";
      return {};
    }
    fanMode = *mode;
    result = failure(parser.parseComma() || parseGain(parser, a) ||
                     parser.parseRParen());
    break;
  }
  case InitKind::XavierUniform:
    result = failure(parser.parseLParen() || parseGain(parser, a) ||
                     parser.parseRParen());
    break;
  }
  if (failed(result))
    return {};
  return InitializerAttr::getChecked(
      [&] { return parser.emitError(loc); }, parser.getContext(), *kind,
      llvm::APFloat(a), llvm::APFloat(b), fanMode);
}

void InitializerAttr::printBody(AsmPrinter &printer) const {
  printer << stringifyInitKind(getKind());
  auto printValue = [&](const llvm::APFloat &value) {
    printer.printFloat(value);
  };
  switch (getKind()) {
  case InitKind::Zeros:
  case InitKind::Ones:
    return;
  case InitKind::Constant:
    printer << "(";
    printValue(getA());
    printer << ")";
    return;
  case InitKind::Normal:
    printer << "(std = ";
    printValue(getA());
    printer << ")";
    return;
  case InitKind::Uniform:
    printer << "(";
    printValue(getA());
    printer << ", ";
    printValue(getB());
    printer << ")";
    return;
  case InitKind::KaimingNormal:
  case InitKind::KaimingUniform:
    printer << "(" << stringifyFanMode(getFanMode()) << ", gain = ";
    printValue(getA());
    printer << ")";
    return;
  case InitKind::XavierUniform:
    printer << "(gain = ";
    printValue(getA());
    printer << ")";
    return;
  }
}

Attribute InitializerAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  Attribute body = parseBody(parser);
  if (!body || parser.parseGreater())
    return {};
  return body;
}

void InitializerAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer);
  printer << ">";
}
