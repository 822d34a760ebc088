//===- Device.h - Where a program runs: memory, copies, training steps ----===//
//
// The driver's loop is the same on every backend; what differs lives behind
// this interface: how memory is allocated and copied, how the training step
// is enqueued on its batch and timed, and how the loss reaches the host.
//
// cpu (CpuDevice.cpp): 256-byte aligned host memory (fluid_cpu_allocate,
// whose process-wide peak also counts a program's temporaries); each step
// runs at once on the prefetcher's host slot, timed with steady_clock.
//
// cuda (CudaDevice.cpp): one fluid_cuda_malloc per parameter and per buffer
// (no pooling: the unoptimized baseline; the context's peak also counts a
// program's fluid_cuda_allocate temporaries); batches copied from pinned host
// slots on a copy stream into two device slots; steps enqueued without
// waiting (replayed as CUDA graphs after the warm-up), timed with events,
// their loss read back through a pinned ring at log points.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DRIVER_DEVICE_H
#define FLUID_RUNTIME_DRIVER_DEVICE_H

#include "Prefetch.h"
#include "fluid/runtime/Program.h"

#include <memory>
#include <string>
#include <vector>

namespace fluid::rt::driver {

/// The training step and the memory it runs on (all but the batch).
struct StepSetup {
  const fluid_program_function *function = nullptr;
  std::vector<void *> params;  // device memory, the program's order
  std::vector<void *> buffers; // device memory of the function's buffers
  int64_t imagesArgument = 0, labelsArgument = 1;
  const void *lossBuffer = nullptr; // device memory
  int32_t lossDtype = FLUID_F32;
  const void *learningRateBuffer = nullptr; // device memory, f64
  BatchSource source;      // the batches of steps [firstStep, endStep)
  int64_t warmupSteps = 0; // steps before a CUDA graph is captured
  bool graph = false;      // replay the step as a CUDA graph (cuda)
  // The other ranks of a data-parallel run (null: one process), passed to
  // the program.
  fluid_communicator *communicator = nullptr;
  // Steps whose results the device holds before reading them back (cuda:
  // events and a pinned ring; a full ring is read at the next step).
  int64_t ringCapacity = 1;
};

/// What one training step produced.
struct StepRecord {
  double loss = 0;
  double learningRate = 0;
  double milliseconds = 0; // the step's time on the device
};

struct MemoryUse {
  int64_t peakBytes = 0;      // the most allocated at once, workspace too
  int64_t workspaceBytes = 0; // the backend's scratch memory (cuDNN)
};

class Device {
public:
  virtual ~Device() = default;

  virtual const char *name() const = 0;
  /// fluid_program_env::backend_context.
  virtual void *backendContext() = 0;

  /// Zero-filled device memory (256-byte aligned), owned by the device.
  virtual void *allocate(int64_t bytes) = 0;
  /// Memory for one of a function's buffers: as allocate(), but filled
  /// with 0xFF bytes instead of zeros under FLUID_POISON_MEMORY=1
  /// (CpuMemory.h), so that a buffer read before it is written shows as
  /// NaN (or -1) in the results.
  virtual void *allocateBuffer(int64_t bytes) = 0;
  /// Copies that return once the copy is done (and, on cuda, after the
  /// work enqueued before it).
  virtual void upload(void *device, const void *host, int64_t bytes) = 0;
  virtual void download(void *host, const void *device, int64_t bytes) = 0;

  virtual MemoryUse memory() = 0;
  /// Fails with the first error a kernel recorded on the device (cuda:
  /// fluid_cuda_check_errors, which waits for the device).
  virtual void checkErrors() = 0;

  /// Sets up the input pipeline and memory of the training step.
  virtual void startTraining(const StepSetup &setup) = 0;
  /// Runs (cpu) or enqueues (cuda) training step `step` on its batch; steps
  /// come in order. With `profile`, every launch is timed (never in a
  /// graph): see launchMilliseconds().
  virtual void enqueueStep(int64_t step, bool profile) = 0;
  /// Waits for the steps enqueued since the last call and returns what
  /// they produced, in order.
  virtual std::vector<StepRecord> collect() = 0;
  /// Whether the steps were replayed as CUDA graphs.
  virtual bool usesGraph() const = 0;
  /// The time of each launch of the training function, summed over the
  /// profiled steps.
  virtual std::vector<double> launchMilliseconds() const = 0;
};

std::unique_ptr<Device> createCpuDevice();

struct CudaDeviceOptions {
  std::string program; // the executable's name, for warnings
  int32_t device = 0;
  bool tf32 = true;
  std::string algorithmCachePath; // "": in memory only
  int64_t workspaceLimit = -1;    // cuDNN workspace limit, < 0: none
};

/// Fails where the runtime was built without CUDA.
std::unique_ptr<Device> createCudaDevice(const CudaDeviceOptions &options);

} // namespace fluid::rt::driver

#endif // FLUID_RUNTIME_DRIVER_DEVICE_H
