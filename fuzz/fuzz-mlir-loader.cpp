//===- fuzz-mlir-loader.cpp - libFuzzer target: loading a fluid program ---===//
//
// Each input is a program file, loaded as fluid-run, fluid-train and
// fluid-compile load theirs (ProgramLoader: the input guards, MLIR's parser
// and the verifier) into a context holding the dialects fluid-opt
// registers. A module that loads is printed, which runs the custom printers
// of every op and attribute it holds.
//
//===----------------------------------------------------------------------===//

#include "FuzzInputFile.h"

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Support/ProgramLoader.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ::fluid::fuzz::FuzzInputFile file("fuzz-mlir-loader");
  static DialectRegistry *registry = [] {
    auto *registry = new DialectRegistry();
    registry->insert<mlir::fluid::FluidDialect, fluid_rt::FluidRtDialect,
                     func::FuncDialect, memref::MemRefDialect,
                     arith::ArithDialect>();
    return registry;
  }();
  file.assign(data, size);

  // A fresh context per input: nothing one input uniques leaks into the next.
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  mlir::fluid::ProgramLoader loader(context, "fuzz-mlir-loader");
  OwningOpRef<ModuleOp> module = loader.load(file.path());
  if (module)
    module->print(llvm::nulls());
  return 0;
}
