//===- Data.h - Datasets and shuffling for training loops -----------------===//
//
// A dataset is a read-only, indexable collection of images of one shape
// [C, H, W] with integer labels. A training loop shuffles the indices of an
// epoch with fluid_shuffle and asks fluid_dataset_epoch_batch (or
// fluid_dataset_batch) for the normalized images and labels at a slice of
// them. These kinds exist:
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
// Image folders and list files (fluid_dataset_open_images): JPEG and PNG
// files, listed when the dataset opens (a folder of class folders, as
// torchvision's ImageFolder orders it, or a list file of "PATH LABEL" lines;
// runtime/data/ImageList.h has the rules) and decoded when a batch asks for
// them, to RGB pixels equal to PIL's Image.open(path).convert("RGB")
// (runtime/data/ImageDecoder.h), then transformed to the dataset's [3, H, W]
// as torchvision's ImageNet recipes on PIL images do:
//   FLUID_IMAGE_TRAIN: RandomResizedCrop((H, W), scale = (0.08, 1),
//     ratio = (3/4, 4/3)) and RandomHorizontalFlip(0.5), their random choices
//     those of fluid_random_resized_crop(seed, epoch, index, ...) for the
//     item at `index` in `epoch`;
//   FLUID_IMAGE_EVAL: Resize(round(max(H, W) * 256 / 224)) (the short side;
//     the long side in proportion, rounded down) and CenterCrop((H, W));
// both resizing with PIL's antialiased bilinear filter, pixel for pixel
// (fluid_image_resize). Nothing but the list is held in memory.
//
// NumPy files (fluid_dataset_open_npy): images u8 or f32 [N, C, H, W] and
// labels i64 (or i32) [N], for exact comparisons with PyTorch: no transform;
// u8 pixels are normalized, f32 values are written as they are.
//
// Batches normalize each u8 pixel p of channel c as (p / 255.0 - mean[c]) /
// std[c], evaluated in double and rounded once to the destination's element
// type.
//
// Thread safety: a dataset is immutable once made (but for an image
// dataset's count of bad images); fluid_dataset_info, the batch functions
// and fluid_dataset_bad_images may be called on one dataset from any number
// of threads at once (a prefetch thread's pool, say). Only
// fluid_dataset_free must not race with them.
//
// Errors (the message names the file, the argument or the index at fault):
//   FLUID_ERROR_IO               a file cannot be opened or read;
//   FLUID_ERROR_INVALID_ARGUMENT a malformed, truncated or corrupt file,
//                                image and label files that disagree, an
//                                image folder with no class folders or a
//                                class folder with no images, a list-file
//                                line that does not parse ("FILE:LINE: ..."),
//                                bad arguments, an index out of range;
//   FLUID_ERROR_UNSUPPORTED      a well-formed IDX file of another element
//                                type than u8, .npy files of other dtypes, a
//                                file that is neither JPEG nor PNG, a
//                                destination dtype other than those listed;
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

/// How an image dataset makes its items.
typedef enum fluid_image_transform {
  FLUID_IMAGE_TRAIN = 0, ///< random resized crop and flip
  FLUID_IMAGE_EVAL = 1,  ///< resize and center crop
} fluid_image_transform;

typedef struct fluid_image_options {
  /// The size of every item, [3, height, width]: the program's images (from
  /// 1 to 32768 each).
  int64_t height, width;
  int32_t transform; ///< a fluid_image_transform
  /// Non-zero: an image that cannot be decoded (corrupt, truncated, not a
  /// JPEG or PNG file, unreadable) is replaced by the next decodable one of
  /// the list (its pixels and label; wrapping around), transformed with the
  /// random choices of the item asked for, and counted
  /// (fluid_dataset_bad_images). Zero: the batch fails, naming the file.
  int32_t skip_bad_images;
  uint64_t seed; ///< of FLUID_IMAGE_TRAIN's random choices
} fluid_image_options;

/// Opens an image dataset: `path` is a folder of class folders, or else a
/// list file. The files are listed (not read); an empty class folder, a
/// root folder without class folders, an empty list file or a list-file
/// line that does not parse is an error. Its classes are the class folders,
/// or the largest label listed + 1. On failure `*out` is left unchanged.
fluid_status fluid_dataset_open_images(const char *path,
                                       const fluid_image_options *options,
                                       fluid_dataset **out);

/// Opens a pair of .npy files (Npy.h): images u8 or f32 [N, C, H, W] (f32
/// values finite) and labels i64 or i32 [N] from 0 to 2147483647. On failure
/// `*out` is left unchanged.
fluid_status fluid_dataset_open_npy(const char *images_path,
                                    const char *labels_path,
                                    fluid_dataset **out);

/// Releases a dataset; accepts NULL.
void fluid_dataset_free(fluid_dataset *dataset);

/// The number of items, the image shape {C, H, W} and the number of classes
/// (labels lie in [0, classes); for an image folder its class folders, for
/// IDX, .npy and list files the largest label + 1). Any output pointer may
/// be NULL.
fluid_status fluid_dataset_info(const fluid_dataset *dataset, int64_t *count,
                                int64_t shape[3], int64_t *classes);

