//===- fluid-opt.cpp - Fluid's optimizer driver ---------------------------===//
//
// Like mlir-opt: parses a fluid program, verifies it, runs the requested
// passes and prints the result. The input is checked before a byte of it is
// parsed (a regular file or standard input within the MLIR text limit, no
// NUL bytes, no nesting deeper than any real program, because the parser is
// recursive and would otherwise exhaust the stack on adversarial input), and
// the output is written atomically, only when the run succeeded.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Support/CommandLine.h"
#include "fluid/Support/InputFile.h"
#include "fluid/Support/InputGuards.h"
#include "fluid/Support/OutputFile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main(int argc, char **argv) {
  DialectRegistry registry;
  registry
      .insert<fluid::FluidDialect, fluid_rt::FluidRtDialect, func::FuncDialect,
              memref::MemRefDialect, arith::ArithDialect>();
  fluid::registerGpuCodegenDialects(registry);
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
  if (failed(fluid::checkRepeatedOptions("fluid-opt")))
    return EXIT_FAILURE;
  // Pass options are checked here, so that a bad one is one message naming
  // its flag rather than a diagnostic at an unknown location.
  for (int i = 1; i < argc; ++i)
    if (StringRef(argv[i]).starts_with("-") &&
        failed(fluid::checkPassOptions(argv[i], "fluid-opt")))
      return EXIT_FAILURE;
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  std::unique_ptr<llvm::MemoryBuffer> input = fluid::openCheckedInput(
      inputFilename, "fluid-opt", fluid::kMlirTextLimit);
  if (!input || failed(fluid::checkTextInput(*input)))
    return EXIT_FAILURE;
  // The result is written only once the whole run has succeeded, through
  // the atomic writer: a failed run leaves an existing output as it was.
  std::string result;
  llvm::raw_string_ostream resultStream(result);
  if (failed(MlirOptMain(resultStream, std::move(input), registry, config)))
    return EXIT_FAILURE;
  if (failed(fluid::writeOutputFile(outputFilename, "fluid-opt",
                                    [&](raw_ostream &os) { os << result; })))
    return EXIT_FAILURE;
  return EXIT_SUCCESS;
}
