"""Writes the small ONNX files that errors.test and import.test read, into
the folder given as the only argument. Built with the onnx package's
helpers, without its checker: several are invalid on purpose."""

import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
FLOAT = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, initializers=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs,
                              initializer=list(initializers))
    model = helper.make_model(graph, producer_name="make_models",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))
    return model


def tensor(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def weight(name, shape, seed=0):
    values = np.random.default_rng(seed).standard_normal(shape)
    return numpy_helper.from_array(values.astype(np.float32), name)


# --- malformed files -------------------------------------------------------
with open(os.path.join(out, "random.onnx"), "wb") as f:
    f.write(bytes(random.Random(0).getrandbits(8) for _ in range(4096)))
with open(os.path.join(out, "empty.onnx"), "wb"):
    pass
relu = save("relu", [helper.make_node("Relu", ["x"], ["y"], name="act")],
            [tensor("x", [2, 3])], [tensor("y", [2, 3])],
            [weight("unused", [64, 64])])
data = relu.SerializeToString()
with open(os.path.join(out, "truncated.onnx"), "wb") as f:
    f.write(data[:len(data) // 2])

# --- unsupported operators, attributes, types and opsets -------------------
save("unknown-op",
     [helper.make_node("Relu", ["x"], ["h"], name="act"),
      helper.make_node("NoSuchOp", ["h"], ["y"], name="mystery")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("custom-domain",
     [helper.make_node("FusedGelu", ["x"], ["y"], name="gelu",
                       domain="com.example")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("storage-order",
     [helper.make_node("MaxPool", ["x"], ["y"], name="pool",
                       kernel_shape=[2, 2], storage_order=1)],
     [tensor("x", [1, 1, 4, 4])], [tensor("y", [1, 1, 3, 3])])
save("auto-pad",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="conv",
                       auto_pad="SAME_MIDDLE")],
     [tensor("x", [1, 1, 5, 5])], [tensor("y", [1, 1, 5, 5])],
     [weight("w", [1, 1, 3, 3])])
save("unknown-attribute",
     [helper.make_node("Relu", ["x"], ["y"], name="act", alpha=0.1)],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("ceil-mode",
     [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[1],
                       strides=[3], ceil_mode=1)],
     [tensor("x", [1, 1, 5])], [tensor("y", [1, 1, 3])])
save("conv3d", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
     [tensor("x", [1, 1, 4, 4, 4])], [tensor("y", [1, 1, 2, 2, 2])],
     [weight("w", [1, 1, 3, 3, 3])])
save("float16", [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3], TensorProto.FLOAT16)],
     [tensor("y", [2, 3], TensorProto.FLOAT16)])
save("opset18", [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])], opset=18)
save("old-conv", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
     [tensor("x", [1, 1, 5, 5])], [tensor("y", [1, 1, 3, 3])],
     [weight("w", [1, 1, 3, 3])], opset=9)
save("runtime-shape",
     [helper.make_node("Reshape", ["x", "shape"], ["y"], name="view")],
     [tensor("x", [2, 3]), tensor("shape", [1], TensorProto.INT64)],
     [tensor("y", [6])])
save("bad-channels",
     [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
     [tensor("x", [1, 3, 8, 8])], [tensor("y", [1, 4, 6, 6])],
     [weight("w", [4, 2, 3, 3])])
save("wrong-output",
     [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 4])])

