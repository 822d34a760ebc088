# RUN: %python %s %fluid_runtime_lib
"""The safetensors reader and writer (Safetensors.h) against the format as
https://huggingface.co/docs/safetensors specifies it, written and parsed here
with struct + json (Debian has no safetensors package), with PyTorch's bf16
where available, and every error path on corrupt or truncated files: each must
return the documented status with a message naming the file and the problem.
"""

import ctypes
import json
import os
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

try:
    import torch
except ImportError:
    torch = None

# safetensors dtype -> (fluid dtype code, NumPy dtype holding its bits)
DTYPES = {"F32": (0, np.float32), "F64": (1, np.float64),
          "I32": (2, np.int32), "I64": (3, np.int64), "F16": (4, np.float16),
          "BF16": (5, np.uint16), "U8": (6, np.uint8)}
CODES = {code: (name, numpy) for name, (code, numpy) in DTYPES.items()}

lib = fluidrt.load(sys.argv[1])
P, TENSOR = ctypes.c_void_p, ctypes.POINTER(fluidrt.FluidTensor)
for name, args in {
        "open": [ctypes.c_char_p, ctypes.POINTER(P)],
        "count": [P, ctypes.POINTER(ctypes.c_int64)],
        "name": [P, ctypes.c_int64, ctypes.POINTER(ctypes.c_char_p)],
        "info": [P, ctypes.c_char_p, TENSOR],
        "read": [P, ctypes.c_char_p, TENSOR],
        "metadata": [P, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)],
        "writer_create": [ctypes.POINTER(P)],
        "writer_add": [P, ctypes.c_char_p, TENSOR],
        "writer_set_metadata": [P, ctypes.c_char_p, ctypes.c_char_p],
        "writer_write": [P, ctypes.c_char_p]}.items():
    getattr(lib, "fluid_safetensors_" + name).argtypes = args
for name in ("close", "writer_free"):
    getattr(lib, "fluid_safetensors_" + name).argtypes = [P]
    getattr(lib, "fluid_safetensors_" + name).restype = None

SCRATCH = Scratch(prefix="fluid-io-safetensors-")
WORK = SCRATCH.root
path, save = SCRATCH.path, SCRATCH.save


def descriptor(array, dtype="F32"):
    """A fluid_tensor viewing `array` whose bits are safetensors `dtype`."""
    return fluidrt.tensor(array, DTYPES[dtype][0])


def sample(dtype, shape, seed=0):
    return fluidrt.random_array(np.random.default_rng(seed), shape,
                                DTYPES[dtype][1])


# --- The format, by hand ---------------------------------------------------

def safetensors_bytes(tensors, metadata=None, pad=True):
    """tensors: {name: (dtype, array)} laid out in the given order."""
    header, chunks, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, array) in tensors.items():
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return raw_file(text, b"".join(chunks))


def raw_file(header_text, data=b""):
    if isinstance(header_text, str):
        header_text = header_text.encode()
    return struct.pack("<Q", len(header_text)) + header_text + data


def parse_safetensors(file):
    """(header length, header dict, data buffer) of a file, by hand."""
    with open(file, "rb") as f:
        content = f.read()
    (length,) = struct.unpack("<Q", content[:8])
    text = content[8:8 + length]
    assert text.rstrip(b" ") == text.rstrip(), "padding must be spaces"
    return length, json.loads(text), content[8 + length:]


# --- The library ------------------------------------------------------------

