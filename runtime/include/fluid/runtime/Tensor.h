//===- Tensor.h - Tensor descriptors shared by every runtime backend ------===//
//
// The runtime's public interface is a C ABI, so that emitted host code, the
// tensor-level interpreter (built without exceptions) and test harnesses
// (Python ctypes) can all call it. Tensors are dense, row-major, contiguous.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_TENSOR_H
#define FLUID_RUNTIME_TENSOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Element types. The numeric values are part of the ABI.
typedef enum fluid_dtype {
  FLUID_F32 = 0,
  FLUID_F64 = 1,
  FLUID_I32 = 2,
  FLUID_I64 = 3,
  FLUID_F16 = 4,
  FLUID_BF16 = 5,
  FLUID_U8 = 6,
} fluid_dtype;

/// The largest rank a tensor descriptor holds.
#define FLUID_MAX_RANK 8

/// A view of a dense row-major tensor. The runtime never owns `data`.
typedef struct fluid_tensor {
  void *data;
  int32_t dtype; /* a fluid_dtype */
  int32_t rank;
  int64_t shape[FLUID_MAX_RANK];
} fluid_tensor;

/// Every runtime entry point returns a status: FLUID_OK or an error code;
/// the message of the last error on this thread is `fluid_last_error()`.
typedef enum fluid_status {
  FLUID_OK = 0,
  FLUID_ERROR_INVALID_ARGUMENT = 1,
  FLUID_ERROR_IO = 2,
  FLUID_ERROR_UNSUPPORTED = 3,
  FLUID_ERROR_OUT_OF_MEMORY = 4,
  FLUID_ERROR_DEVICE = 5,
} fluid_status;

/// The runtime library's name and version, e.g. "fluid-runtime 0.1".
const char *fluid_runtime_version(void);

/// The message of the last error raised on the calling thread ("" if none).
const char *fluid_last_error(void);

/// Size in bytes of one element of `dtype` (0 for an unknown dtype).
int64_t fluid_dtype_size(int32_t dtype);

/// The short name of `dtype` ("f32", "i64", ...), or NULL for an unknown
/// dtype.
const char *fluid_dtype_name(int32_t dtype);

/// Number of elements of `t` (product of its shape; 1 for rank 0).
int64_t fluid_tensor_numel(const fluid_tensor *t);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_TENSOR_H
