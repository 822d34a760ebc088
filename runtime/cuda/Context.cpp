//===- Context.cpp - The cuda backend's context ---------------------------===//
//
// One context owns, each through its own RAII member: the compute stream,
// a cuDNN handle and a cuBLAS handle bound to that stream, the workspace
// buffer shared by all library calls, the convolution algorithm cache, the
// allocations made through fluid_cuda_malloc, the memory pool of
// fluid_cuda_allocate, and the modules of generated kernels it loaded
// (GeneratedKernels.h; unloaded first, once the stream is idle). Members are
// declared in dependency order, so that a failure half-way through creating
// a context releases what was created, in reverse.
//
// Stream-ordered memory (fluid_cuda_allocate, fluid_cuda_release) is
// cudaMallocFromPoolAsync and cudaFreeAsync on the compute stream, from a
// pool of the context's own that keeps what is freed (release threshold
// UINT64_MAX) instead of returning it to the driver at every
// synchronization, without changing the device's default pool for the rest
// of the process. Under stream capture (the driver's CUDA graphs) the same
// calls become the graph's memory nodes, which the CUDA documentation
// allows with these rules, each enforced or met here:
//  - cudaMallocAsync and cudaMallocFromPoolAsync during capture create an
//    allocation node; the allocation is owned by the graph, its address
//    fixed for the graph's life, usable by the nodes ordered after it (the
//    stream order of the captured launches);
//  - cudaFreeAsync during capture creates a free node and must be passed
//    an allocation of the same graph: releasing, inside a capture, memory
//    allocated outside it (or in another capture), or outside any capture
//    memory a capture allocated, is refused here with a message, since
//    every allocation is recorded with the capture it was made in;
//  - nothing here synchronizes, so nothing is illegal under
//    cudaStreamCaptureModeThreadLocal (cudaMemsetAsync for poisoning is a
//    memset node);
//  - a graph that leaves an allocation unfreed cannot be launched again
//    until it is freed: the driver checks that a captured step releases all
//    it allocates (CudaDevice.cpp).
// Device tables (Context.h) follow the same rules: under capture they
// neither allocate nor synchronize, and a buffer a graph may read is never
// rewritten or freed before the context is.
// Kernels check that an operand is device memory with
// cudaPointerGetAttributes, which is not meant for the address of a graph
// allocation while capturing: operands inside a stream-ordered allocation
// are recognised from the context's own record instead.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "AlgorithmCache.h"
#include "GeneratedKernels.h"

#include "fluid/runtime/CpuMemory.h"
#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/CudaRuntime.h"
#include "fluid/runtime/Error.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

/// Workspace sizes are rounded up to this, so that a sequence of slightly
/// growing requests does not reallocate each time.
constexpr size_t kWorkspaceGranule = size_t(1) << 20;

class Stream {
public:
  Stream() {
    // Non-blocking: work of other libraries on the legacy default stream
    // does not serialize with ours.
    FLUID_CUDA_CHECK(
        cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;
  cudaStream_t get() const { return stream_; }

private:
  cudaStream_t stream_ = nullptr;
};

class CudnnHandle {
public:
  CudnnHandle() { FLUID_CUDNN_CHECK(cudnnCreate(&handle_)); }
  ~CudnnHandle() { cudnnDestroy(handle_); }
  CudnnHandle(const CudnnHandle &) = delete;
  CudnnHandle &operator=(const CudnnHandle &) = delete;
  cudnnHandle_t get() const { return handle_; }

private:
  cudnnHandle_t handle_ = nullptr;
};

class CublasHandle {
public:
  CublasHandle() { FLUID_CUBLAS_CHECK(cublasCreate(&handle_)); }
  ~CublasHandle() { cublasDestroy(handle_); }
  CublasHandle(const CublasHandle &) = delete;
  CublasHandle &operator=(const CublasHandle &) = delete;
  cublasHandle_t get() const { return handle_; }

private:
  cublasHandle_t handle_ = nullptr;
};

/// One cudaMalloc'ed buffer (the workspace), replaced as a whole.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  void *data() const { return data_; }
  size_t bytes() const { return bytes_; }

  void swap(DeviceBuffer &other) {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
  }

  /// Frees the buffer.
  void release() {
    FLUID_CUDA_CHECK(cudaFree(data_));
    data_ = nullptr;
    bytes_ = 0;
  }

  /// Replaces the buffer by one of `bytes`; the old contents are lost.
  void reallocate(size_t bytes, const char *what) {
    FLUID_CUDA_CHECK(cudaFree(data_));
    data_ = nullptr;
    bytes_ = 0;
    cudaError_t status = cudaMalloc(&data_, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      data_ = nullptr;
      throw Error(FLUID_ERROR_OUT_OF_MEMORY,
                  std::string("out of device memory for the ") + what + " (" +
                      std::to_string(bytes) + " bytes)");
    }
    FLUID_CUDA_CHECK(status);
    bytes_ = bytes;
  }

private:
  void *data_ = nullptr;
  size_t bytes_ = 0;
};

/// Page-locked host memory (cudaMallocHost): the source of a host-to-device
/// copy that a CUDA graph captures, read again at every launch.
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { cudaFreeHost(data_); }
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;