class Reader:
    def __init__(self, file):
        self.handle = P()
        fluidrt.check(lib, lib.fluid_safetensors_open(file.encode(),
                                                      ctypes.byref(self.handle)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        lib.fluid_safetensors_close(self.handle)

    def names(self):
        count = ctypes.c_int64()
        fluidrt.check(lib, lib.fluid_safetensors_count(self.handle,
                                                       ctypes.byref(count)))
        names = []
        for i in range(count.value):
            name = ctypes.c_char_p()
            fluidrt.check(lib, lib.fluid_safetensors_name(self.handle, i,
                                                          ctypes.byref(name)))
            names.append(name.value.decode())
        return names

    def info(self, name):
        t = fluidrt.FluidTensor()
        t.data = 1  # must be cleared
        fluidrt.check(lib, lib.fluid_safetensors_info(self.handle,
                                                      name.encode(),
                                                      ctypes.byref(t)))
        assert t.data is None
        return CODES[t.dtype][0], tuple(t.shape[:t.rank])

    def read(self, name):
        dtype, shape = self.info(name)
        array = np.zeros(shape, DTYPES[dtype][1])
        t = descriptor(array, dtype)
        fluidrt.check(lib, lib.fluid_safetensors_read(self.handle,
                                                      name.encode(),
                                                      ctypes.byref(t)))
        return dtype, array

    def metadata(self, key):
        value = ctypes.c_char_p()
        fluidrt.check(lib, lib.fluid_safetensors_metadata(
            self.handle, key.encode(), ctypes.byref(value)))
        return None if value.value is None else value.value.decode()


def write(file, tensors, metadata=()):
    """tensors: {name: (dtype, array)}; returns the status."""
    writer = P()
    fluidrt.check(lib, lib.fluid_safetensors_writer_create(ctypes.byref(writer)))
    try:
        descriptors = []
        for name, (dtype, array) in tensors.items():
            descriptors.append(descriptor(array, dtype))
            fluidrt.check(lib, lib.fluid_safetensors_writer_add(
                writer, name.encode(), ctypes.byref(descriptors[-1])))
        for key, value in metadata:
            fluidrt.check(lib, lib.fluid_safetensors_writer_set_metadata(
                writer, key.encode(), value.encode()))
        return lib.fluid_safetensors_writer_write(writer, file.encode())
    finally:
        lib.fluid_safetensors_writer_free(writer)


def expect_message(status, expected_status, fragments):
    fluidrt.expect_status(lib, status, expected_status, fragments)


def expect_open_error(status, fragments, file):
    handle = P()
    got = lib.fluid_safetensors_open(file.encode(), ctypes.byref(handle))
    assert not handle.value, "a failed open must not return a reader"
    expect_message(got, status, [file] + fragments)


MIXED = {
    "fc.weight": ("F32", sample("F32", (3, 4), 1)),
    "fc.bias": ("F64", sample("F64", (4,), 2)),
    "step": ("I64", sample("I64", (), 3)),
    "labels": ("I32", sample("I32", (2, 2, 2), 4)),
    "half": ("F16", sample("F16", (5,), 5)),
    "brain": ("BF16", sample("BF16", (1, 3), 6)),
    "mask": ("U8", sample("U8", (7,), 7)),
    "empty": ("F32", np.zeros((0, 3), np.float32)),
}

@case
def reads_hand_written_files_of_every_dtype():
    file = save("mixed.safetensors",
                safetensors_bytes(MIXED, metadata={"format": "pt", "step": "7"}))
    with Reader(file) as reader:
        assert reader.names() == sorted(MIXED), reader.names()
        for name, (dtype, expected) in MIXED.items():
            got_dtype, got = reader.read(name)
            assert got_dtype == dtype and got.shape == expected.shape, name
            assert got.tobytes() == expected.tobytes(), name
        assert reader.metadata("format") == "pt"
        assert reader.metadata("step") == "7"
        assert reader.metadata("absent") is None


@case
def reads_any_json_layout_the_format_allows():
    a, b = np.arange(4, dtype=np.float32), np.arange(2, dtype=np.int64)
    # Fields reordered, whitespace, escapes, header order != buffer order.
    text = ('{ "b\\u00e9\\ud83d\\ude00" : { "data_offsets" : [ 0 , 16 ] ,\n'
            '  "shape" : [ 2 ] , "dtype" : "I64" } ,\r\n\t'
            '"a\\"\\\\\\/\\n" : {"shape":[4],"dtype":"F32",'
            '"data_offsets":[16,32]}, "__metadata__": {} }    ')
    file = save("layout.safetensors", raw_file(text, b.tobytes() + a.tobytes()))
    with Reader(file) as reader:
        weird_b, weird_a = "b\u00e9\U0001F600", 'a"\\/\n'
        assert reader.names() == sorted([weird_a, weird_b]), reader.names()
        assert np.array_equal(reader.read(weird_a)[1], a)
        assert np.array_equal(reader.read(weird_b)[1], b)


@case
def reads_a_file_without_tensors():
    for text in ("{}", '{"__metadata__":{"k":"v"}}'):
        with Reader(save("none.safetensors", raw_file(text))) as reader:
            assert reader.names() == []


@case
def writes_the_format_by_the_specification():
    file = path("written.safetensors")
    assert write(file, MIXED, [("format", "pt"), ("note", 'a "quoted"\n')]) == 0
    length, header, buffer = parse_safetensors(file)
    assert length % 8 == 0, f"header length {length} not a multiple of 8"
    assert header.pop("__metadata__") == {"format": "pt",
                                          "note": 'a "quoted"\n'}
    assert set(header) == set(MIXED)
    # Laid out by descending element size, then name: contiguous, aligned.
    itemsize = {name: DTYPES[d][1]().itemsize for name, (d, _) in MIXED.items()}
    order = sorted(MIXED, key=lambda name: (-itemsize[name], name))
    offset = 0
    for name in order:
        entry, (dtype, array) = header[name], MIXED[name]
        assert set(entry) == {"dtype", "shape", "data_offsets"}, entry
        assert entry["dtype"] == dtype and entry["shape"] == list(array.shape)
        begin, end = entry["data_offsets"]
        assert begin == offset and begin % itemsize[name] == 0, (name, begin)
        assert buffer[begin:end] == array.tobytes(), name
        offset = end
    assert offset == len(buffer)


@case
def writer_output_round_trips_through_the_reader():
    file = path("round-trip.safetensors")
    assert write(file, MIXED, [("epoch", "3")]) == 0
    with Reader(file) as reader:
        assert reader.names() == sorted(MIXED)
        assert reader.metadata("epoch") == "3"
        for name, (dtype, expected) in MIXED.items():
            got_dtype, got = reader.read(name)
            assert got_dtype == dtype and got.tobytes() == expected.tobytes()


@case
def bf16_agrees_with_pytorch():
    if torch is None:
        print("  (skipped: no PyTorch)")
        return
    values = torch.tensor([1.0, -2.5, 3.140625, 1e-3, 65504.0, -0.0])
    bits = values.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    file = path("bf16.safetensors")
    assert write(file, {"w": ("BF16", bits.copy())}) == 0
    with Reader(file) as reader:
        _, got = reader.read("w")
    as_torch = torch.from_numpy(got.view(np.int16)).view(torch.bfloat16)
    assert torch.equal(as_torch, values.to(torch.bfloat16)), as_torch


@case
def write_replaces_atomically_and_leaves_no_temporary():
    file = path("checkpoint.safetensors")
    assert write(file, {"a": ("F32", np.ones(1000, np.float32))}) == 0
    assert write(file, {"b": ("I32", np.arange(3, dtype=np.int32))}) == 0
    with Reader(file) as reader:
        assert reader.names() == ["b"]
    SCRATCH.expect_no_temporaries()


@case
def write_failures_name_the_file_and_clean_up():
    tensors = {"a": ("F32", np.ones(3, np.float32))}
    SCRATCH.expect_write_failures(lib, lambda file: write(file, tensors),
                                  ".safetensors")


@case
def writer_rejects_bad_tensors():
    writer = P()
    fluidrt.check(lib, lib.fluid_safetensors_writer_create(ctypes.byref(writer)))
    array = np.ones((2, 2), np.float32)
    good = descriptor(array)

    def add(name, t, status, fragment):
        got = lib.fluid_safetensors_writer_add(writer, name, ctypes.byref(t))
        expect_message(got, status, [fragment])

    try:
        fluidrt.check(lib, lib.fluid_safetensors_writer_add(
            writer, b"w", ctypes.byref(good)))
        add(b"w", good, INVALID_ARGUMENT, "'w': duplicate tensor name")
        add(b"__metadata__", good, INVALID_ARGUMENT, "reserved")
        add(b"", good, INVALID_ARGUMENT, "must not be null or empty")
        bad = descriptor(array)
        bad.dtype = 42
        add(b"x", bad, UNSUPPORTED, "'x': unknown dtype 42")
        bad = descriptor(array)
        bad.rank = 9
        add(b"x", bad, INVALID_ARGUMENT, "rank 9")
        bad = descriptor(array)
        bad.shape[1] = -1
        add(b"x", bad, INVALID_ARGUMENT, "negative dimension in shape [2, -1]")
        bad = descriptor(array)
        bad.data = None
        add(b"x", bad, INVALID_ARGUMENT, "'x': tensor data is null")
    finally:
        lib.fluid_safetensors_writer_free(writer)
    lib.fluid_safetensors_writer_free(None)


@case
def reader_rejects_bad_requests():
    file = save("requests.safetensors", safetensors_bytes(MIXED))
    with Reader(file) as reader:
        t = fluidrt.FluidTensor()
        status = lib.fluid_safetensors_info(reader.handle, b"nope",
                                            ctypes.byref(t))
        expect_message(status, INVALID_ARGUMENT, [file, "no tensor named 'nope'"])
        name = ctypes.c_char_p()
        status = lib.fluid_safetensors_name(reader.handle, len(MIXED),
                                            ctypes.byref(name))
        expect_message(status, INVALID_ARGUMENT,
                       [file, f"index {len(MIXED)} is outside [0, {len(MIXED)})"])
        for dtype, shape, problem in (
                ("F64", (3, 4), "F32 [3, 4] in the file but the destination "
                                "is F64 [3, 4]"),
                ("F32", (4, 3), "destination is F32 [4, 3]"),
                ("F32", (12,), "destination is F32 [12]")):
            wrong = np.zeros(shape, DTYPES[dtype][1])
            t = descriptor(wrong, dtype)
            status = lib.fluid_safetensors_read(reader.handle, b"fc.weight",
                                                ctypes.byref(t))
            expect_message(status, INVALID_ARGUMENT,
                           [file, "tensor 'fc.weight' is", problem])
        t = descriptor(np.zeros((3, 4), np.float32))
        t.data = None
        status = lib.fluid_safetensors_read(reader.handle, b"fc.weight",
                                            ctypes.byref(t))
        expect_message(status, INVALID_ARGUMENT, [file, "is null"])
    lib.fluid_safetensors_close(None)


@case
def missing_short_and_oversized_files():
    expect_open_error(IO, ["cannot open", "No such file or directory"],
                      path("absent.safetensors"))
    expect_open_error(IO, ["not a regular file"], WORK)
    expect_open_error(INVALID_ARGUMENT, ["truncated", "has 5 bytes"],
                      save("short.safetensors", b"\x10\0\0\0\0"))
    expect_open_error(INVALID_ARGUMENT,
                      ["header length 1000 exceeds the 10 bytes that follow"],
                      save("long-header.safetensors",
                           struct.pack("<Q", 1000) + b"{}        "))
    expect_open_error(INVALID_ARGUMENT,
                      ["header length 18446744073709551615 exceeds"],
                      save("huge-header.safetensors",
                           struct.pack("<Q", 2 ** 64 - 1) + b"{}"))
    sparse = path("sparse.safetensors")  # 100 MB of holes, cheap to make
    with open(sparse, "wb") as f:
        f.write(struct.pack("<Q", 100_000_001))
        f.truncate(100_000_100)
    expect_open_error(INVALID_ARGUMENT,
                      ["exceeds the limit of 100000000 bytes"], sparse)


@case
def malformed_json():
    body = '{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    variants = {
        "array": ("[1, 2]", "must start with '{'"),
        "leading-space": (" {}", "must start with '{'"),
        "empty": ("", "must start with '{'"),
        "truncated": (body[:30], "found the end of the header"),
        "unterminated": ('{"w', "unterminated string"),
        "no-colon": ('{"w" {}}', "expected ':'"),
        "trailing-comma": (body[:-1] + ",}", "expected a string"),
        "bad-escape": ('{"w\\x":{}}', "invalid escape sequence"),
        "bad-unicode": ('{"w\\u12G4":{}}', "expected 4 hex digits"),
        "lone-high": ('{"w\\ud83d":{}}', "unpaired high surrogate"),
        "lone-low": ('{"w\\ude00":{}}', "unpaired low surrogate"),
        "control-char": ('{"w\x01":{}}', "control character"),
        "float-dim": (body.replace("[2]", "[2.0]"), "fraction or exponent"),
        "exponent": (body.replace("[0,8]", "[0,8e0]"), "fraction or exponent"),
        "negative-dim": (body.replace("[2]", "[-2]"), "negative number"),
        "leading-zero": (body.replace("[2]", "[02]"), "leading zeros"),
        "overflow": (body.replace("[2]", "[9223372036854775808]"),
                     "integer overflows int64"),
        "string-dim": (body.replace("[2]", '["2"]'),
                       "expected a non-negative integer"),
        "shape-not-array": (body.replace("[2]", "2"), "expected an array"),
        "tensor-not-object": ('{"w": 3}', "expected an object"),
        "after-object": (body + " {}", "unexpected text after"),
    }
    for name, (text, problem) in variants.items():
        file = save(f"json-{name}.safetensors", raw_file(text, b"\0" * 8))
        expect_open_error(INVALID_ARGUMENT, ["malformed header JSON at byte",
                                             problem], file)


@case
def schema_violations():
    def entry(dtype="F32", shape="[2]", offsets="[0,8]", extra=""):
        return (f'{{"dtype":"{dtype}","shape":{shape},'
                f'"data_offsets":{offsets}{extra}}}')
    variants = {
        "missing-field": ('{"w":{"dtype":"F32","shape":[2]}}',
                          "tensor 'w': missing field \"data_offsets\""),
        "unknown-field": ('{"w":' + entry(extra=',"offset":0') + "}",
                          "tensor 'w': unknown field \"offset\""),
        "duplicate-field": ('{"w":{"dtype":"F32","dtype":"F32"}}',
                            "tensor 'w': duplicate field \"dtype\""),
        "duplicate-name": ('{"w":' + entry() + ',"w":' + entry() + "}",
                           "duplicate tensor name 'w'"),
        "duplicate-metadata": ('{"__metadata__":{},"__metadata__":{},'
                               '"w":' + entry() + "}",
                               "duplicate \"__metadata__\""),
        "duplicate-metadata-key": ('{"__metadata__":{"k":"a","k":"b"},'
                                   '"w":' + entry() + "}",
                                   "duplicate metadata key \"k\""),
        "metadata-not-string": ('{"__metadata__":{"k":1},"w":' + entry() + "}",
                                "expected a string"),
        "three-offsets": ('{"w":' + entry(offsets="[0,8,8]") + "}",
                          "data_offsets must have exactly 2 entries"),
        "one-offset": ('{"w":' + entry(offsets="[8]") + "}",
                       "data_offsets must have exactly 2 entries"),
    }
    for name, (text, problem) in variants.items():
        file = save(f"schema-{name}.safetensors", raw_file(text, b"\0" * 8))
        expect_open_error(INVALID_ARGUMENT, [problem], file)


@case
def unsupported_dtypes_and_ranks():
    for dtype in ("BOOL", "I8", "F8_E4M3", "float32", "f32"):
        text = '{"w":{"dtype":"%s","shape":[8],"data_offsets":[0,8]}}' % dtype
        file = save(f"dtype-{dtype}.safetensors", raw_file(text, b"\0" * 8))
        expect_open_error(UNSUPPORTED, [f"tensor 'w': dtype \"{dtype}\" is not "
                                        "supported", "BF16"], file)
    text = ('{"w":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],'
            '"data_offsets":[0,1]}}')
    expect_open_error(UNSUPPORTED, ["rank exceeds FLUID_MAX_RANK (8)"],
                      save("rank-9.safetensors", raw_file(text, b"\0")))


@case
def offsets_that_do_not_tile_the_buffer():
    def tensors(*entries):
        return "{" + ",".join(
            f'"{n}":{{"dtype":"{d}","shape":{list(s)},"data_offsets":{list(o)}}}'
            for n, d, s, o in entries) + "}"
    variants = {
        "reversed": (tensors(("w", "U8", (0,), (8, 0))), 8,
                     "tensor 'w': data_offsets [8, 0] end before they begin"),
        "past-end": (tensors(("w", "F32", (4,), (0, 16))), 8,
                     "data_offsets [0, 16] exceed the 8-byte data buffer"),
        "size-mismatch": (tensors(("w", "F32", (3,), (0, 8))), 8,
                          "data_offsets [0, 8] span 8 bytes but F32 [3] "
                          "needs 12"),
        "overlap": (tensors(("a", "F32", (2,), (0, 8)),
                            ("b", "F32", (2,), (4, 12))), 12,
                    "tensor 'b' (bytes [4, 12)) overlaps tensor 'a' "
                    "(bytes [0, 8))"),
        "same-place": (tensors(("a", "F32", (2,), (0, 8)),
                               ("b", "I32", (2,), (0, 8))), 8, "overlaps"),
        "hole": (tensors(("a", "F32", (1,), (0, 4)),
                         ("b", "F32", (1,), (8, 12))), 12,
                 "bytes [4, 8) of the data buffer belong to no tensor"),
        "trailing": (tensors(("a", "F32", (1,), (0, 4))), 10,
                     "bytes [4, 10) of the data buffer belong to no tensor"),
        "no-tensors-but-data": ("{}", 3, "bytes [0, 3) of the data buffer"),
        "numel-overflow": (tensors(("w", "U8", (2 ** 32, 2 ** 32), (0, 0))), 0,
                           "tensor 'w': byte size of shape "
                           "[4294967296, 4294967296] overflows int64"),
        "bytes-overflow": (tensors(("w", "F64", (2 ** 61,), (0, 0))), 0,
                           "overflows int64"),
    }
    for name, (text, size, problem) in variants.items():
        file = save(f"offsets-{name}.safetensors", raw_file(text, b"\0" * size))
        expect_open_error(INVALID_ARGUMENT, [problem], file)


if __name__ == "__main__":
    sys.exit(cases.main(cleanup=SCRATCH.remove))
