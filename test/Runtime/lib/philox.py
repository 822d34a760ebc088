"""A pure-Python Philox4x32-10, the reference the runtime's random streams
(Init.h, Data.h) are checked against, written from the Random123 paper's
description and itself checked against Random123's known-answer vectors.
"""

MASK32 = 0xFFFFFFFF

# (counter, key, output) from Random123's kat_vectors for philox4x32_10.
RANDOM123_VECTORS = [
    ((0, 0, 0, 0), (0, 0),
     (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((MASK32,) * 4, (MASK32,) * 2,
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
     (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def philox4x32_10(counter, key):
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & MASK32,
                          (p0 >> 32) ^ c3 ^ k1, p0 & MASK32)
        k0, k1 = (k0 + 0x9E3779B9) & MASK32, (k1 + 0xBB67AE85) & MASK32
    return c0, c1, c2, c3


def check_random123_vectors():
    """Assert that philox4x32_10 reproduces the known-answer vectors."""
    for counter, key, expected in RANDOM123_VECTORS:
        assert philox4x32_10(counter, key) == expected, counter


def chi_square(counts):
    """Pearson's statistic of `counts` against equal expected counts."""
    expected = counts.sum() / counts.size
    return float(((counts - expected) ** 2 / expected).sum())
