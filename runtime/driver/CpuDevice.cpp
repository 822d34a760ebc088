//===- CpuDevice.cpp - The cpu backend's memory and training steps --------===//
//
// Memory is 256-byte aligned host memory from fluid_cpu_allocate
// (CpuMemory.h), the allocator a program's temporaries come from too. Its
// counters are process-wide, so "peak" is the most allocated at once by
// both: the driver's memory (parameters, buffers, batch arguments, none of
// it released before the end) plus the temporaries a step holds at its
// fullest. Each step runs synchronously on the prefetcher's host slot,
// timed with steady_clock; the loss is read right after the step.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "Text.h"
#include "fluid/runtime/CpuMemory.h"
#include "fluid/runtime/Error.h"

#include <chrono>
#include <cstring>
#include <utility>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsBetween(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

double readScalar(const void *data, int32_t dtype) {
  if (dtype == FLUID_F32)
    return *static_cast<const float *>(data);
  return *static_cast<const double *>(data);
}

class CpuDevice final : public Device {
public:
  const char *name() const override { return "cpu"; }
  void *backendContext() override { return nullptr; }

  ~CpuDevice() override {
    // The producer first: it fills batch slots.
    prefetcher_.reset();
    for (void *data : allocations_)
      fluid_cpu_release(data);
  }

  void *allocate(int64_t bytes) override { return allocateFilled(bytes, 0); }
  void *allocateBuffer(int64_t bytes) override {
    return allocateFilled(bytes, poisonMemory() ? kPoisonByte : 0);
  }
  void upload(void *device, const void *host, int64_t bytes) override {
    if (bytes > 0)
      std::memcpy(device, host, static_cast<size_t>(bytes));
  }
  void download(void *host, const void *device, int64_t bytes) override {
    if (bytes > 0)
      std::memcpy(host, device, static_cast<size_t>(bytes));
  }
  MemoryUse memory() override {
    fluid_cpu_memory_stats stats = {};
    if (fluid_cpu_get_memory_stats(&stats) != FLUID_OK)
      fail(std::string("cannot read the host memory statistics: ") +
           fluid_last_error());
    return {stats.peak_allocated_bytes, 0};
  }
  void checkErrors() override {}

  void startTraining(const StepSetup &setup) override {
    setup_ = setup;
    arguments_.assign(2, nullptr);
    std::array<HostBatch, BatchPrefetcher::kSlots> slots;
    for (HostBatch &slot : slots) {
      slot.images = allocate(setup.source.imageBytes());
      slot.labels = allocate(setup.source.labelBytes());
    }
    launchTotals_.assign(setup.function->num_launches, 0.0);
    launchStarts_.assign(setup.function->num_launches, Clock::time_point());
    prefetcher_ = std::make_unique<BatchPrefetcher>(setup.source, slots,
                                                    BatchPrefetcher::Hooks());
  }

  void enqueueStep(int64_t step, bool profile) override {
    const HostBatch &batch = prefetcher_->acquire(step);
    arguments_[setup_.imagesArgument] = batch.images;
    arguments_[setup_.labelsArgument] = batch.labels;
    fluid_program_memory memory = {setup_.params.data(), setup_.buffers.data(),
                                   arguments_.data()};
    fluid_program_env env = {nullptr, profile ? &CpuDevice::onLaunch : nullptr,
                             this, setup_.communicator};
    Clock::time_point start = Clock::now();
    fluid_status status = setup_.function->run(&env, &memory);
    Clock::time_point end = Clock::now();
    if (status != FLUID_OK)
      fail(format("training step %lld failed: %s", static_cast<long long>(step),
                  fluid_last_error()));
    prefetcher_->release(step);
    pending_.push_back({readScalar(setup_.lossBuffer, setup_.lossDtype),
                        readScalar(setup_.learningRateBuffer, FLUID_F64),
                        millisecondsBetween(start, end)});
  }

  std::vector<StepRecord> collect() override {
    return std::exchange(pending_, {});
  }
  bool usesGraph() const override { return false; }
  std::vector<double> launchMilliseconds() const override {
    return launchTotals_;
  }

private:
  void *allocateFilled(int64_t bytes, int fill) {
    void *data = nullptr;
    if (fluid_cpu_allocate(bytes, &data) != FLUID_OK)
      fail(format("cannot allocate %lld bytes of host memory: %s",
                  static_cast<long long>(bytes), fluid_last_error()));
    if (!data)
      return nullptr;
    try {
      allocations_.push_back(data);
    } catch (...) {
      fluid_cpu_release(data);
      throw;
    }
    std::memset(data, fill, static_cast<size_t>(bytes));
    return data;
  }

  static void onLaunch(void *user, int64_t launch, int32_t phase) {
    auto *self = static_cast<CpuDevice *>(user);
    if (launch < 0 ||
        launch >= static_cast<int64_t>(self->launchTotals_.size()))
      return;
    Clock::time_point now = Clock::now();
    if (phase == 0)
      self->launchStarts_[launch] = now;
    else
      self->launchTotals_[launch] +=
          millisecondsBetween(self->launchStarts_[launch], now);
  }

  std::vector<void *> allocations_; // from fluid_cpu_allocate
  StepSetup setup_;
  std::vector<void *> arguments_;
  std::vector<StepRecord> pending_;
  std::vector<double> launchTotals_;
  std::vector<Clock::time_point> launchStarts_;
  // Last: stopped before the memory it fills goes away.
  std::unique_ptr<BatchPrefetcher> prefetcher_;
};

} // namespace

std::unique_ptr<Device> driver::createCpuDevice() {
  return std::make_unique<CpuDevice>();
}
