//===- ParamSummary.cpp - --fluid-param-summary ---------------------------===//
//
// Prints a table of a module's parameters. Summing sizes here, rather than
// in each front end, gives one place to check a model against its reference
// parameter count.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Support/Text.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDPARAMSUMMARY
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

std::string shapeString(RankedTensorType type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(type.getShape(), os, ",");
  os << "] " << type.getElementType();
  return s;
}

/// The initializer as written inside `fluid.param` (without `#fluid.init<>`).
std::string initString(InitializerAttr init) {
  std::string s;
  llvm::raw_string_ostream os(s);
  Attribute(init).print(os);
  StringRef body(s);
  body.consume_front("#fluid.init<");
  body.consume_back(">");
  return body.str();
}

struct FluidParamSummaryPass
    : public mlir::fluid::impl::FluidParamSummaryBase<FluidParamSummaryPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string errorMessage;
    std::unique_ptr<llvm::ToolOutputFile> file;
    llvm::raw_ostream *os = &llvm::errs();
    if (output != "-") {
      file = openOutputFile(output, &errorMessage);
      if (!file) {
        getOperation().emitError()
            << "cannot open '" << output
            << "' for the parameter summary: " << errorMessage;
        return signalPassFailure();
      }
      os = &file->os();
    }
    print(*os);
    if (file)
      file->keep();
    markAllAnalysesPreserved();
  }

  void print(llvm::raw_ostream &os) {
    // Each parameter's size fits in 64 bits (the dialect checks it); their
    // sum might not, so totals saturate and say so.
    std::optional<int64_t> count = 0, trainableCount = 0, bytes = 0;
    int64_t params = 0;
    auto accumulate = [](std::optional<int64_t> &total, int64_t value) {
      if (total)
        total = llvm::checkedAdd<int64_t>(*total, value);
    };
    auto totalString = [](std::optional<int64_t> total) {
      return total ? withThousands(*total) : std::string("more than 2^63");
    };
    os << llvm::formatv("{0,-40} {1,-24} {2,14} {3,14}  {4,-9} {5}\n", "name",
                        "shape", "elements", "bytes", "trainable", "init");
    for (auto param : getOperation().getOps<ParamOp>()) {
      RankedTensorType type = param.getTensorType();
      int64_t elements = type.getNumElements();
      int64_t size =
          elements * ((type.getElementType().getIntOrFloatBitWidth() + 7) / 8);
      os << llvm::formatv(
          "{0,-40} {1,-24} {2,14} {3,14}  {4,-9} {5}\n", param.getSymName(),
          shapeString(type), withThousands(elements), withThousands(size),
          param.getTrainable() ? "yes" : "no", initString(param.getInit()));
      ++params;
      accumulate(count, elements);
      accumulate(bytes, size);
      if (param.getTrainable())
        accumulate(trainableCount, elements);
    }
    os << llvm::formatv("total: {0} parameters, {1} elements ({2} trainable), "
                        "{3} bytes\n",
                        params, totalString(count), totalString(trainableCount),
                        totalString(bytes));
  }
};

} // namespace
