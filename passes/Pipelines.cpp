//===- Pipelines.cpp - Fluid's registered pass pipelines ------------------===//
//
// --fluid-build-training: the forward program with its loss becomes a whole
// training step (--fluid-append-backward, --fluid-append-optimizer, then
// --fluid-fold-lr-math and --fluid-group-optimizer), configured by the
// optimizer pass's options and the pipeline's two switches in one string.
//
//===----------------------------------------------------------------------===//

#include "fluid/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

/// The value of `name=VALUE` among the space-separated `options`.
static std::string findOption(StringRef options, StringRef name) {
  SmallVector<StringRef> tokens;
  options.split(tokens, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef token : tokens) {
    auto [key, value] = token.split('=');
    if (key == name)
      return value.str();
  }
  return "";
}

/// The space-separated `options` without `name=VALUE`.
static std::string withoutOption(StringRef options, StringRef name) {
  SmallVector<StringRef> tokens;
  options.split(tokens, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::string rest;
  for (StringRef token : tokens)
    if (token.split('=').first != name)
      rest += (rest.empty() ? "" : " ") + token.str();
  return rest;
}

/// Takes the pipeline's own switches (`NAME=true|false`) out of the
/// space-separated `options`, into `optimizations`; what is left belongs
/// to --fluid-append-optimizer.
static FailureOr<std::string>
takeOptimizationSwitches(StringRef options,
                         fluid::TrainingOptimizations &optimizations,
                         function_ref<LogicalResult(const Twine &)> report) {
  SmallVector<StringRef> tokens;
  options.split(tokens, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  std::string rest;
  for (StringRef token : tokens) {
    auto [key, value] = token.split('=');
    bool *flag = key == "fold-lr-math"      ? &optimizations.foldLrMath
                 : key == "group-optimizer" ? &optimizations.groupOptimizer
                                            : nullptr;
    if (!flag) {
      rest += (rest.empty() ? "" : " ") + token.str();
      continue;
    }
    if (value != "true" && value != "false") {
      (void)report("'" + key + "' must be true or false, got '" + value + "'");
      return failure();
    }
    *flag = value == "true";
  }
  return rest;
}

LogicalResult mlir::fluid::buildTrainingPipeline(
    OpPassManager &pm, StringRef options,
    function_ref<LogicalResult(const Twine &)> reportError,
    TrainingOptimizations *optimizations) {
  auto errorHandler = [&](const Twine &message) {
    return reportError(describePassOptionError(message.str()));
  };
  fluid::TrainingOptimizations switches;
  FailureOr<std::string> optimizerOptions =
      takeOptimizationSwitches(options, switches, errorHandler);
  if (failed(optimizerOptions))
    return failure();
  // func goes to both passes, loss-scale to --fluid-append-backward only.
  std::unique_ptr<Pass> backward = createFluidAppendBackward();
  std::string func = findOption(options, "func");
  std::string lossScale = findOption(*optimizerOptions, "loss-scale");
  std::string backwardOptions = func.empty() ? "" : "func=" + func;
  if (!lossScale.empty())
    backwardOptions += " loss-scale=" + lossScale;
  if (failed(backward->initializeOptions(backwardOptions, errorHandler)))
    return failure();
  *optimizerOptions = withoutOption(*optimizerOptions, "loss-scale");
  std::unique_ptr<Pass> optimizer = createFluidAppendOptimizer();
  if (failed(optimizer->initializeOptions(*optimizerOptions, errorHandler)))
    return failure();
  pm.addPass(std::move(backward));
  pm.addPass(std::move(optimizer));
  if (optimizations) {
    *optimizations = switches;
    return success();
  }
  if (switches.foldLrMath)
    pm.addPass(createFluidFoldLrMath());
  if (switches.groupOptimizer)
    pm.addPass(createFluidGroupOptimizer());
  return success();
}

std::string mlir::fluid::describePassOptionError(StringRef message) {
  StringRef text = message.trim();
  // MLIR's option parser says "<Pass-Options-Parser>: no such option X".
  if (text.consume_front("<Pass-Options-Parser>: no such option "))
    return ("unknown option '" + text +
            "'; `fluid-opt --help` lists each pass's options")
        .str();
  return text.str();
}

LogicalResult mlir::fluid::checkPassOptions(StringRef arg, StringRef tool) {
  StringRef flag = arg.ltrim('-');
  auto [name, options] = flag.split('=');
  const PassRegistryEntry *entry = PassInfo::lookup(name);
  if (!entry)
    entry = PassPipelineInfo::lookup(name);
  if (!entry || !flag.contains('='))
    return success();
  OpPassManager scratch(ModuleOp::getOperationName(),
                        OpPassManager::Nesting::Implicit);
  return entry->addToPipeline(scratch, options,
                              optionErrorPrinter(tool, ("--" + name).str()));
}

std::function<LogicalResult(const Twine &)>
mlir::fluid::optionErrorPrinter(StringRef tool, StringRef flag) {
  return [tool = tool.str(), flag = flag.str()](const Twine &message) {
    std::string text = describePassOptionError(message.str());
    // An empty message: llvm::cl has already said what is wrong.
    if (!text.empty())
      llvm::errs() << tool << ": error: " << flag << ": " << text << "\n";
    return failure();
  };
}

void mlir::fluid::registerFluidPipelines() {
  registerPassPipeline(
      "fluid-build-training",
      "Build a training step from a loss function: --fluid-append-backward, "
      "--fluid-append-optimizer, which takes the options, e.g. "
      "\"optimizer=momentum lr=0.1 momentum=0.9 weight-decay=1e-4 "
      "schedule=cosine total-steps=1000 warmup-steps=100\", except "
      "loss-scale=S (dynamic loss scaling from S), which goes to "
      "--fluid-append-backward; then --fluid-fold-lr-math and "
      "--fluid-group-optimizer (switched off by fold-lr-math=false and "
      "group-optimizer=false)",
      [](OpPassManager &pm, StringRef options,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        return buildTrainingPipeline(pm, options, errorHandler);
      },
      [](function_ref<void(const detail::PassOptions &)>) {});
  registerPassPipeline(
      "fluid-lower-gpu-kernels",
      "Lower the gpu.module of --fluid-generate-gpu-kernels to PTX for sm_90 "
      "(nvvm-attach-target, convert-scf-to-cf, convert-gpu-to-nvvm with bare "
      "pointers, gpu-module-to-binary{format=isa}); libdevice from "
      "$CUDA_HOME or /usr/local/cuda",
      [](OpPassManager &pm, StringRef options,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        if (!options.trim().empty())
          return errorHandler("takes no options");
        buildGpuLoweringPipeline(pm, defaultCudaToolkitPath());
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)>) {});
}
