# RUN: %python %s %fluid_runtime_lib
"""IDX datasets (Data.h): fluid_dataset_open_idx on small raw and gzip files
written here, read back through fluid_dataset_batch and compared exactly with
NumPy's normalization; every error path on corrupt, truncated or mismatched
files and bad batch arguments; concurrent batches; and, where Debian's
dataset-fashion-mnist is installed, the real Fashion-MNIST files against
Python's own gzip + NumPy decoding.
"""

import ctypes
import gzip
import os
import struct
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import cases  # noqa: E402
import datasets  # noqa: E402
import fluidrt  # noqa: E402
from cases import case  # noqa: E402
from datasets import INT64_P  # noqa: E402
from fluidrt import INVALID_ARGUMENT, IO, UNSUPPORTED  # noqa: E402
from scratch import Scratch  # noqa: E402

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
# torchvision's Fashion-MNIST normalization, as a training loop would use it.
MEAN, STD = 0.2860, 0.3530

lib = datasets.load(sys.argv[1])

SCRATCH = Scratch(prefix="fluid-data-idx-")
WORK = SCRATCH.root
path, write = SCRATCH.path, SCRATCH.save  # write(name, content, compress)


def idx_bytes(array, type_code=0x08, rank=None):
    """An IDX file: magic {0, 0, type, rank}, big-endian u32 dims, data."""
    rank = array.ndim if rank is None else rank
    return (bytes([0, 0, type_code, rank]) +
            struct.pack(f">{array.ndim}I", *array.shape) + array.tobytes())


def sample(count, rows, cols, classes, seed):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(count, rows, cols), dtype=np.uint8)
    labels = rng.integers(0, classes, size=count, dtype=np.uint8)
    return images, labels


def write_pair(name, images, labels, compress_images=False,
               compress_labels=False):
    return (write(f"{name}-images", idx_bytes(images), compress_images),
            write(f"{name}-labels", idx_bytes(labels), compress_labels))


class Dataset(datasets.Dataset):
    """An open dataset, freed on exit."""

    def __init__(self, images_file, labels_file):
        super().__init__(lib, lambda out: lib.fluid_dataset_open_idx(
            images_file.encode(), labels_file.encode(), out))


def normalized(images, dtype, mean, std):
    """The documented formula, in float64, rounded once to `dtype`."""
    return ((images.astype(np.float64) / 255.0 - mean) / std).astype(dtype)


def expect_batch(dataset, images, labels, indices, image_dtype=np.float32,
                 label_dtype=np.int64, mean=0.0, std=1.0):
    got_images, got_labels = dataset.batch(indices, image_dtype, label_dtype,
                                           mean, std)
    indices = np.asarray(indices, dtype=np.int64)
    expected = normalized(images[indices][:, None], image_dtype, mean, std)
    assert got_images.dtype == image_dtype and got_labels.dtype == label_dtype
    assert got_images.tobytes() == expected.tobytes(), (indices, mean, std)
    assert np.array_equal(got_labels, labels[indices]), indices


def expect_error(status, fragments, function):
    fluidrt.expect_status(lib, function(), status, fragments)


def expect_open_error(status, fragments, images_file, labels_file,
                      name_images=True):
    """Opening must fail naming the file at fault and leave *out alone."""
    handle = ctypes.c_void_p(0x1234)
    named = images_file if name_images else labels_file
    expect_error(status, ["fluid_dataset_open_idx", named] + fragments,
                 lambda: lib.fluid_dataset_open_idx(
                     images_file.encode(), labels_file.encode(),
                     ctypes.byref(handle)))
    assert handle.value == 0x1234


IMAGES, LABELS = sample(9, 5, 3, 4, seed=1)
GOOD_IMAGES, GOOD_LABELS = write_pair("good", IMAGES, LABELS)

@case
def raw_and_gzip_files_read_back_exactly():
    for compress_images in (False, True):
        for compress_labels in (False, True):
            files = write_pair(f"pair-{compress_images}-{compress_labels}",
                               IMAGES, LABELS, compress_images,
                               compress_labels)
            with Dataset(*files) as dataset:
                assert dataset.info() == (9, (1, 5, 3), int(LABELS.max()) + 1)
                expect_batch(dataset, IMAGES, LABELS, range(9))


@case
def every_dtype_and_normalization():
    with Dataset(GOOD_IMAGES, GOOD_LABELS) as dataset:
        for image_dtype in (np.float32, np.float64):
            for label_dtype in (np.int32, np.int64):
                for mean, std in ((0.0, 1.0), (MEAN, STD), (0.5, 0.5),
                                  (-3.25, 1e-3), (1e6, 7.0)):
                    expect_batch(dataset, IMAGES, LABELS, [4, 0, 8],
                                 image_dtype, label_dtype, mean, std)


