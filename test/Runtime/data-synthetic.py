# RUN: %python %s %fluid_runtime_lib
"""Synthetic datasets (Data.h): fluid_dataset_synthetic's images and labels
follow the documented Philox layout bit for bit (a pure-Python Philox4x32-10,
checked against the Random123 known-answer vectors, recomputes them), depend
only on (seed, index), have the requested shape and label range, and cost
nothing however many there are; bad arguments are refused.
fluid_dataset_batch_ordered writes the same values in any of the 24 orders
of [n, C, H, W] (numpy's transpose of fluid_dataset_batch's batch).
"""

import ctypes
import itertools
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
import philox  # noqa: E402
from cases import case  # noqa: E402
from fluidrt import INVALID_ARGUMENT  # noqa: E402
from philox import MASK32, chi_square, philox4x32_10  # noqa: E402

SYNTHETIC_TAG = 0x53594E54  # counter word 3, "SYNT"
# Chi-square critical values at p = 0.001.
CHI2_6_DOF, CHI2_255_DOF = 22.458, 330.5

lib = datasets.load(sys.argv[1])


class Dataset(datasets.Dataset):
    """A synthetic dataset, freed on exit; batches are F64 by default."""

    image_dtype = np.float64

    def __init__(self, count, channels, height, width, classes, seed):
        super().__init__(lib, lambda out: lib.fluid_dataset_synthetic(
            count, channels, height, width, classes, seed, out))

    def pixels(self, indices):
        """The u8 pixels, recovered exactly from an F64 batch (p / 255)."""
        images, labels = self.batch(indices)
        return np.rint(images * 255).astype(np.uint8), labels


