"""Writes the ONNX models with external data that external-data.test reads,
into the folder given as the only argument:

  inline/model.onnx      a small CNN (Conv, Gemm, a Constant) with its data
                         inside;
  one-file/model.onnx    the same, saved by onnx with every tensor (the
                         Constant's too) in model.onnx.data, at offsets;
  many-files/model.onnx  the same, each tensor in a file of its own;
  many-tensors/          300 tensors in one file (it is opened once);
  hostile/*.onnx         a MatMul by an initializer "w" [3, 4] whose
                         external_data entries are written by hand (the onnx
                         package checks what it writes), each wrong in one
                         way but a few; hostile/w.bin and hostile/sub/w.bin
                         hold the 48 bytes "w" needs, outside/w.bin the same
                         outside the models' folder, hostile/socket.bin is a
                         Unix socket.

The test makes the FIFO, the sparse file and the symbolic links itself."""

import os
import socket
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
FLOAT = TensorProto.FLOAT


def tensor(name, shape):
    return helper.make_tensor_value_info(name, FLOAT, shape)


def values(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(
        np.float32)


def make_model(nodes, inputs, outputs, initializers, name):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    model = helper.make_model(graph, producer_name="make_external_data",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def save(model, folder, **external):
    """Saves `model` as folder/model.onnx, with external data if given."""
    os.makedirs(os.path.join(out, folder), exist_ok=True)
    onnx.save_model(model, os.path.join(out, folder, "model.onnx"),
                    **external)


def cnn():
    """x [2, 3, 5, 5] -> Conv 3x3 to 4 channels -> Flatten -> Gemm to 10
    -> times a Constant [10] (a tensor attribute)."""
    scale = numpy_helper.from_array(values([10], 4), "scale")
    return make_model(
        [helper.make_node("Conv", ["x", "conv.weight", "conv.bias"], ["c"],
                          name="conv"),
         helper.make_node("Flatten", ["c"], ["f"], name="flatten"),
         helper.make_node("Gemm", ["f", "fc.weight", "fc.bias"], ["g"],
                          name="fc", transB=1),
         helper.make_node("Constant", [], ["s"], name="scale", value=scale),
         helper.make_node("Mul", ["g", "s"], ["y"], name="mul")],
        [tensor("x", [2, 3, 5, 5])], [tensor("y", [2, 10])],
        [numpy_helper.from_array(values([4, 3, 3, 3], 0), "conv.weight"),
         numpy_helper.from_array(values([4], 1), "conv.bias"),
         numpy_helper.from_array(values([10, 36], 2), "fc.weight"),
         numpy_helper.from_array(values([10], 3), "fc.bias")], "cnn")


# --- models that import: onnx's own external data ---------------------------
save(cnn(), "inline")
save(cnn(), "one-file", save_as_external_data=True,
     all_tensors_to_one_file=True, location="model.onnx.data",
     size_threshold=0, convert_attribute=True)
save(cnn(), "many-files", save_as_external_data=True,
     all_tensors_to_one_file=False, size_threshold=0, convert_attribute=True)

# Many tensors in one file, which is opened once: a graph that adds 300
# initializers of one value each to its input.
count = 300
nodes, initializers, previous = [], [], "x"
for i in range(count):
    initializers.append(
        numpy_helper.from_array(np.full([1], i, np.float32), f"b{i}"))
    nodes.append(helper.make_node("Add", [previous, f"b{i}"], [f"h{i}"],
                                  name=f"add{i}"))
    previous = f"h{i}"
nodes.append(helper.make_node("Identity", [previous], ["y"], name="out"))
save(make_model(nodes, [tensor("x", [2, 1])], [tensor("y", [2, 1])],
                initializers, "many"),
     "many-tensors", save_as_external_data=True, all_tensors_to_one_file=True,
     location="model.onnx.data", size_threshold=0)

# --- hostile entries ---------------------------------------------------------
hostile = os.path.join(out, "hostile")
os.makedirs(hostile, exist_ok=True)
os.makedirs(os.path.join(out, "outside"), exist_ok=True)
weight = values([3, 4], 5).tobytes()
os.makedirs(os.path.join(hostile, "sub"), exist_ok=True)
for folder in ["hostile", "outside", "hostile/sub"]:
    with open(os.path.join(out, folder, "w.bin"), "wb") as f:
        f.write(weight)
# The same 48 bytes after 16 others, and cut short.
with open(os.path.join(hostile, "padded.bin"), "wb") as f:
    f.write(b"\xff" * 16 + weight)
with open(os.path.join(hostile, "short.bin"), "wb") as f:
    f.write(weight[:40])
# Bound by a name relative to the folder: a socket's path is at most 107
# bytes.
cwd = os.getcwd()
os.chdir(hostile)
with socket.socket(socket.AF_UNIX) as unix_socket:
    unix_socket.bind("socket.bin")
os.chdir(cwd)


def external_model(name, entries, location=TensorProto.EXTERNAL,
                   raw_data=None, dims=(3, 4)):
    """x [2, 3] times "w", whose data lies where `entries` (key, value)
    say."""
    w = TensorProto(name="w", data_type=FLOAT, dims=list(dims))
    w.data_location = location
    if raw_data is not None:
        w.raw_data = raw_data
    for key, value in entries:
        w.external_data.add(key=key, value=value)
    model = make_model([helper.make_node("MatMul", ["x", "w"], ["y"],
                                         name="mm")],
                       [tensor("x", [2, dims[0]])],
                       [tensor("y", [2, dims[1]])], [w], name)
    with open(os.path.join(hostile, name + ".onnx"), "wb") as f:
        f.write(model.SerializeToString())


# The reference: "w" inside.
external_model("w-inline", [], location=TensorProto.DEFAULT, raw_data=weight)
# Accepted: the plain case (no offset or length: the whole file), an offset
# and a length, a checksum (not checked), a path through a subfolder, and a
# symbolic link that stays inside the folder.
external_model("plain", [("location", "w.bin")])
external_model("offset", [("location", "padded.bin"), ("offset", "16"),
                          ("length", "48")])
external_model("checksum", [("location", "w.bin"), ("checksum", "0" * 40)])
external_model("subfolder", [("location", "./sub/w.bin")])
external_model("link-inside", [("location", "link-inside.bin")])

# Locations refused before any file is looked at.
external_model("absolute", [("location", os.path.join(out, "outside",
                                                      "w.bin"))])
external_model("dotdot", [("location", "../outside/w.bin")])
external_model("dotdot-inside", [("location", "sub/../w.bin")])
external_model("empty-location", [("location", "")])
external_model("nul", [("location", "w.bin\0.txt")])
external_model("no-location", [("offset", "0")])
external_model("unknown-key", [("location", "w.bin"), ("basepath", "/")])
external_model("twice", [("location", "w.bin"), ("location", "w.bin")])
# Locations refused once resolved: through symbolic links that leave the
# folder (to a file, to a folder), a folder, a FIFO, a missing file.
external_model("link-outside", [("location", "link-outside.bin")])
external_model("link-folder", [("location", "link-folder/w.bin")])
external_model("directory", [("location", "sub")])
external_model("fifo", [("location", "fifo.bin")])
external_model("socket", [("location", "socket.bin")])
external_model("missing", [("location", "missing.bin")])
# Offsets and lengths.
external_model("truncated", [("location", "short.bin")])
external_model("truncated-length", [("location", "short.bin"),
                                    ("length", "48")])
external_model("past-end", [("location", "w.bin"), ("offset", "8"),
                            ("length", "48")])
external_model("offset-past-end", [("location", "w.bin"), ("offset", "100")])
external_model("length-mismatch", [("location", "padded.bin"),
                                   ("length", "44")])
external_model("offset-text", [("location", "w.bin"), ("offset", "abc")])
external_model("offset-negative", [("location", "w.bin"), ("offset", "-1")])
external_model("offset-overflow", [("location", "w.bin"),
                                   ("offset", "18446744073709551616")])
external_model("length-overflow", [("location", "w.bin"),
                                   ("length", "9223372036854775808")])
# The data both inside and outside, and entries without EXTERNAL.
external_model("also-raw", [("location", "w.bin")], raw_data=weight)
external_model("ambiguous", [("location", "w.bin")],
               location=TensorProto.DEFAULT, raw_data=weight)
# 4 GiB of data (a sparse file the test makes), more than the memory left.
external_model("huge", [("location", "huge.bin")], dims=(1 << 15, 1 << 15))
