//===- fluid-train.cpp - Train a fluid program on the cpu backend ---------===//
//
//   fluid-train TRAIN.mlir --data fashion-mnist|synthetic|IMAGES,LABELS
//               [--epochs N | --steps N] [--load CKPT] [--save CKPT] ...
//
// Runs a training step (the output of --fluid-build-training, or a forward
// program built here with --build-training) in a loop over a dataset,
// shuffled each epoch, printing progress; evaluates test accuracy with the
// program's @predict function after each epoch; saves and resumes from
// safetensors checkpoints. Position in the data is derived from the
// program's step counter, so a resumed run continues exactly where the
// saved one stopped.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Interpreter/Interpreter.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Support/ProgramLoader.h"
#include "fluid/runtime/Data.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <memory>

using namespace mlir;
using namespace mlir::fluid;

namespace cl = llvm::cl;

static cl::OptionCategory trainCategory("fluid-train options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<train.mlir>"),
                                          cl::Required, cl::cat(trainCategory));
static cl::opt<std::string> dataSpec(
    "data",
    cl::desc("Training data: 'fashion-mnist' (Debian's dataset-fashion-mnist),"
             " 'synthetic', or IMAGES,LABELS (IDX files, raw or .gz)"),
    cl::init("synthetic"), cl::cat(trainCategory));
static cl::opt<std::string> testDataSpec(
    "test-data",
    cl::desc("Evaluation data, same forms as --data (default: the test split "
             "of fashion-mnist, or synthetic data)"),
    cl::cat(trainCategory));
static cl::opt<unsigned>
    epochs("epochs", cl::desc("Train until this many epochs are complete"),
           cl::init(1), cl::cat(trainCategory));
static cl::opt<int64_t>
    steps("steps", cl::desc("Train this many steps instead (0: use --epochs)"),
          cl::init(0), cl::cat(trainCategory));
static cl::opt<unsigned> logEvery("log-every",
                                  cl::desc("Print progress every N steps"),
                                  cl::init(50), cl::cat(trainCategory));
static cl::opt<uint64_t>
    seed("seed", cl::desc("Seed of initializers, shuffling and synthetic data"),
         cl::init(0), cl::cat(trainCategory));
static cl::opt<std::string>
    loadPath("load", cl::desc("Resume from a safetensors checkpoint"),
             cl::value_desc("FILE"), cl::cat(trainCategory));
static cl::opt<std::string>
    savePath("save",
             cl::desc("Write a checkpoint after every epoch and at the end"),
             cl::value_desc("FILE"), cl::cat(trainCategory));
static cl::opt<double>
    pixelMean("mean", cl::desc("Normalization: (pixel/255-mean)/std"),
              cl::init(0.2860), cl::cat(trainCategory));
static cl::opt<double> pixelStd("std", cl::desc("See --mean"), cl::init(0.3530),
                                cl::cat(trainCategory));
static cl::opt<int64_t> syntheticSize("synthetic-size",
                                      cl::desc("Images in a synthetic dataset"),
                                      cl::init(1024), cl::cat(trainCategory));
static cl::opt<std::string> buildTraining(
    "build-training",
    cl::desc("Options of --fluid-build-training, to turn a forward program "
             "with its loss into a training step first"),
    cl::value_desc("\"optimizer=momentum lr=0.05 ...\""),
    cl::cat(trainCategory));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "fluid-train: error: " << message << "\n";
  return EXIT_FAILURE;
}

