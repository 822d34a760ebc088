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
    """Writes {name: numpy array} to `path`."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": _NAMES[np.dtype(array.dtype)],
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for blob in blobs:
            f.write(blob)


def load(path):
    """Reads `path` into {name: numpy array}."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header.pop("__metadata__", None)
    base = 8 + length
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        tensors[name] = np.frombuffer(
            raw[base + begin:base + end],
            dtype=_DTYPES[info["dtype"]]).reshape(info["shape"]).copy()
    return tensors
