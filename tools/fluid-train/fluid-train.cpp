//===- fluid-train.cpp - Train a fluid program on the cpu backend ---------===//
//
//   fluid-train TRAIN.mlir --data fashion-mnist|synthetic|IMAGES,LABELS
//               [--epochs N | --steps N] [--load CKPT | --init-from FILE]
//               [--save CKPT] ...
//
// Runs a training step (the output of --fluid-build-training, or a forward
// program built here with --build-training) in a loop over a dataset,
// shuffled each epoch, printing progress; evaluates test accuracy with the
// program's @predict function after each epoch; saves and resumes from
// safetensors checkpoints, or starts from given parameter values
// (--init-from, driver/InitFrom.h). Position in the data is derived from
// the program's step counter, so a resumed run continues exactly where the
// saved one stopped.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Interpreter/Interpreter.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Support/ParamsFile.h"
#include "fluid/Support/ProgramLoader.h"
#include "fluid/runtime/Data.h"

#include "driver/InitFrom.h"
#include "driver/TrainingRules.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

using namespace mlir;
using namespace mlir::fluid;

namespace cl = llvm::cl;
namespace rules = ::fluid::rt::driver;

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
static cl::opt<std::string> loadPath("load", cl::desc(rules::kLoadHelp),
                                     cl::value_desc("FILE"),
                                     cl::cat(trainCategory));
static cl::opt<std::string> initFromPath("init-from",
                                         cl::desc(rules::kInitFromHelp),
                                         cl::value_desc("FILE"),
                                         cl::cat(trainCategory));
static cl::opt<std::string>
    savePath("save",
             cl::desc("Write a checkpoint after every epoch and at the end"),
             cl::value_desc("FILE"), cl::cat(trainCategory));

namespace {

/// A flag whose value the training executables' rule parses
/// (driver/TrainingRules.h), so that both tools take the same values and
/// report the same errors: LLVM keeps the text, `parse` turns it into a
/// value.
class RuleOption {
public:
  RuleOption(const char *name, const char *valueName, std::string help)
      : help(std::move(help)),
        text(StringRef(name), cl::desc(this->help), cl::value_desc(valueName),
             cl::cat(trainCategory)) {}

  bool given() const { return text.getNumOccurrences() > 0; }
  unsigned position() const { return text.getPosition(); }
  const std::string &getValue() const { return text.getValue(); }

private:
  std::string help; // cl::desc keeps a reference
  cl::opt<std::string> text;
};

/// A count flag of driver/TrainingRules.h.
class CountOption : public RuleOption {
public:
  explicit CountOption(const rules::CountFlag &flag)
      : RuleOption(flag.name, "N",
                   rules::countHelp(flag) +
                       " (default: " + rules::countDefault(flag) + ")"),
        flag(flag) {}

  /// Parses the value given; "" or the error.
  std::string parse(int64_t &value) const {
    return rules::parseCount(flag, getValue(), value);
  }

private:
  const rules::CountFlag &flag;
};

} // namespace

static CountOption stepsOption(rules::kStepsFlag);
static CountOption epochsOption(rules::kEpochsFlag);
static CountOption logEveryOption(rules::kLogEveryFlag);
static CountOption batchOption(rules::kBatchFlag);
static CountOption syntheticSizeOption(rules::kSyntheticSizeFlag);
static RuleOption seedOption("seed", "N",
                             std::string(rules::kSeedHelp) + " (default: " +
                                 std::to_string(rules::kDefaultSeed) + ")");
static RuleOption meanOption("mean", "X",
                             std::string(rules::kMeanHelp) + " (default: " +
                                 rules::numberDefault(rules::kDefaultMean) +
                                 ")");
static RuleOption stdOption("std", "X",
                            std::string(rules::kStdHelp) + " (default: " +
                                rules::numberDefault(rules::kDefaultStd) + ")");
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

/// The values of the flags that the shared rules parse.
struct Settings {
  int64_t steps = rules::kStepsFlag.defaultValue;
  int64_t epochs = rules::kEpochsFlag.defaultValue;
  int64_t logEvery = rules::kLogEveryFlag.defaultValue;
  int64_t batch = rules::kBatchFlag.defaultValue;
  int64_t syntheticSize = rules::kSyntheticSizeFlag.defaultValue;
  uint64_t seed = rules::kDefaultSeed;
  double mean = rules::kDefaultMean, std = rules::kDefaultStd;
};

