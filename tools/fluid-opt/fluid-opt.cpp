//===- fluid-opt.cpp - Fluid's optimizer driver ---------------------------===//
//
// Like mlir-opt: parses a fluid program, verifies it, runs the requested
// passes and prints the result. Before handing the input to MLIR's parser it
// rejects inputs nested deeper than any real program, because the parser is
// recursive and would otherwise exhaust the stack on adversarial input.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Support/InputGuards.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main(int argc, char **argv) {
  DialectRegistry registry;
  registry.insert<fluid::FluidDialect, fluid_rt::FluidRtDialect,
                  func::FuncDialect, memref::MemRefDialect>();
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerInlinerPass();
  fluid::registerFluidPasses();
  fluid::registerFluidPipelines();

  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv,
      "fluid-opt: parse, verify, transform and print Fluid training programs",
      registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "fluid-opt: " << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (failed(fluid::checkTextInput(*input)))
    return EXIT_FAILURE;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << "fluid-opt: " << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
