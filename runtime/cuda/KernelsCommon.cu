//===- KernelsCommon.cu - Launch sizes and device-side error reports ------===//
//
// Kernels that read device-resident data the host never sees (class labels,
// the learning rate and step counter, values to cast) cannot fail the call
// that launched them without a synchronization. Instead they record the
// first such problem in a small per-device record and leave their outputs
// as documented in CudaKernels.h; fluid_cuda_check_errors synchronizes,
// reads and clears the record, and reports the problem with the message
// the cpu backend gives for it.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

constexpr int kMaxDevices = 64;

int currentDevice() {
  int device = 0;
  FLUID_CUDA_CHECK(cudaGetDevice(&device));
  if (device < 0 || device >= kMaxDevices)
    throw Error(FLUID_ERROR_UNSUPPORTED,
                "device " + std::to_string(device) + " is beyond the " +
                    std::to_string(kMaxDevices) + " the runtime supports");
  return device;
}

const char *sourceName(uint32_t source) {
  switch (source) {
  case kFromSoftmaxCrossEntropy:
    return "fluid_cuda_softmax_cross_entropy";
  case kFromSoftmaxCrossEntropyGrad:
    return "fluid_cuda_softmax_cross_entropy_grad";
  case kFromSgd:
    return "fluid_cuda_sgd";
  case kFromMomentum:
    return "fluid_cuda_momentum";
  case kFromAdam:
    return "fluid_cuda_adam";
  case kFromCast:
    return "fluid_cuda_cast";
  case kFromSgdGroup:
    return "fluid_cuda_sgd_group";
  case kFromMomentumGroup:
    return "fluid_cuda_momentum_group";
  case kFromAdamGroup:
    return "fluid_cuda_adam_group";
  case kFromUnscaleGrads:
    return "fluid_cuda_unscale_grads";
  case kFromGather:
    return "fluid_cuda_gather";
  case kFromGatherGrad:
    return "fluid_cuda_gather_grad";
  default:
    return "a cuda kernel";
  }
}

/// As the cpu backend prints a hyper-parameter (ostream's default).
std::string formatValue(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

/// As the cpu backend's cast prints an element: enough digits to tell it
/// from its neighbours in its own dtype.
std::string formatElement(const DeviceErrorRecord &error) {
  std::ostringstream text;
  if (error.fromDtype == FLUID_I64 || error.fromDtype == FLUID_I32) {
    text << error.value;
  } else if (error.fromDtype == FLUID_F32) {
    text.precision(std::numeric_limits<float>::max_digits10);
    text << float(error.real);
  } else {
    text.precision(std::numeric_limits<double>::max_digits10);
    text << error.real;
  }
  return text.str();
}

std::string describe(const DeviceErrorRecord &error) {
  switch (error.kind) {
  case kLabelOutOfRange:
    return "label " + std::to_string(error.value) + " in row " +
           std::to_string(error.index) + " is outside [0, " +
           std::to_string(error.bound) + ")";
  case kBadLearningRate:
    return "lr is " + formatValue(error.real) + "; it must be >= 0";
  case kBadStep:
    return "step is " + std::to_string(error.value) +
           "; it must be >= 1 (the 1-based number of this update)";
  case kCastNaN:
    return "input element " + std::to_string(error.index) +
           " is NaN, which has no " + cpu::dtypeName(error.toDtype) + " value";
  case kCastOutOfRange:
    return "input element " + std::to_string(error.index) + " (" +
           formatElement(error) + ") is outside the range of " +
           cpu::dtypeName(error.toDtype);
  case kIndexOutOfRange:
    return "index " + std::to_string(error.value) + " at position " +
           std::to_string(error.index) + " of indices is outside [0, " +
           std::to_string(error.bound) + ")";
  default:
    return "unknown device error " + std::to_string(error.kind);
  }
}

} // namespace

int cuda::multiprocessorCount() {
  static std::array<std::atomic<int>, kMaxDevices> cache{};
  const int device = currentDevice();
  int count = cache[device].load(std::memory_order_relaxed);
  if (count == 0) {
    FLUID_CUDA_CHECK(
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    cache[device].store(count, std::memory_order_relaxed);
  }
  return count;
}

int cuda::gridSizeFor(int64_t work, int threads) {
  // 2048 resident threads per multiprocessor on sm_90; four times that
  // many keeps every multiprocessor busy while leaving each thread a few
  // items of a large grid-stride loop.
  const int64_t cap = int64_t(multiprocessorCount()) * (4 * 2048 / threads);
  return int(std::max<int64_t>(1, std::min(ceilDiv(work, threads), cap)));
}

DeviceErrorRecord *cuda::deviceErrorRecord(fluid_cuda_context *context) {
  static std::mutex mutex;
  static std::array<DeviceErrorRecord *, kMaxDevices> records{};
  const int device = deviceOf(context);
  if (device < 0 || device >= kMaxDevices)
    throw Error(FLUID_ERROR_UNSUPPORTED,
                "device " + std::to_string(device) + " is beyond the " +
                    std::to_string(kMaxDevices) + " the runtime supports");
  std::lock_guard<std::mutex> lock(mutex);
  if (!records[device]) {
    void *memory = nullptr;
    FLUID_CUDA_CHECK(cudaMalloc(&memory, sizeof(DeviceErrorRecord)));
    // cudaMemset may return before it has run; the record must be zero
    // before any stream's kernel can flag an error in it.
    cudaError_t zeroed = cudaMemset(memory, 0, sizeof(DeviceErrorRecord));
    if (zeroed == cudaSuccess)
      zeroed = cudaDeviceSynchronize();
    if (zeroed != cudaSuccess) {
      cudaFree(memory);
      FLUID_CUDA_CHECK(zeroed);
    }
    records[device] = static_cast<DeviceErrorRecord *>(memory);
  }
  return records[device];
}

extern "C" fluid_status fluid_cuda_check_errors(fluid_cuda_context *context) {
  return guard("fluid_cuda_check_errors", [&] {
    cudaStream_t stream = streamFor(context);
    DeviceErrorRecord *record = deviceErrorRecord(context);
    DeviceErrorRecord error{};
    FLUID_CUDA_CHECK(cudaMemcpyAsync(&error, record, sizeof(error),
                                     cudaMemcpyDeviceToHost, stream));
    FLUID_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (error.kind == kNoDeviceError)
      return;
    FLUID_CUDA_CHECK(cudaMemsetAsync(record, 0, sizeof(error), stream));
    FLUID_CUDA_CHECK(cudaStreamSynchronize(stream));
    fail(std::string(sourceName(error.source)) + ": " + describe(error));
  });
}
