# RUN: %python %s %fluid_runtime_lib
"""Synthetic datasets (Data.h): fluid_dataset_synthetic's images and labels
follow the documented Philox layout bit for bit (a pure-Python Philox4x32-10,
checked against the Random123 known-answer vectors, recomputes them), depend
only on (seed, index), have the requested shape and label range, and cost
nothing however many there are; bad arguments are refused.
"""

import ctypes
import os
import struct
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import fluidrt  # noqa: E402

INVALID_ARGUMENT = 1
MASK32 = 0xFFFFFFFF
SYNTHETIC_TAG = 0x53594E54  # counter word 3, "SYNT"
# Chi-square critical values at p = 0.001.
CHI2_6_DOF, CHI2_255_DOF = 22.458, 330.5

lib = fluidrt.load(sys.argv[1])
TENSOR = ctypes.POINTER(fluidrt.FluidTensor)
INT64_P = ctypes.POINTER(ctypes.c_int64)
lib.fluid_dataset_synthetic.argtypes = [ctypes.c_int64] * 5 + [
    ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p)]
lib.fluid_dataset_free.argtypes = [ctypes.c_void_p]
lib.fluid_dataset_free.restype = None
lib.fluid_dataset_info.argtypes = [ctypes.c_void_p, INT64_P, INT64_P, INT64_P]
lib.fluid_dataset_batch.argtypes = [ctypes.c_void_p, INT64_P, ctypes.c_int64,
                                    TENSOR, TENSOR, ctypes.c_double,
                                    ctypes.c_double]


class Dataset:
    """A synthetic dataset, freed on exit."""

    def __init__(self, count, channels, height, width, classes, seed):
        self.handle = ctypes.c_void_p()
        fluidrt.check(lib, lib.fluid_dataset_synthetic(
            count, channels, height, width, classes, seed,
            ctypes.byref(self.handle)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        lib.fluid_dataset_free(self.handle)

    def info(self):
        count, shape, classes = (ctypes.c_int64(), (ctypes.c_int64 * 3)(),
                                 ctypes.c_int64())
        fluidrt.check(lib, lib.fluid_dataset_info(
            self.handle, ctypes.byref(count), shape, ctypes.byref(classes)))
        return count.value, tuple(shape), classes.value

    def batch(self, indices, image_dtype=np.float64, label_dtype=np.int64,
              mean=0.0, std=1.0):
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        _, shape, _ = self.info()
        images = np.full((len(indices),) + shape, np.nan, image_dtype)
        labels = np.full(len(indices), -1, label_dtype)
        t_images, t_labels = fluidrt.tensor(images), fluidrt.tensor(labels)
        fluidrt.check(lib, lib.fluid_dataset_batch(
            self.handle, indices.ctypes.data_as(INT64_P), len(indices),
            ctypes.byref(t_images), ctypes.byref(t_labels), mean, std))
        return images, labels

    def pixels(self, indices):
        """The u8 pixels, recovered exactly from an F64 batch (p / 255)."""
        images, labels = self.batch(indices)
        return np.rint(images * 255).astype(np.uint8), labels


def philox4x32_10(counter, key):
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & MASK32,
                          (p0 >> 32) ^ c3 ^ k1, p0 & MASK32)
        k0, k1 = (k0 + 0x9E3779B9) & MASK32, (k1 + 0xBB67AE85) & MASK32
    return c0, c1, c2, c3


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


def chi_square(counts):
    expected = counts.sum() / counts.size
    return float(((counts - expected) ** 2 / expected).sum())


def expect_error(fragments, function):
    status = function()
    message = lib.fluid_last_error().decode()
    if status != INVALID_ARGUMENT:
        raise AssertionError(f"status {status} != 1: {message!r}")
    for fragment in fragments:
        if fragment not in message:
            raise AssertionError(f"{fragment!r} not in {message!r}")


CASES = []


def case(function):
    CASES.append(function)
    return function


@case
def python_philox_matches_random123_vectors():
    vectors = [
        ((0, 0, 0, 0), (0, 0),
         (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
        ((MASK32,) * 4, (MASK32,) * 2,
         (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
        ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
         (0xa4093822, 0x299f31d0),
         (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
    ]
    for counter, key, expected in vectors:
        assert philox4x32_10(counter, key) == expected, counter


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
        failures = []

        def worker(seed):
            rng = np.random.default_rng(seed)
            try:
                for _ in range(10):
                    indices = rng.integers(0, 512, size=64)
                    images, labels = dataset.batch(indices)
                    assert np.array_equal(images, expected[0][indices])
                    assert np.array_equal(labels, expected[1][indices])
            except Exception as error:  # reported by the main thread
                failures.append(error)

        threads = [threading.Thread(target=worker, args=(s,))
                   for s in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures, failures


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
        t_images, t_labels = fluidrt.tensor(images), fluidrt.tensor(labels)
        index = np.array([10], np.int64)
        expect_error(["indices[0] = 10 is outside the dataset's [0, 10)"],
                     lambda: lib.fluid_dataset_batch(
                         dataset.handle, index.ctypes.data_as(INT64_P), 1,
                         ctypes.byref(t_images), ctypes.byref(t_labels), 0.0,
                         1.0))
    # The largest image allowed is accepted (and costs nothing until used).
    with Dataset(1, 16, 2**16, 2**16 - 1, 2, 0) as dataset:
        assert dataset.info()[1] == (16, 2**16, 2**16 - 1)


def main():
    failures = 0
    start = time.monotonic()
    for function in CASES:
        case_start = time.monotonic()
        try:
            function()
            print(f"PASS {function.__name__} "
                  f"({time.monotonic() - case_start:.2f} s)")
        except Exception as error:  # report every case, then fail
            failures += 1
            print(f"FAIL {function.__name__}: {type(error).__name__}: {error}")
    print(f"{len(CASES) - failures} of {len(CASES)} cases passed in "
          f"{time.monotonic() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
