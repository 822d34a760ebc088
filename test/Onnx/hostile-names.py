# ONNX names flow into the fluid program as parameter symbols, the
# arguments' fluid.name and locations, and from there into the C++ that
# fluid-compile writes. Models whose initializer, graph input, graph output
# and node names hold a newline followed by C++ code, `*/`, quotes,
# backslashes, UTF-8 and 1 MB of text must import with every name kept byte
# for byte (the safetensors header holds the originals), compile into a
# training executable that trains without running the injected code, and
# save every parameter under its own name. Names that cannot be parameter
# or argument names, because the runtime's C strings and the UTF-8 JSON of
# safetensors cannot hold them (a NUL byte, bytes that are not UTF-8), are
# one-line import errors naming the initializer or graph input.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = os.path.abspath(sys.argv[1])
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def injection(tag):
    """C++ that creates the file INJECTED where the program runs."""
    return ('system("touch INJECTED"); int %s;' % tag).encode()


# Each parameter name would change the generated program if it were copied
# raw into a comment, a string literal or an identifier.
PARAMS = [
    b"w\nint main(){system(\"touch INJECTED\");}//",
    b"comment */ " + injection("c") + b" /*",
    b'quote" ' + injection("q") + b' "',
    b"backslash\\\n" + injection("b"),
    b"trailing backslash\\",
    "ünïcødé ✓".encode(),
    b"long" + b"x" * (1 << 20) + b"\n" + injection("l"),
    b"plain.bias",
]
INPUT = b"images\n" + injection("i") + b"//"
OUTPUT = b'logits" */\n' + injection("o")
NODE = b"node\\\n" + injection("n")


def mlir_strings(text, prefix):
    """The strings (bytes) that follow `prefix` in the MLIR `text`: string
    literals unescaped as the MLIR lexer does, or bare identifiers."""
    found, start = [], 0
    while True:
        start = text.find(prefix, start)
        if start < 0:
            return found
        i = start + len(prefix)
        if text[i:i + 1] != b'"':
            bare = re.match(rb"[A-Za-z0-9_$.-]+", text[i:])
            found.append(bare.group(0) if bare else b"")
            start = i
            continue
        i, value = i + 1, bytearray()
        while text[i:i + 1] != b'"':
            if text[i:i + 1] == b"\\":
                escape = text[i + 1:i + 3]
                if escape[:1] in (b"\\", b'"', b"n", b"t"):
                    value += {b"\\": b"\\", b'"': b'"', b"n": b"\n",
                              b"t": b"\t"}[escape[:1]]
                    i += 2
                else:
                    value.append(int(escape, 16))
                    i += 3
            else:
                value += text[i:i + 1]
                i += 1
        found.append(bytes(value))
        start = i


def placeholder(index, length):
    """A distinct ASCII name of `length` bytes, to be replaced in the
    serialized model (protobuf's Python API takes only UTF-8 strings)."""
    stem = b"~%d~" % index
    assert length >= len(stem)
    return stem + b"~" * (length - len(stem))


def build(params, input_name, output_name, node_name):
    """An MLP of len(params) / 2 linear layers on [2, 1, 2, 2] images (10
    classes): Flatten, then Gemm (transB) with weight and bias named
    params[2i], params[2i + 1], ReLU between them. Names are bytes."""
    real = {}

    def name(raw):
        try:
            return raw.decode()
        except UnicodeDecodeError:
            stand_in = placeholder(len(real), len(raw))
            real[stand_in] = raw
            return stand_in.decode()

    rng = np.random.default_rng(0)
    layers = len(params) // 2
    widths = [4] + [6] * (layers - 1) + [10]
    nodes, inits = [], []
    x = name(input_name)
    nodes.append(helper.make_node("Flatten", [x], ["h0"], name="flatten"))
    for i in range(layers):
        w, b = name(params[2 * i]), name(params[2 * i + 1])
        fan_in, fan_out = widths[i], widths[i + 1]
        inits.append(numpy_helper.from_array(
            rng.standard_normal((fan_out, fan_in)).astype(np.float32), w))
        inits.append(numpy_helper.from_array(
            np.zeros(fan_out, np.float32), b))
        last = i == layers - 1
        result = name(output_name) if last else "g%d" % i
        gemm_name = name(node_name) if i == 0 else "fc%d" % i
        nodes.append(helper.make_node("Gemm", ["h%d" % i, w, b], [result],
                                      name=gemm_name, transB=1))
        if not last:
            nodes.append(helper.make_node("Relu", [result], ["h%d" % (i + 1)],
                                          name="relu%d" % i))
    graph = helper.make_graph(
        nodes, "hostile",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [2, 1, 2, 2])],
        [helper.make_tensor_value_info(result, TensorProto.FLOAT, [2, 10])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="hostile-names",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    data = model.SerializeToString()
    for stand_in, raw in real.items():
        data = data.replace(stand_in, raw)
    return data


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, **kwargs)