  void *data() const { return data_; }

  /// Replaces the buffer by one of `bytes`; the old contents are lost.
  void reallocate(size_t bytes) {
    FLUID_CUDA_CHECK(cudaFreeHost(data_));
    data_ = nullptr;
    FLUID_CUDA_CHECK(cudaMallocHost(&data_, bytes));
  }

private:
  void *data_ = nullptr;
};

/// The device tables of one call site (Context.h).
struct DeviceTableSite {
  /// Device memory for one capture's table, filled from `host` by the
  /// graph's memcpy node.
  struct CaptureSlot {
    PinnedBuffer host;
    DeviceBuffer device;
    bool used = false; // by a capture, for good
  };
  static constexpr int kCaptureSlots = 2;

  std::vector<unsigned char> key; // what the current table was made from
  const void *current = nullptr;  // the current table's device copy
  // Rewritten by uploads outside capture, unless `bufferCaptured`.
  std::unique_ptr<DeviceBuffer> buffer = std::make_unique<DeviceBuffer>();
  bool bufferCaptured = false; // a captured kernel reads `buffer`
  CaptureSlot slots[kCaptureSlots];
};

/// The memory pool of fluid_cuda_allocate: device memory of the context's
/// device, kept when freed (the next allocations of a step reuse it).
/// Null on a device without memory pools, where fluid_cuda_allocate fails.
class MemoryPool {
public:
  explicit MemoryPool(int device) {
    int supported = 0;
    FLUID_CUDA_CHECK(cudaDeviceGetAttribute(
        &supported, cudaDevAttrMemoryPoolsSupported, device));
    if (!supported)
      return;
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    FLUID_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    uint64_t threshold = UINT64_MAX;
    cudaError_t status = cudaMemPoolSetAttribute(
        pool_, cudaMemPoolAttrReleaseThreshold, &threshold);
    if (status != cudaSuccess) {
      cudaMemPoolDestroy(pool_);
      pool_ = nullptr;
      FLUID_CUDA_CHECK(status);
    }
  }
  ~MemoryPool() {
    // Deferred by CUDA until frees still in flight complete.
    if (pool_)
      cudaMemPoolDestroy(pool_);
  }
  MemoryPool(const MemoryPool &) = delete;
  MemoryPool &operator=(const MemoryPool &) = delete;
  cudaMemPool_t get() const { return pool_; }

private:
  cudaMemPool_t pool_ = nullptr;
};

/// The capture `stream` is in: whether one is active and its id.
struct CaptureState {
  bool active = false;
  unsigned long long id = 0;
  bool operator==(const CaptureState &other) const {
    return active == other.active && (!active || id == other.id);
  }
};

CaptureState captureStateOf(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  FLUID_CUDA_CHECK(cudaStreamGetCaptureInfo(stream, &status, &id));
  if (status == cudaStreamCaptureStatusInvalidated)
    fail("the stream's CUDA graph capture was invalidated by an earlier "
         "error; end the capture first");
  CaptureState state;
  state.active = status == cudaStreamCaptureStatusActive;
  state.id = state.active ? id : 0;
  return state;
}

std::string captureText(const CaptureState &state) {
  return state.active ? "inside CUDA graph capture " + std::to_string(state.id)
                      : std::string("outside any CUDA graph capture");
}

/// "cudnn=91900 sm=90": what makes algorithm choices of one run valid in
/// another (see AlgorithmCache.h).
std::string cacheFingerprint(int device) {
  int major = 0, minor = 0;
  FLUID_CUDA_CHECK(cudaDeviceGetAttribute(
      &major, cudaDevAttrComputeCapabilityMajor, device));
  FLUID_CUDA_CHECK(cudaDeviceGetAttribute(
      &minor, cudaDevAttrComputeCapabilityMinor, device));
  return "cudnn=" + std::to_string(cudnnGetVersion()) +
         " sm=" + std::to_string(major) + std::to_string(minor);
}

