//===- Context.h - The cuda backend's context, as kernels see it ----------===//
//
// Internal to runtime/cuda: what kernel files need from a context. The
// context owns every handle (RAII), so kernel code only borrows them.
//
// Besides the accessors, this holds what every kernel file checks its
// operands with (device memory, cuDNN's int-sized dimensions) and RAII
// wrappers of the cuDNN descriptors a kernel creates per call.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDA_CONTEXT_H
#define FLUID_RUNTIME_CUDA_CONTEXT_H

#include "../cpu/TensorChecks.h"

#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/CudaRuntime.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <optional>
#include <string>

namespace fluid::rt::cuda {

class ConvAlgoCache;
class GeneratedModules;

/// The context's compute stream: every kernel is launched on it.
cudaStream_t streamOf(fluid_cuda_context *context);
cudnnHandle_t cudnnOf(fluid_cuda_context *context);
cublasHandle_t cublasOf(fluid_cuda_context *context);
bool allowTf32(fluid_cuda_context *context);
/// A device scratch buffer of at least `bytes`, valid until the next call
/// on the same context (grows by reallocating, after synchronizing). Never
/// grows past the context's workspace limit: a larger request fails with
/// FLUID_ERROR_OUT_OF_MEMORY naming the limit.
void *workspace(fluid_cuda_context *context, size_t bytes);
/// The context's workspace limit (fluid_cuda_set_workspace_limit), or none.
std::optional<size_t> workspaceLimit(fluid_cuda_context *context);

/// Fails (FLUID_ERROR_INVALID_ARGUMENT) on a null context; otherwise makes
/// the context's device current on the calling thread and returns it.
fluid_cuda_context *requireContext(fluid_cuda_context *context);

/// The context's CUDA device ordinal.
int deviceOf(fluid_cuda_context *context);

/// The convolution algorithm choices (AlgorithmCache.h) of the context.
ConvAlgoCache &convAlgoCache(fluid_cuda_context *context);

/// The modules of generated kernels the context loaded, with its cache of
/// their kernels (GeneratedKernels.h).
GeneratedModules &generatedModules(fluid_cuda_context *context);

/// Fails unless the data of `t` is device memory (or managed memory) of
/// the context's device; a tensor without elements passes. A host pointer
/// handed to a library would fault the whole context, so every kernel
/// checks its operands with this before enqueueing anything.
void requireDeviceMemory(fluid_cuda_context *context,
                         const cpu::CheckedTensor &t);

//===----------------------------------------------------------------------===//
// Device tables
//
// A kernel whose arguments do not fit a launch (the grouped optimizer
// updates: the address and size of every tensor of the group) reads them
// from a table in device memory. Uploading the table at every call would
// cost a synchronization each time; instead the context keeps, per call
// site, the last table uploaded and the key it was made from, so that a
// call whose key is unchanged reuses the device copy after one memcmp.
//
// `site` is an opaque key that the caller keeps stable for the context's
// lifetime (emitted programs pass the address of a static object per call
// site); a null site caches nothing. `key` holds everything the table is
// made from (descriptors: addresses, dtypes, shapes), so that comparing its
// bytes detects any change.
//
// An upload outside CUDA graph capture synchronizes the stream (kernels
// enqueued earlier may still read the site's buffer) and copies the table
// into the site's buffer, grown as needed; once a graph captured a kernel
// reading that buffer, it is never rewritten: a new one replaces it, and
// the old one lives on, for the graphs, until the context is destroyed.
// During capture (cudaStreamCaptureModeThreadLocal, where nothing may be
// allocated or synchronized), a changed table goes to one of the two
// capture slots reserved by the site's uploads outside capture: pinned host
// memory that a memcpy node of the graph copies to the slot's device
// memory, each slot given to one capture for good (the CUDA driver of
// runtime/driver captures up to two step graphs, one per prefetch slot).
// With no slot left, or one too small, the upload fails with a message.
// A site's first upload, and every upload without a site, must be outside
// capture. Everything is freed when the context is destroyed.
//===----------------------------------------------------------------------===//

/// The device copy of `site`'s current table if that table was made from
/// the `keyBytes` bytes at `key`, else null (always null for a null site).
const void *findDeviceTable(fluid_cuda_context *context, const void *site,
                            const void *key, size_t keyBytes);

/// Makes the `tableBytes` (> 0) at `table`, made from `key`, `site`'s
/// current table and returns its device copy, for kernels enqueued on the
/// context's stream from now on.
const void *uploadDeviceTable(fluid_cuda_context *context, const void *site,
                              const void *key, size_t keyBytes,
                              const void *table, size_t tableBytes);

//===----------------------------------------------------------------------===//
// cuDNN helpers
//===----------------------------------------------------------------------===//

/// The cuDNN data type of a float dtype (already checked by requireFloat
/// or requireLibraryFloat).
inline cudnnDataType_t cudnnDataTypeOf(int32_t dtype) {
  switch (dtype) {
  case FLUID_F64:
    return CUDNN_DATA_DOUBLE;
  case FLUID_F16:
    return CUDNN_DATA_HALF;
  case FLUID_BF16:
    return CUDNN_DATA_BFLOAT16;
  default:
    return CUDNN_DATA_FLOAT;
  }
}

/// The type cuDNN accumulates data of `dtype` in: f64 for f64, f32
/// otherwise (16-bit data with f32 sums, as PyTorch's autocast does).
inline cudnnDataType_t cudnnComputeTypeOf(int32_t dtype) {
  return dtype == FLUID_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

/// The scaling factors 1 and 0 that cuDNN and cuBLAS read for data of
/// `dtype`: double for f64, float otherwise.
inline const void *scalarOne(int32_t dtype) {
  static const float oneF = 1;
  static const double oneD = 1;
  return dtype == FLUID_F64 ? static_cast<const void *>(&oneD) : &oneF;
}
inline const void *scalarZero(int32_t dtype) {
  static const float zeroF = 0;
  static const double zeroD = 0;
  return dtype == FLUID_F64 ? static_cast<const void *>(&zeroD) : &zeroF;
}

/// `value` as an int, for cuDNN's int-sized dimensions and strides; fails
/// (FLUID_ERROR_UNSUPPORTED) naming `what` when it does not fit.
int cudnnInt(int64_t value, const std::string &what);

/// Owns a cudnnTensorDescriptor_t.
class TensorDescriptor {
public:
  TensorDescriptor() { FLUID_CUDNN_CHECK(cudnnCreateTensorDescriptor(&desc_)); }
  ~TensorDescriptor() { cudnnDestroyTensorDescriptor(desc_); }
  TensorDescriptor(const TensorDescriptor &) = delete;
  TensorDescriptor &operator=(const TensorDescriptor &) = delete;

  /// A dense NCHW tensor; fails (unsupported) when a size or stride
  /// exceeds cuDNN's int range.
  void setNchw(int32_t dtype, int64_t n, int64_t c, int64_t h, int64_t w);
  /// A dense NHWC tensor of dimensions [n, c, h, w] (channels innermost
  /// in memory), as setNchw.
  void setNhwc(int32_t dtype, int64_t n, int64_t c, int64_t h, int64_t w);
  /// setNchw or setNhwc, by `layout` (CUDNN_TENSOR_NCHW or _NHWC).
  void setDense(int32_t dtype, cudnnTensorFormat_t layout, int64_t n, int64_t c,
                int64_t h, int64_t w) {
    if (layout == CUDNN_TENSOR_NHWC)
      setNhwc(dtype, n, c, h, w);
    else
      setNchw(dtype, n, c, h, w);
  }
  /// A view of dimensions [n, c, h, w] with explicit element strides (NCHW
  /// or NHWC ones, or any other).
  void setNchwStrided(int32_t dtype, const int64_t dims[4],
                      const int64_t strides[4]);

  cudnnTensorDescriptor_t get() const { return desc_; }

private:
  cudnnTensorDescriptor_t desc_ = nullptr;
};

/// Owns a cudnnFilterDescriptor_t.
class FilterDescriptor {
public:
  FilterDescriptor() { FLUID_CUDNN_CHECK(cudnnCreateFilterDescriptor(&desc_)); }
  ~FilterDescriptor() { cudnnDestroyFilterDescriptor(desc_); }
  FilterDescriptor(const FilterDescriptor &) = delete;
  FilterDescriptor &operator=(const FilterDescriptor &) = delete;

  /// A dense filter of K output channels, C/groups input channels and an
  /// R x S window, stored [K, C/groups, R, S] (CUDNN_TENSOR_NCHW, KCRS) or
  /// [K, R, S, C/groups] (CUDNN_TENSOR_NHWC, KRSC: the filters of NHWC
  /// convolutions).
  void setDense(int32_t dtype, cudnnTensorFormat_t layout, int64_t k, int64_t c,
                int64_t r, int64_t s);

  cudnnFilterDescriptor_t get() const { return desc_; }

private:
  cudnnFilterDescriptor_t desc_ = nullptr;
};

/// output [batch, channels, height, width] += bias [channels] broadcast,
/// or with `replace` output = bias broadcast (exact: nothing to add), on
/// the context's stream (cudnnAddTensor, f32 blending). `layout` is the
/// output's: CUDNN_TENSOR_NCHW, or CUDNN_TENSOR_NHWC (stored [batch,
/// height, width, channels], the bias broadcast over its last dimension).
void addChannelBias(fluid_cuda_context *context, int32_t dtype,
                    const void *bias, void *output, cudnnTensorFormat_t layout,
                    int64_t batch, int64_t channels, int64_t height,
                    int64_t width, bool replace);

/// Owns a cudnnConvolutionDescriptor_t.
class ConvolutionDescriptor {
public:
  ConvolutionDescriptor() {
    FLUID_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&desc_));
  }
  ~ConvolutionDescriptor() { cudnnDestroyConvolutionDescriptor(desc_); }
  ConvolutionDescriptor(const ConvolutionDescriptor &) = delete;
  ConvolutionDescriptor &operator=(const ConvolutionDescriptor &) = delete;

  cudnnConvolutionDescriptor_t get() const { return desc_; }

private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
};

} // namespace fluid::rt::cuda

#endif // FLUID_RUNTIME_CUDA_CONTEXT_H
