//===- fluid-compile.cpp - Compile a model into a training executable -----===//
//
//   fluid-compile MODEL.mlir -o EXE [--backend cuda|cpu]
//                 [--training "optimizer=momentum lr=0.1 ..."]
//
// Builds the training step (--fluid-build-training, unless the file already
// holds one), folds its learning-rate arithmetic and groups its updates
// (--fluid-fold-lr-math, --fluid-group-optimizer), saves max pooling's
// picks for its gradient (--fluid-pool-indices), recomputes cheap
// activations, expands batch norm (--fluid-expand-batch-norm) and fuses
// elementwise ops (--fluid-fuse-elementwise), moves it
// to buffers (--fluid-bufferize,
// --fluid-update-in-place), plans its memory (--fluid-insert-frees,
// --fluid-plan-memory), emits it as C++ that calls the runtime's
// kernels (lib/Target/EmitProgram.cpp), and compiles that with the host
// C++ compiler against libfluid_runtime, whose driver supplies the
// executable's command line (run EXE --help).
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Support/CommandLine.h"
#include "fluid/Support/OutputFile.h"
#include "fluid/Support/ProgramLoader.h"
#include "fluid/Target/EmitProgram.h"
#include "fluid/Target/FusedKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace mlir::fluid;

namespace cl = llvm::cl;

static cl::OptionCategory compileCategory("fluid-compile options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.mlir>"),
                                          cl::Required,
                                          cl::cat(compileCategory));
static cl::opt<std::string>
    outputFilename("o",
                   cl::desc("Output file (--emit=exe: required; otherwise "
                            "default '-', standard output)"),
                   cl::value_desc("FILE"), cl::cat(compileCategory));
static cl::opt<std::string>
    backendName("backend",
                cl::desc("Whose kernels the program calls: cuda (default) "
                         "or cpu"),
                cl::init("cuda"), cl::cat(compileCategory));
static cl::opt<std::string> precisionName(
    "precision",
    cl::desc("Arithmetic of convolutions and matrix products: fp32 (f32 "
             "tensors and math; the executable's --tf32 turns TF32 on), tf32 "
             "(the default: f32 tensors, TF32 tensor cores unless the "
             "executable runs with --no-tf32), bf16 or fp16 "
             "(--fluid-mixed-precision: "
             "16-bit inputs on the tensor cores, f32 parameters, biases, "
             "loss and everything else; fp16 with dynamic loss scaling "
             "from 65536 unless --training sets loss-scale, 0 for none; "
             "docs/PRECISION.md)"),
    cl::init("tf32"), cl::value_desc("fp32|tf32|bf16|fp16"),
    cl::cat(compileCategory));
