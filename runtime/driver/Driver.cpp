//===- Driver.cpp - fluid_driver_main: the training executable ------------===//
//
// What an emitted program's main() runs: parses the command line (see
// Options.cpp), checks the program (ProgramView), opens the data, creates
// the backend's device, initializes or loads the parameters, and trains:
//
//   <prog>: <backend> backend, <count> examples, batch <B>, <S> steps per
//       epoch; steps <D> to <T>
//   step <n>  epoch <e>  loss <mean of the window>  lr <rate>  <n> images/s
//       peak <MiB> MiB                           (every --log-every steps,
//                                                 at epoch ends, at the end)
//   epoch <e>  test accuracy <pct>%              (after each epoch)
//   summary: <n> timed steps  images/s median ... peak memory <MiB> MiB
//
// (and, with --skip-bad-images, a warning on stderr before a log line or a
// test accuracy whenever more undecodable images were skipped). The
// position in the data, and the random crops of image files, follow from
// the program's step counter, so a run resumed with --load continues
// exactly where the saved one stopped, as with fluid-train, whose runs a
// cpu program reproduces loss for loss.
// Command-line mistakes exit with 2, every other error with 1, each as
// "<prog>: error: <message>" on stderr.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "Device.h"
#include "InitFrom.h"
#include "Options.h"
#include "Profile.h"
#include "ProgramView.h"
#include "Text.h"
#include "TrainingRules.h"
#include "fluid/runtime/Data.h"
#include "fluid/runtime/Error.h"
#include "fluid/runtime/Program.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

using Clock = std::chrono::steady_clock;

const char *const kFashionMnist = "/usr/share/datasets/fashion-mnist/";

/// Steps whose results the cuda device keeps on the device between two
/// collections; a longer --log-every collects in several rounds.
constexpr int64_t kMaxStepsPerCollect = 1024;

struct DatasetDeleter {
  void operator()(fluid_dataset *d) const { fluid_dataset_free(d); }
};
using Dataset = std::unique_ptr<fluid_dataset, DatasetDeleter>;

struct DatasetInfo {
  int64_t count = 0, shape[3] = {0, 0, 0}, classes = 0;
};

std::string imageShapeText(const int64_t shape[3]) {
  return format("%lldx%lldx%lld", static_cast<long long>(shape[0]),
                static_cast<long long>(shape[1]),
                static_cast<long long>(shape[2]));
}

