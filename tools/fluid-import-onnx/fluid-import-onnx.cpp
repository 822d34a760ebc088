//===- fluid-import-onnx.cpp - Imports an ONNX model as a fluid program ---===//
//
//   fluid-import-onnx MODEL.onnx [-o OUT.mlir] [--batch N]
//                     [--loss softmax_cross_entropy]
//                     [--params-out FILE.safetensors]
//   fluid-import-onnx --list-operators
//
// Writes the fluid program and, next to it, the values of its parameters
// (the graph's initializers) as safetensors, and records that file in the
// program (ParamsFile.h), whose parameters are zero placeholders until the
// values are loaded. Both files are written in full or not at all. The model is
// checked before it is read (a regular file, within protobuf's 2 GiB and the
// memory available) and mapped rather than copied; tensors whose data lies in
// external files (ONNX external data) are read from the model's directory.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporter.h"
#include "OnnxModel.h"

#include "fluid/Support/InputFile.h"
#include "fluid/Support/OutputFile.h"
#include "fluid/Support/ParamsFile.h"
#include "fluid/runtime/HostMemory.h"
#include "fluid/runtime/Safetensors.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

using namespace mlir;
namespace cl = llvm::cl;
namespace om = ::fluid::onnx_model;

static cl::OptionCategory toolOptions("fluid-import-onnx options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.onnx>"),
                                          cl::cat(toolOptions));
static cl::opt<std::string> outputFilename(
    "o",
    cl::desc("Output program, written in full or not at all (default: "
             "standard output, '-', which needs --params-out when the model "
             "has parameters)"),
    cl::value_desc("file.mlir"), cl::init("-"), cl::cat(toolOptions));
static cl::opt<int64_t>
    batchSize("batch",
              cl::desc("Size of the inputs' dynamic batch dimension "
                       "(dimension 0); other dimensions must be static, and "
                       "a model whose batch is static (exported without "
                       "dynamic_axes) must have batch n"),
              cl::value_desc("n"), cl::cat(toolOptions));
static cl::opt<std::string>
    lossName("loss",
             cl::desc("Also emit @loss, the training entry point: "
                      "softmax_cross_entropy of the single output"),
             cl::value_desc("softmax_cross_entropy"), cl::cat(toolOptions));
static cl::opt<std::string> paramsOut(
    "params-out",
    cl::desc("Where the parameters' values go (default: the output file with "
             "the extension .safetensors; required with -o -); the program "
             "records it, and fluid-train --init-from, fluid-run --params and "
             "the executables' --init-from load it"),
    cl::value_desc("file.safetensors"), cl::cat(toolOptions));
static cl::opt<bool> printDebugInfo(
    "mlir-print-debuginfo",
    cl::desc("Print each op's location: the ONNX node it comes from"),
    cl::cat(toolOptions));
static cl::opt<bool> listOperators(
    "list-operators",
    cl::desc("Print the supported operators and exit: one a line, its name, "
             "the opset versions that define it and the attributes read, "
             "tab-separated (lists comma-separated)"),
    cl::cat(toolOptions));

static constexpr const char *kToolName = "fluid-import-onnx";

static llvm::raw_ostream &error() {
  return llvm::errs() << kToolName << ": error: ";
}

/// The model's bytes. The file is checked before it is opened (a regular
/// file within ONNX's limit and the memory available) and again once open,
/// in case it was replaced, then mapped rather than copied.
static std::unique_ptr<llvm::MemoryBuffer> openModel(StringRef path) {
  const mlir::fluid::InputLimit &limit = mlir::fluid::kOnnxModelLimit;
  if (failed(mlir::fluid::checkInputFile(path, kToolName, limit)))
    return nullptr;
  auto cannotRead = [&](const Twine &reason) {
    error() << "cannot read '" << path << "': " << reason << "\n";
    return nullptr;
  };
  llvm::Expected<llvm::sys::fs::file_t> file =
      llvm::sys::fs::openNativeFileForRead(path);
  if (!file)
    return cannotRead(llvm::toString(file.takeError()));
  llvm::scope_exit close([&] { llvm::sys::fs::closeFile(*file); });
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(*file, status))
    return cannotRead(ec.message());
  if (!llvm::sys::fs::is_regular_file(status) ||
      status.getSize() > limit.maxBytes)
    return cannotRead("the file was replaced while it was being opened");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getOpenFile(*file, path, status.getSize(),
                                      /*RequiresNullTerminator=*/false);
  if (!buffer)
    return cannotRead(buffer.getError().message());
  return std::move(*buffer);
}