@case
def arbitrary_index_lists():
    with Dataset(GOOD_IMAGES, GOOD_LABELS) as dataset:
        for indices in ([8, 7, 6, 5, 4, 3, 2, 1, 0], [3, 3, 3], [0], [8],
                        [2, 7, 2, 0, 8, 8, 1], list(range(9)) * 3):
            expect_batch(dataset, IMAGES, LABELS, indices, mean=MEAN, std=STD)
        images, labels = dataset.batch([])
        assert images.shape == (0, 1, 5, 3) and labels.shape == (0,)


@case
def classes_is_the_largest_label_plus_one():
    for labels, classes in ((np.zeros(9, np.uint8), 1),
                            (np.full(9, 255, np.uint8), 256),
                            (np.array([0, 9, 1, 1, 1, 1, 1, 1, 1], np.uint8),
                             10)):
        files = write_pair(f"classes-{classes}", IMAGES, labels)
        with Dataset(*files) as dataset:
            assert dataset.info()[2] == classes, classes
            expect_batch(dataset, IMAGES, labels, range(9))


@case
def concatenated_gzip_members_are_one_stream():
    content = idx_bytes(IMAGES)
    file = path("members-images")
    with open(file, "wb") as f:
        for part in (content[:7], content[7:50], content[50:]):
            f.write(gzip.compress(part))
    with Dataset(file, GOOD_LABELS) as dataset:
        expect_batch(dataset, IMAGES, LABELS, range(9))


@case
def concurrent_batches_on_one_dataset():
    images, labels = sample(64, 28, 28, 10, seed=2)
    files = write_pair("concurrent", images, labels, compress_images=True)
    with Dataset(*files) as dataset:
        def worker(seed):
            rng = np.random.default_rng(seed)
            for _ in range(20):
                expect_batch(dataset, images, labels,
                             rng.integers(0, 64, size=32), mean=MEAN, std=STD)

        cases.in_threads(worker, 8)


@case
def missing_and_unreadable_files():
    missing = path("does-not-exist")
    expect_open_error(IO, ["cannot open", "No such file or directory"],
                      missing, GOOD_LABELS)
    expect_open_error(IO, ["cannot open", "No such file or directory"],
                      GOOD_IMAGES, missing, name_images=False)
    expect_open_error(IO, ["not a regular file"], WORK, GOOD_LABELS)


