//===- CpuDevice.cpp - The cpu backend's memory and training steps --------===//
//
// Memory is 256-byte aligned host memory; "peak" is what the driver
// allocated (parameters, buffers, batch arguments), none of it freed before
// the end. Each step runs synchronously on the prefetcher's host slot,
// timed with steady_clock; the loss is read right after the step.
//
//===----------------------------------------------------------------------===//

#include "Checkpoint.h"
#include "Device.h"
#include "Text.h"
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

  void *allocate(int64_t bytes) override {
    allocations_.emplace_back(bytes);
    allocatedBytes_ += bytes;
    return allocations_.back().data();
  }
  void upload(void *device, const void *host, int64_t bytes) override {
    if (bytes > 0)
      std::memcpy(device, host, static_cast<size_t>(bytes));
  }
  void download(void *host, const void *device, int64_t bytes) override {
    if (bytes > 0)
      std::memcpy(host, device, static_cast<size_t>(bytes));
  }
  MemoryUse memory() override { return {allocatedBytes_, 0}; }
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
                             this};
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

  std::vector<AlignedBuffer> allocations_;
  int64_t allocatedBytes_ = 0;
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