int checkedDevice(const fluid_cuda_options *options) {
  int device = options ? options->device : 0;
  int count = 0;
  FLUID_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    fail("device " + std::to_string(device) + " does not exist (" +
         std::to_string(count) + " CUDA devices)");
  FLUID_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

void warn(const std::string &message) {
  std::fprintf(stderr, "fluid: warning: %s\n", message.c_str());
}

std::string pointerText(const void *pointer) {
  std::ostringstream s;
  s << pointer;
  return s.str();
}

} // namespace

struct fluid_cuda_context {
  explicit fluid_cuda_context(const fluid_cuda_options *options)
      : device(checkedDevice(options)),
        allowTf32(options && options->allow_tf32 != 0),
        algorithms(options && options->algorithm_cache_path
                       ? options->algorithm_cache_path
                       : "",
                   cacheFingerprint(device)) {
    FLUID_CUDNN_CHECK(cudnnSetStream(cudnn.get(), stream.get()));
    FLUID_CUBLAS_CHECK(cublasSetStream(cublas.get(), stream.get()));
    FLUID_CUBLAS_CHECK(
        cublasSetMathMode(cublas.get(), allowTf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                  : CUBLAS_DEFAULT_MATH));
  }

  ~fluid_cuda_context() {
    for (const auto &allocation : allocations)
      cudaFree(allocation.first);
    // Graph allocations belong to their graphs; the rest go back to the
    // pool, which is destroyed once these frees have run.
    for (const auto &[address, allocation] : streamAllocations)
      if (!allocation.capture.active)
        cudaFreeAsync(reinterpret_cast<void *>(address), stream.get());
    cudaStreamSynchronize(stream.get());
    (void)cudaGetLastError();
  }

  void countAllocated(int64_t bytes) {
    allocatedBytes += bytes;
    if (allocatedBytes > peakAllocatedBytes)
      peakAllocatedBytes = allocatedBytes;
  }

  /// One allocation of fluid_cuda_allocate, keyed by its address.
  struct StreamAllocation {
    int64_t bytes = 0;
    CaptureState capture; // where it was allocated
  };

  const int device;
  const bool allowTf32;
  ConvAlgoCache algorithms;
  Stream stream;
  CudnnHandle cudnn;
  CublasHandle cublas;
  DeviceBuffer workspace;
  int64_t workspaceLimit = -1; // < 0: none
  MemoryPool pool{device};
  std::unordered_map<void *, int64_t> allocations; // fluid_cuda_malloc
  // Ordered, so that an operand inside an allocation finds it.
  std::map<uintptr_t, StreamAllocation> streamAllocations;
  // Device tables (Context.h): by call site, the one of calls without a
  // site, and site buffers replaced after a graph captured them.
  std::unordered_map<const void *, std::unique_ptr<DeviceTableSite>>
      deviceTables;
  DeviceBuffer sitelessTable;
  std::vector<std::unique_ptr<DeviceBuffer>> capturedTables;
  // fluid_cuda_sum_scratch: the counters (kept zero between kernels) and
  // the partial sums, and the buffers they replaced, which graphs may hold.
  DeviceBuffer sumCounters;
  DeviceBuffer sumPartials;
  std::vector<std::unique_ptr<DeviceBuffer>> retiredSumScratch;
  // Both kinds of allocation.
  int64_t allocatedBytes = 0;
  int64_t peakAllocatedBytes = 0;
  // Last: its modules are unloaded before anything else is released, after
  // the destructor's body waited for the stream.
  GeneratedModules generated;
};

//===----------------------------------------------------------------------===//
// Context.h
//===----------------------------------------------------------------------===//

cudaStream_t cuda::streamOf(fluid_cuda_context *context) {
  return context->stream.get();
}

cudnnHandle_t cuda::cudnnOf(fluid_cuda_context *context) {
  return context->cudnn.get();
}

cublasHandle_t cuda::cublasOf(fluid_cuda_context *context) {
  return context->cublas.get();
}

bool cuda::allowTf32(fluid_cuda_context *context) { return context->allowTf32; }

int cuda::deviceOf(fluid_cuda_context *context) { return context->device; }

ConvAlgoCache &cuda::convAlgoCache(fluid_cuda_context *context) {
  return context->algorithms;
}

GeneratedModules &cuda::generatedModules(fluid_cuda_context *context) {
  return context->generated;
}

std::optional<size_t> cuda::workspaceLimit(fluid_cuda_context *context) {
  if (context->workspaceLimit < 0)
    return std::nullopt;
  return static_cast<size_t>(context->workspaceLimit);
}

