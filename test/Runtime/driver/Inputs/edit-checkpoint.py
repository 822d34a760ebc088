"""Rewrites a safetensors checkpoint: drops tensors, replaces one by zeros of
another shape, adds an unused one, sets one element of a tensor (to nan, inf,
-5, ...), or fills a tensor with random bytes. A minimal reader and writer of
the format (an 8-byte little-endian header length, a JSON header, the data).

usage: edit-checkpoint.py IN OUT [--drop NAME]... [--reshape NAME=D0,D1,...]
                          [--add NAME] [--set NAME:INDEX=VALUE]...
                          [--random NAME]...
"""
import argparse
import json
import struct

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64,
          "I32": np.int32}

parser = argparse.ArgumentParser()
parser.add_argument("input")
parser.add_argument("output")
parser.add_argument("--drop", action="append", default=[])
parser.add_argument("--reshape", action="append", default=[])
parser.add_argument("--add", action="append", default=[])
parser.add_argument("--set", action="append", default=[])
parser.add_argument("--random", action="append", default=[])
args = parser.parse_args()

with open(args.input, "rb") as f:
    blob = f.read()
(length,) = struct.unpack("<Q", blob[:8])
header = json.loads(blob[8:8 + length])
data = blob[8 + length:]
tensors = {}
for name, entry in header.items():
    if name == "__metadata__":
        continue
    begin, end = entry["data_offsets"]
    array = np.frombuffer(data[begin:end], dtype=DTYPES[entry["dtype"]])
    tensors[name] = (entry["dtype"], array.reshape(entry["shape"]))

for name in args.drop:
    del tensors[name]
for spec in args.reshape:
    name, shape = spec.split("=")
    dtype, _ = tensors[name]
    tensors[name] = (dtype, np.zeros([int(d) for d in shape.split(",")],
                                     dtype=DTYPES[dtype]))
for name in args.add:
    tensors[name] = ("F32", np.zeros([3], dtype=np.float32))
for spec in args.set:
    target, value = spec.split("=")
    name, index = target.split(":")
    dtype, array = tensors[name]
    array = array.copy()
    array.reshape(-1)[int(index)] = float(value) if dtype[0] == "F" else int(value)
    tensors[name] = (dtype, array)
for name in args.random:
    dtype, array = tensors[name]
    noise = np.random.default_rng(0).integers(0, 256, array.nbytes, np.uint8)
    tensors[name] = (dtype, noise.view(array.dtype).reshape(array.shape))

header = {}
chunks = []
offset = 0
for name, (dtype, array) in sorted(tensors.items()):
    raw = np.ascontiguousarray(array).tobytes()
    header[name] = {"dtype": dtype, "shape": list(array.shape),
                    "data_offsets": [offset, offset + len(raw)]}
    chunks.append(raw)
    offset += len(raw)
text = json.dumps(header).encode()
with open(args.output, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))
