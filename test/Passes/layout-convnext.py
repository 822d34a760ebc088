# --fluid-layout=nhwc on a program that changes layouts itself: a small
# torchvision ConvNeXt (the class convnext_tiny is: channels 16 with 1
# block, then 32 with 2; stochastic depth 0) exported to ONNX at opset 17
# and imported with a loss. Its LayerNorm2d and its blocks permute each
# convolution's NCHW output to channels-last for a layer norm and the
# MLP, and back. In NHWC those permutes meet the layout's own changes:
# NCHW -> NHWC of a value whose channels-last twin exists is the twin,
# and NHWC -> NCHW of a value has that value as its twin, so the training
# step must keep no transpose of a [2, C, H, W] activation with C, H and W
# over 1 (before, each permute became a pair of transposes, and the layer
# norms' backward pass ran on transposed copies).
#
# The differential check on the cpu backend: the program compiled with
# --layout nchw and with --layout nhwc, trained 3 steps from the same
# weights on the same synthetic batches: equal losses and byte-equal
# checkpoints (the channels-last convolutions of the cpu backend transpose
# to NCHW and run the same kernels; every other op reads its elements in
# the same order in both programs).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import filecmp
import os
import re
import sys

import torch
from torchvision.models import ConvNeXt
from torchvision.models.convnext import CNBlockConfig

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from onnx_training import export_as_readme, run  # noqa: E402

work = sys.argv[1]
TRAINING = "optimizer=momentum lr=0.05 momentum=0.9"
problems = []


torch.manual_seed(0)
net = ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 2)],
               stochastic_depth_prob=0.0, num_classes=10).eval()
with torch.no_grad():
    for key, p in net.named_parameters():
        if key.endswith("layer_scale"):
            p.uniform_(0.5, 1.5)
onnx_file = os.path.join(work, "convnext.onnx")
export_as_readme(net, torch.randn(2, 3, 32, 32), onnx_file, 17)
mlir = os.path.join(work, "convnext.mlir")
run("fluid-import-onnx", onnx_file, "--batch", "2", "--loss",
    "softmax_cross_entropy", "-o", mlir)
weights = os.path.join(work, "convnext.safetensors")

# The NHWC training step: its transposes of 4-D activations.
ir = run("fluid-compile", mlir, "--backend", "cpu", "--quiet", "--training",
         TRAINING, "--layout", "nhwc", "--emit=buffers", "-o", "-")
step = ir[ir.index("func.func @loss"):]
step = step[:step.index("func.func @", 1)] if "func.func @" in step[1:] \
    else step
transposes = re.findall(
    r'launch "transpose" ins\(%\S+ : memref<2x(\d+)x(\d+)x(\d+)xf32>\)', step)
moved = [t for t in transposes if all(int(d) > 1 for d in t)]
print(f"NHWC training step: {len(transposes)} transposes of 4-D "
      f"activations, {len(moved)} of them without unit dimensions")
if moved:
    problems.append(f"transposes of activations left: {moved[:4]}")
convs = re.findall(r'launch "conv2d[a-z_]*"[^\n]*', step)
if not convs or not all("channels_last" in c for c in convs):
    problems.append(f"{sum('channels_last' in c for c in convs)} of "
                    f"{len(convs)} convolution launches channels-last")

losses, checkpoints = {}, {}
for layout in ("nchw", "nhwc"):
    exe = os.path.join(work, f"convnext-{layout}")
    run("fluid-compile", mlir, "--backend", "cpu", "--quiet", "--training",
        TRAINING, "--layout", layout, "-o", exe)
    checkpoints[layout] = exe + ".safetensors"
    out = run(exe, "--init-from", weights, "--synthetic-size", "4",
              "--steps", "3", "--test-data", "none", "--log-every", "1",
              "--save", checkpoints[layout])
    losses[layout] = re.findall(r"^step \d+ +epoch \d+ +loss (\S+)", out,
                                re.M)
print(f"losses nchw {losses['nchw']}, nhwc {losses['nhwc']}")
if len(losses["nchw"]) != 3 or losses["nchw"] != losses["nhwc"]:
    problems.append("the losses differ")
if not filecmp.cmp(checkpoints["nchw"], checkpoints["nhwc"], shallow=False):
    problems.append("the checkpoints after 3 steps differ")

if problems:
    print("FAIL: " + "; ".join(problems))
    sys.exit(1)
print("PASS: ConvNeXt trains alike in NCHW and NHWC, no activation "
      "transposed")