void *cuda::workspace(fluid_cuda_context *context, size_t bytes) {
  DeviceBuffer &buffer = context->workspace;
  if (bytes > buffer.bytes()) {
    std::optional<size_t> limit = workspaceLimit(context);
    if (limit && bytes > *limit)
      throw Error(FLUID_ERROR_OUT_OF_MEMORY,
                  "needs " + std::to_string(bytes) +
                      " bytes of workspace, more than the context's "
                      "workspace limit of " +
                      std::to_string(*limit) +
                      " bytes (fluid_cuda_set_workspace_limit)");
    // Work already enqueued may still read the old buffer.
    FLUID_CUDA_CHECK(cudaStreamSynchronize(context->stream.get()));
    size_t rounded =
        (bytes + kWorkspaceGranule - 1) / kWorkspaceGranule * kWorkspaceGranule;
    if (limit && rounded > *limit)
      rounded = *limit;
    buffer.reallocate(rounded, "workspace");
  }
  return buffer.data();
}

const void *cuda::findDeviceTable(fluid_cuda_context *context, const void *site,
                                  const void *key, size_t keyBytes) {
  if (!site)
    return nullptr;
  auto it = context->deviceTables.find(site);
  if (it == context->deviceTables.end())
    return nullptr;
  DeviceTableSite &entry = *it->second;
  if (entry.key.size() != keyBytes ||
      std::memcmp(entry.key.data(), key, keyBytes) != 0)
    return nullptr;
  // A graph captured now reads the site's buffer for as long as it lives.
  if (entry.current == entry.buffer->data() && !entry.bufferCaptured &&
      captureStateOf(context->stream.get()).active)
    entry.bufferCaptured = true;
  return entry.current;
}

const void *cuda::uploadDeviceTable(fluid_cuda_context *context,
                                    const void *site, const void *key,
                                    size_t keyBytes, const void *table,
                                    size_t tableBytes) {
  if (tableBytes == 0)
    fail("a device table must not be empty");
  cudaStream_t stream = context->stream.get();
  const bool capturing = captureStateOf(stream).active;
  if (!site) {
    if (capturing)
      fail("a call without a site (site NULL) cannot run during CUDA graph "
           "capture: its table would be uploaded synchronously; pass a site");
    // Kernels enqueued earlier may still read the buffer.
    FLUID_CUDA_CHECK(cudaStreamSynchronize(stream));
    DeviceBuffer &buffer = context->sitelessTable;
    if (buffer.bytes() < tableBytes)
      buffer.reallocate(tableBytes, "device table");
    FLUID_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), table, tableBytes,
                                     cudaMemcpyHostToDevice, stream));
    return buffer.data();
  }

  auto it = context->deviceTables.find(site);
  if (capturing) {
    if (it == context->deviceTables.end())
      fail("the first call of a call site cannot run during CUDA graph "
           "capture: it reserves the memory that captures use, so run it "
           "once outside capture first");
    DeviceTableSite &entry = *it->second;
    for (DeviceTableSite::CaptureSlot &slot : entry.slots) {
      if (slot.used || slot.device.bytes() < tableBytes)
        continue;
      std::memcpy(slot.host.data(), table, tableBytes);
      FLUID_CUDA_CHECK(cudaMemcpyAsync(slot.device.data(), slot.host.data(),
                                       tableBytes, cudaMemcpyHostToDevice,
                                       stream));
      slot.used = true;
      entry.current = slot.device.data();
      entry.key.assign(static_cast<const unsigned char *>(key),
                       static_cast<const unsigned char *>(key) + keyBytes);
      return entry.current;
    }
    fail("the call site's device table (" + std::to_string(tableBytes) +
         " bytes) changed during CUDA graph capture, and none of its " +
         std::to_string(DeviceTableSite::kCaptureSlots) +
         " capture slots is free and large enough (each capture that changes "
         "the table takes one for good); run the call outside capture");
  }

  if (it == context->deviceTables.end())
    it =
        context->deviceTables.emplace(site, std::make_unique<DeviceTableSite>())
            .first;
  DeviceTableSite &entry = *it->second;
  // Kernels enqueued earlier may still read the buffer.
  FLUID_CUDA_CHECK(cudaStreamSynchronize(stream));
  // Free slots grow with the table a capture may have to hold.
  for (DeviceTableSite::CaptureSlot &slot : entry.slots) {
    if (slot.used || slot.device.bytes() >= tableBytes)
      continue;
    slot.host.reallocate(tableBytes);
    slot.device.reallocate(tableBytes, "capture slot of a device table");
  }
  if (entry.bufferCaptured) {
    context->capturedTables.push_back(std::move(entry.buffer));
    entry.buffer = std::make_unique<DeviceBuffer>();
    entry.bufferCaptured = false;
  }
  // Forgotten first: a failure below leaves no stale match.
  entry.key.clear();
  entry.current = nullptr;
  if (entry.buffer->bytes() < tableBytes)
    entry.buffer->reallocate(tableBytes, "device table");
  FLUID_CUDA_CHECK(cudaMemcpyAsync(entry.buffer->data(), table, tableBytes,
                                   cudaMemcpyHostToDevice, stream));
  entry.current = entry.buffer->data();
  entry.key.assign(static_cast<const unsigned char *>(key),
                   static_cast<const unsigned char *>(key) + keyBytes);
  return entry.current;
}

