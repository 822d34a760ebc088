//===- Data.h - Datasets and shuffling for training loops -----------------===//
//
// A dataset is a read-only, indexable collection of u8 images of one shape
// [C, H, W] with integer labels. A training loop shuffles the indices of an
// epoch with fluid_shuffle and asks fluid_dataset_batch for the normalized
// images and labels at a slice of them. Two kinds exist:
//
// IDX files (http://yann.lecun.com/exdb/mnist/, the format of MNIST and
// Fashion-MNIST): an image file with magic 0x00000803 (u8, rank 3) and
// big-endian dimensions [count, rows, cols], and a label file with magic
// 0x00000801 (u8, rank 1) and dimension [count], each followed by its bytes.
// Each file may be raw or gzip-compressed (recognized by its first bytes,
// 0x1f 0x8b; concatenated gzip members are one stream). Both are loaded into
// memory whole: the images become [count, 1, rows, cols]. The files must hold
// at least one image of at least one pixel, and exactly the bytes their
// headers promise, no more and no less. A gzip file is checked against its
// CRC, and is never decompressed past the size its header promises.
//
// Synthetic data: the value of everything is a pure function of (seed,
// index), computed on demand when a batch asks for it, so a dataset of any
// count costs no memory and any subset can be generated independently, in
// any order, by any thread. With ctr(i, b) = {lo32(i), hi32(i), b,
// 0x53594E54} ("SYNT") and key = {lo32(seed), hi32(seed)}, each
// philox4x32x10(ctr, key) block {x0, x1, x2, x3} (see Init.h) yields
//   label of image i  = (W * classes) >> 64 for W = x0:x1 = (x0 << 32) | x1
//                       of block b = 0 (uniform on [0, classes) to within
//                       classes / 2^64);
//   pixels of image i = the bytes of x0, x1, x2, x3 of blocks b = 1, 2, ...,
//                       each word little-endian: 16 pixels per block, in
//                       row-major [C, H, W] order.
// Images and labels are independent: synthetic data measures speed, it holds
// nothing to learn.
//
// Batches normalize each pixel p as (p / 255.0 - mean) / std, evaluated in
// double and rounded once to the destination's element type.
//
// Thread safety: a dataset is immutable once made; fluid_dataset_info and
// fluid_dataset_batch may be called on one dataset from any number of threads
// at once (a prefetch thread, say). Only fluid_dataset_free must not race
// with them.
//
// Errors (the message names the file, the argument or the index at fault):
//   FLUID_ERROR_IO               a file cannot be opened or read;
//   FLUID_ERROR_INVALID_ARGUMENT a malformed, truncated or corrupt file,
//                                image and label files that disagree, bad
//                                arguments, an index out of range;
//   FLUID_ERROR_UNSUPPORTED      a well-formed IDX file of another element
//                                type than u8, a destination dtype other
//                                than those listed;
//   FLUID_ERROR_OUT_OF_MEMORY    the dataset does not fit in host memory.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_DATA_H
#define FLUID_RUNTIME_DATA_H

#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/// An immutable, indexable set of images and labels.
typedef struct fluid_dataset fluid_dataset;

/// Loads an IDX image file and an IDX label file (each raw or gzip) holding
/// the same number of items. On success `*out` must be released with
/// fluid_dataset_free; on failure it is left unchanged.
fluid_status fluid_dataset_open_idx(const char *images_path,
                                    const char *labels_path,
                                    fluid_dataset **out);

/// A synthetic dataset of `count` images [channels, height, width] with
/// labels in [0, classes), all generated on demand from `seed` (see above).
/// count, channels, height, width >= 1; 1 <= classes <= INT32_MAX; an image
/// holds at most 16 * (2^32 - 1) pixels. On failure `*out` is left unchanged.
fluid_status fluid_dataset_synthetic(int64_t count, int64_t channels,
                                     int64_t height, int64_t width,
                                     int64_t classes, uint64_t seed,
                                     fluid_dataset **out);

/// Releases a dataset; accepts NULL.
void fluid_dataset_free(fluid_dataset *dataset);

/// The number of items, the image shape {C, H, W} and the number of classes
/// (labels lie in [0, classes); for IDX files, the largest label + 1). Any
/// output pointer may be NULL.
fluid_status fluid_dataset_info(const fluid_dataset *dataset, int64_t *count,
                                int64_t shape[3], int64_t *classes);

/// Fills `images` (host memory, FLUID_F32 or FLUID_F64, shape [n, C, H, W])
/// with the normalized images of items indices[0], ..., indices[n - 1] and
/// `labels` (FLUID_I32 or FLUID_I64, shape [n]) with their labels. Indices
/// may repeat and come in any order; n may be 0. mean and std must be finite
/// and std > 0. Every argument and index is checked before anything is
/// written, so on failure the destinations are unchanged.
fluid_status fluid_dataset_batch(const fluid_dataset *dataset,
                                 const int64_t *indices, int64_t n,
                                 fluid_tensor *images, fluid_tensor *labels,
                                 double mean, double std);

/// fluid_dataset_batch for images laid out with their dimensions permuted:
/// `order` is a permutation of {0, 1, 2, 3}, and `images` has shape
/// [n, C, H, W] permuted by it, row-major (images->shape[d] is dimension
/// order[d] of [n, C, H, W]; {0, 2, 3, 1}: channels-last [n, H, W, C]).
/// The values are fluid_dataset_batch's, only placed elsewhere.
fluid_status fluid_dataset_batch_ordered(const fluid_dataset *dataset,
                                         const int64_t *indices, int64_t n,
                                         fluid_tensor *images,
                                         fluid_tensor *labels, double mean,
                                         double std, const int32_t order[4]);

/// Fills indices[0, n) with a permutation of [0, n) that depends only on
/// (seed, epoch, n), bit for bit on every machine: Fisher-Yates from the back,
/// for i = n - 1 down to 1 swapping indices[i] with indices[j], where
/// j = (W * (i + 1)) >> 64 for W = x0:x1 = (x0 << 32) | x1 of the block
/// philox4x32x10({lo32(i), hi32(i), lo32(epoch), hi32(epoch)},
///               {lo32(seed), hi32(seed)}) (see Init.h).
/// Each j is uniform on [0, i] to within (i + 1) / 2^64.
fluid_status fluid_shuffle(int64_t *indices, int64_t n, uint64_t seed,
                           uint64_t epoch);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_DATA_H
