//===- fluid-run.cpp - Run a fluid function on the cpu backend ------------===//
//
//   fluid-run FILE.mlir [--entry NAME] [--input NAME=FILE.npy ...]
//             [--params FILE.safetensors] [--seed N] [--save-outputs DIR]
//             [--save-params FILE.safetensors]
//
// Parameters come from their initializers (drawn with --seed) or from a
// checkpoint; inputs from .npy files or, when not given, from the seed
// (standard normal floats; labels uniform over the class range of the loss
// that reads them). Prints a summary of each output, or saves it as .npy.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Interpreter/Interpreter.h"
#include "fluid/Support/CommandLine.h"
#include "fluid/Support/ParamsFile.h"
#include "fluid/Support/ProgramLoader.h"
#include "fluid/runtime/Init.h"
#include "fluid/runtime/Npy.h"

#include "driver/InitFrom.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fluid;

namespace cl = llvm::cl;

static cl::OptionCategory runCategory("fluid-run options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<program.mlir>"),
                                          cl::Required, cl::cat(runCategory));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the one marked fluid.entry, "
                       "else the only public one)"),
              cl::value_desc("name"), cl::cat(runCategory));
static cl::list<std::string>
    inputFiles("input",
               cl::desc("Argument from a .npy file; NAME is the argument's "
                        "fluid.name, or argN / N for the N-th (repeatable)"),
               cl::value_desc("NAME=FILE.npy"), cl::cat(runCategory));
static cl::opt<std::string>
    paramsFile("params",
               cl::desc("Load parameters from a safetensors file (names are "
                        "the fluid.param symbols, as in PyTorch state dicts): "
                        "every model parameter, and the optimizer state it "
                        "holds; for a program fluid-import-onnx wrote, the "
                        "file it wrote beside it"),
               cl::value_desc("FILE.safetensors"), cl::cat(runCategory));
static cl::opt<uint64_t>
    seed("seed",
         cl::desc("Seed of parameter initializers and generated inputs"),
         cl::init(0), cl::cat(runCategory));
static cl::opt<std::string>
    saveOutputs("save-outputs",
                cl::desc("Write output N to DIR/outputN.npy (DIR is created)"),
                cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<std::string> saveParams(
    "save-params",
    cl::desc("Write the parameters after the run (e.g. updated batch-norm "
             "statistics, or freshly initialized weights) to a safetensors "
             "file"),
    cl::value_desc("FILE.safetensors"), cl::cat(runCategory));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Run the function N times on the same inputs, parameters "
                    "carrying over (e.g. N training steps); prints every run's "
                    "outputs, prefixed 'run K:'"),
           cl::init(1), cl::cat(runCategory));
static cl::opt<bool> poisonMemory(
    "poison-memory",
    cl::desc("Fill memory with 0xFF bytes (NaN as floats) when a buffer is "
             "allocated, freed (memref.dealloc) or started over in an arena "
             "(memref.view), so that a program reading memory outside a "
             "buffer's lifetime computes NaN: a check of memory plans"),
    cl::init(false), cl::cat(runCategory));
static cl::opt<unsigned>
    printCount("print-values",
               cl::desc("How many leading values of each output to print"),
               cl::init(6), cl::cat(runCategory));

/// The run being printed, with --repeat.
static unsigned runIndex = 0;

static int fail(const llvm::Twine &message) {
  llvm::errs() << "fluid-run: error: " << message << "\n";
  return EXIT_FAILURE;
}

/// The name of argument `index`: its fluid.name attribute, else "argN".
static std::string argumentName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, kNameAttrName))
    return name.str();
  return "arg" + std::to_string(index);
}

/// The class count of the loss that reads `arg` as labels, if any.
/// The tensor type of argument `index`; a bufferized function's memref
/// arguments are tensors of the same shape to fluid-run.
static RankedTensorType argumentType(func::FuncOp func, unsigned index) {
  Type type = func.getArgumentTypes()[index];
  if (auto memref = dyn_cast<MemRefType>(type))
    return RankedTensorType::get(memref.getShape(), memref.getElementType());
  return dyn_cast<RankedTensorType>(type);
}

/// The class count of the loss that reads `arg` as labels, if any.
static std::optional<int64_t> labelClasses(BlockArgument arg) {
  for (Operation *user : arg.getUsers()) {
    if (auto loss = dyn_cast<SoftmaxCrossEntropyOp>(user))
      if (loss.getLabels() == arg)
        return loss.getLogits().getType().getDimSize(1);
    // The same loss at the buffer level: inputs (logits, labels).
    if (auto launch = dyn_cast<fluid_rt::LaunchOp>(user))
      if (launch.getKernel() == "softmax_cross_entropy" &&
          launch.getInputs().size() == 2 && launch.getInputs()[1] == arg)
        return cast<MemRefType>(launch.getInputs()[0].getType()).getDimSize(1);
  }
  return std::nullopt;
}