def header_names(path):
    """The tensor names of a safetensors file, as bytes."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    return {key.encode() for key in header if key != "__metadata__"}


# --- the names are kept in the program and its parameter file -------------
# The graph input names the argument of @forward (fluid.name) and, with the
# node's name, locations; the output's name is kept nowhere.
names_model = os.path.join(out, "names.onnx")
with open(names_model, "wb") as f:
    f.write(build(PARAMS, INPUT, OUTPUT, NODE))
names_program = os.path.join(out, "names.mlir")
result = run(["fluid-import-onnx", names_model, "-o", names_program,
              "--mlir-print-debuginfo"])
check(result.returncode == 0,
      "the import failed: " + result.stderr.decode(errors="replace")[-2000:])
if result.returncode == 0:
    text = open(names_program, "rb").read()
    check(mlir_strings(text, b"fluid.name = ") == [INPUT],
          "fluid.name is not the graph input's name")
    check(set(mlir_strings(text, b"fluid.param @")) == set(PARAMS),
          "the parameter symbols are not the initializers' names")
    locations = set(mlir_strings(text, b"loc("))
    check({INPUT, NODE} <= locations,
          "the locations do not hold the input's and the node's names")
    check(header_names(os.path.join(out, "names.safetensors")) ==
          set(PARAMS),
          "the parameter file does not hold exactly the initializers' names")
    # No name starts a line of its own.
    for line in text.split(b"\n"):
        check(not line.lstrip().startswith((b"int ", b"system")),
              "a line of the program starts with injected code")

# --- ... and in the training executable ------------------------------------
# The driver feeds the arguments named "images" and "labels".
model = os.path.join(out, "model.onnx")
with open(model, "wb") as f:
    f.write(build(PARAMS, b"images", OUTPUT, NODE))
program = os.path.join(out, "model.mlir")
result = run(["fluid-import-onnx", model, "--loss", "softmax_cross_entropy",
              "-o", program])
check(result.returncode == 0,
      "the import failed: " + result.stderr.decode(errors="replace")[-2000:])

exe = os.path.join(out, "train")
result = run(["fluid-compile", program, "--backend", "cpu", "-o", exe,
              "--quiet", "--training", "optimizer=sgd lr=0.1"])
check(result.returncode == 0,
      "fluid-compile failed (it escapes names since the emitter's change "
      "for issue 10): " + result.stderr.decode(errors="replace")[-3000:])
checkpoint = os.path.join(out, "step.safetensors")
if result.returncode == 0:
    result = run([exe, "--steps", "1", "--data", "synthetic",
                  "--synthetic-size", "4", "--save", checkpoint], cwd=out)
    check(result.returncode == 0,
          "training failed: " + result.stderr.decode(errors="replace")[-2000:])
    info = run([exe, "--info"], cwd=out)
    check(info.returncode == 0,
          "--info failed: " + info.stderr.decode(errors="replace")[-2000:])
    # Each parameter by its name, byte for byte, then its shape.
    for name in PARAMS:
        check(b"\n  " + name + b" [" in info.stdout,
              "--info does not list parameter %r... by its name" % name[:40])
if os.path.exists(checkpoint):
    saved = header_names(checkpoint)
    for name in PARAMS:
        check(name in saved, "parameter %r... is not in the checkpoint under "
              "its own name" % name[:40])
check(not os.path.exists(os.path.join(out, "INJECTED")),
      "INJECTED exists: a name ran as code")

# --- names that cannot be parameter or argument names ----------------------
# protobuf's C++ parser takes both in ONNX's (proto2) string fields, so the
# importer is where they stop.
REJECTED = [
    ("initializer", b"nul\0byte", "initializer 'nul\\00byte' cannot be a "
     "parameter: its name must not contain a NUL byte"),
    ("initializer", b"bad\xff\xfeutf8", "initializer 'bad\\FF\\FEutf8' cannot "
     "be a parameter: its name must be valid UTF-8 (byte 3 is not)"),
    ("input", b"images\0", "graph input 'images\\00': its name must not "
     "contain a NUL byte"),
    ("input", b"images\xc3", "graph input 'images\\C3': its name must be "
     "valid UTF-8 (byte 6 is not)"),
]
for index, (kind, bad, message) in enumerate(REJECTED):
    params = list(PARAMS[-2:]) if kind == "input" else [bad, b"b"]
    path = os.path.join(out, "rejected%d.onnx" % index)
    with open(path, "wb") as f:
        f.write(build(params, bad if kind == "input" else b"x", b"y", b"n"))
    target = os.path.join(out, "rejected%d.mlir" % index)
    result = run(["fluid-import-onnx", path, "-o", target])
    stderr = result.stderr.decode(errors="replace")
    check(result.returncode == 1 and stderr.count("\n") == 1 and
          stderr.startswith("fluid-import-onnx: error: ") and
          message in stderr,
          "%s %r: expected exit 1 and one line with '%s', got %d: %s" %
          (kind, bad, message, result.returncode, stderr))
    check(not os.path.exists(target) and
          not os.path.exists(target[:-len(".mlir")] + ".safetensors"),
          "%s %r: the failed import left an output" % (kind, bad))

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