@case
def bad_magic_type_and_rank():
    images = idx_bytes(IMAGES)
    for name, content, compress in (
            ("png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64, False),
            ("bad-type", b"\0\0\x07\x03" + images[4:], False),
            ("nonzero-prefix", b"\0\x01\x08\x03" + images[4:], False),
            ("bad-magic-gz", b"\x01\0\x08\x03" + images[4:], True)):
        expect_open_error(INVALID_ARGUMENT,
                          ["not an IDX file", "an IDX image file starts "
                           "with 0x00000803"],
                          write(f"magic-{name}", content, compress),
                          GOOD_LABELS)
    for code, type_name in ((0x0D, "f32"), (0x09, "i8"), (0x0C, "i32"),
                            (0x0E, "f64"), (0x0B, "i16")):
        file = write(f"type-{code}", b"\0\0" + bytes([code]) + images[3:])
        expect_open_error(UNSUPPORTED, [f"element type 0x{code:02x} "
                                        f"({type_name}) is not supported",
                                        "u8 (0x08)"], file, GOOD_LABELS)
    expect_open_error(INVALID_ARGUMENT,
                      ["rank 1 (magic 0x00000801)", "image file has rank 3",
                       "swapped"], GOOD_LABELS, GOOD_IMAGES)
    rank2 = write("rank-2", idx_bytes(IMAGES.reshape(9, 15)))
    expect_open_error(INVALID_ARGUMENT, ["rank 2", "[count, rows, cols]"],
                      rank2, GOOD_LABELS)
    labels_rank2 = write("labels-rank-2", idx_bytes(LABELS.reshape(9, 1)))
    expect_open_error(INVALID_ARGUMENT, ["rank 2", "label file has rank 1"],
                      GOOD_IMAGES, labels_rank2, name_images=False)


@case
def truncated_headers():
    images = idx_bytes(IMAGES)
    for size, what in ((0, "truncated magic"), (3, "truncated magic"),
                       (4, "truncated header"), (15, "truncated header")):
        for compress in (False, True):
            file = write(f"header-{size}-{compress}", images[:size], compress)
            fragments = [what] + (["decompressed"] if compress else [])
            expect_open_error(INVALID_ARGUMENT, fragments, file, GOOD_LABELS)


@case
def raw_data_shorter_or_longer_than_the_header():
    images = idx_bytes(IMAGES)
    expect_open_error(INVALID_ARGUMENT,
                      ["truncated data", "shape [9, 5, 3] needs 135 bytes",
                       "only 134 follow the header"],
                      write("short-raw", images[:-1]), GOOD_LABELS)
    expect_open_error(INVALID_ARGUMENT,
                      ["truncated data", "shape [9] needs 9 bytes",
                       "only 0 follow"],
                      GOOD_IMAGES, write("no-labels", idx_bytes(LABELS)[:8]),
                      name_images=False)
    expect_open_error(INVALID_ARGUMENT, ["2 unexpected bytes after the data"],
                      write("long-raw", images + b"\0\0"), GOOD_LABELS)


@case
def gzip_data_shorter_or_longer_than_the_header():
    images = idx_bytes(IMAGES)
    expect_open_error(INVALID_ARGUMENT,
                      ["truncated data", "needs 135 bytes",
                       "only 100 decompress"],
                      write("short-gz", images[:116], True), GOOD_LABELS)
    expect_open_error(INVALID_ARGUMENT,
                      ["decompressed content continues after the data",
                       "shape [9, 5, 3] needs 135 bytes"],
                      write("long-gz", images + b"\0", True), GOOD_LABELS)


@case
def truncated_or_corrupt_gzip_streams():
    compressed = gzip.compress(idx_bytes(IMAGES))
    # Cut inside the deflate data, and inside the 8-byte CRC/size trailer
    # (all of the content inflates, but its end is never confirmed).
    for cut in (40, len(compressed) - 3):
        expect_open_error(INVALID_ARGUMENT,
                          ["truncated gzip stream",
                           "ends inside compressed data"],
                          write(f"cut-{cut}.gz", compressed[:cut]),
                          GOOD_LABELS)
    crc = bytearray(compressed)
    crc[-8] ^= 0xFF
    expect_open_error(INVALID_ARGUMENT,
                      ["corrupt gzip stream", "incorrect data check"],
                      write("crc.gz", bytes(crc)), GOOD_LABELS)
    size = bytearray(compressed)
    size[-4] ^= 0x01
    expect_open_error(INVALID_ARGUMENT,
                      ["corrupt gzip stream", "incorrect length check"],
                      write("isize.gz", bytes(size)), GOOD_LABELS)
    method = bytearray(compressed)
    method[2] = 7  # compression method: only 8 (deflate) exists
    expect_open_error(INVALID_ARGUMENT,
                      ["corrupt gzip stream", "unknown compression method"],
                      write("method.gz", bytes(method)), GOOD_LABELS)
    block = bytearray(compressed)
    block[10] |= 0x06  # first deflate block: type 3, which is reserved
    expect_open_error(INVALID_ARGUMENT,
                      ["corrupt gzip stream", "invalid block type"],
                      write("block.gz", bytes(block)), GOOD_LABELS)
    expect_open_error(INVALID_ARGUMENT,
                      ["unexpected bytes after the end of the gzip stream",
                       f"at byte {len(compressed)}"],
                      write("trailing.gz", compressed + b"junk"), GOOD_LABELS)
    expect_open_error(INVALID_ARGUMENT,
                      ["unexpected bytes after the end of the gzip stream"],
                      write("trailing-1.gz", compressed + b"\x1f"),
                      GOOD_LABELS)


@case
def image_and_label_files_that_disagree():
    labels8 = write("labels-8", idx_bytes(LABELS[:8]))
    expect_open_error(INVALID_ARGUMENT,
                      [f"{GOOD_IMAGES} holds 9 images but {labels8} holds 8 "
                       "labels"], GOOD_IMAGES, labels8)
    # The headers are compared before the image data is read: a mismatch is
    # reported even though the image data is missing.
    headless = write("header-only", idx_bytes(IMAGES)[:16])
    expect_open_error(INVALID_ARGUMENT, ["holds 9 images but", "holds 8"],
                      headless, labels8)


@case
def empty_datasets_and_images():
    for name, shape, problem in (("none", (0, 5, 3), "holds no images"),
                                 ("rows", (9, 0, 3), "images of 0 x 3 pixels"),
                                 ("cols", (9, 5, 0), "images of 5 x 0 pixels")):
        file = write(f"empty-{name}", idx_bytes(np.zeros(shape, np.uint8)))
        expect_open_error(INVALID_ARGUMENT, [problem], file, GOOD_LABELS)


@case
def absurd_sizes_fail_before_allocating():
    huge = b"\0\0\x08\x03" + struct.pack(">3I", *(0xFFFFFFFF,) * 3)
    expect_open_error(INVALID_ARGUMENT,
                      ["shape [4294967295, 4294967295, 4294967295]",
                       "overflows int64"], write("overflow", huge + b"\0" * 8),
                      GOOD_LABELS)
    # A terabyte promised by a few bytes: refused at once, raw or gzip.
    terabyte = b"\0\0\x08\x03" + struct.pack(">3I", 1000000, 1000, 1000)
    labels = write("labels-1e6", idx_bytes(np.zeros(1000000, np.uint8)))
    start = time.monotonic()
    expect_open_error(INVALID_ARGUMENT,
                      ["truncated data", "needs 1000000000000 bytes",
                       "only 100 follow"],
                      write("terabyte", terabyte + b"\0" * 100), labels)
    expect_open_error(INVALID_ARGUMENT,
                      ["truncated data", "needs 1000000000000 bytes",
                       "inflates to at most"],
                      write("terabyte.gz", terabyte + b"\0" * 100, True),
                      labels)
    # A gigabyte promised by a megabyte of incompressible data: within
    # deflate's 1032:1, so it is inflated (into a buffer that grows with the
    # data, not one of the promised size) and found short.
    gigabyte = b"\0\0\x08\x03" + struct.pack(">3I", 1000, 1000, 1000)
    labels = write("labels-1e3", idx_bytes(np.zeros(1000, np.uint8)))
    noise = np.random.default_rng(4).integers(0, 256, 1000000, np.uint8)
    expect_open_error(INVALID_ARGUMENT,
                      ["truncated data", "needs 1000000000 bytes",
                       "only 1000000 decompress after the header"],
                      write("gigabyte.gz", gigabyte + noise.tobytes(), True),
                      labels)
    assert time.monotonic() - start < 5, "absurd headers took too long"


@case
def null_arguments():
    handle = ctypes.c_void_p()
    for images, labels, out in ((None, b"x", ctypes.byref(handle)),
                                (b"x", None, ctypes.byref(handle)),
                                (b"x", b"y", None)):
        expect_error(INVALID_ARGUMENT, ["must not be null"],
                     lambda: lib.fluid_dataset_open_idx(images, labels, out))
    expect_error(INVALID_ARGUMENT, ["fluid_dataset_info", "dataset must not "
                                    "be null"],
                 lambda: lib.fluid_dataset_info(None, None, None, None))
    lib.fluid_dataset_free(None)
    with Dataset(GOOD_IMAGES, GOOD_LABELS) as dataset:
        fluidrt.check(lib, lib.fluid_dataset_info(dataset.handle, None, None,
                                                  None))


@case
def batch_argument_errors_leave_destinations_unchanged():
    with Dataset(GOOD_IMAGES, GOOD_LABELS) as dataset:
        indices = np.array([0, 1, 2], np.int64)
        images = np.full((3, 1, 5, 3), 7, np.float32)
        labels = np.full(3, 7, np.int64)

        def expect_batch_error(status, fragments, indices=indices,
                               images=images, labels=labels, mean=0.0,
                               std=1.0):
            expect_error(status, ["fluid_dataset_batch"] + fragments,
                         lambda: dataset.call(indices, images, labels, mean,
                                              std))

        expect_batch_error(INVALID_ARGUMENT,
                           ["indices[1] = 9 is outside the dataset's [0, 9)"],
                           indices=np.array([0, 9, 2], np.int64))
        expect_batch_error(INVALID_ARGUMENT, ["indices[2] = -1"],
                           indices=np.array([0, 1, -1], np.int64))
        expect_batch_error(INVALID_ARGUMENT,
                           ["images has shape [3, 5, 3]",
                            "[n, C, H, W] = [3, 1, 5, 3]"],
                           images=np.zeros((3, 5, 3), np.float32))
        expect_batch_error(INVALID_ARGUMENT,
                           ["images has shape [2, 1, 5, 3]"],
                           images=np.zeros((2, 1, 5, 3), np.float32))
        expect_batch_error(INVALID_ARGUMENT,
                           ["labels has shape [3, 1]", "[n] = [3]"],
                           labels=np.zeros((3, 1), np.int64))
        expect_batch_error(UNSUPPORTED, ["images must be F32 or F64, got U8"],
                           images=np.zeros((3, 1, 5, 3), np.uint8))
        expect_batch_error(UNSUPPORTED, ["labels must be I32 or I64, got F32"],
                           labels=np.zeros(3, np.float32))
        for mean, std, problem in ((np.nan, 1.0, "mean must be finite"),
                                   (np.inf, 1.0, "mean must be finite"),
                                   (0.0, 0.0, "std must be finite and > 0"),
                                   (0.0, -1.0, "std must be finite and > 0"),
                                   (0.0, np.nan, "std must be finite and > 0"),
                                   (0.0, np.inf, "std must be finite and > 0"),
                                   (0.5, 1e-300, "beyond the range of F32")):
            expect_batch_error(INVALID_ARGUMENT, [problem], mean=mean, std=std)
        assert (images == 7).all() and (labels == 7).all()

        t_images, t_labels = fluidrt.tensor(images), fluidrt.tensor(labels)
        calls = {
            "dataset must not be null": lambda: lib.fluid_dataset_batch(
                None, indices.ctypes.data_as(INT64_P), 3,
                ctypes.byref(t_images), ctypes.byref(t_labels), 0.0, 1.0),
            "n must be >= 0": lambda: lib.fluid_dataset_batch(
                dataset.handle, indices.ctypes.data_as(INT64_P), -1,
                ctypes.byref(t_images), ctypes.byref(t_labels), 0.0, 1.0),
            "indices must not be null": lambda: lib.fluid_dataset_batch(
                dataset.handle, None, 3, ctypes.byref(t_images),
                ctypes.byref(t_labels), 0.0, 1.0),
            "images must not be null": lambda: lib.fluid_dataset_batch(
                dataset.handle, indices.ctypes.data_as(INT64_P), 3, None,
                ctypes.byref(t_labels), 0.0, 1.0),
            "labels must not be null": lambda: lib.fluid_dataset_batch(
                dataset.handle, indices.ctypes.data_as(INT64_P), 3,
                ctypes.byref(t_images), None, 0.0, 1.0),
        }
        for problem, call in calls.items():
            expect_error(INVALID_ARGUMENT, [problem], call)
        t_images.data = None
        expect_error(INVALID_ARGUMENT, ["images data is null"],
                     lambda: lib.fluid_dataset_batch(
                         dataset.handle, indices.ctypes.data_as(INT64_P), 3,
                         ctypes.byref(t_images), ctypes.byref(t_labels), 0.0,
                         1.0))
        t_images.rank = 99
        expect_error(INVALID_ARGUMENT, ["images has rank 99"],
                     lambda: lib.fluid_dataset_batch(
                         dataset.handle, indices.ctypes.data_as(INT64_P), 3,
                         ctypes.byref(t_images), ctypes.byref(t_labels), 0.0,
                         1.0))
        # F64 holds what F32 cannot.
        expect_batch(dataset, IMAGES, LABELS, [0, 1, 2], np.float64,
                     mean=0.5, std=1e-300)


def decode_idx_gz(file):
    """Python's own decoding: gzip, then the IDX header, then NumPy."""
    with gzip.open(file, "rb") as f:
        content = f.read()
    rank = content[3]
    shape = struct.unpack(f">{rank}I", content[4:4 + 4 * rank])
    return np.frombuffer(content, np.uint8, offset=4 + 4 * rank).reshape(shape)


@case
def fashion_mnist():
    if not os.path.isdir(FASHION_MNIST):
        print(f"  skipped: {FASHION_MNIST} is absent "
              "(Debian package dataset-fashion-mnist)")
        return
    rng = np.random.default_rng(3)
    for split, count in (("train", 60000), ("t10k", 10000)):
        images_file = os.path.join(FASHION_MNIST,
                                   f"{split}-images-idx3-ubyte.gz")
        labels_file = os.path.join(FASHION_MNIST,
                                   f"{split}-labels-idx1-ubyte.gz")
        images, labels = decode_idx_gz(images_file), decode_idx_gz(labels_file)
        assert images.shape == (count, 28, 28) and labels.shape == (count,)
        with Dataset(images_file, labels_file) as dataset:
            assert dataset.info() == (count, (1, 28, 28), 10), dataset.info()
            assert labels.max() == 9
            # Every image and label, in slices, then a shuffled selection.
            for begin in range(0, count, 10000):
                expect_batch(dataset, images, labels,
                             np.arange(begin, begin + 10000), mean=MEAN,
                             std=STD)
            expect_batch(dataset, images, labels,
                         rng.permutation(count)[:1000], np.float64, np.int32,
                         MEAN, STD)


if __name__ == "__main__":
    sys.exit(cases.main(cleanup=SCRATCH.remove))