/// An input drawn from the seed: standard normal floats, or labels uniform
/// over [0, classes).
static llvm::Expected<HostTensor> generateInput(func::FuncOp func,
                                                unsigned index) {
  RankedTensorType type = argumentType(func, index);
  std::string name = argumentName(func, index);
  llvm::Expected<HostTensor> tensor =
      HostTensor::allocate(type, "input '" + name + "'");
  if (!tensor)
    return tensor.takeError();
  uint64_t stream = fluid_hash_name(("input:" + name).c_str());
  fluid_init_spec spec = {};
  if (isFloatTensor(type)) {
    spec.kind = FLUID_INIT_NORMAL;
    spec.std = 1.0;
    fluid_tensor descriptor = tensor->descriptor();
    if (fluid_init_tensor(&descriptor, &spec, seed, stream) != FLUID_OK)
      return llvm::createStringError(fluid_last_error());
    return tensor;
  }
  std::optional<int64_t> classes =
      labelClasses(func.getBody().front().getArgument(index));
  if (!classes)
    return llvm::createStringError(
        "cannot generate integer input '%s': it is not the labels of a loss; "
        "pass --input %s=FILE.npy",
        name.c_str(), name.c_str());
  llvm::Expected<HostTensor> uniform =
      HostTensor::allocate(FLUID_F64, type.getShape(), "labels");
  if (!uniform)
    return uniform.takeError();
  spec.kind = FLUID_INIT_UNIFORM;
  spec.low = 0;
  spec.high = static_cast<double>(*classes);
  fluid_tensor descriptor = uniform->descriptor();
  if (fluid_init_tensor(&descriptor, &spec, seed, stream) != FLUID_OK)
    return llvm::createStringError(fluid_last_error());
  for (int64_t i = 0, e = tensor->getNumElements(); i < e; ++i) {
    int64_t label = std::min<int64_t>(
        static_cast<int64_t>(std::floor(uniform->dataAs<double>()[i])),
        *classes - 1);
    if (tensor->getDType() == FLUID_I32)
      tensor->dataAs<int32_t>()[i] = static_cast<int32_t>(label);
    else
      tensor->dataAs<int64_t>()[i] = label;
  }
  return tensor;
}

/// Reads the --input files into `inputs` (indexed by argument).
static llvm::Error readInputs(func::FuncOp func,
                              SmallVectorImpl<HostTensor> &inputs) {
  for (const std::string &spec : inputFiles) {
    auto [name, path] = StringRef(spec).split('=');
    if (path.empty())
      return llvm::createStringError(
          "--input '%s' must have the form NAME=FILE.npy", spec.c_str());
    std::optional<unsigned> index;
    std::string names;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      std::string argName = argumentName(func, i);
      names += (i ? ", " : "") + argName;
      if (name == argName || name == "arg" + std::to_string(i) ||
          name == std::to_string(i))
        index = i;
    }
    if (!index)
      return llvm::createStringError(
          "--input names '%s', but @%s has the inputs %s", name.str().c_str(),
          func.getSymName().str().c_str(), names.c_str());
    fluid_tensor descriptor;
    if (fluid_npy_read(path.str().c_str(), &descriptor) != FLUID_OK)
      return llvm::createStringError(fluid_last_error());
    HostTensor tensor = HostTensor::adoptNpy(descriptor);
    RankedTensorType type = argumentType(func, *index);
    if (!tensor.matches(type)) {
      std::string expected;
      llvm::raw_string_ostream(expected) << type;
      return llvm::createStringError(
          "input '%s' from %s is %s, but @%s expects %s", name.str().c_str(),
          path.str().c_str(),
          describe(tensor.getDType(), tensor.getShape()).c_str(),
          func.getSymName().str().c_str(), expected.c_str());
    }
    inputs[*index] = tensor;
  }
  return llvm::Error::success();
}