fluid_cuda_context *cuda::requireContext(fluid_cuda_context *context) {
  if (!context)
    fail("context is null");
  FLUID_CUDA_CHECK(cudaSetDevice(context->device));
  return context;
}

void cuda::requireDeviceMemory(fluid_cuda_context *context,
                               const cpu::CheckedTensor &t) {
  if (t.numel == 0)
    return;
  // Inside memory of fluid_cuda_allocate (possibly a graph allocation,
  // see the file comment): it must end there too.
  const uintptr_t start = reinterpret_cast<uintptr_t>(t.desc->data);
  auto after = context->streamAllocations.upper_bound(start);
  if (after != context->streamAllocations.begin()) {
    const auto &[base, allocation] = *std::prev(after);
    if (start < base + static_cast<uintptr_t>(allocation.bytes)) {
      const uintptr_t bytes =
          static_cast<uintptr_t>(t.numel * fluid_dtype_size(t.dtype()));
      if (start + bytes > base + static_cast<uintptr_t>(allocation.bytes))
        fail(t.name + " data " + pointerText(t.desc->data) + " (" +
             std::to_string(bytes) + " bytes) runs past the end of its " +
             std::to_string(allocation.bytes) +
             "-byte allocation from fluid_cuda_allocate");
      return;
    }
  }
  cudaPointerAttributes attributes{};
  // Not checked with FLUID_CUDA_CHECK: a failure only means that the
  // pointer is none of CUDA's, which is the error reported here.
  cudaError_t status = cudaPointerGetAttributes(&attributes, t.desc->data);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    fail(t.name + " data " + pointerText(t.desc->data) +
         " is not device memory (" + cudaGetErrorName(status) + ")");
  }
  if (attributes.type != cudaMemoryTypeDevice &&
      attributes.type != cudaMemoryTypeManaged)
    fail(t.name + " data " + pointerText(t.desc->data) +
         " is host memory, not device memory (allocate it with "
         "fluid_cuda_malloc)");
  if (attributes.type == cudaMemoryTypeDevice &&
      attributes.device != context->device)
    fail(t.name + " data is on device " + std::to_string(attributes.device) +
         ", the context on device " + std::to_string(context->device));
}

int cuda::cudnnInt(int64_t value, const std::string &what) {
  if (value < INT_MIN || value > INT_MAX)
    throw Error(FLUID_ERROR_UNSUPPORTED,
                what + " " + std::to_string(value) +
                    " exceeds the int range of cuDNN's descriptors");
  return static_cast<int>(value);
}

void TensorDescriptor::setNchw(int32_t dtype, int64_t n, int64_t c, int64_t h,
                               int64_t w) {
  const int64_t dims[4] = {n, c, h, w};
  const int64_t strides[4] = {c * h * w, h * w, w, 1};
  setNchwStrided(dtype, dims, strides);
}

void TensorDescriptor::setNhwc(int32_t dtype, int64_t n, int64_t c, int64_t h,
                               int64_t w) {
  cudnnInt(n * c * h * w, "tensor extent (elements)");
  FLUID_CUDNN_CHECK(cudnnSetTensor4dDescriptor(
      desc_, CUDNN_TENSOR_NHWC, cudnnDataTypeOf(dtype), cudnnInt(n, "batch"),
      cudnnInt(c, "channels"), cudnnInt(h, "height"), cudnnInt(w, "width")));
}

void TensorDescriptor::setNchwStrided(int32_t dtype, const int64_t dims[4],
                                      const int64_t strides[4]) {
  // cuDNN's legacy kernels index with int: the extent of the whole view
  // must fit too.
  int64_t extent = 1;
  for (int i = 0; i < 4; ++i)
    extent += (dims[i] - 1) * strides[i];
  cudnnInt(extent, "tensor extent (elements)");
  FLUID_CUDNN_CHECK(cudnnSetTensor4dDescriptorEx(
      desc_, cudnnDataTypeOf(dtype), cudnnInt(dims[0], "batch"),
      cudnnInt(dims[1], "channels"), cudnnInt(dims[2], "height"),
      cudnnInt(dims[3], "width"), cudnnInt(strides[0], "batch stride"),
      cudnnInt(strides[1], "channel stride"),
      cudnnInt(strides[2], "row stride"),
      cudnnInt(strides[3], "column stride")));
}