# --- dynamic dimensions ----------------------------------------------------
save("dynamic-batch", [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", ["batch_size", 3])], [tensor("y", ["batch_size", 3])])
save("dynamic-width", [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", ["batch_size", "width"])],
     [tensor("y", ["batch_size", "width"])])

# --- --loss ----------------------------------------------------------------
save("two-outputs", [helper.make_node("Relu", ["x"], ["y"], name="act"),
                     helper.make_node("Sigmoid", ["x"], ["z"], name="gate")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3]), tensor("z", [2, 3])])
bn_inputs = ["x", "scale", "bias", "mean", "var"]
save("bn-input-stats",
     [helper.make_node("BatchNormalization", bn_inputs, ["y"], name="bn")],
     [tensor("x", [2, 3]), tensor("mean", [3]), tensor("var", [3])],
     [tensor("y", [2, 3])], [weight("scale", [3]), weight("bias", [3], 1)])
# Two batch norms read one running mean and variance without Identity
# nodes: one parameter, which a training step would write twice.
save("shared-stats",
     [helper.make_node("BatchNormalization", bn_inputs, ["h"], name="bn1"),
      helper.make_node("BatchNormalization", ["h"] + bn_inputs[1:], ["y"],
                       name="bn2")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])],
     [weight("scale", [3]), weight("bias", [3], 1), weight("mean", [3], 2),
      numpy_helper.from_array(np.ones(3, np.float32), "var")])

# --- import.test: structure of what the importer emits ---------------------
# nn.Linear as Gemm, a Gemm that is not one, a batch norm, and the shape
# computation old torch.onnx exports emit for x.view(x.size(0), -1).
def const_ints(name, values):
    return helper.make_node(
        "Constant", [], [name], name=name,
        value=numpy_helper.from_array(np.array(values, np.int64), name))


stats = [numpy_helper.from_array(np.zeros(4, np.float32), "bn.running_mean"),
         numpy_helper.from_array(np.ones(4, np.float32), "bn.running_var")]
save("mlp",
     [helper.make_node("BatchNormalization",
                       ["x", "bn.weight", "bn.bias", "bn.running_mean",
                        "bn.running_var"], ["n"], name="bn", epsilon=1e-3,
                       momentum=0.8),
      helper.make_node("Shape", ["n"], ["shape"], name="shape"),
      const_ints("zero", 0),
      helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch",
                       axis=0),
      const_ints("axes", [0]),
      helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"],
                       name="unsqueeze"),
      const_ints("minus_one", [-1]),
      helper.make_node("Concat", ["batch1", "minus_one"], ["target"],
                       name="concat", axis=0),
      helper.make_node("Reshape", ["n", "target"], ["flat"], name="view"),
      helper.make_node("Gemm", ["flat", "fc.weight", "fc.bias"], ["h"],
                       name="fc", transB=1),
      helper.make_node("Relu", ["h"], ["r"], name="relu"),
      helper.make_node("Gemm", ["r", "head.weight", "head.bias"], ["logits"],
                       name="head", alpha=0.5, beta=2.0)],
     [tensor("x", ["batch", 4, 2, 2])], [tensor("logits", ["batch", 3])],
     [weight("bn.weight", [4], 1), weight("bn.bias", [4], 2), *stats,
      weight("fc.weight", [5, 16], 3), weight("fc.bias", [5], 4),
      weight("head.weight", [5, 3], 5), weight("head.bias", [3], 6)])
# Opset 11 Softmax flattens the input at `axis`.
save("softmax11",
     [helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=1)],
     [tensor("x", [2, 3, 4])], [tensor("y", [2, 3, 4])], opset=11)