/// Creates the folders of `path` (mkdir -p of its parent).
bool createParentFolders(const std::string &path) {
  for (size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    std::string folder = path.substr(0, slash);
    if (mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

/// Whether the items of `spec` are image files, decoded as they are read.
bool decodesFiles(const std::string &spec) {
  DataKind kind = dataKind(spec);
  return kind == DataKind::ImageFolder || kind == DataKind::ImageList;
}

/// The index of the program's rank-0 parameter `name` of `dtype`, or -1.
int64_t findScalarParam(const ProgramView &program, const char *name,
                        int32_t dtype) {
  for (int64_t i = 0; i < program.numParams(); ++i) {
    const fluid_program_value &value = program.param(i).value;
    if (value.name && std::strcmp(value.name, name) == 0 &&
        value.dtype == dtype && value.rank == 0)
      return i;
  }
  return -1;
}

class TrainingRun {
public:
  TrainingRun(std::string name, const Options &options,
              const ProgramView &program, fluid_communicator *communicator)
      : name_(std::move(name)), options_(options), program_(program),
        host_(program), communicator_(communicator),
        rank_(communicator ? communicator->rank : 0),
        ranks_(communicator ? communicator->size : 1) {
    if (!options_.tf32Given)
      options_.tf32 = program.info().tf32 != 0;
    lossScaleParam_ = findScalarParam(program, "loss_scale", FLUID_F32);
    skippedStepsParam_ =
        findScalarParam(program, "loss_scale.skipped_steps", FLUID_I64);
  }

  void run();

private:
  void checkFlagsAgainstProgram() const;
  Dataset openDataset(const std::string &spec, const char *split, uint64_t seed,
                      int32_t transform, const char *role) const;
  void fillEvalBatch(const int64_t *indices, fluid_tensor &images,
                     fluid_tensor &labels, const std::array<int32_t, 4> &order);
  void reportBadImages(const fluid_dataset *dataset, int64_t &reported,
                       const char *role);
  void openData();
  void createDevice();
  void prepareParameters();
  void warnAboutPlaceholders(const std::vector<bool> &loaded);
  void prepareTrainStep();
  void train();
  void logWindow(int64_t current, int64_t epoch);
  double evaluate();
  void save();
  void profile();
  void summarize();
  void warn(const std::string &message) const;

  const std::string name_;
  Options options_; // a copy: the program's TF32 default fills it in
  const ProgramView &program_;
  HostParameters host_;
  // A data-parallel run's ranks (null: one process); rank 0 logs, tests
  // and saves.
  fluid_communicator *communicator_;
  const int32_t rank_, ranks_;

  Dataset train_, test_;
  DatasetInfo trainInfo_;
  int64_t stepsPerEpoch_ = 0;
  std::vector<double> mean_, std_; // one per channel
  // Bad images of each dataset already reported (--skip-bad-images).
  int64_t trainBadReported_ = 0, testBadReported_ = 0;

  std::unique_ptr<Device> device_;
  std::vector<void *> params_, trainBuffers_;
  int64_t done_ = 0, target_ = 0;
  int64_t paramBytes_ = 0, trainBufferBytes_ = 0;

  // The current log window.
  double lossSum_ = 0;
  int64_t lossCount_ = 0;
  Clock::time_point windowStart_;
  std::vector<double> stepMs_; // every training step of this run

  // Evaluation, set up at its first use.
  std::vector<void *> predictBuffers_, predictArguments_;
  AlignedBuffer evalImages_, evalLabels_, evalLogits_;
  std::unique_ptr<WorkerPool> evalPool_;

  std::vector<OpClassTime> profile_;

  // Dynamic loss scaling's state (-1: the program has none), read at log
  // points.
  int64_t lossScaleParam_ = -1, skippedStepsParam_ = -1;
};

void TrainingRun::warn(const std::string &message) const {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: warning: %s\n", name_.c_str(), message.c_str());
}

void TrainingRun::checkFlagsAgainstProgram() const {
  if (options_.batch) {
    std::string problem = checkBatch(*options_.batch, program_.batch());
    if (!problem.empty())
      throw UsageError(problem);
  }
  if (options_.learningRate && program_.info().learning_rate_param < 0)
    throw UsageError("--lr: the program bakes its learning rate in; rebuild "
                     "it with fluid-compile to choose the rate at run time");
}

Dataset TrainingRun::openDataset(const std::string &spec, const char *split,
                                 uint64_t seed, int32_t transform,
                                 const char *role) const {
  const int64_t *shape = program_.imageShape();
  fluid_dataset *raw = nullptr;
  fluid_status status;
  DataKind kind = dataKind(spec);
  size_t comma = spec.find(',');
  if (kind == DataKind::Synthetic) {
    status = fluid_dataset_synthetic(options_.syntheticSize, shape[0], shape[1],
                                     shape[2], program_.classes(), seed, &raw);
  } else if (kind == DataKind::FashionMnist) {
    std::string images =
        std::string(kFashionMnist) + split + "-images-idx3-ubyte.gz";
    std::string labels =
        std::string(kFashionMnist) + split + "-labels-idx1-ubyte.gz";
    status = fluid_dataset_open_idx(images.c_str(), labels.c_str(), &raw);
  } else if (kind == DataKind::ImageFolder || kind == DataKind::ImageList) {
    fluid_image_options image = {};
    image.height = shape[1];
    image.width = shape[2];
    image.transform = transform;
    image.skip_bad_images = options_.skipBadImages ? 1 : 0;
    image.seed = options_.seed;
    status = fluid_dataset_open_images(spec.c_str(), &image, &raw);
  } else if (kind == DataKind::NpyFiles) {
    status = fluid_dataset_open_npy(spec.substr(0, comma).c_str(),
                                    spec.substr(comma + 1).c_str(), &raw);
  } else {
    status = fluid_dataset_open_idx(spec.substr(0, comma).c_str(),
                                    spec.substr(comma + 1).c_str(), &raw);
  }
  if (status != FLUID_OK)
    fail(std::string("cannot open the ") + role +
         " data: " + fluid_last_error());
  Dataset dataset(raw);

  DatasetInfo info;
  fluid_dataset_info(dataset.get(), &info.count, info.shape, &info.classes);
  if (!std::equal(info.shape, info.shape + 3, shape))
    fail(std::string("the ") + role + " images are " +
         imageShapeText(info.shape) + " but the program takes " +
         imageShapeText(shape));
  if (info.classes > program_.classes() && kind == DataKind::ImageFolder)
    fail(format("the %s data has %lld classes (class folders in %s) but the "
                "program has %lld",
                role, static_cast<long long>(info.classes), spec.c_str(),
                static_cast<long long>(program_.classes())));
  if (info.classes > program_.classes())
    fail(format("the %s data has labels up to %lld but the program has %lld "
                "classes",
                role, static_cast<long long>(info.classes - 1),
                static_cast<long long>(program_.classes())));
  return dataset;
}

void TrainingRun::openData() {
  options_.normalization(program_.imageShape()[0], mean_, std_);
  train_ = openDataset(options_.data, "train", options_.seed, FLUID_IMAGE_TRAIN,
                       "training");
  fluid_dataset_info(train_.get(), &trainInfo_.count, trainInfo_.shape,
                     &trainInfo_.classes);
  // Every rank takes its share of each global batch of batch x ranks.
  stepsPerEpoch_ = trainInfo_.count / (program_.batch() * ranks_);
  if (stepsPerEpoch_ < 1)
    fail(format("the training data has %lld examples, fewer than one batch "
                "of %lld",
                static_cast<long long>(trainInfo_.count),
                static_cast<long long>(program_.batch() * ranks_)) +
         (ranks_ > 1 ? format(" (%lld a rank, %d ranks)",
                              static_cast<long long>(program_.batch()), ranks_)
                     : std::string()));
  std::string testSpec = options_.effectiveTestData();
  if (program_.predict() && testSpec != "none")
    test_ = openDataset(testSpec, "t10k", options_.seed + 1, FLUID_IMAGE_EVAL,
                        "test");
}

void TrainingRun::createDevice() {
  if (!program_.isCuda()) {
    device_ = createCpuDevice();
    return;
  }
  CudaDeviceOptions cuda;
  cuda.program = name_;
  // Each rank of a host takes the next GPU from --device on.
  int32_t localRank = communicator_ ? communicator_->local_rank : 0;
  if (__builtin_add_overflow(options_.device, localRank, &cuda.device))
    throw UsageError("--device plus the local rank overflows");
  cuda.tf32 = options_.tf32;
  cuda.workspaceLimit = program_.info().workspace_limit_bytes;
  if (options_.algorithmCache == "none") {
    cuda.algorithmCachePath = "";
  } else if (!options_.algorithmCache.empty()) {
    cuda.algorithmCachePath = options_.algorithmCache;
  } else {
    cuda.algorithmCachePath = defaultAlgorithmCachePath();
    if (!cuda.algorithmCachePath.empty() &&
        !createParentFolders(cuda.algorithmCachePath)) {
      warn("cannot create the folder of " + cuda.algorithmCachePath + " (" +
           std::strerror(errno) +
           "); convolution algorithms are searched anew in every run");
      cuda.algorithmCachePath = "";
    }
  }
  device_ = createCudaDevice(cuda);
  if (ranks_ > 1) {
    if (!communicator_->init_device)
      fail("the program averages gradients on the GPU, but libfluid_mpi was "
           "built without NCCL");
    if (communicator_->init_device(communicator_, cuda.device) != FLUID_OK)
      fail(std::string("cannot set up NCCL: ") + fluid_last_error());
  }
}

void TrainingRun::prepareParameters() {
  const fluid_program_info &info = program_.info();
  host_.initialize(options_.seed);
  std::vector<bool> loaded(static_cast<size_t>(program_.numParams()), false);
  if (!options_.initFromPath.empty()) {
    InitFromResult result = host_.initFrom(options_.initFromPath);
    loaded = result.loaded;
    std::printf("%s: %s\n", name_.c_str(),
                initFromSummary(options_.initFromPath, result).c_str());
    std::fflush(stdout);
  }
  if (!options_.loadPath.empty()) {
    std::vector<std::string> unused = host_.load(options_.loadPath);
    if (!unused.empty()) {
      std::string list;
      for (size_t i = 0; i < unused.size() && i < 8; ++i)
        list += (i ? ", " : "") + unused[i];
      if (unused.size() > 8)
        list += format(" and %zu more", unused.size() - 8);
      warn(options_.loadPath +
           " has tensors the program does not use: " + list);
    }
  }
  // --load sets every model parameter; otherwise an imported program's
  // placeholders are only replaced by --init-from.
  if (info.params_file && options_.loadPath.empty())
    warnAboutPlaceholders(loaded);
  if (options_.learningRate)
    *static_cast<double *>(host_.data(info.learning_rate_param)) =
        *options_.learningRate;
  if (info.step_param >= 0) {
    done_ = *static_cast<const int64_t *>(host_.data(info.step_param));
    std::string problem = checkStepCounter(
        options_.loadPath.empty() ? "the program" : options_.loadPath,
        program_.param(info.step_param).value.name, done_);
    if (!problem.empty())
      fail(problem);
  }
  for (int64_t i = 0; i < program_.numParams(); ++i) {
    int64_t bytes = host_.bytes(i);
    params_.push_back(device_->allocate(bytes));
    device_->upload(params_.back(), host_.data(i), bytes);
    paramBytes_ += bytes;
  }
}

void TrainingRun::warnAboutPlaceholders(const std::vector<bool> &loaded) {
  int64_t trainable = 0, placeholders = 0;
  for (int64_t i = 0; i < program_.numParams(); ++i) {
    const fluid_program_param &param = program_.param(i);
    if (!param.trainable || param.optimizer_state)
      continue;
    ++trainable;
    placeholders += param.init.kind == FLUID_INIT_ZEROS && !loaded[i];
  }
  if (placeholders > 0)
    warn(placeholderWarning(placeholders, trainable,
                            program_.info().params_file, "--init-from"));
}

void TrainingRun::prepareTrainStep() {
  const fluid_program_function &train = program_.train();
  for (int64_t i = 0; i < train.num_buffers; ++i) {
    trainBuffers_.push_back(device_->allocateBuffer(train.buffer_bytes[i]));
    trainBufferBytes_ += train.buffer_bytes[i];
  }
  if (train.initialize) {
    // Constants live in buffers: the arguments are not read.
    void *arguments[2] = {nullptr, nullptr};
    fluid_program_memory memory = {params_.data(), trainBuffers_.data(),
                                   arguments};
    fluid_program_env env = {device_->backendContext(), nullptr, nullptr,
                             communicator_};
    if (train.initialize(&env, &memory) != FLUID_OK)
      fail(std::string("cannot initialize the training function: ") +
           fluid_last_error());
  }

  const TrainSignature &signature = program_.trainSignature();
  StepSetup setup;
  setup.function = &train;
  setup.params = params_;
  setup.buffers = trainBuffers_;
  setup.imagesArgument = signature.imagesArgument;
  setup.labelsArgument = signature.labelsArgument;
  setup.lossBuffer = trainBuffers_[signature.lossBuffer];
  setup.lossDtype = signature.lossDtype;
  setup.learningRateBuffer = trainBuffers_[signature.learningRateBuffer];
  BatchSource &source = setup.source;
  source.dataset = train_.get();
  source.count = trainInfo_.count;
  source.batch = program_.batch();
  std::copy_n(program_.imageShape(), 3, source.imageShape);
  source.imageOrder = signature.imagesOrder;
  source.stepsPerEpoch = stepsPerEpoch_;
  source.rank = rank_;
  source.ranks = ranks_;
  source.seed = options_.seed;
  source.mean = mean_;
  source.std = std_;
  source.threads = options_.prefetchThreads;
  source.decodesFiles = decodesFiles(options_.data);
  source.firstStep = done_;
  source.endStep = target_ + options_.profileSteps;
  setup.warmupSteps = options_.warmup;
  setup.graph = options_.graph;
  setup.communicator = communicator_;
  setup.ringCapacity = std::min(options_.logEvery, kMaxStepsPerCollect);
  device_->startTraining(setup);
}

void TrainingRun::run() {
  checkFlagsAgainstProgram();
  openData();
  createDevice();
  prepareParameters();

  std::string problem = planSteps(done_, options_.steps, options_.epochs,
                                  stepsPerEpoch_, target_);
  if (!problem.empty())
    throw UsageError(problem);
  int64_t end = 0;
  if (__builtin_add_overflow(target_, options_.profileSteps, &end))
    throw UsageError(format("--profile %lld after step %lld ends past step "
                            "2^63 - 1",
                            static_cast<long long>(options_.profileSteps),
                            static_cast<long long>(target_)));

  std::printf("%s: %s backend, %lld examples, batch %lld, %lld steps per "
              "epoch; steps %lld to %lld\n",
              name_.c_str(), program_.backendName(),
              static_cast<long long>(trainInfo_.count),
              static_cast<long long>(program_.batch()),
              static_cast<long long>(stepsPerEpoch_),
              static_cast<long long>(done_), static_cast<long long>(target_));
  if (ranks_ > 1)
    std::printf("%s: data parallel over %d ranks: batch %lld a rank, %lld a "
                "step\n",
                name_.c_str(), ranks_, static_cast<long long>(program_.batch()),
                static_cast<long long>(program_.batch() * ranks_));
  std::fflush(stdout);

  prepareTrainStep();
  train();
  if (options_.profileSteps > 0)
    profile();
  summarize();
}

void TrainingRun::train() {
  windowStart_ = Clock::now();
  for (int64_t current = done_; current < target_; ++current) {
    int64_t epoch = current / stepsPerEpoch_;
    bool epochEnd = (current % stepsPerEpoch_) + 1 == stepsPerEpoch_;
    bool last = current + 1 == target_;
    device_->enqueueStep(current, false);
    if ((current + 1) % options_.logEvery == 0 || epochEnd || last)
      logWindow(current, epoch);
    if (epochEnd || last) {
      if (test_ && epochEnd && rank_ == 0) {
        double accuracy = evaluate();
        std::printf("epoch %lld  test accuracy %.2f%%\n",
                    static_cast<long long>(epoch), accuracy);
        std::fflush(stdout);
      }
      if (!options_.savePath.empty() && rank_ == 0)
        save();
      windowStart_ = Clock::now();
    }
  }
}

void TrainingRun::logWindow(int64_t current, int64_t epoch) {
  std::vector<StepRecord> records = device_->collect();
  device_->checkErrors();
  int64_t first = current + 1 - static_cast<int64_t>(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    double loss = records[i].loss;
    if (!std::isfinite(loss))
      fail("the loss is " + std::to_string(loss) + " at step " +
           std::to_string(first + static_cast<int64_t>(i)) +
           "; lower the learning rate");
    lossSum_ += loss;
    ++lossCount_;
    stepMs_.push_back(records[i].milliseconds);
  }
  if (lossCount_ == 0)
    return;
  if (ranks_ > 1) {
    // The window's loss over every rank's share (all ranks log at the
    // same steps).
    if (communicator_->all_reduce_sum_host(communicator_, &lossSum_, 1,
                                           FLUID_F64) != FLUID_OK)
      fail(std::string("cannot average the loss over the ranks: ") +
           fluid_last_error());
    lossSum_ /= ranks_;
  }
  double seconds =
      std::chrono::duration<double>(Clock::now() - windowStart_).count();
  std::string scaling;
  if (lossScaleParam_ >= 0 && skippedStepsParam_ >= 0) {
    // Two scalars, at log points only: the steps never wait for them.
    float scale = 0;
    int64_t skipped = 0;
    device_->download(&scale, params_[lossScaleParam_], sizeof(scale));
    device_->download(&skipped, params_[skippedStepsParam_], sizeof(skipped));
    scaling =
        format("  loss scale %g  skipped %lld", static_cast<double>(scale),
               static_cast<long long>(skipped));
  }
  reportBadImages(train_.get(), trainBadReported_, "training");
  std::printf(
      "step %lld  epoch %lld  loss %.4f  lr %.5g  %.0f images/s  "
      "peak %.1f MiB%s\n",
      static_cast<long long>(current + 1), static_cast<long long>(epoch),
      lossSum_ / static_cast<double>(lossCount_), records.back().learningRate,
      static_cast<double>(lossCount_ * program_.batch() * ranks_) /
          std::max(seconds, 1e-9),
      mebibytes(device_->memory().peakBytes), scaling.c_str());
  std::fflush(stdout);
  lossSum_ = 0;
  lossCount_ = 0;
  windowStart_ = Clock::now();
}

double TrainingRun::evaluate() {
  const fluid_program_function &predict = *program_.predict();
  const PredictSignature &signature = program_.predictSignature();
  const int64_t *shape = program_.imageShape();
  int64_t batch = signature.batch;
  int64_t imageBytes = batch * shape[0] * shape[1] * shape[2] *
                       static_cast<int64_t>(sizeof(float));
  int64_t logitsBytes =
      batch * program_.classes() *
      (signature.logitsDtype == FLUID_F32 ? sizeof(float) : sizeof(double));
  if (predictArguments_.empty()) {
    for (int64_t i = 0; i < predict.num_buffers; ++i)
      predictBuffers_.push_back(
          device_->allocateBuffer(predict.buffer_bytes[i]));
    predictArguments_.assign(1, device_->allocate(imageBytes));
    evalImages_ = AlignedBuffer(imageBytes);
    evalLabels_ = AlignedBuffer(batch * static_cast<int64_t>(sizeof(int64_t)));
    evalLogits_ = AlignedBuffer(logitsBytes);
    if (predict.initialize) {
      fluid_program_memory memory = {params_.data(), predictBuffers_.data(),
                                     predictArguments_.data()};
      fluid_program_env env = {device_->backendContext(), nullptr, nullptr,
                               communicator_};
      if (predict.initialize(&env, &memory) != FLUID_OK)
        fail(std::string("cannot initialize the predict function: ") +
             fluid_last_error());
    }
  }
  fluid_program_memory memory = {params_.data(), predictBuffers_.data(),
                                 predictArguments_.data()};
  fluid_program_env env = {device_->backendContext(), nullptr, nullptr,
                           communicator_};
  const void *logits = predictBuffers_[signature.logitsBuffer];

  // In the layout the predict function reads.
  const int64_t dims[4] = {batch, shape[0], shape[1], shape[2]};
  fluid_tensor images = {};
  images.data = evalImages_.data();
  images.dtype = FLUID_F32;
  images.rank = 4;
  for (int d = 0; d < 4; ++d)
    images.shape[d] = dims[signature.imagesOrder[d]];
  fluid_tensor labels = {};
  labels.data = evalLabels_.data();
  labels.dtype = FLUID_I64;
  labels.rank = 1;
  labels.shape[0] = batch;

  int64_t count = 0;
  fluid_dataset_info(test_.get(), &count, nullptr, nullptr);
  int64_t classes = program_.classes();
  int64_t correct = 0;
  std::vector<int64_t> indices(batch);
  for (int64_t start = 0; start < count; start += batch) {
    // The last batch is completed with repeats, which are not counted.
    int64_t real = std::min(batch, count - start);
    for (int64_t i = 0; i < batch; ++i)
      indices[i] = start + std::min(i, real - 1);
    fillEvalBatch(indices.data(), images, labels, signature.imagesOrder);
    device_->upload(predictArguments_[signature.imagesArgument],
                    evalImages_.data(), imageBytes);
    if (predict.run(&env, &memory) != FLUID_OK)
      fail(std::string("the predict function failed: ") + fluid_last_error());
    device_->download(evalLogits_.data(), logits, logitsBytes);
    const int64_t *label = static_cast<const int64_t *>(evalLabels_.data());
    for (int64_t i = 0; i < real; ++i) {
      int64_t best = 0;
      double bestValue = -HUGE_VAL;
      for (int64_t c = 0; c < classes; ++c) {
        double v = signature.logitsDtype == FLUID_F64
                       ? static_cast<const double *>(
                             evalLogits_.data())[i * classes + c]
                       : static_cast<const float *>(
                             evalLogits_.data())[i * classes + c];
        if (v > bestValue) {
          bestValue = v;
          best = c;
        }
      }
      correct += best == label[i];
    }
  }
  device_->checkErrors();
  reportBadImages(test_.get(), testBadReported_, "test");
  return 100.0 * static_cast<double>(correct) / static_cast<double>(count);
}

void TrainingRun::fillEvalBatch(const int64_t *indices, fluid_tensor &images,
                                fluid_tensor &labels,
                                const std::array<int32_t, 4> &order) {
  if (!evalPool_)
    evalPool_ = std::make_unique<WorkerPool>(options_.prefetchThreads);
  BatchSource source;
  source.dataset = test_.get();
  source.batch = images.shape[0];
  source.imageOrder = order;
  source.mean = mean_;
  source.std = std_;
  source.decodesFiles = decodesFiles(options_.effectiveTestData());
  const int64_t *shape = program_.imageShape();
  std::copy_n(shape, 3, source.imageShape);
  try {
    fillBatch(*evalPool_, source, 0, indices, images.data, labels.data);
  } catch (const Error &e) {
    fail(std::string("cannot prepare a test batch: ") + e.what());
  }
}

void TrainingRun::reportBadImages(const fluid_dataset *dataset,
                                  int64_t &reported, const char *role) {
  int64_t count = 0;
  char latest[512];
  if (!dataset ||
      fluid_dataset_bad_images(dataset, &count, latest, sizeof latest) !=
          FLUID_OK ||
      count == reported)
    return;
  reported = count;
  warn(format("skipped %lld unreadable image%s of the %s data so far "
              "(--skip-bad-images); the latest: %s",
              static_cast<long long>(count), count == 1 ? "" : "s", role,
              latest));
}

void TrainingRun::save() {
  for (int64_t i = 0; i < program_.numParams(); ++i)
    device_->download(host_.data(i), params_[i], host_.bytes(i));
  host_.save(options_.savePath);
}

void TrainingRun::profile() {
  int64_t first = target_, end = target_ + options_.profileSteps;
  for (int64_t step = first; step < end; ++step)
    device_->enqueueStep(step, true);
  device_->collect();
  device_->checkErrors();
  profile_ = profileByClass(program_.train(), device_->launchMilliseconds(),
                            options_.profileSteps);
  printProfile(stdout, profile_, options_.profileSteps);
  std::fflush(stdout);
}

void TrainingRun::summarize() {
  // The warm-up steps are left out, unless nothing else ran.
  size_t skip = stepMs_.size() > static_cast<size_t>(options_.warmup)
                    ? static_cast<size_t>(options_.warmup)
                    : 0;
  std::vector<double> ms(stepMs_.begin() + static_cast<ptrdiff_t>(skip),
                         stepMs_.end());
  std::vector<double> imagesPerSecond;
  for (double m : ms)
    imagesPerSecond.push_back(static_cast<double>(program_.batch() * ranks_) *
                              1000.0 / std::max(m, 1e-9));
  RunStats stats;
  stats.program = program_.info().source ? program_.info().source : "";
  stats.backend = program_.backendName();
  stats.batch = program_.batch();
  stats.timedSteps = static_cast<int64_t>(ms.size());
  stats.imagesPerSecond = spreadOf(imagesPerSecond);
  stats.stepMs = spreadOf(ms);
  MemoryUse memory = device_->memory();
  stats.peakMemoryBytes = memory.peakBytes;
  stats.paramBytes = paramBytes_;
  stats.bufferBytes = trainBufferBytes_;
  stats.workspaceBytes = memory.workspaceBytes;
  stats.graph = device_->usesGraph();
  stats.tf32 = program_.isCuda() && options_.tf32;
  stats.profile = profile_;
  std::printf("summary: %lld timed steps  images/s median %.1f (min %.1f, max "
              "%.1f)  step ms median %.3f  peak memory %.1f MiB\n",
              static_cast<long long>(stats.timedSteps),
              stats.imagesPerSecond.median, stats.imagesPerSecond.min,
              stats.imagesPerSecond.max, stats.stepMs.median,
              mebibytes(stats.peakMemoryBytes));
  std::fflush(stdout);
  if (!options_.statsJson.empty() && rank_ == 0)
    writeStatsJson(options_.statsJson, stats);
}

std::string programName(int argc, char **argv) {
  if (argc < 1 || !argv || !argv[0] || !argv[0][0])
    return "fluid-program";
  const char *slash = std::strrchr(argv[0], '/');
  return slash ? slash + 1 : argv[0];
}

int report(const std::string &name, const char *message, int code) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", name.c_str(), message);
  return code;
}

/// The ranks an MPI launcher (mpirun, srun) started, from its environment;
/// 1 when none did.
int64_t launchedRanks() {
  for (const char *variable :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"}) {
    const char *value = std::getenv(variable);
    if (value && std::atoll(value) > 1)
      return std::atoll(value);
  }
  return 1;
}

int runMain(int argc, char **argv, const fluid_program_info *program,
            fluid_communicator *communicator) {
  std::string name = programName(argc, argv);
  Options options;
  try {
    options = parseOptions(argc, argv);
  } catch (const UsageError &e) {
    return report(name, e.what(), 2);
  } catch (const std::exception &e) {
    return report(name, e.what(), 1);
  }
  if (options.help) {
    if (!communicator || communicator->rank == 0)
      std::fputs(usageText(name).c_str(), stdout);
    return 0;
  }
  if (communicator && communicator->size > 1)
    name += format("[%d]", communicator->rank);
  try {
    ProgramView view(program);
    if (options.info) {
      if (!communicator || communicator->rank == 0)
        view.print(stdout);
      return 0;
    }
    if (!communicator && view.info().data_parallel)
      fail("the program was compiled with --data-parallel but its main is "
           "not fluid_mpi_driver_main");
    if (!communicator && launchedRanks() > 1)
      fail(format("started as one of %lld ranks (mpirun or srun), but the "
                  "program was compiled without --data-parallel: each rank "
                  "would train alone; rebuild it with fluid-compile "
                  "--data-parallel",
                  static_cast<long long>(launchedRanks())));
    TrainingRun(name, options, view, communicator).run();
    return 0;
  } catch (const UsageError &e) {
    return report(name, e.what(), 2);
  } catch (const std::bad_alloc &) {
    return report(name, "out of host memory", 1);
  } catch (const std::exception &e) {
    return report(name, e.what(), 1);
  } catch (...) {
    return report(name, "unknown error", 1);
  }
}

} // namespace

extern "C" int fluid_driver_main(int argc, char **argv,
                                 const fluid_program_info *program) {
  return runMain(argc, argv, program, nullptr);
}

extern "C" int fluid_driver_main_ranked(int argc, char **argv,
                                        const fluid_program_info *program,
                                        fluid_communicator *communicator) {
  // Rank 0 logs; the others' errors and warnings still reach stderr.
  if (communicator && communicator->rank != 0 &&
      !std::freopen("/dev/null", "w", stdout))
    return report(programName(argc, argv), "cannot silence stdout", 1);
  int code = runMain(argc, argv, program, communicator);
  // A rank that failed ends the others, which would wait for it forever
  // in their next all-reduce.
  if (code != 0 && communicator && communicator->size > 1 &&
      communicator->abort) {
    std::fflush(stdout);
    std::fflush(stderr);
    communicator->abort(communicator, code);
  }
  return code;
}