void FilterDescriptor::setDense(int32_t dtype, cudnnTensorFormat_t layout,
                                int64_t k, int64_t c, int64_t r, int64_t s) {
  cudnnInt(k * c * r * s, "filter elements");
  FLUID_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
      desc_, cudnnDataTypeOf(dtype), layout, cudnnInt(k, "output channels"),
      cudnnInt(c, "input channels per group"), cudnnInt(r, "kernel height"),
      cudnnInt(s, "kernel width")));
}

void cuda::addChannelBias(fluid_cuda_context *context, int32_t dtype,
                          const void *bias, void *output,
                          cudnnTensorFormat_t layout, int64_t batch,
                          int64_t channels, int64_t height, int64_t width,
                          bool replace) {
  // The bias, [1, channels, 1, 1], is the same memory in either layout.
  TensorDescriptor biasDesc, outputDesc;
  biasDesc.setDense(dtype, layout, 1, channels, 1, 1);
  outputDesc.setDense(dtype, layout, batch, channels, height, width);
  FLUID_CUDNN_CHECK(
      cudnnAddTensor(cudnnOf(context), scalarOne(dtype), biasDesc.get(), bias,
                     replace ? scalarZero(dtype) : scalarOne(dtype),
                     outputDesc.get(), output));
}

//===----------------------------------------------------------------------===//
// CudaRuntime.h
//===----------------------------------------------------------------------===//

extern "C" fluid_status
fluid_cuda_context_create(const fluid_cuda_options *options,
                          fluid_cuda_context **out) {
  return guard("fluid_cuda_context_create", [&] {
    if (!out)
      fail("out is null");
    *out = nullptr;
    *out = new fluid_cuda_context(options);
  });
}

extern "C" void fluid_cuda_context_destroy(fluid_cuda_context *context) {
  if (!context)
    return;
  // Nothing is reported to the caller here: a failure to wait or to save
  // leaves its message in fluid_last_error() (and a warning for the
  // cache), and everything is released regardless.
  (void)guard("fluid_cuda_context_destroy", [&] {
    FLUID_CUDA_CHECK(cudaSetDevice(context->device));
    FLUID_CUDA_CHECK(cudaStreamSynchronize(context->stream.get()));
  });
  try {
    context->algorithms.save();
  } catch (const std::exception &e) {
    warn(std::string("convolution algorithm cache not saved: ") + e.what());
  }
  delete context;
}

extern "C" fluid_status fluid_cuda_synchronize(fluid_cuda_context *context) {
  return guard("fluid_cuda_synchronize", [&] {
    requireContext(context);
    FLUID_CUDA_CHECK(cudaStreamSynchronize(context->stream.get()));
  });
}

extern "C" fluid_status fluid_cuda_context_stream(fluid_cuda_context *context,
                                                  void **stream) {
  return guard("fluid_cuda_context_stream", [&] {
    requireContext(context);
    if (!stream)
      fail("stream is null");
    *stream = context->stream.get();
  });
}

namespace {

/// The checks both allocators start with; false when there is nothing to
/// allocate (0 bytes: *out is null).
bool startAllocation(fluid_cuda_context *context, int64_t bytes, void **out) {
  requireContext(context);
  if (!out)
    fail("out is null");
  *out = nullptr;
  if (bytes < 0)
    fail("bytes must be >= 0, got " + std::to_string(bytes));
  return bytes != 0;
}

/// Turns an allocation's status into an error naming the bytes asked for.
void checkAllocated(fluid_cuda_context *context, int64_t bytes,
                    cudaError_t status) {
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    throw Error(FLUID_ERROR_OUT_OF_MEMORY,
                "out of device memory for " + std::to_string(bytes) +
                    " bytes (" + std::to_string(context->allocatedBytes) +
                    " bytes allocated through this context)");
  }
  FLUID_CUDA_CHECK(status);
}

} // namespace

extern "C" fluid_status fluid_cuda_malloc(fluid_cuda_context *context,
                                          int64_t bytes, void **out) {
  return guard("fluid_cuda_malloc", [&] {
    if (!startAllocation(context, bytes, out))
      return;
    void *pointer = nullptr;
    checkAllocated(context, bytes,
                   cudaMalloc(&pointer, static_cast<size_t>(bytes)));
    context->allocations.emplace(pointer, bytes);
    context->countAllocated(bytes);
    *out = pointer;
  });
}

