//===- CudaDevice.cpp - The cuda backend's memory and training steps ------===//
//
// Memory: one fluid_cuda_malloc per parameter, per buffer and per batch
// slot, zero-filled (function buffers 0xFF-filled under
// FLUID_POISON_MEMORY=1); a program's temporaries come from
// fluid_cuda_allocate on the compute stream. Peak memory is the context's
// peak allocation (both kinds) plus its cuDNN workspace, whose limit is
// the program's workspace_limit_bytes, set before anything runs.
//
// The order of work, for step s in slot k = s % 2 (host slot and device
// slot alike):
//
//   producer thread   waits for copied[k] (the copy of step s - 2 out of
//                     host slot k is done), fills host slot k (pinned)
//   main thread, issueCopy(s), done while step s - 1 is enqueued:
//     copy stream     wait slotFree[k] (step s - 2 has read device slot k)
//                     memcpy host slot k -> device slot k (images, labels)
//                     record copied[k]; the host slot goes back to the
//                     producer
//   main thread, enqueueStep(s):
//     compute stream  record stepStart[i]; wait copied[k];
//                     the step (a CUDA graph of slot k after the warm-up of
//                     max(1, --warmup) steps, captured at its first use;
//                     else the launches);
//                     memcpy loss and learning rate -> pinned ring slot i;
//                     record slotFree[k]; record stepEnd[i]
//                     then issueCopy(s + 1)
//
// Nothing waits on the host per step: the main thread blocks only on the
// producer (host slot s + 1 ready, which needs step s - 1's copy done) and
// at collect(), which waits for the last stepEnd and reads the ring (times
// from the event pairs). Only the main thread enqueues work; the producer
// only synchronizes on copied[k] after the main thread recorded it and
// handed the slot back, so no event is re-recorded while being waited on.
// Graphs are captured in cudaStreamCaptureModeThreadLocal, so the
// producer's calls on its own thread are unaffected by a capture.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Text.h"
#include "fluid/runtime/CpuMemory.h"
#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/CudaKernels.h"
#include "fluid/runtime/CudaRuntime.h"
#include "fluid/runtime/Error.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <utility>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

/// Owns a CUDA runtime handle, released with `Destroy`.
template <typename T, cudaError_t (*Destroy)(T)> class Handle {
public:
  Handle() = default;
  explicit Handle(T handle) : handle_(handle) {}
  ~Handle() { reset(); }
  Handle(Handle &&other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)) {}
  Handle &operator=(Handle &&other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  T get() const { return handle_; }
  void reset() {
    if (handle_)
      Destroy(handle_);
    handle_ = nullptr;
  }

private:
  T handle_ = nullptr;
};

using Event = Handle<cudaEvent_t, cudaEventDestroy>;
using Stream = Handle<cudaStream_t, cudaStreamDestroy>;
using Graph = Handle<cudaGraph_t, cudaGraphDestroy>;
using GraphExec = Handle<cudaGraphExec_t, cudaGraphExecDestroy>;

Event makeEvent(bool timing) {
  cudaEvent_t event = nullptr;
  FLUID_CUDA_CHECK(cudaEventCreateWithFlags(
      &event, timing ? cudaEventDefault : cudaEventDisableTiming));
  return Event(event);
}

/// Page-locked host memory, so that copies from it are asynchronous.
class PinnedBuffer {
public:
  explicit PinnedBuffer(int64_t bytes) {
    if (bytes > 0)
      FLUID_CUDA_CHECK(cudaHostAlloc(&data_, static_cast<size_t>(bytes),
                                     cudaHostAllocDefault));
  }
  ~PinnedBuffer() {
    if (data_)
      cudaFreeHost(data_);
  }
  PinnedBuffer(PinnedBuffer &&other) noexcept
      : data_(std::exchange(other.data_, nullptr)) {}
  PinnedBuffer &operator=(PinnedBuffer &&) = delete;
  void *data() const { return data_; }

private:
  void *data_ = nullptr;
};

struct ContextDeleter {
  void operator()(fluid_cuda_context *context) const {
    fluid_cuda_context_destroy(context);
  }
};

