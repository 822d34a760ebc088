# RUN: %python %s %fluid_runtime_lib
"""fluid_npy_read / fluid_npy_write (Npy.h) against NumPy's own .npy files,
and every error path on corrupt, truncated or unsupported files: each must
return the documented status with a message naming the file and the problem.
"""

import ctypes
import os
import stat
import struct
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import cases  # noqa: E402
import fluidrt  # noqa: E402
from cases import case  # noqa: E402
from fluidrt import INVALID_ARGUMENT, IO, UNSUPPORTED  # noqa: E402
from scratch import Scratch  # noqa: E402

NUMPY_DTYPES = {code: dtype for dtype, code in fluidrt.DTYPES.items()}
SUPPORTED = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.float16]
SHAPES = [(), (1,), (5,), (2, 3), (3, 4, 5), (2, 0, 3), (1, 2, 1, 2, 1, 2, 1, 2)]

lib = fluidrt.load(sys.argv[1])
TENSOR = ctypes.POINTER(fluidrt.FluidTensor)
lib.fluid_npy_read.argtypes = [ctypes.c_char_p, TENSOR]
lib.fluid_npy_write.argtypes = [ctypes.c_char_p, TENSOR]
lib.fluid_npy_free.argtypes = [TENSOR]
lib.fluid_npy_free.restype = None

SCRATCH = Scratch(prefix="fluid-io-npy-")
WORK = SCRATCH.root
path, bad_file = SCRATCH.path, SCRATCH.save


def sample(shape, dtype):
    rng = np.random.default_rng(len(shape) * 31 + np.dtype(dtype).num)
    return fluidrt.random_array(rng, shape, dtype)


def read(file):
    """fluid_npy_read, returning a NumPy copy and freeing the buffer."""
    t = fluidrt.FluidTensor()
    fluidrt.check(lib, lib.fluid_npy_read(file.encode(), ctypes.byref(t)))
    try:
        if t.data % 64:
            raise AssertionError(f"buffer {t.data:#x} is not 64-byte aligned")
        shape = tuple(t.shape[:t.rank])
        dtype = NUMPY_DTYPES[t.dtype]
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return np.frombuffer(ctypes.string_at(t.data, size),
                             dtype=dtype).reshape(shape)
    finally:
        lib.fluid_npy_free(ctypes.byref(t))
        assert t.data is None


def write_status(file, t):
    """fluid_npy_write's status, writing descriptor `t` to `file`."""
    return lib.fluid_npy_write(file.encode(), ctypes.byref(t))


def write(file, array):
    fluidrt.check(lib, write_status(file, fluidrt.tensor(array)))


def expect_error(status, fragments, call, file):
    fluidrt.expect_status(lib, call(), status, [file] + fragments)


def expect_read_error(status, fragments, file):
    t = fluidrt.FluidTensor()
    t.rank = 77  # a failed read must leave the descriptor alone
    expect_error(status, fragments,
                 lambda: lib.fluid_npy_read(file.encode(), ctypes.byref(t)),
                 file)
    assert t.rank == 77 and not t.data


def npy_bytes(header, data=b"", version=(1, 0), pad=True):
    """A hand-made .npy file: magic, version, header length, header, data."""
    length_format = "<H" if version[0] == 1 else "<I"
    prefix_size = 8 + struct.calcsize(length_format)
    text = header.encode("latin1")
    if pad:
        text += b" " * (-(prefix_size + len(text) + 1) % 64) + b"\n"
    return (b"\x93NUMPY" + bytes(version) +
            struct.pack(length_format, len(text)) + text + data)


def header(descr="'<f4'", fortran="False", shape="(2, 3)"):
    return (f"{{'descr': {descr}, 'fortran_order': {fortran}, "
            f"'shape': {shape}, }}")


@case
def reads_numpy_files_of_every_dtype_and_shape():
    for dtype in SUPPORTED:
        for shape in SHAPES:
            expected = sample(shape, dtype)
            file = path(f"np-{np.dtype(dtype).str[1:]}-{len(shape)}.npy")
            np.save(file, expected)
            got = read(file)
            assert got.dtype == expected.dtype and got.shape == shape, file
            assert got.tobytes() == expected.tobytes(), file


