//===- Npy.h - Reading and writing NumPy .npy files -----------------------===//
//
// The .npy format (numpy.lib.format): magic "\x93NUMPY", a version, a header
// length, a Python dict literal {'descr': ..., 'fortran_order': ...,
// 'shape': (...)}, then the raw array bytes.
//
// Supported: format versions 1.0, 2.0 and 3.0; descr '<f4' (F32), '<f8'
// (F64), '<i4' (I32), '<i8' (I64), '|u1' (U8) and '<f2' (F16); C order
// (fortran_order False); rank 0 to FLUID_MAX_RANK. A file must hold exactly
// one array: bytes after the data are an error (a file made by appending
// several arrays would otherwise be read as its first one).
//
// Errors (the message names the file and the problem):
//   FLUID_ERROR_IO               the file cannot be opened, read or written;
//   FLUID_ERROR_INVALID_ARGUMENT bad magic, truncated or malformed header,
//                                data shorter or longer than the shape says,
//                                a shape whose size overflows int64;
//   FLUID_ERROR_UNSUPPORTED      another version, dtype or byte order,
//                                Fortran order, rank > FLUID_MAX_RANK;
//   FLUID_ERROR_OUT_OF_MEMORY    the data buffer cannot be allocated.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_NPY_H
#define FLUID_RUNTIME_NPY_H

#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Reads the array in `path` into a newly allocated, 64-byte aligned host
/// buffer described by `out`. The caller owns `out->data` and releases it
/// with fluid_npy_free. On failure `*out` is left unchanged.
fluid_status fluid_npy_read(const char *path, fluid_tensor *out);

/// Releases the buffer of a tensor filled by fluid_npy_read and sets
/// `t->data` to NULL. Accepts NULL and a tensor whose data is NULL.
void fluid_npy_free(fluid_tensor *t);

/// Writes `t` (host memory, any supported dtype; BF16 has no .npy dtype) as a
/// version 1.0 file. The file appears complete or not at all: it is written
/// next to `path` under a temporary name, then renamed.
fluid_status fluid_npy_write(const char *path, const fluid_tensor *t);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_NPY_H