extern "C" void fluid_cuda_free(fluid_cuda_context *context, void *pointer) {
  (void)guard("fluid_cuda_free", [&] {
    requireContext(context);
    if (!pointer)
      return;
    auto it = context->allocations.find(pointer);
    if (it == context->allocations.end()) {
      if (context->streamAllocations.count(
              reinterpret_cast<uintptr_t>(pointer)))
        fail("pointer " + pointerText(pointer) +
             " was allocated by fluid_cuda_allocate; release it with "
             "fluid_cuda_release");
      fail("pointer " + pointerText(pointer) +
           " was not allocated by this context (or is already freed)");
    }
    FLUID_CUDA_CHECK(cudaFree(pointer));
    context->allocatedBytes -= it->second;
    context->allocations.erase(it);
  });
}

extern "C" fluid_status fluid_cuda_allocate(fluid_cuda_context *context,
                                            int64_t bytes, void **out) {
  return guard("fluid_cuda_allocate", [&] {
    if (!startAllocation(context, bytes, out))
      return;
    if (!context->pool.get())
      throw Error(FLUID_ERROR_UNSUPPORTED,
                  "device " + std::to_string(context->device) +
                      " has no stream-ordered memory pools");
    cudaStream_t stream = context->stream.get();
    const CaptureState capture = captureStateOf(stream);
    void *pointer = nullptr;
    checkAllocated(context, bytes,
                   cudaMallocFromPoolAsync(&pointer, static_cast<size_t>(bytes),
                                           context->pool.get(), stream));
    fluid_cuda_context::StreamAllocation allocation;
    allocation.bytes = bytes;
    allocation.capture = capture;
    try {
      context->streamAllocations.emplace(reinterpret_cast<uintptr_t>(pointer),
                                         allocation);
    } catch (...) {
      (void)cudaFreeAsync(pointer, stream);
      throw;
    }
    context->countAllocated(bytes);
    *out = pointer;
    if (poisonMemory())
      FLUID_CUDA_CHECK(cudaMemsetAsync(pointer, kPoisonByte,
                                       static_cast<size_t>(bytes), stream));
  });
}

extern "C" fluid_status fluid_cuda_release(fluid_cuda_context *context,
                                           void *data) {
  return guard("fluid_cuda_release", [&] {
    requireContext(context);
    if (!data)
      return;
    auto it =
        context->streamAllocations.find(reinterpret_cast<uintptr_t>(data));
    if (it == context->streamAllocations.end()) {
      if (context->allocations.count(data))
        fail("pointer " + pointerText(data) +
             " was allocated by fluid_cuda_malloc; free it with "
             "fluid_cuda_free");
      fail("pointer " + pointerText(data) +
           " was not allocated by fluid_cuda_allocate of this context (or "
           "is already released)");
    }
    cudaStream_t stream = context->stream.get();
    const CaptureState capture = captureStateOf(stream);
    if (!(capture == it->second.capture))
      fail("pointer " + pointerText(data) + " was allocated " +
           captureText(it->second.capture) + " but is released " +
           captureText(capture) +
           "; a CUDA graph may free only memory it allocated itself, so "
           "allocate and release within one capture, or both outside");
    const int64_t bytes = it->second.bytes;
    if (poisonMemory())
      FLUID_CUDA_CHECK(cudaMemsetAsync(data, kPoisonByte,
                                       static_cast<size_t>(bytes), stream));
    FLUID_CUDA_CHECK(cudaFreeAsync(data, stream));
    context->streamAllocations.erase(it);
    context->allocatedBytes -= bytes;
  });
}

extern "C" fluid_status
fluid_cuda_set_workspace_limit(fluid_cuda_context *context, int64_t bytes) {
  return guard("fluid_cuda_set_workspace_limit", [&] {
    requireContext(context);
    DeviceBuffer &buffer = context->workspace;
    if (bytes >= 0 && buffer.bytes() > static_cast<size_t>(bytes)) {
      // Freed now (it grows again within the limit when next needed), so
      // that the limit holds from here on.
      cudaStream_t stream = context->stream.get();
      if (captureStateOf(stream).active)
        fail("cannot shrink the workspace while the stream is captured into "
             "a CUDA graph; set the limit before capturing");
      FLUID_CUDA_CHECK(cudaStreamSynchronize(stream));
      buffer.release();
    }
    context->workspaceLimit = bytes < 0 ? -1 : bytes;
  });
}

namespace {

void requireCopy(const void *destination, const void *source, int64_t bytes) {
  if (bytes < 0)
    fail("bytes must be >= 0, got " + std::to_string(bytes));
  if (bytes > 0 && (!destination || !source))
    fail(std::string(destination ? "source" : "destination") + " is null");
}

} // namespace

