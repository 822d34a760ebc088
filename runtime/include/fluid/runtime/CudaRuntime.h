//===- CudaRuntime.h - The cuda backend's context and memory (C ABI) ------===//
//
// One context per run: the device, one compute stream, the cuDNN and cuBLAS
// handles, the convolution algorithm cache, the workspace and a memory pool
// for stream-ordered allocations, all created once. Every fluid_cuda_* kernel
// entry point takes the context first and otherwise mirrors its fluid_cpu_*
// counterpart (CpuKernels.h, CpuGradKernels.h, CpuOptimizerKernels.h) exactly,
// with descriptors of device memory. Kernels are enqueued on the context's
// stream and return without waiting for the device; errors of the enqueue (bad
// descriptors, failed library calls) are reported at once; a fault of a kernel
// (an illegal access) surfaces at the next fluid_cuda_synchronize, and a value
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
/// Stream-ordered device memory for a program's temporaries (a program
/// that frees each one at its last use): cudaMallocFromPoolAsync on the
/// context's stream, from a pool of the context's own that keeps freed
/// memory for reuse. The memory may be used by work enqueued on the
/// stream after this call (not by other streams before that work); its
/// contents are undefined (0xFF bytes with FLUID_POISON_MEMORY=1, see
/// CpuMemory.h). 0 bytes gives NULL; negative bytes are
/// FLUID_ERROR_INVALID_ARGUMENT, out of device memory
/// FLUID_ERROR_OUT_OF_MEMORY. Counted in fluid_cuda_stats as
/// fluid_cuda_malloc is. Legal while the stream is captured into a CUDA
/// graph: the allocation then is a memory node of the graph, and must be
/// released in the same capture.
fluid_status fluid_cuda_allocate(fluid_cuda_context *context, int64_t bytes,
                                 void **out);
/// Releases memory from fluid_cuda_allocate of this context: cudaFreeAsync
/// on the context's stream, without waiting; work enqueued before it may
/// still use the memory, work enqueued after it must not. Accepts NULL. A
/// pointer this context's fluid_cuda_allocate did not return (or one
/// released already), and one allocated inside a CUDA graph capture but
/// released outside it or in another (or the reverse), is an error
/// (FLUID_ERROR_INVALID_ARGUMENT) and is left alone.
fluid_status fluid_cuda_release(fluid_cuda_context *context, void *data);

/// Limits the cuDNN workspace (the one scratch buffer the context's
/// library calls and kernels share) to `bytes`; bytes < 0 lifts the limit
/// (the default). Convolution algorithm searches then consider only
/// algorithms whose workspace fits beside what the call itself keeps in
/// the workspace (an explicitly padded input), a cached algorithm that
/// needs more is searched again, and a call that cannot stay within the
/// limit (a padded input or a kernel's scratch larger than it) fails with
/// FLUID_ERROR_OUT_OF_MEMORY naming it. A workspace already larger is
/// freed at once (after waiting for the stream; refused while the stream
/// is being captured). The driver sets the program's
/// workspace_limit_bytes (Program.h) before the first step.
fluid_status fluid_cuda_set_workspace_limit(fluid_cuda_context *context,
                                            int64_t bytes);

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

/// Device memory through which the blocks of a generated reduction combine
/// their sums in a fixed order, so that results are the same from run to
/// run: on return `counters` describes `counter_count` (>= 1) 32-bit
/// counters, all zero, which the kernel must leave zero when it ends, and
/// `partials` `partial_count` (>= 1) elements of `dtype` (FLUID_F32 or
/// FLUID_F64) of scratch. The context keeps one such buffer pair for every
/// call: kernels using them must run in stream order, one at a time (as on
/// the context's stream). It grows (outside CUDA graph capture only; a
/// request that needs more during capture fails with a message) without
/// freeing what graphs may have captured until the context is destroyed.
fluid_status fluid_cuda_sum_scratch(fluid_cuda_context *context,
                                    int64_t counter_count,
                                    int64_t partial_count, int32_t dtype,
                                    fluid_tensor *counters,
                                    fluid_tensor *partials);

/// Statistics for logs and benchmarks.
typedef struct fluid_cuda_stats {
  /* The most bytes of fluid_cuda_malloc and fluid_cuda_allocate together
     allocated at once (as the host enqueued the allocations and frees). */
  int64_t peak_allocated_bytes;
  int64_t workspace_bytes;      /* cuDNN workspace currently held */
  int64_t algorithm_searches;   /* cudnnFind* calls made by this context */
  int64_t algorithm_cache_hits; /* choices served from the cache */
  /* Through fluid_cuda_malloc and fluid_cuda_allocate, not yet freed. */
  int64_t allocated_bytes;
} fluid_cuda_stats;
fluid_status fluid_cuda_get_stats(const fluid_cuda_context *context,
                                  fluid_cuda_stats *out);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_CUDARUNTIME_H
