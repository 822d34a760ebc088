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

# --- import-ops.test: operators composed of fluid ops ----------------------
def const_floats(name, values):
    return helper.make_node(
        "Constant", [], [name], name=name,
        value=numpy_helper.from_array(np.array(values, np.float32), name))


def scalar(name, value):
    return numpy_helper.from_array(np.array(value, np.float32), name)


# ReLU6 as torch.onnx exports it: bounds from Constant nodes.
save("clip",
     [const_floats("zero", 0.0), const_floats("six", 6.0),
      helper.make_node("Clip", ["x", "zero", "six"], ["y"], name="relu6")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
# A lower bound from an initializer (a value, not a parameter), no upper.
save("clip-min",
     [helper.make_node("Clip", ["x", "lo"], ["y"], name="clamp")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])], [scalar("lo", -1.0)])
save("hardsigmoid",
     [helper.make_node("HardSigmoid", ["x"], ["y"], name="gate", alpha=0.25)],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("hardswish", [helper.make_node("HardSwish", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])], opset=14)
# nn.AvgPool2d(3, stride=1, padding=1) as torch.onnx exports it: a Pad of
# zeros and a pool without padding (count_include_pad = 0).
save("pad-avgpool",
     [const_ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
      helper.make_node("Pad", ["x", "pads"], ["p"], name="pad",
                       mode="constant"),
      helper.make_node("AveragePool", ["p"], ["y"], name="pool",
                       kernel_shape=[3, 3])],
     [tensor("x", [2, 4, 5, 5])], [tensor("y", [2, 4, 5, 5])])