[[noreturn]] void failRuntime(const std::string &context) {
  fail(context + ": " + fluid_last_error());
}

std::string cudaReason(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " +
         cudaGetErrorString(status);
}

/// Bytes of one step's results in the pinned ring: the loss (f32 or f64),
/// then the learning rate (f64) at offset 8.
constexpr int64_t kRingEntryBytes = 16;

class CudaDevice final : public Device {
public:
  explicit CudaDevice(const CudaDeviceOptions &options)
      : program_(options.program), device_(options.device) {
    fluid_cuda_options cuda = {};
    cuda.device = options.device;
    cuda.allow_tf32 = options.tf32 ? 1 : 0;
    cuda.algorithm_cache_path = options.algorithmCachePath.empty()
                                    ? nullptr
                                    : options.algorithmCachePath.c_str();
    fluid_cuda_context *raw = nullptr;
    if (fluid_cuda_context_create(&cuda, &raw) != FLUID_OK)
      failRuntime("cannot create the CUDA context");
    context_.reset(raw);
    if (fluid_cuda_set_workspace_limit(raw, options.workspaceLimit) != FLUID_OK)
      failRuntime("cannot set the cuDNN workspace limit");
    void *stream = nullptr;
    if (fluid_cuda_context_stream(raw, &stream) != FLUID_OK)
      failRuntime("cannot get the CUDA context's stream");
    compute_ = static_cast<cudaStream_t>(stream);
    cudaStream_t copy = nullptr;
    FLUID_CUDA_CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    copyStream_ = Stream(copy);
  }

  ~CudaDevice() override {
    // The producer first (it may wait on an event), then whatever is still
    // in flight, before the memory and handles it uses go away.
    prefetcher_.reset();
    if (copyStream_.get())
      (void)cudaStreamSynchronize(copyStream_.get());
    if (compute_)
      (void)cudaStreamSynchronize(compute_);
    (void)cudaGetLastError();
  }

  const char *name() const override { return "cuda"; }
  void *backendContext() override { return context_.get(); }

  void *allocate(int64_t bytes) override {
    void *pointer = nullptr;
    if (fluid_cuda_malloc(context_.get(), bytes, &pointer) != FLUID_OK)
      failRuntime(format("cannot allocate %lld bytes of device memory",
                         static_cast<long long>(bytes)));
    if (bytes > 0 &&
        fluid_cuda_memset_zero(context_.get(), pointer, bytes) != FLUID_OK)
      failRuntime("cannot clear device memory");
    return pointer;
  }

  void *allocateBuffer(int64_t bytes) override {
    void *pointer = allocate(bytes);
    if (bytes > 0 && poisonMemory())
      FLUID_CUDA_CHECK(cudaMemsetAsync(pointer, kPoisonByte,
                                       static_cast<size_t>(bytes), compute_));
    return pointer;
  }

  void upload(void *device, const void *host, int64_t bytes) override {
    if (bytes > 0 && fluid_cuda_copy_to_device(context_.get(), device, host,
                                               bytes) != FLUID_OK)
      failRuntime("cannot copy to the device");
  }

  void download(void *host, const void *device, int64_t bytes) override {
    if (bytes > 0 && fluid_cuda_copy_to_host(context_.get(), host, device,
                                             bytes) != FLUID_OK)
      failRuntime("cannot copy from the device");
  }

  MemoryUse memory() override {
    fluid_cuda_stats stats = {};
    if (fluid_cuda_get_stats(context_.get(), &stats) != FLUID_OK)
      failRuntime("cannot read the CUDA context's statistics");
    return {stats.peak_allocated_bytes + stats.workspace_bytes,
            stats.workspace_bytes};
  }

  void checkErrors() override {
    if (fluid_cuda_check_errors(context_.get()) != FLUID_OK)
      fail(fluid_last_error());
  }

