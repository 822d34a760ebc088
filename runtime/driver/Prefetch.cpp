//===- Prefetch.cpp - Training batches prepared ahead on host threads -----===//

#include "Prefetch.h"

#include "Text.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <utility>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

/// Pixels below which splitting a batch further costs more than it saves.
constexpr int64_t kPixelsPerTask = int64_t(1) << 16;

} // namespace

//===----------------------------------------------------------------------===//
// WorkerPool
//===----------------------------------------------------------------------===//

WorkerPool::WorkerPool(int64_t threads) {
  for (int64_t i = 1; i < threads; ++i)
    workers_.emplace_back([this] { work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &worker : workers_)
    worker.join();
}

void WorkerPool::run(int64_t n, const std::function<void(int64_t)> &task) {
  if (n <= 0)
    return;
  if (workers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i)
      task(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    tasks_ = n;
    next_ = 0;
    finished_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  runTasks();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return finished_ == tasks_; });
  task_ = nullptr;
  if (std::exception_ptr error = std::exchange(error_, nullptr))
    std::rethrow_exception(error);
}

void WorkerPool::runTasks() {
  for (;;) {
    const std::function<void(int64_t)> *task = nullptr;
    int64_t index = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!task_ || next_ >= tasks_)
        return;
      task = task_;
      index = next_++;
    }
    std::exception_ptr error;
    try {
      (*task)(index);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !error_)
      error_ = error;
    if (++finished_ == tasks_)
      done_.notify_all();
  }
}

void WorkerPool::work() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_)
        return;
      seen = generation_;
    }
    runTasks();
  }
}

//===----------------------------------------------------------------------===//
// BatchPrefetcher
//===----------------------------------------------------------------------===//

BatchPrefetcher::BatchPrefetcher(const BatchSource &source,
                                 const std::array<HostBatch, kSlots> &slots,
                                 Hooks hooks)
    : source_(source), hooks_(std::move(hooks)),
      order_(static_cast<size_t>(source.count)),
      pool_(std::make_unique<WorkerPool>(source.threads)) {
  for (int k = 0; k < kSlots; ++k)
    slots_[k].batch = slots[k];
  producer_ = std::thread([this] { produce(); });
}

BatchPrefetcher::~BatchPrefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  producer_.join();
}

const HostBatch &BatchPrefetcher::acquire(int64_t step) {
  if (step < source_.firstStep || step >= source_.endStep)
    fail(format("no batch was planned for step %lld",
                static_cast<long long>(step)));
  Slot &slot = slots_[slotOf(step)];
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock,
                [&] { return error_ || (slot.ready && slot.step == step); });
  if (slot.ready && slot.step == step)
    return slot.batch;
  std::rethrow_exception(error_);
}

void BatchPrefetcher::release(int64_t step) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot &slot = slots_[slotOf(step)];
    slot.ready = false;
    slot.step = -1;
    slot.free = true;
  }
  changed_.notify_all();
}

void BatchPrefetcher::produce() {
  try {
    if (hooks_.threadStart)
      hooks_.threadStart();
    for (int64_t step = source_.firstStep; step < source_.endStep; ++step) {
      int index = slotOf(step);
      Slot &slot = slots_[index];
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stopping_ || slot.free; });
        if (stopping_)
          return;
        slot.free = false;
      }
      if (hooks_.beforeRefill)
        hooks_.beforeRefill(index);
      fill(step, slot.batch);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        slot.step = step;
        slot.ready = true;
      }
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::current_exception();
    changed_.notify_all();
  }
}

void BatchPrefetcher::fill(int64_t step, const HostBatch &batch) {
  const BatchSource &s = source_;
  int64_t epoch = step / s.stepsPerEpoch, within = step % s.stepsPerEpoch;
  if (epoch != shuffledEpoch_) {
    if (fluid_shuffle(order_.data(), s.count, s.seed,
                      static_cast<uint64_t>(epoch)) != FLUID_OK)
      fail(std::string("cannot shuffle the training data: ") +
           fluid_last_error());
    shuffledEpoch_ = epoch;
  }
  const int64_t *indices =
      order_.data() + (within * s.ranks + s.rank) * s.batch;
  try {
    fillBatch(*pool_, s, static_cast<uint64_t>(epoch), indices, batch.images,
              batch.labels);
  } catch (const Error &e) {
    fail(format("cannot prepare the batch of step %lld: %s",
                static_cast<long long>(step), e.what()));
  }
}

void driver::fillBatch(WorkerPool &pool, const BatchSource &s, uint64_t epoch,
                       const int64_t *indices, void *images, void *labels) {
  int64_t pixels = s.imageShape[0] * s.imageShape[1] * s.imageShape[2];
  int64_t tasks = s.decodesFiles
                      ? s.batch
                      : std::clamp<int64_t>(s.batch * pixels / kPixelsPerTask,
                                            1, std::min(pool.size(), s.batch));
  pool.run(tasks, [&](int64_t task) {
    int64_t begin = s.batch * task / tasks, end = s.batch * (task + 1) / tasks;
    // Each image's pixels lie together (imageOrder[0] = 0): a range of
    // examples is a range of memory.
    const int64_t dims[4] = {end - begin, s.imageShape[0], s.imageShape[1],
                             s.imageShape[2]};
    fluid_tensor imageRange = {};
    imageRange.data = static_cast<float *>(images) + begin * pixels;
    imageRange.dtype = FLUID_F32;
    imageRange.rank = 4;
    for (int d = 0; d < 4; ++d)
      imageRange.shape[d] = dims[s.imageOrder[d]];
    fluid_tensor labelRange = {};
    labelRange.data = static_cast<int64_t *>(labels) + begin;
    labelRange.dtype = FLUID_I64;
    labelRange.rank = 1;
    labelRange.shape[0] = end - begin;
    if (fluid_dataset_epoch_batch(s.dataset, epoch, indices + begin,
                                  end - begin, &imageRange, &labelRange,
                                  s.mean.data(), s.std.data(),
                                  s.imageOrder.data()) != FLUID_OK)
      fail(fluid_last_error());
  });
}