# A pool that does not count its own padding: the Pad stays a Pad.
save("pad-avgpool-exclude",
     [const_ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
      helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
      helper.make_node("AveragePool", ["p"], ["y"], name="pool",
                       kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
     [tensor("x", [2, 4, 5, 5])], [tensor("y", [2, 4, 7, 7])])
# Zeros before a max pool are values that can win.
save("pad-maxpool",
     [const_ints("pads", [0, 0, 1, 0, 0, 0, 0, 1]),
      helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
      helper.make_node("MaxPool", ["p"], ["y"], name="pool",
                       kernel_shape=[2, 2])],
     [tensor("x", [2, 4, 5, 5])], [tensor("y", [2, 4, 5, 5])])
# Asymmetric zeros before a 1-D convolution that pads too.
save("pad-conv1d",
     [const_ints("pads", [0, 0, 2, 0, 0, 1]),
      helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
      helper.make_node("Conv", ["p", "w"], ["y"], name="conv", pads=[1, 1])],
     [tensor("x", [2, 3, 8])], [tensor("y", [2, 4, 11])],
     [weight("w", [4, 3, 3])])
# A Pad with a value, and one that crops: concatenations and slices.
save("pad-value",
     [const_ints("pads", [1, -1, 0, 2]),
      helper.make_node("Pad", ["x", "pads", "value"], ["y"], name="pad")],
     [tensor("x", [2, 3])], [tensor("y", [3, 4])], [scalar("value", 1.5)])
save("pad-zero",
     [const_ints("pads", [0, 0, 0, 0]),
      helper.make_node("Pad", ["x", "pads"], ["p"], name="pad"),
      helper.make_node("Relu", ["p"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("transpose",
     [helper.make_node("Transpose", ["x"], ["t"], name="swap", perm=[0, 2, 1]),
      helper.make_node("Transpose", ["t"], ["y"], name="reverse")],
     [tensor("x", [2, 3, 4])], [tensor("y", [3, 4, 2])])
# Slices along two axes (a negative end, an end past the dimension), one
# with step 2, and a Shape -> Slice -> Concat -> Reshape chain folded.
save("slice",
     [const_ints("starts", [1, 1]), const_ints("ends", [1000, -1]),
      const_ints("axes", [1, -1]),
      helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["a"],
                       name="window"),
      const_ints("starts2", [0]), const_ints("ends2", [5]),
      const_ints("axes2", [1]), const_ints("steps2", [2]),
      helper.make_node("Slice", ["a", "starts2", "ends2", "axes2", "steps2"],
                       ["b"], name="strided"),
      helper.make_node("Shape", ["b"], ["shape"], name="shape"),
      const_ints("zero", [0]), const_ints("one", [1]),
      helper.make_node("Slice", ["shape", "zero", "one"], ["batch"],
                       name="batch"),
      const_ints("minus_one", [-1]),
      helper.make_node("Concat", ["batch", "minus_one"], ["target"],
                       name="target", axis=0),
      helper.make_node("Reshape", ["b", "target"], ["y"], name="flatten")],
     [tensor("x", [2, 6, 4])], [tensor("y", [2, 6])])
save("reduce",
     [helper.make_node("ReduceMean", ["x"], ["mean"], name="mean",
                       axes=[2, 3], keepdims=0),
      const_ints("axes", [-1]),
      helper.make_node("ReduceSum", ["mean", "axes"], ["y"], name="sum")],
     [tensor("x", [2, 3, 4, 5])], [tensor("y", [2, 1])])
save("reduce-max",
     [helper.make_node("ReduceMax", ["x"], ["m"], name="max", axes=[1]),
      helper.make_node("ReduceMin", ["m"], ["y"], name="min", keepdims=0)],
     [tensor("x", [2, 3, 4])], [tensor("y", [])])
# A cast to another float type, one to the same, and a dynamic batch's
# shape arithmetic cast back and forth (folded).
save("cast",
     [helper.make_node("Cast", ["x"], ["d"], name="widen",
                       to=TensorProto.DOUBLE),
      helper.make_node("Cast", ["d"], ["same"], name="same",
                       to=TensorProto.DOUBLE),
      helper.make_node("Shape", ["same"], ["shape"], name="shape"),
      helper.make_node("Cast", ["shape"], ["narrow"], name="narrow",
                       to=TensorProto.INT32),
      helper.make_node("Cast", ["narrow"], ["wide"], name="wide",
                       to=TensorProto.INT64),
      helper.make_node("Reshape", ["same", "wide"], ["y"], name="view")],
     [tensor("x", ["batch", 3])], [tensor("y", ["batch", 3], TensorProto.DOUBLE)])

# LayerNormalization-17 over the last two dimensions, composed of mean,
# sub, mul, add, sqrt, div; GELU as torch exports it (Div, Erf, Add, Mul);
# Pow by 2 (x * x) and by 3 (fluid.pow).
save("layernorm-gelu",
     [helper.make_node("LayerNormalization", ["x", "ln.weight", "ln.bias"],
                       ["n"], name="ln", axis=-2, epsilon=1e-6),
      const_floats("sqrt2", 1.4142135381698608),
      helper.make_node("Div", ["n", "sqrt2"], ["s"], name="div"),
      helper.make_node("Erf", ["s"], ["e"], name="erf"),
      const_floats("one", 1.0),
      helper.make_node("Add", ["e", "one"], ["a"], name="add"),
      helper.make_node("Mul", ["n", "a"], ["m"], name="mul"),
      const_floats("two", 2.0),
      helper.make_node("Pow", ["m", "two"], ["p"], name="square"),
      const_floats("three", 3.0),
      helper.make_node("Pow", ["p", "three"], ["y"], name="cube")],
     [tensor("x", [2, 3, 4])], [tensor("y", [2, 3, 4])],
     [weight("ln.weight", [3, 4], 1), weight("ln.bias", [4], 2)], opset=17)
# torch's export of class_token.expand(n, -1, -1): Equal and Where on the
# shape, folded, then an Expand of a parameter (broadcast_to); a Where that
# picks between run-time values with a known condition (select).
save("expand-where",
     [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
      const_ints("zero", [0]),
      helper.make_node("Gather", ["shape", "zero"], ["batch"], name="batch",
                       axis=0),
      const_ints("minus_ones", [-1, -1]),
      helper.make_node("Concat", ["batch", "minus_ones"], ["target"],
                       name="target", axis=0),
      helper.make_node("Equal", ["target", "minus_ones_full"], ["is_free"],
                       name="equal"),
      const_ints("ones", [1, 1, 1]),
      helper.make_node("Where", ["is_free", "ones", "target"], ["sizes"],
                       name="sizes"),
      helper.make_node("Expand", ["token", "sizes"], ["tokens"],
                       name="expand"),
      helper.make_node("Concat", ["tokens", "x"], ["joined"], name="cat",
                       axis=1),
      const_ints("rows", [[0], [1], [2], [3]]), const_ints("two", 2),
      helper.make_node("Equal", ["rows", "two"], ["third"], name="third"),
      const_floats("zero_f", 0.0),
      helper.make_node("Where", ["third", "zero_f", "joined"], ["y"],
                       name="pick")],
     [tensor("x", [2, 3, 4])], [tensor("y", [2, 4, 4])],
     [weight("token", [1, 1, 4], 3),
      numpy_helper.from_array(np.array([-1, -1, -1], np.int64),
                              "minus_ones_full")])

# swin's shifted-window mask, folded: Range, Mod (both signs), a Cast, a
# ConstantOfShape written by ScatterND, float Sub, Equal, Not, a Cast to
# BOOL and Where, all on values known at import time; a float Range with
# a negative delta. What reaches the run-time Add is one constant.
def const_typed(name, values, dtype):
    return helper.make_node(
        "Constant", [], [name], name=name,
        value=numpy_helper.from_array(np.array(values, dtype), name))


save("window-mask",
     [const_ints("zero", 0), const_ints("six", 6), const_ints("one", 1),
      helper.make_node("Range", ["zero", "six", "one"], ["r"], name="range"),
      const_ints("four", 4),
      helper.make_node("Mod", ["r", "four"], ["m"], name="mod"),
      helper.make_node("Cast", ["m"], ["f"], name="to_float", to=FLOAT),
      const_ints("shape", [6]),
      helper.make_node("ConstantOfShape", ["shape"], ["zeros"], name="zeros",
                       value=numpy_helper.from_array(
                           np.array([0], np.float32), "value")),
      const_ints("where", [[1], [4]]), const_floats("counts", [5.0, 7.0]),
      helper.make_node("ScatterND", ["zeros", "where", "counts"], ["s"],
                       name="scatter"),
      helper.make_node("Sub", ["f", "s"], ["d"], name="sub"),
      const_floats("zero_f", 0.0),
      helper.make_node("Equal", ["d", "zero_f"], ["same"], name="equal"),
      helper.make_node("Not", ["same"], ["differs"], name="not"),
      const_floats("minus_100", -100.0),
      helper.make_node("Where", ["differs", "minus_100", "zero_f"], ["mask"],
                       name="mask"),
      helper.make_node("Cast", ["s"], ["written"], name="to_bool",
                       to=TensorProto.BOOL),
      const_floats("one_f", 1.0),
      helper.make_node("Where", ["written", "one_f", "zero_f"], ["w"],
                       name="written_mask"),
      helper.make_node("Add", ["mask", "w"], ["bias"], name="bias"),
      helper.make_node("Add", ["x", "bias"], ["y"], name="add")],
     [tensor("x", [2, 6])], [tensor("y", [2, 6])])
save("mod-range",
     [const_ints("a", [-7, 7, -7, 7]), const_ints("b", [3, 3, -3, -3]),
      helper.make_node("Mod", ["a", "b"], ["python"], name="python"),
      helper.make_node("Mod", ["a", "b"], ["c"], name="c", fmod=1),
      helper.make_node("Concat", ["python", "c"], ["mods"], name="mods",
                       axis=0),
      helper.make_node("Cast", ["mods"], ["mods_f"], name="mods_f", to=FLOAT),
      const_floats("start", 1.0), const_floats("limit", -1.0),
      const_floats("delta", -0.5),
      helper.make_node("Range", ["start", "limit", "delta"], ["steps"],
                       name="steps"),
      helper.make_node("Concat", ["mods_f", "steps"], ["all"], name="all",
                       axis=0),
      helper.make_node("Add", ["x", "all"], ["y"], name="add")],
     [tensor("x", [12])], [tensor("y", [12])])
# Dropout of ratio 0 in training mode (its mask, all true, picks x), and
# Dropout-10 (opset 11) of ratio 0.3 in @forward: the identity.
save("dropout",
     [const_floats("ratio", 0.0),
      helper.make_node("Constant", [], ["training"], name="training",
                       value=numpy_helper.from_array(np.array(True),
                                                     "training")),
      helper.make_node("Dropout", ["x", "ratio", "training"], ["d", "mask"],
                       name="drop"),
      const_floats("zero", 0.0),
      helper.make_node("Where", ["mask", "d", "zero"], ["y"], name="pick")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("dropout11",
     [helper.make_node("Dropout", ["x"], ["d"], name="drop", ratio=0.3),
      helper.make_node("Relu", ["d"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])], opset=11)
# Gather of a parameter at several constant indices (swin's relative
# position bias): one fluid.gather, its result reshaped to the indices'.
save("gather-param",
     [const_ints("index", [[0, 4], [4, 2]]),
      helper.make_node("Gather", ["table", "index"], ["y"], name="bias",
                       axis=0)],
     [], [tensor("y", [2, 2, 3])], [weight("table", [5, 3])])
# ScatterND of run-time updates into run-time data: the data's and the
# updates' elements joined, one fluid.gather picks each result element.
save("scatternd-runtime",
     [const_ints("where", [[2], [0]]),
      helper.make_node("ScatterND", ["x", "where", "u"], ["y"],
                       name="scatter")],
     [tensor("x", [3, 2]), tensor("u", [2, 2])], [tensor("y", [3, 2])])

# Unsupported values of these operators (errors.test).
save("pad-wrap",
     [const_ints("pads", [0, 1, 0, 1]),
      helper.make_node("Pad", ["x", "pads"], ["y"], name="pad",
                       mode="wrap")],
     [tensor("x", [2, 3])], [tensor("y", [2, 5])])
save("pad-reflect-wide",
     [const_ints("pads", [0, 1, 0, 3]),
      helper.make_node("Pad", ["x", "pads"], ["y"], name="pad",
                       mode="reflect")],
     [tensor("x", [2, 3])], [tensor("y", [2, 7])])
save("pad-edge-crop",
     [const_ints("pads", [0, 1, -1, 0]),
      helper.make_node("Pad", ["x", "pads"], ["y"], name="pad",
                       mode="edge")],
     [tensor("x", [2, 3])], [tensor("y", [1, 4])])
save("einsum-trace",
     [helper.make_node("Einsum", ["x"], ["y"], name="trace",
                       equation="ii->")],
     [tensor("x", [3, 3])], [tensor("y", [])], opset=13)
save("einsum-extents",
     [helper.make_node("Einsum", ["x", "w"], ["y"], name="product",
                       equation="ij,jk->ik")],
     [tensor("x", [2, 3]), tensor("w", [4, 5])], [tensor("y", [2, 5])],
     opset=13)
save("clip-runtime-bound",
     [helper.make_node("Clip", ["x", "lo"], ["y"], name="clamp")],
     [tensor("x", [2, 3]), tensor("lo", [])], [tensor("y", [2, 3])])
save("cast-float16",
     [helper.make_node("Cast", ["x"], ["y"], name="narrow",
                       to=TensorProto.FLOAT16)],
     [tensor("x", [2, 3])], [tensor("y", [2, 3], TensorProto.FLOAT16)])
save("transpose-perm",
     [helper.make_node("Transpose", ["x"], ["y"], name="swap", perm=[0, 0])],
     [tensor("x", [2, 3])], [tensor("y", [3, 2])])
save("slice-step0",
     [const_ints("starts", [0]), const_ints("ends", [2]),
      const_ints("axes", [1]), const_ints("steps", [0]),
      helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"],
                       ["y"], name="window")],
     [tensor("x", [2, 3])], [tensor("y", [2, 2])])
save("hardswish13", [helper.make_node("HardSwish", ["x"], ["y"], name="act")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("reduce-keepdims",
     [helper.make_node("ReduceMean", ["x"], ["y"], name="mean", axes=[1],
                       keepdims=2)],
     [tensor("x", [2, 3])], [tensor("y", [2, 1])])

save("where-float-condition",
     [helper.make_node("Where", ["c", "x", "x"], ["y"], name="pick")],
     [tensor("c", [2, 3]), tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("equal-runtime",
     [helper.make_node("Equal", ["x", "x"], ["y"], name="same")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3], TensorProto.BOOL)])
save("expand-incompatible",
     [const_ints("shape", [4, 2]),
      helper.make_node("Expand", ["x", "shape"], ["y"], name="widen")],
     [tensor("x", [2, 3])], [tensor("y", [4, 3])])
save("layernorm-scale",
     [helper.make_node("LayerNormalization", ["x", "w"], ["y"], name="ln")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])], [weight("w", [2])],
     opset=17)
save("layernorm-axis",
     [helper.make_node("LayerNormalization", ["x", "w"], ["y"], name="ln",
                       axis=2)],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])], [weight("w", [3])],
     opset=17)
save("layernorm13",
     [helper.make_node("LayerNormalization", ["x", "w"], ["y"], name="ln")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])], [weight("w", [3])])

# Mod, Range, Not, ScatterND, Dropout and Cast to BOOL values that the
# importer cannot fold or run (errors.test).
save("mod-runtime",
     [helper.make_node("Mod", ["x", "x"], ["y"], name="rem", fmod=1)],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("mod-float-fmod0",
     [const_floats("a", [1.5]), const_floats("b", [1.0]),
      helper.make_node("Mod", ["a", "b"], ["m"], name="rem"),
      helper.make_node("Add", ["x", "m"], ["y"], name="add")],
     [tensor("x", [1])], [tensor("y", [1])])
save("mod-zero",
     [const_ints("a", [5]), const_ints("b", [0]),
      helper.make_node("Mod", ["a", "b"], ["y"], name="rem")],
     [], [tensor("y", [1], TensorProto.INT64)])
save("not-float",
     [const_floats("a", [1.0]),
      helper.make_node("Not", ["a"], ["y"], name="negate")],
     [], [tensor("y", [1], TensorProto.BOOL)])
save("range-runtime",
     [const_ints("limit", 6), const_ints("delta", 1),
      helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                       name="range")],
     [tensor("start", [], TensorProto.INT64)],
     [tensor("y", [6], TensorProto.INT64)])
save("range-delta0",
     [const_ints("start", 0), const_ints("limit", 6), const_ints("delta", 0),
      helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                       name="range")],
     [], [tensor("y", [6], TensorProto.INT64)])