/// Fills `images` (host memory, FLUID_F32 or FLUID_F64, shape [n, C, H, W]
/// permuted by `order`) with the normalized images of items indices[0], ...,
/// indices[n - 1] as the random transforms of `epoch` make them, and `labels`
/// (FLUID_I32 or FLUID_I64, shape [n]) with their labels. `order` is a
/// permutation of {0, 1, 2, 3}: images->shape[d] is dimension order[d] of
/// [n, C, H, W], row-major ({0, 2, 3, 1}: channels-last [n, H, W, C]).
/// `mean` and `std` hold C values each, finite, std > 0. Indices may repeat
/// and come in any order; n may be 0. Every argument and index is checked
/// before anything is written; only an item that cannot be read (an image
/// file) fails a batch part-way, leaving it partly written.
fluid_status fluid_dataset_epoch_batch(const fluid_dataset *dataset,
                                       uint64_t epoch, const int64_t *indices,
                                       int64_t n, fluid_tensor *images,
                                       fluid_tensor *labels, const double *mean,
                                       const double *std,
                                       const int32_t order[4]);

/// The number of images an image dataset opened with skip_bad_images has
/// found unreadable and replaced so far (0 for every other dataset), and,
/// when `latest` is not NULL, the error of the latest, cut to `capacity` - 1
/// bytes and NUL-terminated.
fluid_status fluid_dataset_bad_images(const fluid_dataset *dataset,
                                      int64_t *count, char *latest,
                                      int64_t capacity);

/// fluid_dataset_epoch_batch in epoch 0, with `mean` and `std` for every
/// channel, in the order [n, C, H, W].
fluid_status fluid_dataset_batch(const fluid_dataset *dataset,
                                 const int64_t *indices, int64_t n,
                                 fluid_tensor *images, fluid_tensor *labels,
                                 double mean, double std);

/// fluid_dataset_epoch_batch in epoch 0, with `mean` and `std` for every
/// channel: fluid_dataset_batch's values, laid out in `order`.
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

/// The random choices of FLUID_IMAGE_TRAIN for the item at `index` in
/// `epoch` of a dataset opened with `seed`, whose image is height x width
/// pixels: the crop box[4] = {top, left, crop height, crop width} and
/// whether it is mirrored (*flip = 1) or not (0). With
///   key(e)   = {x0, x1} of philox4x32x10({lo32(e), hi32(e), 0, "CROP"},
///                                        {lo32(seed), hi32(seed)}),
///   block(b) = philox4x32x10({lo32(index), hi32(index), b, "CROP"},
///                            key(epoch)),   "CROP" = 0x43524F50,
///   u(hi, lo) = (((hi << 32) | lo) >> 11) * 2^-53, uniform on [0, 1):
/// try t = 0, ..., 9: with {x0, x1, x2, x3} = block(2t),
///   area   = height * width * (0.08 + 0.92 * u(x0, x1)),
///   aspect = exp(log(3/4) + (log(4/3) - log(3/4)) * u(x2, x3)),
///   w = round(sqrt(area * aspect)), h = round(sqrt(area / aspect))
///   (round half to even); if 0 < w <= width and 0 < h <= height, the crop is
///   h x w at top = (x0:x1 * (height - h + 1)) >> 64 and left = (x2:x3 *
///   (width - w + 1)) >> 64 of {x0, x1, x2, x3} = block(2t + 1).
/// If no try fits: the largest centred crop of aspect ratio within [3/4,
/// 4/3] (w = width, h = round(width / (3/4)) when width / height < 3/4;
/// h = height, w = round(height * 4/3) when above 4/3; else the whole
/// image), at top = (height - h) / 2, left = (width - w) / 2 (rounded
/// down): torchvision's RandomResizedCrop.get_params. The flip is bit 31 of
/// x0 of block(20). 1 <= height, width; height * width <= 178956970.
fluid_status fluid_random_resized_crop(uint64_t seed, uint64_t epoch,
                                       int64_t index, int64_t height,
                                       int64_t width, int64_t box[4],
                                       int32_t *flip);

/// Decodes the JPEG or PNG file at `path` to 8-bit RGB as PIL's
/// Image.open(path).convert("RGB") does (runtime/data/ImageDecoder.h): sets
/// *height and *width and, when `rgb` is not NULL, fills rgb[0, height *
/// width * 3) (row-major [height, width, 3]; `capacity` bytes must hold it).
fluid_status fluid_image_decode(const char *path, uint8_t *rgb,
                                int64_t capacity, int64_t *height,
                                int64_t *width);

/// Resizes the RGB image `rgb` ([height, width, 3]) to `out` ([out_height,
/// out_width, 3]) as PIL's Image.resize((out_width, out_height), BILINEAR)
/// does, antialiased when shrinking. Every size from 1 to 32768.
fluid_status fluid_image_resize(const uint8_t *rgb, int64_t height,
                                int64_t width, uint8_t *out, int64_t out_height,
                                int64_t out_width);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_DATA_H
