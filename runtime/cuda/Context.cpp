//===- Context.cpp - The cuda backend's context ---------------------------===//
//
// One context owns, each through its own RAII member: the compute stream,
// a cuDNN handle and a cuBLAS handle bound to that stream, the workspace
// buffer shared by all library calls, the convolution algorithm cache and
// the allocations made through fluid_cuda_malloc. Members are declared in
// dependency order, so that a failure half-way through creating a context
// releases what was created, in reverse.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "AlgorithmCache.h"

#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/CudaRuntime.h"
#include "fluid/runtime/Error.h"

#include <climits>
#include <cstdio>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>

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
  }

  const int device;
  const bool allowTf32;
  ConvAlgoCache algorithms;
  Stream stream;
  CudnnHandle cudnn;
  CublasHandle cublas;
  DeviceBuffer workspace;
  std::unordered_map<void *, int64_t> allocations;
  int64_t allocatedBytes = 0;
  int64_t peakAllocatedBytes = 0;
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

void *cuda::workspace(fluid_cuda_context *context, size_t bytes) {
  DeviceBuffer &buffer = context->workspace;
  if (bytes > buffer.bytes()) {
    // Work already enqueued may still read the old buffer.
    FLUID_CUDA_CHECK(cudaStreamSynchronize(context->stream.get()));
    size_t rounded =
        (bytes + kWorkspaceGranule - 1) / kWorkspaceGranule * kWorkspaceGranule;
    buffer.reallocate(rounded, "workspace");
  }
  return buffer.data();
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

void FilterDescriptor::setKcrs(int32_t dtype, int64_t k, int64_t c, int64_t r,
                               int64_t s) {
  cudnnInt(k * c * r * s, "filter elements");
  FLUID_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
      desc_, cudnnDataTypeOf(dtype), CUDNN_TENSOR_NCHW,
      cudnnInt(k, "output channels"), cudnnInt(c, "input channels per group"),
      cudnnInt(r, "kernel height"), cudnnInt(s, "kernel width")));
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

extern "C" fluid_status fluid_cuda_malloc(fluid_cuda_context *context,
                                          int64_t bytes, void **out) {
  return guard("fluid_cuda_malloc", [&] {
    requireContext(context);
    if (!out)
      fail("out is null");
    *out = nullptr;
    if (bytes < 0)
      fail("bytes must be >= 0, got " + std::to_string(bytes));
    if (bytes == 0)
      return;
    void *pointer = nullptr;
    cudaError_t status = cudaMalloc(&pointer, static_cast<size_t>(bytes));
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw Error(FLUID_ERROR_OUT_OF_MEMORY,
                  "out of device memory for " + std::to_string(bytes) +
                      " bytes (" + std::to_string(context->allocatedBytes) +
                      " bytes allocated through this context)");
    }
    FLUID_CUDA_CHECK(status);
    context->allocations.emplace(pointer, bytes);
    context->allocatedBytes += bytes;
    if (context->allocatedBytes > context->peakAllocatedBytes)
      context->peakAllocatedBytes = context->allocatedBytes;
    *out = pointer;
  });
}

extern "C" void fluid_cuda_free(fluid_cuda_context *context, void *pointer) {
  (void)guard("fluid_cuda_free", [&] {
    requireContext(context);
    if (!pointer)
      return;
    auto it = context->allocations.find(pointer);
    if (it == context->allocations.end())
      fail("pointer " + pointerText(pointer) +
           " was not allocated by this context (or is already freed)");
    FLUID_CUDA_CHECK(cudaFree(pointer));
    context->allocatedBytes -= it->second;
    context->allocations.erase(it);
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