@case
def reads_format_versions_2_and_3():
    expected = sample((4, 7), np.float64)
    for version in ((1, 0), (2, 0), (3, 0)):
        file = path(f"version-{version[0]}.npy")
        with open(file, "wb") as f:
            np.lib.format.write_array(f, expected, version=version)
        assert np.array_equal(read(file), expected), version


@case
def writes_files_numpy_reads():
    for dtype in SUPPORTED:
        for shape in SHAPES:
            expected = sample(shape, dtype)
            file = path(f"fluid-{np.dtype(dtype).str[1:]}-{len(shape)}.npy")
            write(file, expected)
            got = np.load(file)
            assert got.dtype == expected.dtype and got.shape == shape, file
            assert got.tobytes() == expected.tobytes(), file
            with open(file, "rb") as f:
                assert np.lib.format.read_magic(f) == (1, 0)
                np.lib.format.read_array_header_1_0(f)
                assert f.tell() % 64 == 0, "data not 64-byte aligned"


@case
def write_replaces_atomically_and_leaves_no_temporary():
    file = path("replace.npy")
    write(file, np.zeros((1000,), np.float32))
    write(file, np.arange(3, dtype=np.int64))
    assert np.array_equal(np.load(file), np.arange(3))
    assert stat.S_IMODE(os.stat(file).st_mode) == 0o644
    SCRATCH.expect_no_temporaries()


@case
def write_failures_name_the_file_and_clean_up():
    array = np.zeros(3, np.float32)
    t = fluidrt.tensor(array)
    SCRATCH.expect_write_failures(lib, lambda file: write_status(file, t),
                                  ".npy")


@case
def write_rejects_what_npy_cannot_hold():
    file = path("rejected.npy")
    t = fluidrt.tensor(np.zeros((2, 2), np.float32))
    t.dtype = 5  # BF16
    expect_error(UNSUPPORTED, ["BF16 has no .npy dtype"],
                 lambda: write_status(file, t), file)
    t.dtype, t.rank = 0, 9
    expect_error(INVALID_ARGUMENT, ["rank 9"],
                 lambda: write_status(file, t), file)
    t.rank, t.shape[0] = 2, -2
    expect_error(INVALID_ARGUMENT, ["negative dimension"],
                 lambda: write_status(file, t), file)
    t.shape[0], t.data = 2, None
    expect_error(INVALID_ARGUMENT, ["data is null"],
                 lambda: write_status(file, t), file)
    assert not os.path.exists(file)


@case
def free_accepts_null():
    lib.fluid_npy_free(None)
    t = fluidrt.FluidTensor()
    lib.fluid_npy_free(ctypes.byref(t))


@case
def missing_or_unreadable_files():
    expect_read_error(IO, ["cannot open", "No such file or directory"],
                      path("does-not-exist.npy"))
    expect_read_error(IO, ["not a regular file"], WORK)


@case
def bad_or_truncated_magic():
    expect_read_error(INVALID_ARGUMENT, ["bad magic"],
                      bad_file("magic.npy", b"PK\x03\x04" + b"\0" * 100))
    expect_read_error(INVALID_ARGUMENT, ["truncated magic"],
                      bad_file("empty.npy", b""))
    expect_read_error(INVALID_ARGUMENT, ["truncated magic"],
                      bad_file("short-magic.npy", b"\x93NUM"))
    expect_read_error(INVALID_ARGUMENT, ["truncated format version"],
                      bad_file("no-version.npy", b"\x93NUMPY\x01"))


@case
def unsupported_versions():
    for version in ((4, 0), (1, 1), (0, 0)):
        file = bad_file(f"version-{version[0]}-{version[1]}.npy",
                        npy_bytes(header(), b"\0" * 24, version=(1, 0))[:6] +
                        bytes(version) + b"\0" * 80)
        expect_read_error(UNSUPPORTED, [f"format version {version[0]}."
                                        f"{version[1]} is not supported"], file)