namespace {

/// Owns a runtime dataset.
struct DatasetDeleter {
  void operator()(fluid_dataset *d) const { fluid_dataset_free(d); }
};
using Dataset = std::unique_ptr<fluid_dataset, DatasetDeleter>;

struct DatasetInfo {
  int64_t count = 0, shape[3] = {0, 0, 0}, classes = 0;
};

constexpr StringLiteral kFashionMnist = "/usr/share/datasets/fashion-mnist/";

/// Opens a dataset named as --help describes. `split` is "train" or "t10k".
llvm::Expected<Dataset> openDataset(StringRef spec, StringRef split,
                                    ArrayRef<int64_t> imageShape,
                                    int64_t classes, uint64_t dataSeed) {
  fluid_dataset *raw = nullptr;
  fluid_status status;
  if (spec == "synthetic") {
    status =
        fluid_dataset_synthetic(syntheticSize, imageShape[0], imageShape[1],
                                imageShape[2], classes, dataSeed, &raw);
  } else if (spec == "fashion-mnist") {
    std::string images =
        (kFashionMnist + split + "-images-idx3-ubyte.gz").str();
    std::string labels =
        (kFashionMnist + split + "-labels-idx1-ubyte.gz").str();
    status = fluid_dataset_open_idx(images.c_str(), labels.c_str(), &raw);
  } else {
    auto [images, labels] = spec.split(',');
    if (labels.empty())
      return llvm::createStringError(
          "--data '%s' must be fashion-mnist, synthetic or IMAGES,LABELS",
          spec.str().c_str());
    status = fluid_dataset_open_idx(images.str().c_str(), labels.str().c_str(),
                                    &raw);
  }
  if (status != FLUID_OK)
    return llvm::createStringError(fluid_last_error());
  return Dataset(raw);
}

DatasetInfo describeDataset(const fluid_dataset *dataset) {
  DatasetInfo info;
  fluid_dataset_info(dataset, &info.count, info.shape, &info.classes);
  return info;
}

/// The image and label arguments of a function, found by fluid.name.
struct Signature {
  RankedTensorType images, labels;
  unsigned imagesIndex = 0, labelsIndex = 1;
};

std::optional<unsigned> argumentNamed(func::FuncOp func, StringRef name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto attr = func.getArgAttrOfType<StringAttr>(i, "fluid.name"))
      if (attr.getValue() == name)
        return i;
  return std::nullopt;
}

/// Allocates a batch of `type` and fills it from `dataset` at `indices`.
llvm::Error fillBatch(const fluid_dataset *dataset, ArrayRef<int64_t> indices,
                      HostTensor &images, HostTensor &labels) {
  fluid_tensor imageDesc = images.descriptor(), labelDesc = labels.descriptor();
  if (fluid_dataset_batch(dataset, indices.data(),
                          static_cast<int64_t>(indices.size()), &imageDesc,
                          &labelDesc, pixelMean, pixelStd) != FLUID_OK)
    return llvm::createStringError(fluid_last_error());
  return llvm::Error::success();
}

/// Reads a rank-0 result as a double.
double scalarValue(const HostTensor &t) {
  switch (t.getDType()) {
  case FLUID_F32:
    return *t.dataAs<float>();
  case FLUID_F64:
    return *t.dataAs<double>();
  case FLUID_I64:
    return static_cast<double>(*t.dataAs<int64_t>());
  default:
    return 0;
  }
}