/// Parses the flags by the shared rules; "" or the first error, found in
/// the training executables' order: a repeated flag, --steps with
/// --epochs, then each value in the order of the command line.
std::string parseSettings(Settings &settings) {
  // No flag is meant to repeat: LLVM would keep the last value. The
  // executables report the first repetition on the command line.
  const cl::Option *repeated = nullptr;
  for (const auto &entry : cl::getRegisteredOptions()) {
    const cl::Option *option = entry.second;
    if (option->getNumOccurrences() > 1 &&
        llvm::is_contained(option->Categories, &trainCategory) &&
        (!repeated || option->getPosition() < repeated->getPosition()))
      repeated = option;
  }
  if (repeated)
    return rules::repeatedFlag(("--" + repeated->ArgStr).str(),
                               repeated->getNumOccurrences());
  if (stepsOption.given() && epochsOption.given())
    return rules::stepsAndEpochs();
  if (initFromPath.getNumOccurrences() && loadPath.getNumOccurrences())
    return rules::initFromAndLoad();

  std::vector<std::pair<unsigned, std::function<std::string()>>> values;
  auto count = [&values](const CountOption &option, int64_t &value) {
    if (option.given())
      values.emplace_back(option.position(),
                          [&option, &value] { return option.parse(value); });
  };
  count(stepsOption, settings.steps);
  count(epochsOption, settings.epochs);
  count(logEveryOption, settings.logEvery);
  count(batchOption, settings.batch);
  count(syntheticSizeOption, settings.syntheticSize);
  if (seedOption.given())
    values.emplace_back(seedOption.position(), [&settings] {
      return rules::parseSeed(seedOption.getValue(), settings.seed);
    });
  if (meanOption.given())
    values.emplace_back(meanOption.position(), [&settings] {
      return rules::parseNumber("--mean", meanOption.getValue(), settings.mean);
    });
  if (stdOption.given())
    values.emplace_back(stdOption.position(), [&settings] {
      return rules::parseStd(stdOption.getValue(), settings.std);
    });
  llvm::sort(values,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  for (const auto &[position, parse] : values)
    if (std::string problem = parse(); !problem.empty())
      return problem;
  return rules::checkSyntheticSize(settings.syntheticSize);
}

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
                                    int64_t classes, uint64_t dataSeed,
                                    int64_t syntheticSize) {
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

/// --init-from: the model's parameters from `path`, the optimizer state
/// left as initialized; `loaded` tells, per parameter of `params` in its
/// order, which the file set.
llvm::Error initFrom(ModuleOp module, ParamStore &params, StringRef path,
                     std::vector<bool> &loaded) {
  std::vector<rules::InitFromParam> wanted;
  for (const std::string &name : params.names()) {
    rules::InitFromParam param;
    param.name = name;
    param.type = params.lookup(name).descriptor();
    auto op = module.lookupSymbol<ParamOp>(name);
    param.optimizerState = op && op->hasAttr(kOptimizerStateAttrName);
    wanted.push_back(param);
  }
  // Read into fresh storage: a failed load changes nothing.
  std::vector<HostTensor> values(wanted.size());
  std::string allocationProblem;
  rules::InitFromResult result;
  std::string problem = rules::initFrom(
      path.str(), wanted,
      [&](size_t i) -> void * {
        const fluid_tensor &type = wanted[i].type;
        llvm::Expected<HostTensor> fresh =
            HostTensor::allocate(static_cast<fluid_dtype>(type.dtype),
                                 ArrayRef<int64_t>(type.shape, type.rank),
                                 "parameter @" + wanted[i].name);
        if (!fresh) {
          std::string why = llvm::toString(fresh.takeError());
          if (allocationProblem.empty())
            allocationProblem = why;
          return nullptr;
        }
        values[i] = *fresh;
        return values[i].descriptor().data;
      },
      result);
  if (!allocationProblem.empty())
    problem = allocationProblem;
  if (!problem.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), problem);
  for (size_t i = 0; i < wanted.size(); ++i)
    if (result.loaded[i])
      params.set(wanted[i].name, values[i]);
  loaded = result.loaded;
  llvm::outs() << "fluid-train: " << rules::initFromSummary(path.str(), result)
               << "\n";
  return llvm::Error::success();
}

