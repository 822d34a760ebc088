"""Writes the hostile ONNX files that hostile-files.test reads, into the
folder given as the only argument: tensors whose data does not match their
shape, and small files that protobuf would expand into gigabytes (tensors
whose data lies in other files are make_external_data.py's). Some are
written as raw protobuf bytes, since the onnx package cannot build them."""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
FLOAT = TensorProto.FLOAT


def make(nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs,
                              initializer=list(initializers))
    model = helper.make_model(graph, producer_name="make_hostile_files",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def save(name, model):
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


def tensor(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def varint(value):
    encoded = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        encoded.append(low | (0x80 if value else 0))
        if not value:
            return bytes(encoded)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def matmul_model(weight):
    """x [2, 3] times the initializer `weight` (named "w")."""
    return make([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                [tensor("x", [2, 3])], [tensor("y", [2, 4])], [weight])


def raw_tensor(dims, elem=FLOAT, floats=(), strings=()):
    """A tensor "w" as given, unchecked (onnx.helper checks the count)."""
    t = TensorProto(name="w", data_type=elem, dims=dims)
    t.float_data.extend(floats)
    t.string_data.extend(strings)
    return t


def weight(shape=(3, 4)):
    return numpy_helper.from_array(np.ones(shape, np.float32), "w")


# --- tensors whose data does not match their shape --------------------------
short = weight()
short.raw_data = short.raw_data[:8]
save("raw-data-short", matmul_model(short))
long_ = weight()
long_.raw_data = long_.raw_data + b"\0" * 4
save("raw-data-long", matmul_model(long_))
save("float-data-short", matmul_model(raw_tensor([3, 4], floats=[1.0] * 5)))
save("dims-overflow", matmul_model(raw_tensor([1 << 40, 1 << 40])))
save("dims-negative", matmul_model(raw_tensor([3, -4])))
save("string-initializer",
     matmul_model(raw_tensor([3, 4], TensorProto.STRING, strings=[b"a"] * 12)))

# --- computations at import time that would take terabytes ----------------
# INT32 shapes [2^20, 1] + [1, 2^20]: 2^40 elements.
rows = numpy_helper.from_array(np.zeros((1 << 20, 1), np.int32), "rows")
cols = numpy_helper.from_array(np.zeros((1, 1 << 20), np.int32), "cols")
save("broadcast-blowup",
     make([helper.make_node("Add", ["rows", "cols"], ["sum"], name="outer"),
           helper.make_node("Reshape", ["x", "sum"], ["y"], name="view")],
          [tensor("x", [2, 3])], [tensor("y", [6])], [rows, cols]))
# Opset 11 Unsqueeze with a million axes.
save("unsqueeze-many-axes",
     make([helper.make_node("Unsqueeze", ["x"], ["y"], name="unsqueeze",
                            axes=list(range(1 << 20)))],
          [tensor("x", [2, 3])], [tensor("y", [2, 3])], opset=11))

# --- small files that protobuf would expand -------------------------------
# A valid model, then 8 million more empty nodes appended to its graph
# (protobuf merges a repeated message field): 16 MB that parse into about
# 2.5 GB of NodeProto and fluid's copy of them.
relu = make([helper.make_node("Relu", ["x"], ["y"], name="act")],
            [tensor("x", [2, 3])], [tensor("y", [2, 3])])
base = relu.SerializeToString()
with open(os.path.join(out, "many-nodes.onnx"), "wb") as f:
    f.write(base + field(7, field(1, b"") * (8 << 20)))
# An initializer whose packed dims are 32 million 1-byte varints: 32 MB
# that become 256 MB of int64 in protobuf's field, more while it grows, and
# as much again in fluid's copy.
dims = field(1, b"\x01" * (32 << 20)) + b"\x10\x01"
with open(os.path.join(out, "many-dims.onnx"), "wb") as f:
    f.write(base + field(7, field(5, dims)))
# Nesting deeper than protobuf's limit of 100: graph attributes of graph
# attributes.
graph = b""
for _ in range(200):
    graph = field(1, field(5, field(6, graph)))  # node, attribute, g
with open(os.path.join(out, "deep.onnx"), "wb") as f:
    f.write(base + field(7, graph))
# All zero bytes: field number 0 does not exist.
with open(os.path.join(out, "zeros.onnx"), "wb") as f:
    f.write(b"\0" * 4096)
