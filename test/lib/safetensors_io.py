"""A minimal safetensors reader and writer for tests (Debian has no
safetensors package). Format: an 8-byte little-endian header length, a JSON
header {name: {"dtype", "shape", "data_offsets"}}, then the raw bytes."""

import json
import struct

import numpy as np

_DTYPES = {"F32": np.float32, "F64": np.float64, "I32": np.int32,
           "I64": np.int64, "F16": np.float16, "U8": np.uint8}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def save(path, tensors):
    """Writes {name: numpy array} to `path`, one tensor at a time (no copy
    of the whole set in memory)."""
    header, offset = {}, 0
    for name, array in tensors.items():
        size = array.size * np.dtype(array.dtype).itemsize
        header[name] = {"dtype": _NAMES[np.dtype(array.dtype)],
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + size]}
        offset += size
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for array in tensors.values():
            f.write(np.ascontiguousarray(array).tobytes())


def _header(f):
    (length,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(length))
    header.pop("__metadata__", None)
    return header, 8 + length


def load(path):
    """Reads `path` into {name: numpy array}."""
    with open(path, "rb") as f:
        header, base = _header(f)
        raw = f.read()
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        tensors[name] = np.frombuffer(
            raw[begin:end],
            dtype=_DTYPES[info["dtype"]]).reshape(info["shape"]).copy()
    return tensors


def load_lazy(path):
    """{name: read-only memory map of the tensor} of `path`: for files
    larger than the memory that should hold them."""
    with open(path, "rb") as f:
        header, base = _header(f)
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        dtype = np.dtype(_DTYPES[info["dtype"]])
        tensors[name] = np.memmap(
            path, dtype=dtype, mode="r", offset=base + begin,
            shape=tuple(info["shape"])) if end > begin else \
            np.zeros(info["shape"], dtype)
    return tensors
