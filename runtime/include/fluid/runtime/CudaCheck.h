//===- CudaCheck.h - One checking facility for CUDA library calls ---------===//
//
// Every CUDA runtime, cuDNN and cuBLAS call in the runtime goes through one of
// these macros. A failed call throws fluid::rt::Error(FLUID_ERROR_DEVICE, ...)
// whose message names the call as written, where it is, and the library's
// reason, e.g.
//   cudaMalloc(&p, bytes) failed at Arena.cpp:42: cudaErrorMemoryAllocation:
//   out of memory
// The C entry points' fluid::rt::guard turns that into a status and
// fluid_last_error(). Each macro accepts only its own library's status type,
// so a cuDNN call checked with FLUID_CUDA_CHECK does not compile.
//
// Kernel launches return nothing; check them with
// FLUID_CUDA_CHECK(cudaGetLastError()) right after the launch.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDACHECK_H
#define FLUID_RUNTIME_CUDACHECK_H

#include "fluid/runtime/Error.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

namespace fluid::rt::detail {

[[noreturn]] inline void throwDeviceError(const char *call, const char *file,
                                          int line, const std::string &reason) {
  throw Error(FLUID_ERROR_DEVICE, std::string(call) + " failed at " + file +
                                      ":" + std::to_string(line) + ": " +
                                      reason);
}

[[noreturn]] inline void failCuda(cudaError_t status, const char *call,
                                  const char *file, int line) {
  // A failed call also records a (non-sticky) last error; clear it so a later
  // FLUID_CUDA_CHECK(cudaGetLastError()) does not report this failure again.
  (void)cudaGetLastError();
  throwDeviceError(call, file, line,
                   std::string(cudaGetErrorName(status)) + ": " +
                       cudaGetErrorString(status));
}

[[noreturn]] inline void failCudnn(cudnnStatus_t status, const char *call,
                                   const char *file, int line) {
  // The status name alone rarely says which parameter was wrong; cuDNN 9
  // keeps a detailed message of the last failure on this thread.
  char detail[512] = "";
  cudnnGetLastErrorString(detail, sizeof(detail));
  throwDeviceError(call, file, line,
                   std::string(cudnnGetErrorString(status)) +
                       (detail[0] ? std::string(": ") + detail : ""));
}

[[noreturn]] inline void failCublas(cublasStatus_t status, const char *call,
                                    const char *file, int line) {
  throwDeviceError(call, file, line,
                   std::string(cublasGetStatusName(status)) + ": " +
                       cublasGetStatusString(status));
}

} // namespace fluid::rt::detail

#define FLUID_CUDA_CHECK(call)                                                 \
  do {                                                                         \
    cudaError_t fluidCheckStatus = (call);                                     \
    if (fluidCheckStatus != cudaSuccess)                                       \
      ::fluid::rt::detail::failCuda(fluidCheckStatus, #call, __FILE__,         \
                                    __LINE__);                                 \
  } while (0)

#define FLUID_CUDNN_CHECK(call)                                                \
  do {                                                                         \
    cudnnStatus_t fluidCheckStatus = (call);                                   \
    if (fluidCheckStatus != CUDNN_STATUS_SUCCESS)                              \
      ::fluid::rt::detail::failCudnn(fluidCheckStatus, #call, __FILE__,        \
                                     __LINE__);                                \
  } while (0)

#define FLUID_CUBLAS_CHECK(call)                                               \
  do {                                                                         \
    cublasStatus_t fluidCheckStatus = (call);                                  \
    if (fluidCheckStatus != CUBLAS_STATUS_SUCCESS)                             \
      ::fluid::rt::detail::failCublas(fluidCheckStatus, #call, __FILE__,       \
                                      __LINE__);                               \
  } while (0)

#endif // FLUID_RUNTIME_CUDACHECK_H