/// Prints "output #i: [shape] dtype  values: ...  sum: ...  sum|x|: ...".
static void printSummary(unsigned index, const HostTensor &tensor) {
  if (repeat > 1)
    llvm::outs() << "run " << runIndex << ": ";
  llvm::outs() << "output #" << index << ": "
               << describe(tensor.getDType(), tensor.getShape());
  int64_t count = tensor.getNumElements();
  auto valueAt = [&](int64_t i) -> double {
    switch (tensor.getDType()) {
    case FLUID_F32:
      return tensor.dataAs<float>()[i];
    case FLUID_F64:
      return tensor.dataAs<double>()[i];
    case FLUID_I32:
      return tensor.dataAs<int32_t>()[i];
    case FLUID_I64:
      return static_cast<double>(tensor.dataAs<int64_t>()[i]);
    default:
      return std::nan("");
    }
  };
  llvm::outs() << "  values:";
  for (int64_t i = 0; i < std::min<int64_t>(count, printCount); ++i)
    llvm::outs() << " " << llvm::format("%.8g", valueAt(i));
  if (count > printCount)
    llvm::outs() << " ...";
  double sum = 0, absSum = 0;
  for (int64_t i = 0; i < count; ++i) {
    sum += valueAt(i);
    absSum += std::fabs(valueAt(i));
  }
  llvm::outs() << "  sum: " << llvm::format("%.10g", sum)
               << "  sum|x|: " << llvm::format("%.10g", absSum) << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fluid-run: run a function of a fluid program on the cpu reference "
      "backend\n");
  if (failed(mlir::fluid::checkRepeatedOptions("fluid-run")))
    return EXIT_FAILURE;

  MLIRContext context;
  context.loadDialect<FluidDialect, fluid_rt::FluidRtDialect, func::FuncDialect,
                      memref::MemRefDialect, arith::ArithDialect>();
  ProgramLoader loader(context, "fluid-run");
  OwningOpRef<ModuleOp> module = loader.load(inputFilename);
  if (!module)
    return EXIT_FAILURE;

  std::string why;
  FailureOr<func::FuncOp> entry = findEntryFunction(*module, entryName, why);
  if (failed(entry))
    return fail(why + (entryName.empty() ? "; pass --entry NAME" : ""));
  func::FuncOp func = *entry;

  llvm::Expected<ParamStore> params = ParamStore::initialize(*module, seed);
  if (!params)
    return fail(llvm::toString(params.takeError()));
  if (paramsFile.empty()) {
    int64_t trainable = 0;
    int64_t placeholders = countPlaceholders(
        *module, [](ParamOp) { return false; }, trainable);
    if (placeholders > 0)
      llvm::errs() << "fluid-run: warning: "
                   << ::fluid::rt::driver::placeholderWarning(
                          placeholders, trainable, getParamsFile(*module).str(),
                          "--params")
                   << "\n";
  }
  if (!paramsFile.empty()) {
    SmallVector<std::string> ignored;
    if (llvm::Error error = params->load(paramsFile, ignored))
      return fail(llvm::toString(std::move(error)));
    if (!ignored.empty()) {
      llvm::errs() << "fluid-run: warning: ignored " << ignored.size()
                   << " tensor(s) of " << paramsFile
                   << " that are no parameter of the program:";
      for (const std::string &name : ArrayRef(ignored).take_front(5))
        llvm::errs() << " " << name;
      llvm::errs() << (ignored.size() > 5 ? " ...\n" : "\n");
    }
  }

  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (Type type = func.getArgumentTypes()[i];
        !isFluidTensor(argumentType(func, i))) {
      std::string name;
      llvm::raw_string_ostream(name) << type;
      return fail("@" + func.getSymName() + " takes an argument of type " +
                  name + ", which fluid-run cannot supply");
    }
  SmallVector<HostTensor> inputs(func.getNumArguments());
  if (llvm::Error error = readInputs(func, inputs))
    return fail(llvm::toString(std::move(error)));
  for (unsigned i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].isNull())
      continue;
    llvm::Expected<HostTensor> generated = generateInput(func, i);
    if (!generated)
      return fail(llvm::toString(generated.takeError()));
    inputs[i] = *generated;
  }

  if (repeat < 1)
    return fail("--repeat must be at least 1");
  Interpreter interpreter(*params);
  interpreter.setPoisonMemory(poisonMemory);
  FailureOr<SmallVector<HostTensor>> outputs;
  for (runIndex = 0; runIndex < repeat; ++runIndex) {
    outputs = interpreter.run(func, inputs);
    if (failed(outputs))
      return EXIT_FAILURE;
    if (runIndex + 1 < repeat)
      for (auto [i, output] : llvm::enumerate(*outputs))
        printSummary(i, output);
  }
  runIndex = repeat - 1;

  if (!saveOutputs.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(saveOutputs))
      return fail("cannot create '" + saveOutputs + "': " + ec.message());
  }
  for (auto [i, output] : llvm::enumerate(*outputs)) {
    printSummary(i, output);
    if (saveOutputs.empty())
      continue;
    SmallString<256> path(saveOutputs);
    llvm::sys::path::append(path, "output" + std::to_string(i) + ".npy");
    fluid_tensor descriptor = output.descriptor();
    if (fluid_npy_write(path.c_str(), &descriptor) != FLUID_OK)
      return fail(fluid_last_error());
  }
  if (!saveParams.empty())
    if (llvm::Error error = params->save(saveParams))
      return fail(llvm::toString(std::move(error)));
  return EXIT_SUCCESS;
}