  void startTraining(const StepSetup &setup) override;
  void enqueueStep(int64_t step, bool profile) override;
  std::vector<StepRecord> collect() override {
    drain();
    return std::exchange(pending_, {});
  }
  bool usesGraph() const override { return graphUsed_; }
  std::vector<double> launchMilliseconds() const override {
    return launchTotals_;
  }

private:
  void issueCopy(int64_t step);
  bool capture(int slot);
  int64_t allocatedBytes();
  void runLaunches(int64_t step, int slot, bool profile);
  void drain();
  void sumLaunchTimes(int64_t ringIndex);
  static void onLaunch(void *user, int64_t launch, int32_t phase);
  void warn(const std::string &message) const {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: warning: %s\n", program_.c_str(),
                 message.c_str());
  }

  const std::string program_;
  const int32_t device_;
  // Declared first, destroyed last: it frees every fluid_cuda_malloc.
  std::unique_ptr<fluid_cuda_context, ContextDeleter> context_;
  cudaStream_t compute_ = nullptr; // the context's
  Stream copyStream_;

  StepSetup setup_;
  int64_t imageBytes_ = 0, labelBytes_ = 0;
  std::array<void *, BatchPrefetcher::kSlots> deviceImages_{}, deviceLabels_{};
  std::array<std::vector<void *>, BatchPrefetcher::kSlots> arguments_;
  std::array<fluid_program_memory, BatchPrefetcher::kSlots> memory_{};
  std::vector<PinnedBuffer> hostSlots_;
  std::array<Event, BatchPrefetcher::kSlots> copied_, slotFree_;
  int64_t copiedThrough_ = -1; // the last step whose copy was issued

  // One entry per step since the last drain.
  std::vector<Event> stepStart_, stepEnd_;
  std::unique_ptr<PinnedBuffer> ring_;
  int64_t ringCount_ = 0;
  std::vector<StepRecord> pending_;

  bool graphEnabled_ = false, graphUsed_ = false;
  std::array<GraphExec, BatchPrefetcher::kSlots> graphs_;
  int64_t stepsRun_ = 0;

  // Profiling: per-launch events (created at the first profiled step).
  std::vector<Event> launchStart_, launchEnd_;
  std::vector<char> launchStarted_, launchRecorded_;
  std::vector<double> launchTotals_;
  std::string profileError_;

  // Last: stopped first, before the memory it fills goes away.
  std::unique_ptr<BatchPrefetcher> prefetcher_;
};

void CudaDevice::startTraining(const StepSetup &setup) {
  setup_ = setup;
  imageBytes_ = setup.source.imageBytes();
  labelBytes_ = setup.source.labelBytes();
  std::array<HostBatch, BatchPrefetcher::kSlots> slots;
  for (int k = 0; k < BatchPrefetcher::kSlots; ++k) {
    deviceImages_[k] = allocate(imageBytes_);
    deviceLabels_[k] = allocate(labelBytes_);
    arguments_[k].assign(2, nullptr);
    arguments_[k][setup.imagesArgument] = deviceImages_[k];
    arguments_[k][setup.labelsArgument] = deviceLabels_[k];
    memory_[k] = {setup_.params.data(), setup_.buffers.data(),
                  arguments_[k].data()};
    hostSlots_.emplace_back(imageBytes_);
    slots[k].images = hostSlots_.back().data();
    hostSlots_.emplace_back(labelBytes_);
    slots[k].labels = hostSlots_.back().data();
    copied_[k] = makeEvent(false);
    slotFree_[k] = makeEvent(false);
  }
  int64_t capacity = std::max<int64_t>(setup.ringCapacity, 1);
  for (int64_t i = 0; i < capacity; ++i) {
    stepStart_.push_back(makeEvent(true));
    stepEnd_.push_back(makeEvent(true));
  }
  ring_ = std::make_unique<PinnedBuffer>(capacity * kRingEntryBytes);
  graphEnabled_ = setup.graph;
  launchTotals_.assign(setup.function->num_launches, 0.0);

  BatchPrefetcher::Hooks hooks;
  int32_t device = device_;
  hooks.threadStart = [device] { FLUID_CUDA_CHECK(cudaSetDevice(device)); };
  hooks.beforeRefill = [this](int slot) {
    FLUID_CUDA_CHECK(cudaEventSynchronize(copied_[slot].get()));
  };
  prefetcher_ =
      std::make_unique<BatchPrefetcher>(setup.source, slots, std::move(hooks));
}