extern "C" fluid_status fluid_cuda_copy_to_device(fluid_cuda_context *context,
                                                  void *device,
                                                  const void *host,
                                                  int64_t bytes) {
  return guard("fluid_cuda_copy_to_device", [&] {
    requireContext(context);
    requireCopy(device, host, bytes);
    if (bytes == 0)
      return;
    cudaStream_t stream = context->stream.get();
    FLUID_CUDA_CHECK(cudaMemcpyAsync(device, host, static_cast<size_t>(bytes),
                                     cudaMemcpyHostToDevice, stream));
    FLUID_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

extern "C" fluid_status fluid_cuda_copy_to_host(fluid_cuda_context *context,
                                                void *host, const void *device,
                                                int64_t bytes) {
  return guard("fluid_cuda_copy_to_host", [&] {
    requireContext(context);
    requireCopy(host, device, bytes);
    if (bytes == 0)
      return;
    cudaStream_t stream = context->stream.get();
    FLUID_CUDA_CHECK(cudaMemcpyAsync(host, device, static_cast<size_t>(bytes),
                                     cudaMemcpyDeviceToHost, stream));
    FLUID_CUDA_CHECK(cudaStreamSynchronize(stream));
  });
}

extern "C" fluid_status fluid_cuda_memset_zero(fluid_cuda_context *context,
                                               void *device, int64_t bytes) {
  return guard("fluid_cuda_memset_zero", [&] {
    requireContext(context);
    requireCopy(device, device, bytes);
    if (bytes == 0)
      return;
    FLUID_CUDA_CHECK(cudaMemsetAsync(device, 0, static_cast<size_t>(bytes),
                                     context->stream.get()));
  });
}

extern "C" fluid_status
fluid_cuda_sum_scratch(fluid_cuda_context *context, int64_t counterCount,
                       int64_t partialCount, int32_t dtype,
                       fluid_tensor *counters, fluid_tensor *partials) {
  return guard("fluid_cuda_sum_scratch", [&] {
    requireContext(context);
    if (!counters || !partials)
      fail("counters and partials must not be null");
    if (dtype != FLUID_F32 && dtype != FLUID_F64)
      fail("the partial sums' dtype must be f32 or f64, got " +
           std::to_string(dtype));
    constexpr int64_t kMaxCount = int64_t(1) << 40;
    if (counterCount < 1 || counterCount > kMaxCount || partialCount < 1 ||
        partialCount > kMaxCount)
      fail("counter_count and partial_count must be in [1, 2^40], got " +
           std::to_string(counterCount) + " and " +
           std::to_string(partialCount));
    cudaStream_t stream = context->stream.get();
    auto grow = [&](DeviceBuffer &buffer, size_t bytes, const char *what,
                    bool zero) {
      if (bytes <= buffer.bytes())
        return;
      const CaptureState capture = captureStateOf(stream);
      if (capture.active)
        fail(std::string("needs ") + std::to_string(bytes) + " bytes of " +
             what + ", more than the " + std::to_string(buffer.bytes()) +
             " held, " + captureText(capture) +
             " (run the step once outside capture first)");
      // Kernels enqueued earlier, and graphs, may still use the old one.
      auto retired = std::make_unique<DeviceBuffer>();
      retired->swap(buffer);
      context->retiredSumScratch.push_back(std::move(retired));
      buffer.reallocate(std::max<size_t>(bytes, 256), what);
      if (zero)
        FLUID_CUDA_CHECK(
            cudaMemsetAsync(buffer.data(), 0, buffer.bytes(), stream));
    };
    grow(context->sumCounters, static_cast<size_t>(counterCount) * 4,
         "reduction counters", /*zero=*/true);
    grow(context->sumPartials,
         static_cast<size_t>(partialCount * fluid_dtype_size(dtype)),
         "partial sums", /*zero=*/false);
    *counters = {};
    counters->data = context->sumCounters.data();
    counters->dtype = FLUID_I32;
    counters->rank = 1;
    counters->shape[0] = counterCount;
    *partials = {};
    partials->data = context->sumPartials.data();
    partials->dtype = dtype;
    partials->rank = 1;
    partials->shape[0] = partialCount;
  });
}

extern "C" fluid_status fluid_cuda_get_stats(const fluid_cuda_context *context,
                                             fluid_cuda_stats *out) {
  return guard("fluid_cuda_get_stats", [&] {
    if (!context)
      fail("context is null");
    if (!out)
      fail("out is null");
    out->peak_allocated_bytes = context->peakAllocatedBytes;
    out->workspace_bytes = static_cast<int64_t>(context->workspace.bytes());
    out->algorithm_searches = context->algorithms.searches();
    out->algorithm_cache_hits = context->algorithms.hits();
    out->allocated_bytes = context->allocatedBytes;
  });
}
