# RUN: %python %s %fluid_runtime_lib
"""fluid_shuffle (Data.h): a permutation of [0, n) that depends only on
(seed, epoch, n). A pure-Python Fisher-Yates over Philox4x32-10 (checked
against the Random123 known-answer vectors), written from the header's
description, reproduces it exactly; a golden permutation pins the algorithm,
and a chi-square test checks that every index is equally likely everywhere.
"""

import os
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
from datasets import INT64_P  # noqa: E402
from fluidrt import INVALID_ARGUMENT  # noqa: E402
from philox import MASK32, chi_square, philox4x32_10  # noqa: E402

# The documented algorithm's output for seed 0, epoch 0, n = 10. A change
# here breaks every recorded training run's data order: make it on purpose.
GOLDEN_0_0_10 = [7, 1, 0, 3, 6, 8, 4, 9, 2, 5]
# Chi-square critical values at p = 0.001 for 9 degrees of freedom.
CHI2_9_DOF = 27.877

lib = datasets.load(sys.argv[1])


def shuffle(n, seed, epoch):
    indices = np.full(n, -1, np.int64)
    fluidrt.check(lib, lib.fluid_shuffle(indices.ctypes.data_as(INT64_P), n,
                                         seed, epoch))
    return indices


def reference_shuffle(n, seed, epoch):
    """Data.h's description of fluid_shuffle, step by step."""
    indices = list(range(n))
    key = (seed & MASK32, seed >> 32)
    for i in range(n - 1, 0, -1):
        x = philox4x32_10((i & MASK32, i >> 32, epoch & MASK32, epoch >> 32),
                          key)
        j = ((x[0] << 32 | x[1]) * (i + 1)) >> 64
        indices[i], indices[j] = indices[j], indices[i]
    return indices


@case
def python_philox_matches_random123_vectors():
    philox.check_random123_vectors()


@case
def golden_permutation():
    assert reference_shuffle(10, 0, 0) == GOLDEN_0_0_10
    assert shuffle(10, 0, 0).tolist() == GOLDEN_0_0_10


@case
def matches_the_documented_algorithm():
    for n, seed, epoch in ((2, 0, 0), (3, 1, 1), (17, 42, 7),
                           (100, 2**32 + 5, 3), (257, 2**64 - 1, 2**64 - 1),
                           (300, 0xDEADBEEFCAFEF00D, 2**40 + 1)):
        assert shuffle(n, seed, epoch).tolist() == \
            reference_shuffle(n, seed, epoch), (n, seed, epoch)


@case
def is_a_permutation():
    for n in (0, 1, 2, 3, 10, 1000, 60000):
        for seed, epoch in ((0, 0), (1, 0), (0, 1), (2**63 + 11, 2**33)):
            got = shuffle(n, seed, epoch)
            assert np.array_equal(np.sort(got), np.arange(n)), (n, seed, epoch)


@case
def is_deterministic():
    for n, seed, epoch in ((60000, 7, 3), (10, 0, 0), (1, 5, 5)):
        assert np.array_equal(shuffle(n, seed, epoch),
                              shuffle(n, seed, epoch))


@case
def epochs_and_seeds_give_different_orders():
    n = 1000
    orders = {shuffle(n, 0, epoch).tobytes() for epoch in range(20)}
    orders |= {shuffle(n, seed, 0).tobytes() for seed in range(1, 20)}
    # The high halves of seed and epoch count too.
    orders.add(shuffle(n, 2**32, 0).tobytes())
    orders.add(shuffle(n, 0, 2**32).tobytes())
    assert len(orders) == 41, len(orders)
    # Two different orders of 1000 agree in about one position.
    same = np.count_nonzero(shuffle(n, 0, 0) == shuffle(n, 0, 1))
    assert same < 10, same


@case
def every_index_is_equally_likely_in_every_position():
    n, trials = 10, 4000
    by_seed = np.zeros((n, n), np.int64)    # [position, value]
    by_epoch = np.zeros((n, n), np.int64)
    for trial in range(trials):
        by_seed[np.arange(n), shuffle(n, trial, 0)] += 1
        by_epoch[np.arange(n), shuffle(n, 12345, trial)] += 1
    for name, table in (("seeds", by_seed), ("epochs", by_epoch)):
        for position in range(n):
            statistic = chi_square(table[position])
            assert statistic < CHI2_9_DOF, (name, position, statistic,
                                            table[position].tolist())


@case
def large_n_is_fast():
    start = time.monotonic()
    got = shuffle(1000000, 3, 4)
    elapsed = time.monotonic() - start
    assert np.array_equal(np.sort(got), np.arange(1000000))
    assert elapsed < 2, f"{elapsed:.2f} s"


@case
def errors():
    indices = np.zeros(3, np.int64)
    fluidrt.expect_status(
        lib, lib.fluid_shuffle(indices.ctypes.data_as(INT64_P), -1, 0, 0),
        INVALID_ARGUMENT, ["fluid_shuffle: n must be >= 0, got -1"])
    fluidrt.expect_status(lib, lib.fluid_shuffle(None, 3, 0, 0),
                          INVALID_ARGUMENT,
                          ["indices must not be null when n > 0"])
    fluidrt.check(lib, lib.fluid_shuffle(None, 0, 0, 0))


if __name__ == "__main__":
    sys.exit(cases.main())
