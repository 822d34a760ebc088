//===- fuzz-onnx.cpp - libFuzzer target: importing an ONNX model ----------===//
//
// Each input is an ONNX file, imported as fluid-import-onnx --batch 2 imports
// it: OnnxReader (protobuf to plain structures), then OnnxImporter (to a
// fluid module, verified). The reader's memory budget is fixed at 1 GiB,
// half of libFuzzer's default RSS limit, so that results do not depend on
// the machine's free memory. A model with a single output is imported a second
// time with the softmax cross-entropy loss, the training form. An imported
// module is printed, as the tool writes it.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "OnnxModel.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace om = ::fluid::onnx_model;

static bool import(const om::Model &model, bool withLoss) {
  mlir::fluid::onnx_import::ImportOptions options;
  options.batch = 2;
  options.softmaxCrossEntropyLoss = withLoss;
  options.toolName = "fuzz-onnx";
  options.modelName = "input.onnx";
  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  mlir::fluid::onnx_import::ImportedProgram program =
      mlir::fluid::onnx_import::importModel(context, model, options);
  if (!program.module)
    return false;
  program.module->print(llvm::nulls());
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  constexpr int64_t memoryBudget = int64_t(1) << 30;
  om::Model model;
  std::string error;
  if (!om::readModel(reinterpret_cast<const char *>(data), size, "input.onnx",
                     memoryBudget, model, error))
    return 0;
  if (import(model, /*withLoss=*/false) && model.outputs.size() == 1)
    import(model, /*withLoss=*/true);
  return 0;
}