@case
def truncated_header():
    full = npy_bytes(header(), b"\0" * 24)
    expect_read_error(INVALID_ARGUMENT, ["truncated header length"],
                      bad_file("no-length.npy", full[:9]))
    expect_read_error(INVALID_ARGUMENT, ["truncated header length"],
                      bad_file("no-length-v2.npy",
                               npy_bytes(header(), version=(2, 0))[:10]))
    expect_read_error(INVALID_ARGUMENT, ["truncated header", "bytes [10, 128)"],
                      bad_file("half-header.npy", full[:40]))


@case
def malformed_header_dicts():
    variants = {
        "not-a-dict": ("['descr', '<f4']", "expected '{'"),
        "missing-key": ("{'descr': '<f4', 'shape': (2, 3), }",
                        "missing key 'fortran_order'"),
        "extra-key": (header()[:-1] + "'extra': 1, }", "unexpected key 'extra'"),
        "duplicate-key": ("{'descr': '<f4', 'descr': '<f4', "
                          "'fortran_order': False, 'shape': (2, 3)}",
                          "duplicate key 'descr'"),
        "bad-bool": (header(fortran="Maybe"), "expected True or False"),
        "not-a-tuple": (header(shape="(6)"), "shape (6) is not a tuple"),
        "list-shape": (header(shape="[2, 3]"), "expected '('"),
        "negative-dim": (header(shape="(-1, 3)"), "negative dimension"),
        "missing-comma": (header(shape="(2 3)"), "expected ')'"),
        "unterminated": ("{'descr: '<f4'}", "expected ':'"),
        "open-string": ("{'descr", "unterminated string"),
        "escape": (header(descr="'<f\\x34'"), "escape sequences"),
        "trailing-text": (header() + " junk", "unexpected text after the dict"),
        "unclosed": ("{'descr': '<f4'", "expected '}'"),
        "dangling-comma": (header()[:-1], "expected a string"),
        "huge-dim": (header(shape="(99999999999999999999,)"),
                     "dimension overflows int64"),
    }
    for name, (text, problem) in variants.items():
        file = bad_file(f"header-{name}.npy", npy_bytes(text, b"\0" * 24))
        expect_read_error(INVALID_ARGUMENT,
                          ["malformed .npy header", problem], file)


@case
def unsupported_layouts_and_dtypes():
    fortran = path("fortran.npy")
    np.save(fortran, np.asfortranarray(np.ones((3, 4), np.float32)))
    expect_read_error(UNSUPPORTED, ["fortran_order True"], fortran)
    big_endian = path("big-endian.npy")
    np.save(big_endian, np.ones(3, ">f4"))
    expect_read_error(UNSUPPORTED, ["big-endian dtype '>f4'"], big_endian)
    for dtype in ("<c8", "|b1", "<i2", "<u4", "|i1", "<M8[s]"):
        file = path(f"dtype-{dtype[1:3]}.npy")
        np.save(file, np.zeros(3, dtype))
        expect_read_error(UNSUPPORTED, [f"dtype '{dtype}' is not supported",
                                        "'<f4'"], file)
    file = bad_file("rank-9.npy",
                    npy_bytes(header(shape="(" + "1, " * 9 + ")"), b"\0" * 4))
    expect_read_error(UNSUPPORTED, ["rank 9 exceeds FLUID_MAX_RANK (8)"], file)


@case
def sizes_that_overflow_int64():
    for name, shape in (("numel", "(4294967296, 4294967296)"),
                        ("bytes", "(4611686018427387904,)")):
        file = bad_file(f"overflow-{name}.npy",
                        npy_bytes(header(shape=shape), b"\0" * 16))
        expect_read_error(INVALID_ARGUMENT, ["overflows int64"], file)


@case
def data_shorter_or_longer_than_the_shape():
    expect_read_error(INVALID_ARGUMENT,
                      ["truncated data", "needs 24 bytes but only 20"],
                      bad_file("short-data.npy",
                               npy_bytes(header(), b"\0" * 20)))
    file = path("trailing.npy")
    np.save(file, np.zeros((2, 3), np.float32))
    with open(file, "ab") as f:
        f.write(b"garbage")
    expect_read_error(INVALID_ARGUMENT, ["7 unexpected bytes after the data"],
                      file)


if __name__ == "__main__":
    sys.exit(cases.main(cleanup=SCRATCH.remove))