# --- graphs that are not well-formed ----------------------------------------
# Each must be an error naming the node or graph element (errors.test).
save("too-many-inputs",
     [helper.make_node("Relu", ["x", "x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
# An omitted optional input still counts: Conv takes X, W and B.
save("conv-four-inputs",
     [helper.make_node("Conv", ["x", "w", "", ""], ["y"], name="conv")],
     [tensor("x", [1, 1, 5, 5])], [tensor("y", [1, 1, 3, 3])],
     [weight("w", [1, 1, 3, 3])])
# Unsqueeze took its axes as an attribute before opset 13.
save("unsqueeze11-two-inputs",
     [helper.make_node("Unsqueeze", ["x", "axes"], ["y"], name="unsqueeze",
                       axes=[0])],
     [tensor("x", [2, 3])], [tensor("y", [1, 2, 3])],
     [numpy_helper.from_array(np.array([0], np.int64), "axes")], opset=11)
save("too-many-outputs",
     [helper.make_node("Relu", ["x"], ["y", "z"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("no-node-outputs",
     [helper.make_node("Relu", ["x"], [], name="act"),
      helper.make_node("Sigmoid", ["x"], ["y"], name="gate")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("unnamed-node-output",
     [helper.make_node("Relu", ["x"], [""], name="act"),
      helper.make_node("Sigmoid", ["x"], ["y"], name="gate")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("no-graph-outputs", [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [])
save("unnamed-graph-input",
     [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3]), tensor("", [2, 3])], [tensor("y", [2, 3])])
save("unnamed-graph-output",
     [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3]), tensor("", [2, 3])])
save("duplicate-graph-input",
     [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3]), tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("duplicate-graph-output",
     [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3]), tensor("y", [2, 3])])
save("duplicate-node-output",
     [helper.make_node("Relu", ["x"], ["h"], name="act"),
      helper.make_node("Sigmoid", ["x"], ["h"], name="gate"),
      helper.make_node("Tanh", ["h"], ["y"], name="squash")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("output-is-graph-input",
     [helper.make_node("Relu", ["x"], ["x"], name="act")],
     [tensor("x", [2, 3])], [tensor("x", [2, 3])])
save("output-is-initializer",
     [helper.make_node("Add", ["x", "b"], ["b"], name="add")],
     [tensor("x", [2, 3])], [tensor("b", [2, 3])], [weight("b", [3])])
save("undefined-input",
     [helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("out-of-order",
     [helper.make_node("Tanh", ["h"], ["y"], name="second"),
      helper.make_node("Relu", ["x"], ["h"], name="first")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("cycle",
     [helper.make_node("Add", ["x", "b"], ["a"], name="one"),
      helper.make_node("Relu", ["a"], ["b"], name="two")],
     [tensor("x", [2, 3])], [tensor("b", [2, 3])])
save("self-loop", [helper.make_node("Relu", ["y"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("undefined-graph-output",
     [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("z", [2, 3])])
duplicate_axis = helper.make_node("Softmax", ["x"], ["y"], name="softmax",
                                  axis=1)
duplicate_axis.attribute.extend([helper.make_attribute("axis", 0)])
save("duplicate-attribute", [duplicate_axis], [tensor("x", [2, 3])],
     [tensor("y", [2, 3])])

# --- empty tensors: a mean over them is NaN --------------------------------
save("zero-batch", [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [0, 3])], [tensor("y", [0, 3])])
save("zero-width", [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 0])], [tensor("y", [2, 0])])
save("zero-weight", [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
     [tensor("x", [1, 1, 5, 5])], [tensor("y", [1, 0, 3, 3])],
     [numpy_helper.from_array(np.zeros((0, 1, 3, 3), np.float32), "w")])
save("empty-constant",
     [helper.make_node("Constant", [], ["c"], name="empty",
                       value=numpy_helper.from_array(
                           np.zeros((2, 0), np.float32), "c"))],
     [tensor("x", [2, 3])], [tensor("c", [2, 0])])
save("many-unknown-ops",
     [helper.make_node("NoSuchOp", ["x"], ["y%d" % i]) for i in range(1000)],
     [tensor("x", [2, 3])], [tensor("y0", [2, 3])])
# A declared rank of 65536: the error names the rank, not the shape.
save("wrong-output-rank",
     [helper.make_node("Relu", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [1] * (1 << 16))])
# 65536 kernel dimensions: the error shows the first few.
save("long-kernel-shape",
     [helper.make_node("MaxPool", ["x"], ["y"], name="pool",
                       kernel_shape=[1] * (1 << 16))],
     [tensor("x", [1, 1, 4, 4])], [tensor("y", [1, 1, 4, 4])])