save("range-long",
     [const_ints("start", 0), const_ints("limit", 1 << 40),
      const_ints("delta", 1),
      helper.make_node("Range", ["start", "limit", "delta"], ["y"],
                       name="range")],
     [], [tensor("y", [1 << 40], TensorProto.INT64)])
save("scatternd-index",
     [const_ints("where", [[3]]),
      helper.make_node("ScatterND", ["x", "where", "u"], ["y"],
                       name="scatter")],
     [tensor("x", [3, 2]), tensor("u", [1, 2])], [tensor("y", [3, 2])])
save("scatternd-updates",
     [const_ints("where", [[1]]),
      helper.make_node("ScatterND", ["x", "where", "u"], ["y"],
                       name="scatter")],
     [tensor("x", [3, 2]), tensor("u", [2, 2])], [tensor("y", [3, 2])])
save("scatternd-add-runtime",
     [const_ints("where", [[1]]),
      helper.make_node("ScatterND", ["x", "where", "u"], ["y"],
                       name="scatter", reduction="add")],
     [tensor("x", [3, 2]), tensor("u", [1, 2])], [tensor("y", [3, 2])],
     opset=16)
save("scatternd-reduction13",
     [const_ints("where", [[1]]),
      helper.make_node("ScatterND", ["x", "where", "u"], ["y"],
                       name="scatter", reduction="add")],
     [tensor("x", [3, 2]), tensor("u", [1, 2])], [tensor("y", [3, 2])])
save("dropout-ratio-attribute",
     [helper.make_node("Dropout", ["x"], ["y"], name="drop", ratio=0.0)],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("dropout-training",
     [const_floats("ratio", 0.5),
      helper.make_node("Constant", [], ["training"], name="training",
                       value=numpy_helper.from_array(np.array(True),
                                                     "training")),
      helper.make_node("Dropout", ["x", "ratio", "training"], ["y"],
                       name="drop")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("dropout-inference",
     [const_floats("ratio", 0.1),
      helper.make_node("Dropout", ["x", "ratio"], ["y"], name="drop")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("dropout-ratio",
     [const_floats("ratio", 1.0),
      helper.make_node("Dropout", ["x", "ratio"], ["y"], name="drop")],
     [tensor("x", [2, 3])], [tensor("y", [2, 3])])
save("cast-bool-runtime",
     [helper.make_node("Cast", ["x"], ["y"], name="test",
                       to=TensorProto.BOOL)],
     [tensor("x", [2, 3])], [tensor("y", [2, 3], TensorProto.BOOL)])

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