/// Writes the parameters' values (little-endian f32/f64, as in the model).
static bool
writeParams(ArrayRef<mlir::fluid::onnx_import::ImportedParam> params,
            StringRef path) {
  fluid_safetensors_writer *raw = nullptr;
  if (fluid_safetensors_writer_create(&raw) != FLUID_OK) {
    error() << "cannot write parameters: " << fluid_last_error() << "\n";
    return false;
  }
  std::unique_ptr<fluid_safetensors_writer,
                  decltype(&fluid_safetensors_writer_free)>
      writer(raw, &fluid_safetensors_writer_free);
  // The writer keeps the descriptors until it writes.
  std::vector<fluid_tensor> descriptors(params.size());
  for (auto [param, descriptor] : llvm::zip(params, descriptors)) {
    const om::Tensor *tensor = param.value;
    descriptor.data = const_cast<char *>(tensor->bytes.data());
    descriptor.dtype =
        tensor->type == om::DataType::Double ? FLUID_F64 : FLUID_F32;
    descriptor.rank = static_cast<int32_t>(tensor->dims.size());
    llvm::copy(tensor->dims, descriptor.shape);
    if (fluid_safetensors_writer_add(writer.get(), param.name.c_str(),
                                     &descriptor) != FLUID_OK) {
      error() << "cannot write parameter '" << param.name
              << "': " << fluid_last_error() << "\n";
      return false;
    }
  }
  if (fluid_safetensors_writer_write(writer.get(), path.str().c_str()) !=
      FLUID_OK) {
    error() << "cannot write parameters: " << fluid_last_error() << "\n";
    return false;
  }
  return true;
}

/// Writes `module` to `path` (see writeOutputFile: "-" is standard output,
/// devices are written through, files replaced once complete).
static bool writeModule(ModuleOp module, StringRef path) {
  OpPrintingFlags flags;
  if (printDebugInfo)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  LogicalResult written = mlir::fluid::writeOutputFile(
      path, "fluid-import-onnx",
      [&](raw_ostream &os) { module->print(os, flags); });
  return succeeded(written);
}

/// --batch `batch` sets the dynamic batch dimension of the graph inputs.
/// A model without one, exported with a static batch, keeps its batch:
/// replacing it is not safe for every operator (shapes computed at export
/// time, such as a Reshape to [1, -1], would keep the old batch), so a
/// different `batch` is an error telling how to export the model instead.
static bool checkStaticBatch(const om::Model &model, int64_t batch) {
  llvm::StringSet<> initializers;
  for (const om::Tensor &tensor : model.initializers)
    initializers.insert(tensor.name);
  const om::ValueInfo *mismatched = nullptr;
  for (const om::ValueInfo &input : model.inputs) {
    // Before IR version 4 initializers were listed as inputs too.
    if (initializers.contains(input.name) || input.dims.empty())
      continue;
    const om::Dimension &first = input.dims.front();
    if (!first.hasValue)
      return true; // a dynamic batch: --batch sets it
    if (first.value != batch && !mismatched)
      mismatched = &input;
  }
  if (!mismatched)
    return true;
  llvm::raw_ostream &os = error();
  os << "--batch " << batch << ": the model's batch is static (graph input '";
  mlir::fluid::onnx_import::printEscaped(os, mismatched->name);
  os << "' has batch " << mismatched->dims.front().value
     << "), and it cannot be replaced safely (shapes computed when the model "
        "was exported keep it); export the model with a dynamic batch, "
        "torch.onnx.export(..., input_names=[\"";
  mlir::fluid::onnx_import::printEscaped(os, mismatched->name);
  os << "\"], dynamic_axes={\"";
  mlir::fluid::onnx_import::printEscaped(os, mismatched->name);
  os << "\": {0: \"batch\"}}), or leave out --batch\n";
  return false;
}

