//===- Pipelines.cpp - Fluid's registered pass pipelines ------------------===//
//
// --fluid-build-training: the forward program with its loss becomes a whole
// training step (--fluid-append-backward, then --fluid-append-optimizer),
// configured by the optimizer pass's options in one string.
//
//===----------------------------------------------------------------------===//

#include "fluid/Passes/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

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

void mlir::fluid::registerFluidPipelines() {
  registerPassPipeline(
      "fluid-build-training",
      "Build a training step from a loss function: --fluid-append-backward "
      "then --fluid-append-optimizer, which takes the options, e.g. "
      "\"optimizer=momentum lr=0.1 momentum=0.9 weight-decay=1e-4 "
      "schedule=cosine total-steps=1000 warmup-steps=100\"",
      [](OpPassManager &pm, StringRef options,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        std::unique_ptr<Pass> backward = createFluidAppendBackward();
        std::string func = findOption(options, "func");
        if (failed(backward->initializeOptions(
                func.empty() ? "" : "func=" + func, errorHandler)))
          return failure();
        std::unique_ptr<Pass> optimizer = createFluidAppendOptimizer();
        if (failed(optimizer->initializeOptions(options, errorHandler)))
          return failure();
        pm.addPass(std::move(backward));
        pm.addPass(std::move(optimizer));
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)>) {});
}
