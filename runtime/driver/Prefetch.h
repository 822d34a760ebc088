//===- Prefetch.h - Training batches prepared ahead on host threads -------===//
//
// The input pipeline's host half. A producer thread walks the training
// steps in order and fills each step's batch into one of two host slots
// (slot = step % 2): it shuffles the dataset's indices once per epoch with
// fluid_shuffle(order, count, seed, epoch) and takes the batch of step s at
// order[(s % stepsPerEpoch) * batch ...], so the data follows from the step
// counter alone, as in fluid-train. Each batch is split across a pool of
// threads, each calling fluid_dataset_epoch_batch (thread safe) on a
// sub-range of the examples, writing the layout the program reads (e.g.
// channels-last); images decoded from files are handed out one at a time,
// so that every thread decodes until the batch is done. The random
// transforms of an example depend on (seed, epoch, index) alone, never on
// the thread that makes it.
//
// The consumer (the device's step loop) calls acquire(step), which waits
// until that batch is ready, reads it (the cpu step itself, or a copy to
// the device), then release(step). Before the producer refills a released
// slot it calls the device's `beforeRefill(slot)` hook: a cuda device waits
// there for the asynchronous copy out of the slot to finish.
//
// An error on a producer or pool thread is kept and rethrown by acquire(),
// whose caller ends the run with its message.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_PREFETCH_H
#define FLUID_RUNTIME_DRIVER_PREFETCH_H

#include "fluid/runtime/Data.h"

#include <array>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fluid::rt::driver {

/// What the batches of the training steps are made of.
struct BatchSource {
  const fluid_dataset *dataset = nullptr;
  int64_t count = 0; // examples in the dataset
  int64_t batch = 0; // examples per step
  int64_t imageShape[3] = {0, 0, 0};
  /// The program's layout of a batch: dimension d of memory is dimension
  /// imageOrder[d] of [N, C, H, W]; imageOrder[0] = 0.
  std::array<int32_t, 4> imageOrder = {0, 1, 2, 3};
  int64_t stepsPerEpoch = 0; // count / (batch * ranks)
  /// A data-parallel run's rank and number of ranks: the step's global
  /// batch is `batch * ranks` examples of the epoch's order, of which this
  /// rank takes the `rank`-th `batch`.
  int64_t rank = 0, ranks = 1;
  uint64_t seed = 0;
  std::vector<double> mean, std; // one per channel
  int64_t threads = 1;
  /// The examples are image files, each decoded and transformed as it is
  /// read: worth a task of its own.
  bool decodesFiles = false;
  int64_t firstStep = 0, endStep = 0; // produce steps [firstStep, endStep)

  int64_t imageBytes() const {
    return batch * imageShape[0] * imageShape[1] * imageShape[2] *
           static_cast<int64_t>(sizeof(float));
  }
  int64_t labelBytes() const {
    return batch * static_cast<int64_t>(sizeof(int64_t));
  }
};

/// One step's batch in host memory: images f32 [N,C,H,W] laid out in the
/// source's imageOrder (so no step changes their layout), labels i64 [N].
struct HostBatch {
  void *images = nullptr;
  void *labels = nullptr;
};

/// Runs tasks 0..n-1 on a fixed set of threads (the caller is one of them).
class WorkerPool {
public:
  explicit WorkerPool(int64_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  int64_t size() const { return static_cast<int64_t>(workers_.size()) + 1; }
  /// Runs task(i) for every i in [0, n) and returns when all are done;
  /// rethrows the first exception a task threw.
  void run(int64_t n, const std::function<void(int64_t)> &task);

private:
  void work();
  void runTasks();

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t)> *task_ = nullptr;
  int64_t tasks_ = 0, next_ = 0, finished_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

/// Fills `images` (f32, [N, C, H, W] laid out in source.imageOrder) and
/// `labels` (i64 [N]) with the examples indices[0, source.batch) as the
/// random transforms of `epoch` make them, splitting the work over `pool`.
/// Throws an Error with fluid_dataset_epoch_batch's message.
void fillBatch(WorkerPool &pool, const BatchSource &source, uint64_t epoch,
               const int64_t *indices, void *images, void *labels);

class BatchPrefetcher {
public:
  static constexpr int kSlots = 2;

  struct Hooks {
    /// On the producer thread before anything else (cuda: cudaSetDevice).
    std::function<void()> threadStart;
    /// On the producer thread before slot `slot` is refilled.
    std::function<void(int slot)> beforeRefill;
  };

  /// `slots` is the host memory of the two slots (source.imageBytes() and
  /// source.labelBytes() each); it must outlive the prefetcher. Starts the
  /// producer.
  BatchPrefetcher(const BatchSource &source,
                  const std::array<HostBatch, kSlots> &slots, Hooks hooks);
  /// Stops and joins the producer.
  ~BatchPrefetcher();
  BatchPrefetcher(const BatchPrefetcher &) = delete;
  BatchPrefetcher &operator=(const BatchPrefetcher &) = delete;

  /// Waits for the batch of `step` (steps are acquired in order) and
  /// returns it; rethrows an error of the producer.
  const HostBatch &acquire(int64_t step);
  /// Gives the slot of `step` back to the producer.
  void release(int64_t step);

  static int slotOf(int64_t step) { return static_cast<int>(step % kSlots); }

private:
  void produce();
  void fill(int64_t step, const HostBatch &batch);

  BatchSource source_;
  Hooks hooks_;
  struct Slot {
    HostBatch batch;
    int64_t step = -1; // the step whose batch it holds, once ready
    bool ready = false;
    bool free = true;
  };
  std::array<Slot, kSlots> slots_;
  std::vector<int64_t> order_;
  int64_t shuffledEpoch_ = -1;
  std::unique_ptr<WorkerPool> pool_;

  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread producer_;
};

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_PREFETCH_H
