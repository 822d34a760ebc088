//===- CudaRuntime.h - The cuda backend's context and memory (C ABI) ------===//
//
// One context per run: the device, one compute stream, the cuDNN and cuBLAS
// handles, the convolution algorithm cache and the workspace, all created
// once. Every fluid_cuda_* kernel entry point takes the context first and
// otherwise mirrors its fluid_cpu_* counterpart (CpuKernels.h,
// CpuGradKernels.h, CpuOptimizerKernels.h) exactly, with descriptors of
// device memory. Kernels are enqueued on the context's stream and return
// without waiting for the device; errors of the enqueue (bad descriptors,
// failed library calls) are reported at once; a fault of a kernel (an
// illegal access) surfaces at the next fluid_cuda_synchronize, and a value
// a kernel rejects (a label out of range, a NaN learning rate) is recorded
// on the device and reported by fluid_cuda_check_errors (CudaKernels.h).
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDARUNTIME_H
#define FLUID_RUNTIME_CUDARUNTIME_H

#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fluid_cuda_context fluid_cuda_context;

typedef struct fluid_cuda_options {
  int32_t device;     /* CUDA device ordinal */
  int32_t allow_tf32; /* 1: TF32 tensor-core math for f32 convs and GEMMs */
  /* File where convolution algorithm choices persist between runs; NULL or
     "" keeps them in memory only. */
  const char *algorithm_cache_path;
} fluid_cuda_options;

/// Creates a context on options->device (NULL options: device 0, no TF32,
/// no cache file), loading the algorithm cache file if there is one; a
/// cache file that does not parse is ignored with a warning on stderr.
/// A context is used by one thread at a time.
fluid_status fluid_cuda_context_create(const fluid_cuda_options *options,
                                       fluid_cuda_context **out);
/// Waits for the stream, saves the algorithm cache (to a temporary file
/// renamed over the old one, and only if its choices changed; a failure
/// is a warning on stderr), releases everything, including memory from
/// fluid_cuda_malloc not yet freed. Accepts NULL.
void fluid_cuda_context_destroy(fluid_cuda_context *context);
/// Waits until all work enqueued on the context's stream has finished;
/// reports a CUDA error of that work (values kernels reject are reported by
/// fluid_cuda_check_errors instead).
fluid_status fluid_cuda_synchronize(fluid_cuda_context *context);

/// The context's compute stream (a cudaStream_t): every kernel of the
/// context is enqueued on it. For drivers that order their own work (input
/// copies on another stream, CUDA graph capture) against the kernels'.
fluid_status fluid_cuda_context_stream(fluid_cuda_context *context,
                                       void **stream);

/// Device memory (cudaMalloc; 256-byte aligned); 0 bytes gives NULL. Out
/// of device memory is FLUID_ERROR_OUT_OF_MEMORY.
fluid_status fluid_cuda_malloc(fluid_cuda_context *context, int64_t bytes,
                               void **out);
/// Frees memory from fluid_cuda_malloc of this context (cudaFree, which
/// waits for the device, so enqueued work may still use it). Accepts NULL;
/// a pointer this context did not allocate sets fluid_last_error() and is
/// left alone.
void fluid_cuda_free(fluid_cuda_context *context, void *pointer);
/// Copies on the context's stream (host memory need not be pinned; the
/// call returns when the host buffer may be reused): cudaMemcpyAsync then
/// cudaStreamSynchronize, so the copy also waits for the work enqueued
/// before it and the host sees its results.
fluid_status fluid_cuda_copy_to_device(fluid_cuda_context *context,
                                       void *device, const void *host,
                                       int64_t bytes);
fluid_status fluid_cuda_copy_to_host(fluid_cuda_context *context, void *host,
                                     const void *device, int64_t bytes);
/// Fills device memory with zero bytes, on the stream.
fluid_status fluid_cuda_memset_zero(fluid_cuda_context *context, void *device,
                                    int64_t bytes);

/// Statistics for logs and benchmarks.
typedef struct fluid_cuda_stats {
  int64_t peak_allocated_bytes; /* through fluid_cuda_malloc */
  int64_t workspace_bytes;      /* cuDNN workspace currently held */
  int64_t algorithm_searches;   /* cudnnFind* calls made by this context */
  int64_t algorithm_cache_hits; /* choices served from the cache */
  int64_t allocated_bytes;      /* through fluid_cuda_malloc, not yet freed */
} fluid_cuda_stats;
fluid_status fluid_cuda_get_stats(const fluid_cuda_context *context,
                                  fluid_cuda_stats *out);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_CUDARUNTIME_H
