//===- Safetensors.h - Reading and writing safetensors files --------------===//
//
// safetensors (https://huggingface.co/docs/safetensors) is the checkpoint
// format weights move in between Fluid and PyTorch: an 8-byte little-endian
// header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
//    "__metadata__": {"key": "value"}}
// (possibly padded with spaces), then the data buffer; offsets are relative
// to the buffer's start.
//
// Supported dtypes: F32, F64, I32, I64, F16, BF16, U8. The reader validates
// everything the format requires and rejects the rest: a header longer than
// the file (or than 100,000,000 bytes, the reference implementation's limit),
// malformed JSON, unknown fields or dtypes, duplicate names, names or
// metadata keys or values holding a NUL character (\u0000, which a C string
// cannot), rank above FLUID_MAX_RANK, offsets that are reversed, out of
// range, not equal to dtype size * element count, overlapping, or leaving
// bytes of the buffer that belong to no tensor.
//
// Errors (the message names the file and the problem):
//   FLUID_ERROR_IO               the file cannot be opened, read or written;
//   FLUID_ERROR_INVALID_ARGUMENT a malformed or truncated file, an unknown
//                                tensor name, a mismatched destination;
//   FLUID_ERROR_UNSUPPORTED      a dtype outside the list above, a rank above
//                                FLUID_MAX_RANK.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_SAFETENSORS_H
#define FLUID_RUNTIME_SAFETENSORS_H

#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/// An open, validated safetensors file. Its functions may be called from
/// several threads at once; only close must not race with them.
typedef struct fluid_safetensors_reader fluid_safetensors_reader;

/// Opens and validates `path`; on success `*out` must be closed with
/// fluid_safetensors_close. Tensor data is read on demand.
fluid_status fluid_safetensors_open(const char *path,
                                    fluid_safetensors_reader **out);

/// Closes a reader; accepts NULL.
void fluid_safetensors_close(fluid_safetensors_reader *reader);

/// The number of tensors in the file.
fluid_status fluid_safetensors_count(const fluid_safetensors_reader *reader,
                                     int64_t *count);

/// The name of tensor `index` (0 <= index < count), in byte-wise ascending
/// order of names. The string lives as long as the reader.
fluid_status fluid_safetensors_name(const fluid_safetensors_reader *reader,
                                    int64_t index, const char **name);

/// The dtype, rank and shape of tensor `name`; `info->data` is set to NULL.
fluid_status fluid_safetensors_info(const fluid_safetensors_reader *reader,
                                    const char *name, fluid_tensor *info);

/// Copies the bytes of tensor `name` into `destination->data`, whose dtype
/// and shape must equal the file's (a mismatch is an error naming both).
fluid_status fluid_safetensors_read(const fluid_safetensors_reader *reader,
                                    const char *name,
                                    const fluid_tensor *destination);

/// The "__metadata__" value of `key`, or NULL when the file has none. The
/// string lives as long as the reader.
fluid_status fluid_safetensors_metadata(const fluid_safetensors_reader *reader,
                                        const char *key, const char **value);

/// Collects named tensors, then writes them as one safetensors file.
typedef struct fluid_safetensors_writer fluid_safetensors_writer;

fluid_status fluid_safetensors_writer_create(fluid_safetensors_writer **out);

/// Frees a writer; accepts NULL.
void fluid_safetensors_writer_free(fluid_safetensors_writer *writer);

/// Adds tensor `t` (host memory) under `name`, which must be non-empty,
/// unique and not "__metadata__". The writer keeps the descriptor, not a copy
/// of the data: `t->data` must stay valid and unchanged until the last
/// fluid_safetensors_writer_write that includes it has returned.
fluid_status fluid_safetensors_writer_add(fluid_safetensors_writer *writer,
                                          const char *name,
                                          const fluid_tensor *t);

/// Sets "__metadata__" entry `key` to `value` (replacing an earlier value).
fluid_status
fluid_safetensors_writer_set_metadata(fluid_safetensors_writer *writer,
                                      const char *key, const char *value);

/// Writes every added tensor to `path`. Tensors are laid out by descending
/// element size, then name, so each starts aligned to its element size. The
/// file appears complete or not at all: it is written next to `path` under a
/// temporary name, synced, then renamed over `path`.
fluid_status
fluid_safetensors_writer_write(const fluid_safetensors_writer *writer,
                               const char *path);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_SAFETENSORS_H