static cl::opt<bool> f32Activations(
    "f32-activations",
    cl::desc("With --precision bf16|fp16: keep activations in f32 (only the "
             "tensor-core inputs 16-bit; --fluid-mixed-precision's "
             "store-activations=false), to measure the effect"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<std::string> emitKind(
    "emit",
    cl::desc("What to write: exe (default; the training executable), cpp "
             "(the generated C++), buffers (the bufferized MLIR)"),
    cl::init("exe"), cl::cat(compileCategory));
static cl::opt<std::string> trainingOptions(
    "training",
    cl::desc("Options of --fluid-build-training for a forward program with "
             "its loss (default \"optimizer=momentum lr=0.1 momentum=0.9\"); "
             "the base rate becomes the parameter @learning_rate, which the "
             "executable's --lr can change; loss-scale=S scales the loss "
             "dynamically from S, see scale-growth-interval and the other "
             "options of `fluid-opt --help`'s --fluid-append-optimizer"),
    cl::value_desc("\"optimizer=... lr=...\""), cl::cat(compileCategory));
static cl::opt<bool> noFoldLrMath(
    "no-fold-lr-math",
    cl::desc("Skip --fluid-fold-lr-math: keep one learning-rate product per "
             "parameter, to measure its effect"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noGroupOptimizer(
    "no-group-optimizer",
    cl::desc("Skip --fluid-group-optimizer: one update launch per parameter "
             "instead of one multi-tensor launch per group"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noUpdateInPlace(
    "no-update-in-place",
    cl::desc("Skip --fluid-update-in-place (parameters are then updated "
             "through copies), to measure its effect"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noInsertFrees(
    "no-insert-frees",
    cl::desc("Skip --fluid-insert-frees and --fluid-plan-memory: every buffer "
             "lives for the whole step (the unoptimized baseline of the "
             "seed's memory table)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noPlanMemory(
    "no-plan-memory",
    cl::desc("Skip --fluid-plan-memory: buffers are allocated and freed at "
             "run time, in stream order, each freed after its last use"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noInPlace(
    "no-in-place",
    cl::desc("Plan memory without letting elementwise launches write over "
             "a dead input (--fluid-plan-memory=in-place=false)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noNarrowGradients(
    "no-narrow-gradients",
    cl::desc("With --precision bf16|fp16: skip --fluid-narrow-gradients "
             "(activation gradients read twice stay f32 instead of 16-bit)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noNarrowDataMovement(
    "no-narrow-data-movement",
    cl::desc("With --precision bf16|fp16: skip --fluid-narrow-data-movement "
             "(reshapes, transposes, slices and max pooling of 16-bit "
             "values then take f32 copies of them)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noWideningReductions(
    "no-widening-reductions",
    cl::desc("With --precision bf16|fp16: skip --fluid-widening-reductions "
             "(means and sums of 16-bit activations read an f32 copy of "
             "them instead of the 16-bit values)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noPoolIndices(
    "no-pool-indices",
    cl::desc("Skip --fluid-pool-indices: max pooling's gradient finds each "
             "window's maximum again in the forward input instead of "
             "reading the picks the forward saved"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noRecompute(
    "no-recompute-elementwise",
    cl::desc("Skip --fluid-recompute-elementwise: keep every activation the "
             "backward pass reads instead of recomputing batch norm + ReLU "
             "outputs and elementwise chains there"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<uint64_t> recomputeMinBytes(
    "recompute-min-bytes",
    cl::desc("Recompute only activations (batch norm + ReLU outputs, "
             "elementwise chains) of at least this many bytes in the "
             "backward pass (--fluid-recompute-elementwise=min-bytes=N; "
             "default 1048576)"),
    cl::value_desc("BYTES"), cl::init(1048576), cl::cat(compileCategory));
static cl::opt<bool> dataParallel(
    "data-parallel",
    cl::desc("Train as one rank of several processes started by mpirun or "
             "srun (--fluid-data-parallel): gradients averaged over the "
             "ranks in buckets (MPI on the cpu backend, NCCL on cuda, "
             "overlapped with the backward pass), each rank reading its "
             "share of every batch; links libfluid_mpi"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<uint64_t> bucketMiB(
    "bucket-mib",
    cl::desc("With --data-parallel: gradient MiB per all-reduce "
             "(--fluid-data-parallel=bucket-bytes; default 25, PyTorch DDP's "
             "bucket_cap_mb; 0: one all-reduce per gradient)"),
    cl::value_desc("MIB"), cl::init(25), cl::cat(compileCategory));
static cl::opt<bool> noExpandBatchNorm(
    "no-expand-batch-norm",
    cl::desc("Skip --fluid-expand-batch-norm: run training batch norm and "
             "its gradient as the backend's library kernels (cuDNN on cuda)"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noFuseElementwise(
    "no-fuse-elementwise",
    cl::desc("Skip --fluid-fuse-elementwise: run every elementwise op as a "
             "kernel of its own instead of generating one kernel per fused "
             "region"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> noPermuteStorage(
    "no-permute-storage",
    cl::desc("Skip --fluid-permute-storage: keep filters and input images in "
             "PyTorch's layout and change their layout in every step instead "
             "of at load and save"),
    cl::init(false), cl::cat(compileCategory));
static cl::opt<std::string> layoutOption(
    "layout",
    cl::desc("Activation layout of the convolutions and the ops around them "
             "(--fluid-layout): nhwc (channels last; the default for the "
             "cuda backend) or nchw (the default for the cpu backend); "
             "docs/LAYOUT.md"),
    cl::value_desc("nchw|nhwc"), cl::init(""), cl::cat(compileCategory));
static cl::opt<unsigned> gpuIndexBitwidth(
    "gpu-index-bitwidth",
    cl::desc("Bit width of the generated cuda kernels' divisions and "
             "remainders (broadcast offsets, reduction rows): 32 (the "
             "default; used where every index of a region is below 2^30, "
             "else 64) or 64 (--fluid-generate-gpu-kernels=index-bitwidth=N)"),
    cl::init(32), cl::value_desc("BITS"), cl::cat(compileCategory));
static cl::opt<std::string> gpuColumnPartials(
    "gpu-column-partials",
    cl::desc("How a generated cuda kernel's channels-last batch-norm sums "
             "combine their blocks' partial sums: vector (the default; "
             "stored split-major, read back as vectors) or atomic (one "
             "atomic read per value); the same results "
             "(--fluid-generate-gpu-kernels=column-partials=...)"),
    cl::init("vector"), cl::value_desc("atomic|vector"),
    cl::cat(compileCategory));
static cl::opt<int64_t> gpuColumnUnroll(
    "gpu-column-unroll",
    cl::desc("Rows per loop step of a generated cuda kernel's channels-last "
             "batch-norm sums, all of their loads issued before any is used: "
             "1 to 8, 4 by default (with vector partials, ResNet-50's bf16 "
             "step 6.6% faster than 1 with atomic partials on an H100, "
             "bench/NOTES.md); the same results "
             "(--fluid-generate-gpu-kernels=column-unroll=N)"),
    cl::init(4), cl::value_desc("N"), cl::cat(compileCategory));
static cl::opt<int64_t> gpuColumnMinElements(
    "gpu-column-min-elements",
    cl::desc("The fewest elements each block of a generated cuda kernel's "
             "channels-last batch-norm sums adds: 16384 (the default) or "
             "another count from 256 to 2^30; fewer, more blocks "
             "(--fluid-generate-gpu-kernels=column-min-elements=N)"),
    cl::init(kColumnMinElements), cl::value_desc("N"),
    cl::cat(compileCategory));
static cl::opt<int64_t> workspaceLimit(
    "workspace-limit",
    cl::desc("cuDNN workspace limit in MiB, part of the memory plan; the "
             "executable chooses only convolution algorithms within it "
             "(default 1024; -1: no limit)"),
    cl::init(1024), cl::value_desc("MIB"), cl::cat(compileCategory));
static cl::opt<std::string> memoryReport(
    "memory-report",
    cl::desc("Write the training step's memory report (--fluid-memory-report) "
             "to FILE.json, FILE.csv and FILE.svg"),
    cl::value_desc("FILE"), cl::cat(compileCategory));
static cl::opt<std::string>
    cxx("cxx",
        cl::desc("The C++ compiler (default: $CXX, else the one Fluid was "
                 "built with, else c++)"),
        cl::value_desc("PROGRAM"), cl::cat(compileCategory));
// The emitted code is a sequence of runtime calls (the kernels are in
// libfluid_runtime, compiled -O3): optimizing it saves nothing measurable
// and costs most of the compile time on large models.
static cl::opt<std::string> optLevel(
    "opt",
    cl::desc("Optimization flag for the C++ compiler (default -O0: the "
             "emitted code only calls the runtime's kernels)"),
    cl::init("-O0"), cl::cat(compileCategory));
static cl::opt<std::string> runtimeInclude(
    "runtime-include-dir",
    cl::desc("Folder holding fluid/runtime/*.h (default: this build's)"),
    cl::init(FLUID_RUNTIME_INCLUDE_DIR), cl::cat(compileCategory));
static cl::opt<std::string> runtimeLibrary(
    "runtime-library-dir",
    cl::desc("Folder holding libfluid_runtime.so (default: this build's); "
             "also the executable's run path"),
    cl::init(FLUID_RUNTIME_LIBRARY_DIR), cl::cat(compileCategory));
static cl::opt<bool>
    saveTemps("save-temps",
              cl::desc("Keep the generated C++ next to the executable "
                       "(EXE.cpp)"),
              cl::init(false), cl::cat(compileCategory));
static cl::opt<bool> quiet("quiet", cl::desc("Print no progress"),
                           cl::init(false), cl::cat(compileCategory));

static constexpr const char *kDefaultTraining =
    "optimizer=momentum lr=0.1 momentum=0.9";

static int fail(const llvm::Twine &message) {
  llvm::errs() << "fluid-compile: error: " << message << "\n";
  return EXIT_FAILURE;
}

static void progress(const llvm::Twine &message) {
  if (!quiet)
    llvm::errs() << "fluid-compile: " << message << "\n";
}

static std::string findCompiler() {
  if (!cxx.empty())
    return cxx;
  if (const char *env = std::getenv("CXX"); env && *env)
    return env;
  if (llvm::sys::fs::can_execute(FLUID_HOST_CXX_COMPILER))
    return FLUID_HOST_CXX_COMPILER;
  return "c++";
}

/// Compiles `source` into `executable` (through a temporary file renamed
/// over it, so a failed compilation leaves an older executable alone).
static int compile(StringRef source, StringRef executable) {
  std::string compiler = findCompiler();
  llvm::ErrorOr<std::string> program =
      llvm::sys::path::is_absolute(compiler)
          ? llvm::ErrorOr<std::string>(compiler)
          : llvm::sys::findProgramByName(compiler);
  if (!program || !llvm::sys::fs::can_execute(*program))
    return fail("cannot find the C++ compiler '" + compiler +
                "'; pass --cxx=PROGRAM");
  if (!llvm::sys::fs::exists(runtimeInclude + "/fluid/runtime/Program.h"))
    return fail("no runtime headers in '" + runtimeInclude +
                "' (fluid/runtime/Program.h); pass --runtime-include-dir");
  if (!llvm::sys::fs::exists(runtimeLibrary + "/libfluid_runtime.so"))
    return fail("no libfluid_runtime.so in '" + runtimeLibrary +
                "'; pass --runtime-library-dir");
  if (failed(checkReplaceable(executable, "fluid-compile")))
    return EXIT_FAILURE;
  std::string temporary = (executable + ".tmp").str();
  SmallVector<std::string> args = {*program,
                                   "-std=c++17",
                                   optLevel,
                                   "-x",
                                   "c++",
                                   source.str(),
                                   "-I" + runtimeInclude,
                                   "-L" + runtimeLibrary,
                                   "-Wl,-rpath," + runtimeLibrary,
                                   "-lfluid_runtime",
                                   "-o",
                                   temporary};
  if (dataParallel) {
    if (!llvm::sys::fs::exists(runtimeLibrary + "/libfluid_mpi.so"))
      return fail("--data-parallel needs libfluid_mpi.so in '" +
                  runtimeLibrary +
                  "' (built when MPI is installed: scripts/setup.sh installs "
                  "libopenmpi-dev; rebuild with scripts/build.sh)");
    args.insert(args.end() - 2, "-lfluid_mpi");
  }
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string errorMessage;
  auto start = std::chrono::steady_clock::now();
  int rc = llvm::sys::ExecuteAndWait(*program, argRefs, std::nullopt, {}, 0, 0,
                                     &errorMessage);
  if (rc != 0) {
    llvm::sys::fs::remove(temporary);
    return fail("the C++ compiler failed" +
                (errorMessage.empty()
                     ? llvm::Twine(" (exit code ") + llvm::Twine(rc) + ")"
                     : llvm::Twine(": ") + errorMessage) +
                ": " + llvm::join(args, " "));
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, executable)) {
    llvm::sys::fs::remove(temporary);
    return fail("cannot write " + executable + ": " + ec.message());
  }
  progress("compiled " + executable + " in " +
           llvm::formatv("{0:F1}", std::chrono::duration<double>(
                                       std::chrono::steady_clock::now() - start)
                                       .count())
               .str() +
           " s");
  return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerFluidPasses();
  registerFluidPipelines();
  cl::HideUnrelatedOptions(compileCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "fluid-compile: compile a model into a training executable\n\n"
      "Builds the training step, moves it to buffers, emits it as C++ calling\n"
      "the runtime's cuda or cpu kernels and compiles it with the host C++\n"
      "compiler. Run the executable with --help for its options.\n\n"
      "Examples:\n"
      "  fluid-models lenet5 --batch 64 -o lenet5.mlir\n"
      "  fluid-compile lenet5.mlir -o lenet5 --backend cpu \\\n"
      "      --training \"optimizer=momentum lr=0.05 momentum=0.9\"\n"
      "  ./lenet5 --data fashion-mnist --epochs 1\n"
      "  fluid-compile lenet5.mlir --emit=cpp | less\n\n"
      "Exit status: 0 on success, 1 on any error.\n");
  if (failed(fluid::checkRepeatedOptions("fluid-compile")))
    return EXIT_FAILURE;

  EmitOptions options;
  if (backendName == "cuda")
    options.backend = EmitBackend::Cuda;
  else if (backendName == "cpu")
    options.backend = EmitBackend::Cpu;
  else
    return fail("--backend must be cuda or cpu, got '" + backendName + "'");
  if (bucketMiB > (uint64_t(1) << 30))
    return fail("--bucket-mib must be at most 2^30, got " +
                llvm::Twine(bucketMiB.getValue()));
  if (bucketMiB.getNumOccurrences() && !dataParallel)
    return fail("--bucket-mib applies with --data-parallel only");
  if (precisionName != "fp32" && precisionName != "tf32" &&
      precisionName != "bf16" && precisionName != "fp16")
    return fail("--precision must be fp32, tf32, bf16 or fp16, got '" +
                precisionName + "'");
  const bool sixteenBits = precisionName == "bf16" || precisionName == "fp16";
  if (f32Activations && !sixteenBits)
    return fail("--f32-activations needs --precision bf16 or fp16 (with " +
                precisionName + " every activation is f32 already)");
  options.tf32 = precisionName != "fp32";
  if (emitKind != "exe" && emitKind != "cpp" && emitKind != "buffers")
    return fail("--emit must be exe, cpp or buffers, got '" + emitKind + "'");
  if (emitKind == "exe" && (outputFilename.empty() || outputFilename == "-"))
    return fail("--emit=exe needs an output file: -o EXE");
  if (outputFilename.empty())
    outputFilename = "-";
#ifndef FLUID_RUNTIME_HAS_CUDA
  if (options.backend == EmitBackend::Cuda && emitKind == "exe")
    return fail("this Fluid was built without the cuda backend (no nvcc "
                "found); use --backend cpu");
#endif

  DialectRegistry registry;
  registerGpuCodegenDialects(registry);
  MLIRContext context(registry);
  context.loadDialect<FluidDialect, fluid_rt::FluidRtDialect, func::FuncDialect,
                      memref::MemRefDialect, arith::ArithDialect>();
  ProgramLoader loader(context, "fluid-compile");
  OwningOpRef<ModuleOp> module = loader.load(inputFilename);
  if (!module)
    return EXIT_FAILURE;

  std::string why;
  FailureOr<func::FuncOp> entry = findEntryFunction(*module, "", why);
  if (failed(entry))
    return fail(inputFilename + ": " + why);
  PassManager pm(&context);
  // Switched off by --no-* here or by fold-lr-math=false and
  // group-optimizer=false in --training.
  TrainingOptimizations optimizations;
  if (isTrainingStep(*entry)) {
    if (sixteenBits)
      return fail(inputFilename + " already holds a training step (@" +
                  entry->getSymName() +
                  "); --precision applies to forward programs");
    if (!trainingOptions.empty())
      return fail(inputFilename + " already holds a training step (@" +
                  entry->getSymName() +
                  " returns a learning rate); --training applies to forward "
                  "programs");
    options.trainingOptions = "(built before)";
  } else {
    options.trainingOptions =
        trainingOptions.empty() ? kDefaultTraining : trainingOptions.getValue();
    // fp16 gradients underflow without loss scaling (as in
    // torch.cuda.amp.GradScaler, whose initial scale this is).
    if (precisionName == "fp16" &&
        !StringRef(" " + options.trainingOptions).contains(" loss-scale="))
      options.trainingOptions += " loss-scale=65536";
    if (sixteenBits) {
      FluidMixedPrecisionOptions mixed;
      mixed.precision = precisionName;
      mixed.storeActivations = !f32Activations;
      pm.addPass(createFluidMixedPrecision(mixed));
    }
    progress("building the training step (" + options.trainingOptions + ")");
    // Built directly, not from pipeline text the options could break out of.
    if (failed(buildTrainingPipeline(
            pm, options.trainingOptions + " lr-param=true",
            optionErrorPrinter("fluid-compile", "--training"), &optimizations)))
      return EXIT_FAILURE;
    if (sixteenBits && !f32Activations && !noNarrowGradients)
      pm.addPass(createFluidNarrowGradients());
  }
  // A module fluid-compile --emit=buffers wrote (perhaps edited since) is
  // emitted as it is.
  bool bufferized = llvm::any_of(entry->getArgumentTypes(), [](Type type) {
    return isa<MemRefType>(type);
  });
  if (workspaceLimit < -1 || workspaceLimit > (int64_t(1) << 30))
    return fail("--workspace-limit must be -1 (none) or a size in MiB up to "
                "2^30, got " +
                llvm::Twine(workspaceLimit));
  // Channels-last wins on the GPU (cuDNN's fast convolutions are NHWC);
  // the cpu backend's reference kernels are NCHW.
  const std::string layout =
      layoutOption.getNumOccurrences()
          ? std::string(layoutOption)
          : (options.backend == EmitBackend::Cuda ? "nhwc" : "nchw");
  if (layout != "nchw" && layout != "nhwc")
    return fail("--layout must be nchw or nhwc, got '" + layout + "'");
  if (gpuIndexBitwidth != 32 && gpuIndexBitwidth != 64)
    return fail("--gpu-index-bitwidth must be 32 or 64, got " +
                llvm::Twine(static_cast<unsigned>(gpuIndexBitwidth)));
  if (gpuColumnPartials != "atomic" && gpuColumnPartials != "vector")
    return fail("--gpu-column-partials must be atomic or vector, got '" +
                gpuColumnPartials + "'");
  if (gpuColumnMinElements < kColumnMinElementsLow ||
      gpuColumnMinElements > kColumnMinElementsHigh)
    return fail("--gpu-column-min-elements must be " +
                llvm::Twine(kColumnMinElementsLow) + " to 2^30, got " +
                llvm::Twine(static_cast<int64_t>(gpuColumnMinElements)));
  if (gpuColumnUnroll < 1 || gpuColumnUnroll > kMaxColumnUnroll)
    return fail("--gpu-column-unroll must be 1 to " +
                llvm::Twine(kMaxColumnUnroll) + ", got " +
                llvm::Twine(static_cast<int64_t>(gpuColumnUnroll)));
  if (bufferized && dataParallel)
    return fail(inputFilename +
                " is already bufferized; --data-parallel applies to tensor "
                "programs (run --fluid-data-parallel before bufferizing)");
  if (!bufferized) {
    if (optimizations.foldLrMath && !noFoldLrMath)
      pm.addPass(createFluidFoldLrMath());
    if (optimizations.groupOptimizer && !noGroupOptimizer)
      pm.addPass(createFluidGroupOptimizer());
    if (!noPoolIndices)
      pm.addPass(createFluidPoolIndices());
    if (!noRecompute) {
      FluidRecomputeElementwiseOptions recompute;
      recompute.minBytes = recomputeMinBytes;
      pm.addPass(createFluidRecomputeElementwise(recompute));
    }
    if (!noExpandBatchNorm)
      pm.addPass(createFluidExpandBatchNorm());
    if (layout != "nchw") {
      FluidLayoutOptions layoutOptions;
      layoutOptions.layout = layout;
      pm.addPass(createFluidLayout(layoutOptions));
    }
    if (!noPermuteStorage)
      pm.addPass(createFluidPermuteStorage());
    if (sixteenBits && !noNarrowDataMovement)
      pm.addPass(createFluidNarrowDataMovement());
    if (sixteenBits && !noWideningReductions)
      pm.addPass(createFluidWideningReductions());
    if (!noFuseElementwise)
      pm.addPass(createFluidFuseElementwise());
    if (dataParallel) {
      FluidDataParallelOptions parallel;
      parallel.bucketBytes = bucketMiB * 1024 * 1024;
      pm.addPass(createFluidDataParallel(parallel));
    }
    pm.addPass(createFluidBufferize());
    if (!noUpdateInPlace)
      pm.addPass(createFluidUpdateInPlace());
    if (!noInsertFrees)
      pm.addPass(createFluidInsertFrees());
    if (!noInsertFrees && !noPlanMemory) {
      FluidPlanMemoryOptions plan;
      plan.inPlace = !noInPlace;
      plan.workspaceLimitMiB = workspaceLimit;
      pm.addPass(createFluidPlanMemory(plan));
    }
  } else {
    progress("the program is already bufferized; emitting it as it is");
  }
  // The cuda backend's fused regions: a gpu.func each, lowered to PTX.
  // (--emit=buffers writes the program before this step.)
  if (options.backend == EmitBackend::Cuda && emitKind != "buffers" &&
      !module->lookupSymbol(kGpuKernelModuleName)) {
    FluidGenerateGpuKernelsOptions kernels;
    kernels.indexBitwidth = gpuIndexBitwidth;
    kernels.columnPartials = gpuColumnPartials;
    kernels.columnUnroll = gpuColumnUnroll;
    kernels.columnMinElements = gpuColumnMinElements;
    pm.addPass(createFluidGenerateGpuKernels(kernels));
    buildGpuLoweringPipeline(pm, defaultCudaToolkitPath());
  }
  if (!memoryReport.empty()) {
    FluidMemoryReportOptions report;
    report.file = memoryReport;
    pm.addPass(createFluidMemoryReport(report));
  }
  if (failed(pm.run(*module)))
    return fail("the pipeline failed on " + inputFilename);
  if (auto arena = entry->getOperation()->getAttrOfType<IntegerAttr>(
          fluid_rt::kArenaBytesAttrName)) {
    auto bound = entry->getOperation()->getAttrOfType<IntegerAttr>(
        fluid_rt::kArenaLowerBoundAttrName);
    progress(llvm::formatv("memory plan: arena {0:f1} MiB for the step's "
                           "temporaries (lower bound {1:f1} MiB)",
                           arena.getInt() / 1048576.0,
                           bound ? bound.getInt() / 1048576.0 : 0.0)
                 .str());
  }
  options.source = llvm::sys::path::filename(inputFilename).str();

  if (emitKind == "buffers") {
    return succeeded(
               writeOutputFile(outputFilename, "fluid-compile",
                               [&](raw_ostream &os) { module->print(os); }))
               ? EXIT_SUCCESS
               : EXIT_FAILURE;
  }
  if (emitKind == "cpp") {
    // Emitted into memory first: a program that cannot be emitted leaves
    // no partial file behind.
    std::string text;
    llvm::raw_string_ostream os(text);
    if (failed(emitProgram(*module, options, os)))
      return EXIT_FAILURE;
    return succeeded(writeOutputFile(outputFilename, "fluid-compile",
                                     [&](raw_ostream &out) { out << text; }))
               ? EXIT_SUCCESS
               : EXIT_FAILURE;
  }

  // The executable: emit next to it, then compile.
  std::string source;
  if (saveTemps) {
    source = outputFilename + ".cpp";
  } else {
    SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("fluid-program", "cpp", path))
      return fail("cannot create a temporary file: " + ec.message());
    source = path.str().str();
  }
  llvm::scope_exit removeSource([&] {
    if (!saveTemps)
      llvm::sys::fs::remove(source);
  });
  {
    std::string errorMessage;
    auto output = mlir::openOutputFile(source, &errorMessage);
    if (!output)
      return fail(errorMessage);
    if (failed(emitProgram(*module, options, output->os())))
      return EXIT_FAILURE;
    output->keep();
  }
  progress("emitted " +
           llvm::Twine(options.backend == EmitBackend::Cuda ? "cuda" : "cpu") +
           " program; compiling it with the C++ compiler");
  return compile(source, outputFilename);
}