void CudaDevice::issueCopy(int64_t step) {
  const HostBatch &batch = prefetcher_->acquire(step);
  int k = BatchPrefetcher::slotOf(step);
  cudaStream_t copy = copyStream_.get();
  FLUID_CUDA_CHECK(cudaStreamWaitEvent(copy, slotFree_[k].get(), 0));
  FLUID_CUDA_CHECK(cudaMemcpyAsync(deviceImages_[k], batch.images,
                                   static_cast<size_t>(imageBytes_),
                                   cudaMemcpyHostToDevice, copy));
  FLUID_CUDA_CHECK(cudaMemcpyAsync(deviceLabels_[k], batch.labels,
                                   static_cast<size_t>(labelBytes_),
                                   cudaMemcpyHostToDevice, copy));
  FLUID_CUDA_CHECK(cudaEventRecord(copied_[k].get(), copy));
  copiedThrough_ = step;
  prefetcher_->release(step);
}

void CudaDevice::enqueueStep(int64_t step, bool profile) {
  int k = BatchPrefetcher::slotOf(step);
  if (copiedThrough_ < step)
    issueCopy(step);
  if (ringCount_ == static_cast<int64_t>(stepEnd_.size()))
    drain();
  // At least one step runs as launches first: lazy allocations (the
  // kernels' error record, cuBLAS and cuDNN state) must not be captured.
  bool replay = graphEnabled_ && !profile &&
                stepsRun_ >= std::max<int64_t>(setup_.warmupSteps, 1);
  // Captured before the step's start event: the capture is host work that
  // the step's time must not include.
  if (replay && !graphs_[k].get())
    replay = capture(k);
  int64_t i = ringCount_;
  FLUID_CUDA_CHECK(cudaEventRecord(stepStart_[i].get(), compute_));
  FLUID_CUDA_CHECK(cudaStreamWaitEvent(compute_, copied_[k].get(), 0));
  if (replay) {
    FLUID_CUDA_CHECK(cudaGraphLaunch(graphs_[k].get(), compute_));
    graphUsed_ = true;
  } else {
    runLaunches(step, k, profile);
  }
  char *entry = static_cast<char *>(ring_->data()) + i * kRingEntryBytes;
  FLUID_CUDA_CHECK(cudaMemcpyAsync(
      entry, setup_.lossBuffer,
      setup_.lossDtype == FLUID_F32 ? sizeof(float) : sizeof(double),
      cudaMemcpyDeviceToHost, compute_));
  FLUID_CUDA_CHECK(cudaMemcpyAsync(entry + 8, setup_.learningRateBuffer,
                                   sizeof(double), cudaMemcpyDeviceToHost,
                                   compute_));
  FLUID_CUDA_CHECK(cudaEventRecord(slotFree_[k].get(), compute_));
  FLUID_CUDA_CHECK(cudaEventRecord(stepEnd_[i].get(), compute_));
  ++ringCount_;
  ++stepsRun_;
  if (profile)
    sumLaunchTimes(i);
  if (step + 1 < setup_.source.endStep)
    issueCopy(step + 1);
}

int64_t CudaDevice::allocatedBytes() {
  fluid_cuda_stats stats = {};
  if (fluid_cuda_get_stats(context_.get(), &stats) != FLUID_OK)
    failRuntime("cannot read the CUDA context's statistics");
  return stats.allocated_bytes;
}

bool CudaDevice::capture(int slot) {
  fluid_program_env env = {context_.get(), nullptr, nullptr,
                           setup_.communicator};
  const int64_t allocatedBefore = allocatedBytes();
  FLUID_CUDA_CHECK(
      cudaStreamBeginCapture(compute_, cudaStreamCaptureModeThreadLocal));
  std::string reason;
  if (setup_.function->run(&env, &memory_[slot]) != FLUID_OK)
    reason = fluid_last_error();
  // A graph that keeps memory it allocated cannot be launched again until
  // that memory is freed (graph memory nodes).
  const int64_t kept = allocatedBytes() - allocatedBefore;
  if (reason.empty() && kept != 0)
    reason = format("the step does not release %lld bytes it allocates",
                    static_cast<long long>(kept));
  cudaGraph_t rawGraph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(compute_, &rawGraph);
  Graph graph(rawGraph);
  if (reason.empty() && ended != cudaSuccess)
    reason = "cudaStreamEndCapture: " + cudaReason(ended);
  if (reason.empty()) {
    cudaGraphExec_t exec = nullptr;
    cudaError_t made = cudaGraphInstantiate(&exec, graph.get(), 0);
    if (made == cudaSuccess) {
      graphs_[slot] = GraphExec(exec);
      return true;
    }
    reason = "cudaGraphInstantiate: " + cudaReason(made);
  }
  (void)cudaGetLastError();
  warn("cannot capture the training step as a CUDA graph (" + reason +
       "); running it as separate launches");
  graphEnabled_ = false;
  return false;
}

