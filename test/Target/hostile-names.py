# Names from the input reach the C++ that fluid-compile writes only as
# escaped string literals: parameter names, argument names (fluid.name),
# function names, locations, the source file's name and the training
# options. Each hostile name below would change the generated program if it
# were copied raw into a comment or a literal: a newline followed by a
# directive, a trailing backslash (a line splice that swallows the next line
# of code), a trigraph ??/ (the same, under -trigraphs), quotes, `*/`, a tab,
# 1 MB of text. The program must compile (with -trigraphs, -Werror), train,
# and save every parameter under exactly its own name. Names that cannot be
# checkpoint keys (NUL, invalid UTF-8, empty) are verifier errors.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t %fluid_src_root

import json
import os
import struct
import subprocess
import sys

out, src_root = sys.argv[1], sys.argv[2]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def mlir_string(name):
    """`name` (bytes) as an MLIR string literal, every byte escaped."""
    return '"' + "".join("\\%02X" % b for b in name) + '"'


# Each canary would stop the compile if a raw newline let it out.
hostile = [
    b"newline\n#error INJECTED newline\nint x;",
    b"trailing backslash\\",
    b"trigraph??/",
    b'quote" ; #error INJECTED quote',
    b"comment */ /* open",
    b"tab\there\r\n#error INJECTED crlf",
    "ünïcødé ✓".encode(),
    b"long" + b"x" * (1 << 20) + b"\n#error INJECTED long",
]
# Four linear layers of 4 features: a weight and a bias each.
assert len(hostile) == 8
layers = [(hostile[2 * i], hostile[2 * i + 1]) for i in range(4)]

lines = []
for weight, bias in layers:
    lines.append("fluid.param @%s : tensor<4x4xf32> init "
                 "kaiming_uniform(fan_in, gain = 1.0)" % mlir_string(weight))
    lines.append("fluid.param @%s : tensor<4xf32> init zeros" %
                 mlir_string(bias))
location = mlir_string(b"here\n#error INJECTED location\\")
# The driver trains a function whose arguments are "images" and "labels";
# hostile argument names go into a copy that is only compiled.
lines.append("func.func @%s(%%images: tensor<2x1x2x2xf32> {fluid.name = "
             "IMAGES}, %%labels: tensor<2xi64> {fluid.name = LABELS}) -> "
             "tensor<f32> attributes {fluid.entry} {" %
             mlir_string(b"loss\n#error INJECTED function"))
lines.append("  %x0 = fluid.flatten %images : tensor<2x1x2x2xf32> -> "
             "tensor<2x4xf32> loc(" + location + ")")
for i, (weight, bias) in enumerate(layers):
    lines.append("  %%w%d = fluid.get_param @%s : tensor<4x4xf32>" %
                 (i, mlir_string(weight)))
    lines.append("  %%b%d = fluid.get_param @%s : tensor<4xf32>" %
                 (i, mlir_string(bias)))
    lines.append(
        "  %%x%d = fluid.linear %%x%d, %%w%d, %%b%d : tensor<2x4xf32>, "
        "tensor<4x4xf32>, tensor<4xf32> -> tensor<2x4xf32> loc(%s)" %
        (i + 1, i, i, i, location))
lines.append("  %l = fluid.softmax_cross_entropy %x4, %labels : "
             "tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>")
lines.append("  return %l : tensor<f32>")
lines.append("}")
program = "\n".join(lines) + "\n"

# The source file's own name is hostile too.
model = os.path.join(out, "model\n#error INJECTED file.mlir")
with open(model, "w") as f:
    f.write(program.replace("IMAGES", '"images"').replace("LABELS",
                                                          '"labels"'))
hostile_arguments = os.path.join(out, "arguments\n#error INJECTED.mlir")
with open(hostile_arguments, "w") as f:
    f.write(program.replace(
        "IMAGES", mlir_string(b"images\n#error INJECTED argument")).replace(
            "LABELS", mlir_string(b'labels"\\??/')))


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, **kwargs)


training = "optimizer=sgd lr=0.1"
cpp = os.path.join(out, "model.cpp")
result = run(["fluid-compile", hostile_arguments, "--backend", "cpu",
              "--emit=cpp", "-o", cpp, "--quiet", "--training", training])
check(result.returncode == 0,
      "--emit=cpp failed: " + result.stderr.decode(errors="replace")[-2000:])
if result.returncode == 0:
    text = open(cpp, "rb").read()
    # No input byte outside printable ASCII survives unescaped.
    check(all(b == 10 or 32 <= b < 127 for b in text),
          "the C++ holds raw control or non-ASCII bytes")
    for line in text.split(b"\n"):
        check(not line.lstrip().startswith(b"#error"),
              "a line of the C++ starts with an injected directive")
    # Compiled on its own, with trigraphs on and every warning an error.
    result = run(["c++", "-std=c++17", "-trigraphs", "-Wall", "-Wextra",
                  "-Werror", "-c", cpp, "-I",
                  os.path.join(src_root, "runtime", "include"), "-o",
                  os.path.join(out, "model.o")])
    check(result.returncode == 0,
          "the C++ does not compile: " + result.stderr.decode()[-2000:])

exe = os.path.join(out, "train")
result = run(["fluid-compile", model, "--backend", "cpu", "-o", exe,
              "--quiet", "--training", training])
check(result.returncode == 0,
      "fluid-compile failed: " + result.stderr.decode(errors="replace")[-2000:])
checkpoint = os.path.join(out, "step.safetensors")
if result.returncode == 0:
    result = run([exe, "--steps", "2", "--data", "synthetic",
                  "--synthetic-size", "4", "--save", checkpoint], cwd=out)
    check(result.returncode == 0,
          "training failed: " + result.stderr.decode(errors="replace")[-2000:])
if os.path.exists(checkpoint):
    with open(checkpoint, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    saved = {key.encode() for key in header if key != "__metadata__"}
    for name in hostile:
        check(name in saved, "parameter %r... is not in the checkpoint under "
              "its own name" % name[:40])
check(not os.path.exists(os.path.join(out, "INJECTED")), "INJECTED exists")

# Names that cannot be checkpoint keys are rejected where they are declared.
rejected = [(b"nul\0byte", "must not contain a NUL byte"),
            (b"bad\xffutf8", "must be valid UTF-8 (byte 3 is not)"),
            (b"", "must not be empty")]
for name, message in rejected:
    path = os.path.join(out, "rejected.mlir")
    with open(path, "w") as f:
        f.write("fluid.param @%s : tensor<4xf32> init zeros\n" %
                mlir_string(name))
    result = run(["fluid-opt", path])
    stderr = result.stderr.decode(errors="replace")
    check(result.returncode != 0 and
          ("'fluid.param' op the parameter name " + message) in stderr,
          "parameter %r: expected a verifier error '%s', got rc %d: %s" %
          (name, message, result.returncode, stderr))
    with open(path, "w") as f:
        f.write("func.func @f(%%x: tensor<4xf32> {fluid.name = %s}) "
                "{ return }\n" % mlir_string(name))
    result = run(["fluid-opt", path])
    stderr = result.stderr.decode(errors="replace")
    check(result.returncode != 0 and
          ("argument 0: 'fluid.name' " + message) in stderr,
          "fluid.name %r: expected a verifier error '%s', got rc %d: %s" %
          (name, message, result.returncode, stderr))

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