/// `text` broken into lines of at most 76 characters at spaces.
static std::string wrap(StringRef text) {
  std::string wrapped;
  size_t column = 0;
  SmallVector<StringRef> words;
  text.split(words, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef word : words) {
    if (column && column + 1 + word.size() > 76) {
      wrapped += "\n";
      column = 0;
    } else if (column) {
      wrapped += " ";
      ++column;
    }
    wrapped += word.str();
    column += word.size();
  }
  return wrapped + "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(toolOptions);
  std::string overview =
      R"(fluid-import-onnx: import an ONNX model as a fluid program

Reads an ONNX model (opsets 11 to 17) and writes a verified fluid module:

  - every float initializer the graph computes with becomes a fluid.param
    named as in the graph (e.g. @conv1.weight, @"onnx::Conv_193"), its value
    written to a safetensors file (fluid-run --params FILE, fluid-train
    and the executables of fluid-compile --init-from FILE), the parameter
    itself declared `init zeros`, a placeholder; the module attribute
    onnx.params_file names the file, and the tools warn when trainable
    placeholders are used without it; batch-norm running statistics are
    trainable = false;
  - so does every Identity output of a float initializer, named after the
    output, with its own copy of the value: torch.onnx merges weights of
    equal values (a fresh model's batch norms) into one initializer read
    through Identity nodes named as in the state dict; an initializer that
    several nodes read directly (tied weights) stays one parameter;
  - the graph inputs become the arguments of @forward (fluid.name = the
    input's name), which returns the graph outputs and is the entry point;
    batch norm is in inference form;
  - with --loss softmax_cross_entropy, @loss takes the same inputs plus
    %labels: tensor<Nxi64> {fluid.name = "labels"} and returns the mean
    cross-entropy of the single [N, C] output; it is the entry point, ready
    for fluid-opt --fluid-build-training (batch norm in training form,
    running statistics updated with PyTorch's momentum = 1 - ONNX's).

Shapes are static: a dynamic dimension 0 (the batch) of an input takes
--batch; any other dynamic dimension is an error. A model exported with
a static batch keeps it: --batch N on it is an error unless N is that
batch (shapes computed at export time, a Reshape to [1, -1] say, would
not follow a new batch); export it with dynamic_axes instead. Computations on shapes
(Shape, Gather, Slice, Unsqueeze, Concat, Cast, integer Add/Sub/Mul/Div)
are folded.

What is checked before anything is imported:
  - the model is a regular file of at most 2 GiB (protobuf's limit), and
    reading it, with the data of the tensors it keeps in external files
    (ONNX external data, as torch.onnx.export writes models over 2 GiB),
    fits in the memory available;
  - an external file is opened only if its location is a relative path
    without '..' or NUL that stays inside the model's directory once
    symbolic links are resolved, and it is a regular file (not a
    directory, a device or a pipe); each tensor's offset and length must
    lie within the file and match its shape; no other file the model
    names is opened;
  - the graph is well formed: nodes in topological order, each value
    assigned once (by a graph input, an initializer or one node output),
    no node with more inputs or outputs than its operator has or without
    an output, at least one graph output;
  - no tensor is empty: a zero dimension in an input, a parameter or a
    constant is an error (so is --batch 0);
  - initializer and graph input names are UTF-8 without NUL (they become
    parameter names and checkpoint keys); otherwise every name is kept
    byte for byte.

)" +
      wrap("Supported operators: " +
           mlir::fluid::onnx_import::getSupportedOperators() +
           ". Convolution and pooling are 1-D or 2-D; element "
           "types FLOAT and DOUBLE (INT32 and INT64 for shapes and "
           "indices, BOOL for conditions known at import time). "
           "--list-operators prints them with their opset "
           "versions and attributes.") +
      R"(
Examples:
  fluid-import-onnx resnet18.onnx --batch 32 -o resnet18.mlir
      (also writes resnet18.safetensors)
  fluid-run resnet18.mlir --params resnet18.safetensors --input images=x.npy
  fluid-import-onnx resnet18.onnx --batch 32 --loss softmax_cross_entropy \
      -o train.mlir      (also writes train.safetensors)
  fluid-train train.mlir --build-training "optimizer=sgd lr=0.01" \
      --init-from train.safetensors
  fluid-compile train.mlir -o train --training "optimizer=sgd lr=0.01" && \
      ./train --init-from train.safetensors --data images/

Exit status: 0 on success, 1 on any error, reported on one line (an
unreadable, malformed, truncated or oversized file; a graph that is not
well formed; an unsupported operator, attribute value or element type,
named with the node's index, name and operator; a dynamic dimension
without --batch, --batch on a static batch of another size; parameters
with -o - but no --params-out).
)";
  cl::ParseCommandLineOptions(argc, argv, overview);

  if (listOperators) {
    mlir::fluid::onnx_import::printOperatorTable(llvm::outs());
    return 0;
  }
  if (inputFilename.empty()) {
    error() << "no model given (fluid-import-onnx MODEL.onnx)\n";
    return 1;
  }
  if (inputFilename == "-") {
    error() << "models are not read from standard input; give the model's "
               "file\n";
    return 1;
  }
  mlir::fluid::onnx_import::ImportOptions options;
  options.toolName = kToolName;
  options.modelName = inputFilename;
  if (batchSize.getNumOccurrences()) {
    if (batchSize < 1) {
      error() << "--batch must be at least 1, got " << batchSize << "\n";
      return 1;
    }
    options.batch = batchSize;
  }
  if (lossName.getNumOccurrences()) {
    if (lossName != "softmax_cross_entropy") {
      error() << "unknown --loss '" << lossName
              << "'; the only loss is softmax_cross_entropy\n";
      return 1;
    }
    options.softmaxCrossEntropyLoss = true;
  }

  std::unique_ptr<llvm::MemoryBuffer> buffer = openModel(inputFilename);
  if (!buffer)
    return 1;
  om::Model model;
  std::string readError;
  // External data lies in the model's directory, as the path names it.
  std::string directory = llvm::sys::path::parent_path(inputFilename).str();
  bool read = om::readModel(buffer->getBufferStart(), buffer->getBufferSize(),
                            inputFilename, fluid_available_host_memory(), model,
                            readError, directory.empty() ? "." : directory);
  // The model holds what it needs; the file's bytes are not used again.
  buffer.reset();
  if (!read) {
    mlir::fluid::onnx_import::printEscaped(error(), readError);
    llvm::errs() << "\n";
    return 1;
  }

  if (options.batch && !checkStaticBatch(model, *options.batch))
    return 1;

  MLIRContext context(MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  mlir::fluid::onnx_import::ImportedProgram program =
      mlir::fluid::onnx_import::importModel(context, model, options);
  if (!program.module)
    return 1;

  std::string paramsPath = paramsOut;
  if (paramsPath.empty() && outputFilename != "-") {
    SmallString<256> path(outputFilename);
    llvm::sys::path::replace_extension(path, "safetensors");
    paramsPath = path.str().str();
  }
  // The program alone would train from zero placeholders.
  if (paramsPath.empty() && !program.params.empty()) {
    error() << "the program has " << program.params.size()
            << " parameters and goes to standard output (-o -, the default), "
               "which cannot hold their values: pass -o OUT.mlir (the values "
               "go to OUT.safetensors) or --params-out FILE.safetensors\n";
    return 1;
  }
  if (paramsPath == "-") {
    error() << "--params-out -: the parameters' values are not written to "
               "standard output; name a file\n";
    return 1;
  }
  if (!paramsPath.empty() && paramsPath == outputFilename) {
    error() << "the program and its parameters would both be written to '"
            << paramsPath << "'\n";
    return 1;
  }
  if (!program.params.empty())
    (*program.module)
        ->setAttr(mlir::fluid::kParamsFileAttrName,
                  StringAttr::get(&context, paramsPath));
  if (!paramsPath.empty() && !writeParams(program.params, paramsPath))
    return 1;
  return writeModule(*program.module, outputFilename) ? 0 : 1;
}
