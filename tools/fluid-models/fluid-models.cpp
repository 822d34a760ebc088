//===- fluid-models.cpp - Writes a model of the built-in zoo --------------===//
//
// Prints one of the zoo's models as a verified fluid module: the forward
// program with its loss, and its parameters as in the PyTorch state dict.
// Output goes to a temporary file that is renamed into place once complete,
// so a failed run never leaves a partial file behind.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Support/CommandLine.h"
#include "fluid/Support/OutputFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fluid::models;
namespace cl = llvm::cl;

static cl::OptionCategory toolOptions("fluid-models options");

static cl::opt<std::string> modelName(cl::Positional, cl::desc("<model>"),
                                      cl::cat(toolOptions));
static cl::opt<bool> listModels("list", cl::desc("List the models and exit"),
                                cl::cat(toolOptions));
static cl::opt<int64_t>
    batchSize("batch", cl::desc("Images per training step (default: 32)"),
              cl::value_desc("n"), cl::cat(toolOptions));
static cl::opt<int64_t> imageSize(
    "image-size",
    cl::desc("Height and width of the square images (default: 28 for mlp "
             "and lenet5, 224 for the others)"),
    cl::value_desc("n"), cl::cat(toolOptions));
static cl::opt<int64_t>
    channelCount("channels",
                 cl::desc("Channels of the images (default: 1 for mlp and "
                          "lenet5, 3 for the others)"),
                 cl::value_desc("n"), cl::cat(toolOptions));
static cl::opt<int64_t>
    classCount("classes",
               cl::desc("Classes the labels range over (default: 10 for mlp "
                        "and lenet5, 1000 for the others)"),
               cl::value_desc("n"), cl::cat(toolOptions));
static cl::opt<std::string>
    outputFilename("o",
                   cl::desc("Output file (default: standard output); written "
                            "in full or not at all"),
                   cl::value_desc("file"), cl::init("-"), cl::cat(toolOptions));
static cl::opt<bool> printDebugInfo(
    "mlir-print-debuginfo",
    cl::desc("Print each op's location: the PyTorch module it comes from, "
             "e.g. loc(\"layer1.0.conv2\")"),
    cl::cat(toolOptions));

static const char *const kOverview =
    R"(fluid-models: write a model of the built-in zoo as a fluid program

Prints a verified fluid module holding the model's parameters, one
fluid.param per tensor of the PyTorch state dict (same names, order, shapes
and initializers; torchvision for resnet*, timm for se_resnext*), and its
forward program with the loss:

  func.func @loss(%images: tensor<NxCxHxWxf32> {fluid.name = "images"},
                  %labels: tensor<Nxi64> {fluid.name = "labels"})
      -> tensor<f32> attributes {fluid.entry}

returning the mean softmax cross-entropy of the logits against the labels.
Batch norms are in training form and write their running statistics back.
A second function evaluates the model, batch norms in inference form:

  func.func @predict(%images: tensor<NxCxHxWxf32> {fluid.name = "images"})
      -> tensor<NxKxf32>

Examples:
  fluid-models --list
  fluid-models resnet50 -o resnet50.mlir
  fluid-models lenet5 --batch 64 | fluid-opt --fluid-param-summary -o /dev/null

Exit status: 0 on success, 1 on any error (unknown model, a size below 1 or
too small for the network, an output file that cannot be written).
)";

static llvm::raw_ostream &error() {
  return llvm::errs() << "fluid-models: error: ";
}

static std::string modelNames() {
  std::string names;
  llvm::raw_string_ostream os(names);
  llvm::interleaveComma(getModels(), os,
                        [&](const ModelInfo &model) { os << model.name; });
  return names;
}

static void printModelList(llvm::raw_ostream &os) {
  size_t width = 0;
  for (const ModelInfo &model : getModels())
    width = std::max(width, model.name.size());
  for (const ModelInfo &model : getModels()) {
    os << "  " << model.name;
    os.indent(width - model.name.size() + 2) << model.description << "\n";
  }
}

/// The defaults of `model`, overridden by the options given; fails with a
/// message when one is below 1.
static FailureOr<ModelSizes> chooseSizes(const ModelInfo &model) {
  ModelSizes sizes = model.defaults;
  for (auto [option, value] :
       {std::pair<cl::opt<int64_t> *, int64_t *>{&batchSize, &sizes.batch},
        {&imageSize, &sizes.imageSize},
        {&channelCount, &sizes.channels},
        {&classCount, &sizes.classes}}) {
    if (!option->getNumOccurrences())
      continue;
    if (*option < 1) {
      error() << "--" << option->ArgStr << " must be at least 1, got "
              << *option << "\n";
      return failure();
    }
    *value = *option;
  }
  return sizes;
}

/// Prints diagnostics as "fluid-models: error: MODEL: LAYER: message", the
/// layer being the PyTorch module an op comes from.
static void reportDiagnostic(StringRef model, Diagnostic &diag) {
  llvm::raw_ostream &os = llvm::errs();
  os << "fluid-models: ";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    os << "error: ";
    break;
  case DiagnosticSeverity::Warning:
    os << "warning: ";
    break;
  case DiagnosticSeverity::Note:
    os << "note: ";
    break;
  case DiagnosticSeverity::Remark:
    os << "remark: ";
    break;
  }
  os << model << ": ";
  if (auto layer = dyn_cast<NameLoc>(diag.getLocation()))
    os << "layer '" << layer.getName().getValue() << "': ";
  os << diag << "\n";
  for (Diagnostic &note : diag.getNotes())
    reportDiagnostic(model, note);
}

/// Writes `module` to `path` ("-" is standard output). A file is written
/// under a temporary name and renamed once complete.
static LogicalResult writeModule(ModuleOp module, StringRef path) {
  OpPrintingFlags flags;
  if (printDebugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  LogicalResult written = mlir::fluid::writeOutputFile(
      path, "fluid-models", [&](raw_ostream &os) { module->print(os, flags); });
  return written;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv, kOverview);
  if (failed(fluid::checkRepeatedOptions("fluid-models")))
    return EXIT_FAILURE;

  if (listModels) {
    printModelList(llvm::outs());
    return 0;
  }
  if (modelName.empty()) {
    error() << "no model given; choose one of: " << modelNames()
            << " (--list describes them)\n";
    return 1;
  }
  const ModelInfo *model = lookupModel(modelName);
  if (!model) {
    error() << "unknown model '" << modelName
            << "'; choose one of: " << modelNames() << "\n";
    return 1;
  }
  FailureOr<ModelSizes> sizes = chooseSizes(*model);
  if (failed(sizes))
    return 1;

  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.loadDialect<fluid::FluidDialect, func::FuncDialect>();
  // The ops' own printing in diagnostics would repeat the layer in generic
  // form; the layer's name says where the problem is.
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    reportDiagnostic(model->name, diag);
    return success();
  });

  OwningOpRef<ModuleOp> module = buildModel(context, *model, *sizes);
  if (!module || failed(verify(*module))) {
    llvm::errs() << "fluid-models: note: " << model->name
                 << " cannot be built for batch " << sizes->batch << ", "
                 << sizes->channels << "x" << sizes->imageSize << "x"
                 << sizes->imageSize << " images and " << sizes->classes
                 << " classes\n";
    return 1;
  }
  return failed(writeModule(*module, outputFilename)) ? 1 : 0;
}