void CudaDevice::runLaunches(int64_t step, int slot, bool profile) {
  int64_t launches = setup_.function->num_launches;
  if (profile && static_cast<int64_t>(launchStart_.size()) != launches) {
    for (int64_t l = 0; l < launches; ++l) {
      launchStart_.push_back(makeEvent(true));
      launchEnd_.push_back(makeEvent(true));
    }
    launchStarted_.assign(launches, 0);
    launchRecorded_.assign(launches, 0);
  }
  fluid_program_env env = {context_.get(),
                           profile ? &CudaDevice::onLaunch : nullptr, this,
                           setup_.communicator};
  if (setup_.function->run(&env, &memory_[slot]) != FLUID_OK)
    fail(format("training step %lld failed: %s", static_cast<long long>(step),
                fluid_last_error()));
  if (!profileError_.empty())
    fail(profileError_);
}

void CudaDevice::onLaunch(void *user, int64_t launch, int32_t phase) {
  // Called from the program's code: records, never throws.
  auto *self = static_cast<CudaDevice *>(user);
  if (launch < 0 || launch >= static_cast<int64_t>(self->launchStart_.size()))
    return;
  cudaEvent_t event = phase == 0 ? self->launchStart_[launch].get()
                                 : self->launchEnd_[launch].get();
  cudaError_t status = cudaEventRecord(event, self->compute_);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    if (self->profileError_.empty())
      self->profileError_ =
          "cudaEventRecord failed while profiling: " + cudaReason(status);
    return;
  }
  if (phase == 0)
    self->launchStarted_[launch] = 1;
  else if (self->launchStarted_[launch])
    self->launchRecorded_[launch] = 1;
}

void CudaDevice::sumLaunchTimes(int64_t ringIndex) {
  FLUID_CUDA_CHECK(cudaEventSynchronize(stepEnd_[ringIndex].get()));
  for (size_t l = 0; l < launchRecorded_.size(); ++l) {
    if (launchRecorded_[l]) {
      float ms = 0;
      FLUID_CUDA_CHECK(cudaEventElapsedTime(&ms, launchStart_[l].get(),
                                            launchEnd_[l].get()));
      launchTotals_[l] += ms;
    }
    launchStarted_[l] = 0;
    launchRecorded_[l] = 0;
  }
}

void CudaDevice::drain() {
  if (ringCount_ == 0)
    return;
  FLUID_CUDA_CHECK(cudaEventSynchronize(stepEnd_[ringCount_ - 1].get()));
  const char *ring = static_cast<const char *>(ring_->data());
  for (int64_t i = 0; i < ringCount_; ++i) {
    float ms = 0;
    FLUID_CUDA_CHECK(
        cudaEventElapsedTime(&ms, stepStart_[i].get(), stepEnd_[i].get()));
    const char *entry = ring + i * kRingEntryBytes;
    StepRecord record;
    if (setup_.lossDtype == FLUID_F32) {
      float loss = 0;
      std::memcpy(&loss, entry, sizeof(loss));
      record.loss = loss;
    } else {
      std::memcpy(&record.loss, entry, sizeof(double));
    }
    std::memcpy(&record.learningRate, entry + 8, sizeof(double));
    record.milliseconds = ms;
    pending_.push_back(record);
  }
  ringCount_ = 0;
}

} // namespace

std::unique_ptr<Device>
driver::createCudaDevice(const CudaDeviceOptions &options) {
  return std::make_unique<CudaDevice>(options);
}
