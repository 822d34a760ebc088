# The differential test of --fluid-narrow-gradients on the cpu backend.
# ResNet-18 (batch 8, 64x64, 10 classes; its residual streams are where the
# pass acts) and SE-ResNeXt-50 (batch 4, 64x64: its gates multiply the
# stream) build a bf16 training step (--fluid-mixed-precision, SGD lr 0.05
# without momentum, so that an update is -lr times the gradient), then run
# one step from the same parameters and data (fluid-run --seed 1) three
# ways: the bf16 step with --fluid-narrow-gradients, the bf16 step without
# it, and the f32 step. The gradients are the updates over the learning rate.
#
# Oracle: the f32 gradients. For every parameter tensor of the model, the
# narrowed step's gradient must stay within 4x the un-narrowed bf16 step's
# own distance from f32 (max abs difference), plus 1e-3 of the tensor's
# largest f32 gradient: rounding the activation gradients adds an error of
# the same kind as the bf16 convolutions' (measured: the narrowed step is
# at most 1.01x as far from f32 as the un-narrowed one in ResNet-18, 1.00x
# in SE-ResNeXt-50), never one of another order. Checked
# as well: the pass narrowed some gradients (its output has more rounding
# casts than its input, and the two bf16 steps' parameters differ), it left the forward alone (the first
# losses are equal), it kept every parameter's gradient f32 (no
# `fluid.set_param` reads a narrowed value), and `fluid-compile
# --precision bf16` runs it unless `--no-narrow-gradients`.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import safetensors_io  # noqa: E402
from pass_differential import run  # noqa: E402

work = sys.argv[1]
TRAINING = "--fluid-build-training=optimizer=sgd lr=0.05"
LR = 0.05
MODELS = {
    "resnet18": ["resnet18", "--batch", "8", "--image-size", "64",
                 "--classes", "10"],
    "se_resnext50": ["se_resnext50_32x4d", "--batch", "4", "--image-size",
                     "64", "--classes", "10"],
}
problems = []


for name, model in MODELS.items():
    base = os.path.join(work, name)
    run("fluid-models", *model, "-o", base + ".mlir")
    run("fluid-opt", base + ".mlir", "--fluid-mixed-precision=precision=bf16",
        TRAINING, "-o", base + "-wide.mlir")
    run("fluid-opt", base + "-wide.mlir", "--fluid-narrow-gradients", "-o",
        base + "-narrow.mlir")
    run("fluid-opt", base + ".mlir", TRAINING, "-o", base + "-f32.mlir")

    # No parameter update reads a narrowed value: every set_param's value
    # is computed in f32 from f32 operands, never through a bf16 cast made
    # by the pass (whose casts follow the value they round).
    rounded = {}
    for variant in ("narrow", "wide"):
        with open(f"{base}-{variant}.mlir") as f:
            ir = f.read()
        rounded[variant] = set(re.findall(
            r"(%[\w.]+) = fluid.cast %[\w.]+ : tensor<[^>]*xf32> -> "
            r"tensor<[^>]*xbf16>\n\s+%[\w.]+ = fluid.cast \1", ir))
        if variant == "narrow":
            narrow_ir = ir
    narrowed_values = rounded["narrow"]
    narrowed = len(rounded["narrow"]) - len(rounded["wide"])
    if narrowed == 0:
        problems.append(f"{name}: the pass narrowed nothing")
    for value in re.findall(r"fluid.set_param @[\w.]+, (%[\w.]+)",
                            narrow_ir):
        if value in narrowed_values:
            problems.append(f"{name}: a set_param reads {value}, narrowed")

    grads, losses = {}, {}
    before = os.path.join(work, name + "-init.safetensors")
    run("fluid-run", base + "-f32.mlir", "--seed", "1", "--entry", "predict",
        "--save-params", before)
    initial = safetensors_io.load(before)
    for variant in ("narrow", "wide", "f32"):
        after = f"{base}-{variant}.safetensors"
        out = run("fluid-run", f"{base}-{variant}.mlir", "--seed", "1",
                  "--params", before, "--save-params", after)
        losses[variant] = out.split("\n")[0]
        updated = safetensors_io.load(after)
        grads[variant] = {k: (initial[k].astype(np.float64) -
                              updated[k].astype(np.float64)) / LR
                          for k in initial if k.endswith("weight")
                          and initial[k].ndim >= 1}
    if losses["narrow"] != losses["wide"]:
        problems.append(f"{name}: the forward changed: {losses}")
    worst, differ = 0.0, False
    for k, g32 in grads["f32"].items():
        scale = np.abs(g32).max()
        wide = np.abs(grads["wide"][k] - g32).max()
        narrow = np.abs(grads["narrow"][k] - g32).max()
        differ |= bool(np.any(grads["narrow"][k] != grads["wide"][k]))
        if narrow > 4 * wide + 1e-3 * scale:
            problems.append(f"{name}: {k}: narrowed gradient {narrow:.3g} "
                            f"from f32, un-narrowed bf16 {wide:.3g} (largest "
                            f"gradient {scale:.3g})")
        if wide > 0:
            worst = max(worst, narrow / wide)
    if not differ:
        problems.append(f"{name}: the narrowed step's parameters equal the "
                        "un-narrowed step's (the pass had no effect)")
    print(f"{name}: {narrowed} gradients narrowed; worst ratio of distances "
          f"from f32, narrowed / un-narrowed: {worst:.2f}")

# fluid-compile runs the pass for bf16 unless --no-narrow-gradients.
r18 = os.path.join(work, "resnet18.mlir")
counts = {}
for flags in ((), ("--no-narrow-gradients",)):
    ir = run("fluid-compile", r18, "--backend", "cpu", "--quiet",
             "--precision", "bf16", "--emit=buffers", "-o", "-", *flags)
    counts[flags] = len(re.findall(r"memref<8x\d+x\d+x\d+xf32>", ir))
if not counts[()] < counts[("--no-narrow-gradients",)]:
    problems.append(f"fluid-compile: f32 activation-sized buffers with the "
                    f"pass and without: {counts}")

for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