/// Test accuracy of @predict over every example of `dataset` (the last
/// batch is completed with repeats, which are not counted).
llvm::Expected<double> evaluate(Interpreter &interpreter, func::FuncOp predict,
                                const fluid_dataset *dataset,
                                RankedTensorType imagesType) {
  int64_t batch = imagesType.getDimSize(0);
  DatasetInfo info = describeDataset(dataset);
  auto logitsType = cast<RankedTensorType>(predict.getResultTypes()[0]);
  int64_t classes = logitsType.getDimSize(1);
  llvm::Expected<HostTensor> images =
      HostTensor::allocate(imagesType, "evaluation images");
  if (!images)
    return images.takeError();
  llvm::Expected<HostTensor> labels =
      HostTensor::allocate(FLUID_I64, {batch}, "evaluation labels");
  if (!labels)
    return labels.takeError();
  int64_t correct = 0;
  std::vector<int64_t> indices(batch);
  for (int64_t start = 0; start < info.count; start += batch) {
    int64_t real = std::min(batch, info.count - start);
    for (int64_t i = 0; i < batch; ++i)
      indices[i] = start + std::min(i, real - 1);
    if (llvm::Error error = fillBatch(dataset, indices, *images, *labels))
      return std::move(error);
    FailureOr<SmallVector<HostTensor>> logits =
        interpreter.run(predict, {*images});
    if (failed(logits))
      return llvm::createStringError("@predict failed");
    const HostTensor &out = (*logits)[0];
    for (int64_t i = 0; i < real; ++i) {
      int64_t best = 0;
      double bestValue = -HUGE_VAL;
      for (int64_t c = 0; c < classes; ++c) {
        double v = out.getDType() == FLUID_F64
                       ? out.dataAs<double>()[i * classes + c]
                       : out.dataAs<float>()[i * classes + c];
        if (v > bestValue) {
          bestValue = v;
          best = c;
        }
      }
      correct += best == labels->dataAs<int64_t>()[i];
    }
  }
  return 100.0 * static_cast<double>(correct) / static_cast<double>(info.count);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerFluidPasses();
  registerFluidPipelines();
  cl::HideUnrelatedOptions(trainCategory);
  cl::ParseCommandLineOptions(
      argc, argv, "fluid-train: train a fluid program on the cpu backend\n");

  if (logEvery < 1)
    return fail("--log-every must be at least 1");
  if (steps < 0)
    return fail("--steps must not be negative");

  MLIRContext context;
  context.loadDialect<FluidDialect, func::FuncDialect>();
  ProgramLoader loader(context, "fluid-train");
  OwningOpRef<ModuleOp> module = loader.load(inputFilename);
  if (!module)
    return EXIT_FAILURE;
  if (!buildTraining.empty()) {
    PassManager pm(&context);
    std::string pipeline = "fluid-build-training{" + buildTraining + "}";
    if (failed(parsePassPipeline(pipeline, pm, llvm::errs())) ||
        failed(pm.run(*module)))
      return fail("--build-training failed");
  }

  std::string why;
  FailureOr<func::FuncOp> entry = findEntryFunction(*module, "", why);
  if (failed(entry))
    return fail(why);
  func::FuncOp step = *entry;
  std::optional<unsigned> imagesIndex = argumentNamed(step, "images");
  std::optional<unsigned> labelsIndex = argumentNamed(step, "labels");
  if (!imagesIndex || !labelsIndex || step.getNumArguments() != 2)
    return fail("@" + step.getSymName() +
                " must take two arguments named (fluid.name) \"images\" and "
                "\"labels\", as fluid-models writes");
  if (!isTrainingStep(step))
    return fail("@" + step.getSymName() +
                " is not a training step; build one with fluid-opt "
                "--fluid-build-training=\"...\" or pass --build-training");
  auto imagesType =
      cast<RankedTensorType>(step.getArgumentTypes()[*imagesIndex]);
  auto labelsType =
      cast<RankedTensorType>(step.getArgumentTypes()[*labelsIndex]);
  if (imagesType.getRank() != 4 || !imagesType.getElementType().isF32() ||
      labelsType.getRank() != 1 ||
      !labelsType.getElementType().isSignlessInteger(64))
    return fail("@" + step.getSymName() +
                " must take f32 images [N,C,H,W] and i64 labels [N]");
  int64_t batch = imagesType.getDimSize(0);
  func::FuncOp predict = module->lookupSymbol<func::FuncOp>("predict");

  // The class count: from the loss's logits.
  int64_t classes = 0;
  step.walk([&](SoftmaxCrossEntropyOp loss) {
    classes = loss.getLogits().getType().getDimSize(1);
  });

  llvm::Expected<Dataset> train = openDataset(
      dataSpec, "train", imagesType.getShape().drop_front(), classes, seed);
  if (!train)
    return fail(llvm::toString(train.takeError()));
  DatasetInfo info = describeDataset(train->get());
  if (ArrayRef<int64_t>(info.shape) != imagesType.getShape().drop_front())
    return fail("the training images are " + std::to_string(info.shape[0]) +
                "x" + std::to_string(info.shape[1]) + "x" +
                std::to_string(info.shape[2]) + " but @" + step.getSymName() +
                " takes " + std::to_string(imagesType.getDimSize(1)) + "x" +
                std::to_string(imagesType.getDimSize(2)) + "x" +
                std::to_string(imagesType.getDimSize(3)));
  if (info.classes > classes)
    return fail("the data has labels up to " +
                std::to_string(info.classes - 1) + " but the model has " +
                std::to_string(classes) + " classes");
  int64_t stepsPerEpoch = info.count / batch;
  if (stepsPerEpoch < 1)
    return fail("the training data has " + std::to_string(info.count) +
                " examples, fewer than one batch of " + std::to_string(batch));

  Dataset test;
  if (predict) {
    std::string spec =
        testDataSpec.empty()
            ? (dataSpec == "fashion-mnist" ? "fashion-mnist" : "synthetic")
            : testDataSpec.getValue();
    llvm::Expected<Dataset> opened = openDataset(
        spec, "t10k", imagesType.getShape().drop_front(), classes, seed + 1);
    if (!opened)
      return fail(llvm::toString(opened.takeError()));
    test = std::move(*opened);
  }

  llvm::Expected<ParamStore> params = ParamStore::initialize(*module, seed);
  if (!params)
    return fail(llvm::toString(params.takeError()));
  if (!loadPath.empty()) {
    SmallVector<std::string> ignored;
    if (llvm::Error error = params->load(loadPath, ignored))
      return fail(llvm::toString(std::move(error)));
  }
  HostTensor stepCounter = params->lookup("global_step");
  int64_t done = stepCounter.isNull() ? 0 : *stepCounter.dataAs<int64_t>();
  int64_t target =
      steps > 0 ? done + steps : static_cast<int64_t>(epochs) * stepsPerEpoch;
  llvm::outs() << "fluid-train: " << info.count << " examples, batch " << batch
               << ", " << stepsPerEpoch << " steps per epoch; steps " << done
               << " to " << target << "\n";

  llvm::Expected<HostTensor> images =
      HostTensor::allocate(imagesType, "training images");
  llvm::Expected<HostTensor> labels =
      HostTensor::allocate(labelsType, "training labels");
  if (!images || !labels)
    return fail("cannot allocate a batch");
  SmallVector<HostTensor> arguments(2);
  std::vector<int64_t> order(info.count);
  int64_t shuffledEpoch = -1;
  Interpreter interpreter(*params);
  auto save = [&]() -> bool {
    if (savePath.empty())
      return true;
    if (llvm::Error error = params->save(savePath)) {
      llvm::errs() << "fluid-train: error: " << llvm::toString(std::move(error))
                   << "\n";
      return false;
    }
    return true;
  };

  double lossSum = 0;
  int64_t lossCount = 0;
  auto windowStart = std::chrono::steady_clock::now();
  for (int64_t current = done; current < target; ++current) {
    int64_t epoch = current / stepsPerEpoch, within = current % stepsPerEpoch;
    if (epoch != shuffledEpoch) {
      fluid_shuffle(order.data(), info.count, seed, epoch);
      shuffledEpoch = epoch;
    }
    ArrayRef<int64_t> indices(order.data() + within * batch, batch);
    if (llvm::Error error = fillBatch(train->get(), indices, *images, *labels))
      return fail(llvm::toString(std::move(error)));
    arguments[*imagesIndex] = *images;
    arguments[*labelsIndex] = *labels;
    FailureOr<SmallVector<HostTensor>> results =
        interpreter.run(step, arguments);
    if (failed(results))
      return EXIT_FAILURE;
    double loss = scalarValue((*results)[0]);
    if (!std::isfinite(loss))
      return fail("the loss is " + std::to_string(loss) + " at step " +
                  std::to_string(current) + "; lower the learning rate");
    lossSum += loss;
    ++lossCount;
    bool epochEnd = within + 1 == stepsPerEpoch;
    if ((current + 1) % logEvery == 0 || epochEnd || current + 1 == target) {
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - windowStart)
                           .count();
      llvm::outs() << llvm::format(
          "step %lld  epoch %lld  loss %.4f  lr %.5g  %.0f images/s\n",
          static_cast<long long>(current + 1), static_cast<long long>(epoch),
          lossSum / lossCount, scalarValue((*results)[1]),
          lossCount * batch / std::max(seconds, 1e-9));
      lossSum = 0;
      lossCount = 0;
      windowStart = std::chrono::steady_clock::now();
    }
    if (epochEnd || current + 1 == target) {
      if (predict && epochEnd) {
        llvm::Expected<double> accuracy =
            evaluate(interpreter, predict, test.get(), imagesType);
        if (!accuracy)
          return fail(llvm::toString(accuracy.takeError()));
        llvm::outs() << llvm::format("epoch %lld  test accuracy %.2f%%\n",
                                     static_cast<long long>(epoch), *accuracy);
        windowStart = std::chrono::steady_clock::now();
      }
      if (!save())
        return EXIT_FAILURE;
    }
    llvm::outs().flush();
  }
  return EXIT_SUCCESS;
}