/// Warns when trainable parameters of a program fluid-import-onnx wrote are
/// still its zero placeholders (`loaded` as initFrom sets it).
void warnAboutPlaceholders(ModuleOp module, const ParamStore &params,
                           const std::vector<bool> &loaded) {
  llvm::StringMap<bool> given;
  for (auto [i, name] : llvm::enumerate(params.names()))
    given[name] = i < loaded.size() && loaded[i];
  int64_t trainable = 0;
  int64_t placeholders = countPlaceholders(
      module, [&](ParamOp param) { return given.lookup(param.getSymName()); },
      trainable);
  if (placeholders > 0)
    llvm::errs() << "fluid-train: warning: "
                 << rules::placeholderWarning(placeholders, trainable,
                                              getParamsFile(module).str(),
                                              "--init-from")
                 << "\n";
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
                      HostTensor &images, HostTensor &labels,
                      const Settings &settings) {
  fluid_tensor imageDesc = images.descriptor(), labelDesc = labels.descriptor();
  if (fluid_dataset_batch(dataset, indices.data(),
                          static_cast<int64_t>(indices.size()), &imageDesc,
                          &labelDesc, settings.mean, settings.std) != FLUID_OK)
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
                                RankedTensorType imagesType,
                                const Settings &settings) {
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
    if (llvm::Error error =
            fillBatch(dataset, indices, *images, *labels, settings))
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
      argc, argv,
      "fluid-train: train a fluid program on the cpu backend\n\n"
      "Each flag is given at most once, and --steps and --epochs exclude\n"
      "each other. A count N is a decimal integer within the bounds its flag\n"
      "states. The training executables of fluid-compile take the flags they\n"
      "share with fluid-train by the same rules.\n");

  Settings settings;
  std::string problem = parseSettings(settings);
  if (!problem.empty())
    return fail(problem);

  MLIRContext context;
  context.loadDialect<FluidDialect, func::FuncDialect>();
  ProgramLoader loader(context, "fluid-train");
  OwningOpRef<ModuleOp> module = loader.load(inputFilename);
  if (!module)
    return EXIT_FAILURE;
  if (!buildTraining.empty()) {
    // Built directly, not from pipeline text the options could break out
    // of; a bad option is one message.
    PassManager pm(&context);
    if (failed(buildTrainingPipeline(
            pm, buildTraining,
            optionErrorPrinter("fluid-train", "--build-training"))))
      return EXIT_FAILURE;
    if (failed(pm.run(*module)))
      return EXIT_FAILURE;
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
  if (batchOption.given()) {
    problem = rules::checkBatch(settings.batch, batch);
    if (!problem.empty())
      return fail(problem);
  }
  func::FuncOp predict = module->lookupSymbol<func::FuncOp>("predict");

  // The class count: from the loss's logits.
  int64_t classes = 0;
  step.walk([&](SoftmaxCrossEntropyOp loss) {
    classes = loss.getLogits().getType().getDimSize(1);
  });

  llvm::Expected<Dataset> train =
      openDataset(dataSpec, "train", imagesType.getShape().drop_front(),
                  classes, settings.seed, settings.syntheticSize);
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
    llvm::Expected<Dataset> opened =
        openDataset(spec, "t10k", imagesType.getShape().drop_front(), classes,
                    settings.seed + 1, settings.syntheticSize);
    if (!opened)
      return fail(llvm::toString(opened.takeError()));
    test = std::move(*opened);
  }

  llvm::Expected<ParamStore> params =
      ParamStore::initialize(*module, settings.seed);
  if (!params)
    return fail(llvm::toString(params.takeError()));
  std::vector<bool> initialized;
  if (!initFromPath.empty())
    if (llvm::Error error =
            initFrom(*module, *params, initFromPath, initialized))
      return fail(llvm::toString(std::move(error)));
  // --load sets every model parameter.
  if (loadPath.empty())
    warnAboutPlaceholders(*module, *params, initialized);
  if (!loadPath.empty()) {
    SmallVector<std::string> ignored;
    if (llvm::Error error = params->load(loadPath, ignored))
      return fail(llvm::toString(std::move(error)));
    // What was not loaded kept its initial, finite value.
    for (const std::string &name : params->names()) {
      problem =
          rules::checkFinite(loadPath, name, params->lookup(name).descriptor());
      if (!problem.empty())
        return fail(problem);
    }
  }
  HostTensor stepCounter = params->lookup("global_step");
  int64_t done = stepCounter.isNull() ? 0 : *stepCounter.dataAs<int64_t>();
  int64_t target = 0;
  problem = rules::checkStepCounter(loadPath.empty() ? "the program"
                                                     : loadPath.getValue(),
                                    "global_step", done);
  if (problem.empty())
    problem = rules::planSteps(done, settings.steps, settings.epochs,
                               stepsPerEpoch, target);
  if (!problem.empty())
    return fail(problem);
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
      fluid_shuffle(order.data(), info.count, settings.seed, epoch);
      shuffledEpoch = epoch;
    }
    ArrayRef<int64_t> indices(order.data() + within * batch, batch);
    if (llvm::Error error =
            fillBatch(train->get(), indices, *images, *labels, settings))
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
    if ((current + 1) % settings.logEvery == 0 || epochEnd ||
        current + 1 == target) {
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
            evaluate(interpreter, predict, test.get(), imagesType, settings);
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
