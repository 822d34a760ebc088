# The differential test of --fluid-narrow-data-movement on the cpu backend.
# torchvision's VisionTransformer (image 32, patches of 16, 2 encoder layers
# of 2 heads, hidden 32: its head split and merge are reshapes and
# transposes, the class token a slice) and ConvNeXt (channels 16 and 32: a
# permute around every LayerNorm) are exported to ONNX as the README says
# and imported with a loss; each builds a bf16 training step
# (--fluid-mixed-precision, momentum SGD, --fluid-narrow-gradients), and
# runs two steps from the exported weights on the same data with and
# without the pass (fluid-run).
#
# So is fluid-models' ResNet-18 (32x32 images, its stem's max pooling), NCHW
# and channels-last, from seeded weights on seeded data.
#
# Oracle: the step without the pass. Widening a 16-bit value to f32 is exact
# and keeps the order, reshapes, transposes and slices only move elements,
# and max pooling picks the same elements, so the losses and every tensor
# after the steps must be bitwise equal. Checked as well: the
# pass changed something (data movement on bf16 tensors, fewer casts), and
# `fluid-compile --precision bf16` runs it unless `--no-narrow-data-movement`
# (fewer cast launches in the buffers it emits).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import onnx_training  # noqa: E402
from pass_differential import (compare_bitwise, run,  # noqa: E402
                               run_with_and_without, with_and_without)

work = sys.argv[1]
BATCH, SIZE, CLASSES = 2, 32, 10
TRAINING = "--fluid-build-training=optimizer=momentum lr=0.05 momentum=0.9"
MOVED = r"fluid\.(?:reshape|transpose|slice) %[\w.#]+(?: \{[^}]*\})? : " \
        r"tensor<[^>]*xbf16> -> tensor<[^>]*xbf16>"
problems = []


for name in ("vit", "convnext"):
    base = os.path.join(work, name)
    images = torch.randn(BATCH, 3, SIZE, SIZE,
                         generator=torch.Generator().manual_seed(1))
    np.save(base + "-images.npy", images.numpy())
    np.save(base + "-labels.npy", np.array([3, 7], np.int64))
    net = onnx_training.small_transformer(name, SIZE, CLASSES)
    onnx_training.export_as_readme(net, images, base + ".onnx", 17)
    run("fluid-import-onnx", base + ".onnx", "--batch", str(BATCH), "--loss",
        "softmax_cross_entropy", "-o", base + ".mlir")
    ir = with_and_without(base + ".mlir", [
        "--fluid-mixed-precision=precision=bf16", TRAINING,
        "--fluid-narrow-gradients"], "--fluid-narrow-data-movement", base)
    moved = len(re.findall(MOVED, ir["on"])) - \
        len(re.findall(MOVED, ir["off"]))
    casts = {v: ir[v].count("fluid.cast") for v in ir}
    if moved <= 0 or casts["on"] >= casts["off"]:
        problems.append(f"{name}: {moved} more bf16 data movement ops, casts "
                        f"{casts}: the pass changed nothing")
    out, saved = run_with_and_without(
        base, "--repeat", "2", "--params", base + ".safetensors", "--input",
        f"images={base}-images.npy", "--input", f"labels={base}-labels.npy",
        "--print-values", "1")
    losses = re.findall(r"output #0: \[\] f32  values: (\S+)", out["off"])
    if len(losses) != 2 or not all(np.isfinite(float(v)) for v in losses):
        problems.append(f"{name}: losses {losses} (expected two finite)")
    compared = compare_bitwise(name, out, saved, problems)
    print(f"{name}: {moved} data movement ops on bf16, casts {casts['off']} "
          f"-> {casts['on']}, losses {', '.join(losses)}, {compared} tensors "
          "bitwise equal")

# ResNet-18's stem: max pooling (with its picks, as --fluid-pool-indices
# makes it, NCHW and channels-last) of the widened bf16 activation takes
# the bf16 tensor itself.
POOLED = r"fluid\.max_pool2d(?:_with_indices)? %[\w.#]+ \{[^}]*\} : " \
    r"tensor<[^>]*xbf16> -> tensor<[^>]*xbf16>"
model = os.path.join(work, "resnet18.mlir")
run("fluid-models", "resnet18", "--batch", "2", "--image-size", "32",
    "--classes", "10", "-o", model)
init = os.path.join(work, "resnet18-init.safetensors")
run("fluid-run", model, "--seed", "1", "--save-params", init)
for layout in ("nchw", "nhwc"):
    base = os.path.join(work, "resnet18-" + layout)
    passes = ["--fluid-mixed-precision=precision=bf16", TRAINING,
              "--fluid-narrow-gradients", "--fluid-pool-indices"]
    if layout == "nhwc":
        passes.append("--fluid-layout=layout=nhwc")
    ir = with_and_without(model, passes, "--fluid-narrow-data-movement",
                          base)
    # Every max pooling (the step's and the evaluation function's).
    pools = len(re.findall(r"fluid\.max_pool2d(?:_with_indices)? ",
                           ir["off"]))
    pooled = {v: len(re.findall(POOLED, ir[v])) for v in ir}
    if pools < 2 or pooled != {"on": pools, "off": 0}:
        problems.append(f"resnet18 {layout}: bf16 max pooling {pooled} of "
                        f"{pools} (expected all with the pass, none "
                        "without)")
    out, saved = run_with_and_without(base, "--seed", "1", "--repeat", "2",
                                      "--params", init, "--print-values",
                                      "1")
    compared = compare_bitwise("resnet18 " + layout, out, saved, problems)
    print(f"resnet18 {layout}: max pooling on bf16, casts "
          f"{ir['off'].count('fluid.cast')} -> {ir['on'].count('fluid.cast')}"
          f", {compared} tensors bitwise equal")

# fluid-compile runs the pass for bf16 unless told not to.
base = os.path.join(work, "vit")
launches = {}
for flags in ((), ("--no-narrow-data-movement",)):
    buffers = run("fluid-compile", base + ".mlir", "--precision", "bf16",
                  "--backend", "cpu", "--emit=buffers", "--quiet", *flags)
    launches[flags] = len(re.findall(r'"cast"', buffers))
if launches[()] >= launches[("--no-narrow-data-movement",)]:
    problems.append(f"fluid-compile: cast launches {launches}: the pass did "
                    "not run by default, or --no-narrow-data-movement did "
                    "not skip it")

if problems:
    sys.exit("FAIL:\n" + "\n".join(problems))
print("PASS")