def reference_item(seed, index, shape, classes):
    """Data.h's description of item `index`: block 0 decides the label,
    blocks 1, 2, ... hold 16 pixels each, words little-endian."""
    key = (seed & MASK32, seed >> 32)

    def block(number):
        return philox4x32_10((index & MASK32, index >> 32, number,
                              SYNTHETIC_TAG), key)

    x = block(0)
    label = ((x[0] << 32 | x[1]) * classes) >> 64
    size = shape[0] * shape[1] * shape[2]
    data = b"".join(struct.pack("<4I", *block(number))
                    for number in range(1, (size + 15) // 16 + 1))
    return np.frombuffer(data[:size], np.uint8).reshape(shape), label


def expect_error(fragments, function):
    fluidrt.expect_status(lib, function(), INVALID_ARGUMENT, fragments)


@case
def python_philox_matches_random123_vectors():
    philox.check_random123_vectors()


@case
def follows_the_documented_layout():
    # 105 pixels: six full blocks and a partial seventh.
    for seed, shape, classes in ((0, (3, 5, 7), 10),
                                 (0xDEADBEEFCAFEF00D, (1, 4, 4), 3),
                                 (2**64 - 1, (2, 1, 1), 2**31 - 1)):
        with Dataset(40, *shape, classes, seed) as dataset:
            pixels, labels = dataset.pixels(range(40))
            for index in range(40):
                expected, label = reference_item(seed, index, shape, classes)
                assert np.array_equal(pixels[index], expected), (seed, index)
                assert labels[index] == label, (seed, index)


@case
def huge_counts_cost_nothing():
    count = 2**62
    start = time.monotonic()
    with Dataset(count, 3, 32, 32, 1000, 11) as dataset:
        assert dataset.info() == (count, (3, 32, 32), 1000)
        # Indices beyond 2^32 use both counter words.
        indices = [count - 1, 2**33 + 5, 2**32, 0]
        pixels, labels = dataset.pixels(indices)
        for row, index in enumerate(indices):
            expected, label = reference_item(11, index, (3, 32, 32), 1000)
            assert np.array_equal(pixels[row], expected), index
            assert labels[row] == label, index
    assert time.monotonic() - start < 1


@case
def items_depend_only_on_seed_and_index():
    shape = (3, 8, 8)
    with Dataset(1000, *shape, 10, 5) as first, \
            Dataset(1000, *shape, 10, 5) as same, \
            Dataset(50, *shape, 10, 5) as fewer, \
            Dataset(1000, *shape, 10, 6) as other:
        everything = first.batch(range(1000))
        assert all(np.array_equal(a, b) for a, b in
                   zip(everything, same.batch(range(1000))))
        # Any subset, in any order, from a dataset of any count.
        subset = [999, 3, 3, 500, 0]
        images, labels = first.batch(subset)
        assert np.array_equal(images, everything[0][subset])
        assert np.array_equal(labels, everything[1][subset])
        images, labels = fewer.batch(range(50))
        assert np.array_equal(images, everything[0][:50])
        other_images, other_labels = other.batch(range(1000))
        assert np.count_nonzero(other_images == everything[0]) < \
            everything[0].size / 100
        assert np.count_nonzero(other_labels == everything[1]) < 200


@case
def normalization_and_dtypes():
    with Dataset(20, 2, 3, 5, 7, 9) as dataset:
        pixels, labels = dataset.pixels(range(20))
        for image_dtype in (np.float32, np.float64):
            for label_dtype in (np.int32, np.int64):
                for mean, std in ((0.0, 1.0), (0.2860, 0.3530), (0.5, 0.25)):
                    images, got_labels = dataset.batch(
                        range(20), image_dtype, label_dtype, mean, std)
                    expected = ((pixels.astype(np.float64) / 255.0 - mean) /
                                std).astype(image_dtype)
                    assert images.tobytes() == expected.tobytes()
                    assert got_labels.dtype == label_dtype
                    assert np.array_equal(got_labels, labels)


@case
def labels_cover_the_range_uniformly():
    with Dataset(7000, 1, 1, 1, 7, 13) as dataset:
        _, labels = dataset.batch(range(7000))
        assert labels.min() >= 0 and labels.max() < 7
        statistic = chi_square(np.bincount(labels, minlength=7))
        assert statistic < CHI2_6_DOF, statistic
    with Dataset(100, 1, 1, 1, 1, 13) as dataset:
        assert not dataset.batch(range(100))[1].any()


@case
def pixels_cover_every_value_uniformly():
    with Dataset(64, 3, 32, 32, 10, 17) as dataset:
        pixels, _ = dataset.pixels(range(64))
        counts = np.bincount(pixels.ravel(), minlength=256)
        assert counts.min() > 0
        statistic = chi_square(counts)
        assert statistic < CHI2_255_DOF, statistic


@case
def concurrent_batches_agree():
    with Dataset(512, 3, 16, 16, 10, 21) as dataset:
        expected = dataset.batch(range(512))

        def worker(seed):
            rng = np.random.default_rng(seed)
            for _ in range(10):
                indices = rng.integers(0, 512, size=64)
                images, labels = dataset.batch(indices)
                assert np.array_equal(images, expected[0][indices])
                assert np.array_equal(labels, expected[1][indices])

        cases.in_threads(worker, 8)


@case
def batches_in_any_order():
    with Dataset(6, 3, 4, 5, 7, 23) as dataset:
        indices = np.array([4, 0, 5, 5, 2], np.int64)
        for image_dtype in (np.float32, np.float64):
            expected, labels = dataset.batch(indices, image_dtype,
                                             mean=0.5, std=0.25)
            for order in itertools.permutations(range(4)):
                want = np.ascontiguousarray(expected.transpose(order))
                images = np.full(want.shape, np.nan, image_dtype)
                got_labels = np.full(len(indices), -1, np.int64)
                fluidrt.check(lib, dataset.call_ordered(
                    indices, images, got_labels, order, 0.5, 0.25))
                assert images.tobytes() == want.tobytes(), order
                assert np.array_equal(got_labels, labels)
        images = np.zeros((5, 4, 5, 3), np.float32)
        labels = np.zeros(5, np.int64)
        expect_error(["images has shape [5, 4, 5, 3] but the batch needs "
                      "[n, C, H, W] = [5, 3, 4, 5]"],
                     lambda: dataset.call_ordered(indices, images, labels,
                                                  (0, 1, 2, 3)))
        expect_error(["images has shape [5, 4, 5, 3] but the batch needs "
                      "[n, W, H, C] = [5, 5, 4, 3]"],
                     lambda: dataset.call_ordered(indices, images, labels,
                                                  (0, 3, 2, 1)))
        expect_error(["order {0, 2, 2, 1} is not a permutation of "
                      "{0, 1, 2, 3}"],
                     lambda: dataset.call_ordered(indices, images, labels,
                                                  (0, 2, 2, 1)))


@case
def bad_arguments():
    handle = ctypes.c_void_p(0x1234)

    def make(count=10, channels=1, height=2, width=2, classes=3,
             out=ctypes.byref(handle)):
        return lambda: lib.fluid_dataset_synthetic(count, channels, height,
                                                   width, classes, 0, out)

    for name, value in (("count", 0), ("count", -5), ("channels", 0),
                        ("height", -1), ("width", 0), ("classes", 0),
                        ("classes", -2)):
        expect_error(["fluid_dataset_synthetic",
                      f"{name} must be >= 1, got {value}"],
                     make(**{name: value}))
    expect_error(["classes must be at most 2147483647"], make(classes=2**31))
    expect_error(["an image of shape [65536, 65536, 65536] exceeds"],
                 make(channels=2**16, height=2**16, width=2**16))
    expect_error(["image of shape [1, 65536, 1048576] exceeds the "
                  "68719476720 pixels"],
                 make(height=2**16, width=2**20))
    expect_error(["out must not be null"], make(out=None))
    assert handle.value == 0x1234
    with Dataset(10, 1, 2, 2, 3, 0) as dataset:
        images = np.zeros((1, 1, 2, 2), np.float32)
        labels = np.zeros(1, np.int64)
        index = np.array([10], np.int64)
        expect_error(["indices[0] = 10 is outside the dataset's [0, 10)"],
                     lambda: dataset.call(index, images, labels, 0.0, 1.0))
    # The largest image allowed is accepted (and costs nothing until used).
    with Dataset(1, 16, 2**16, 2**16 - 1, 2, 0) as dataset:
        assert dataset.info()[1] == (16, 2**16, 2**16 - 1)


if __name__ == "__main__":
    sys.exit(cases.main())
