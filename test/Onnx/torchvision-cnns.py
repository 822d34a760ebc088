# torchvision 0.14's small CNNs through ONNX: mobilenet_v2 (Clip),
# mobilenet_v3_small (HardSigmoid; HardSwish at opset 17), mnasnet0_5
# (ReduceMean), densenet121 (a Pad of zeros before each transition's
# AveragePool), shufflenet_v2_x1_0 (Transpose, Slice, and the Shape, Gather,
# Div, Cast arithmetic of a dynamic batch), and a tiny model with
# nn.AvgPool2d(3, stride=1, padding=1) (a Pad and an AveragePool, imported
# as one fluid.avg_pool2d counting the padding) and nn.Linear(bias=False)
# (Transpose and MatMul). Each is exported at opsets 13 and 17 as the
# README says (eval mode, TrainingMode.PRESERVE, no constant folding,
# input_names=["images"], dynamic batch), with 10 classes, seeded weights,
# batch-norm parameters and statistics randomized and dropout off (the
# ONNX graph has none), and imported with --batch 2; images are 2 x 3 x
# 64 x 64 (each model's smallest stride leaves at least 2 x 2 at the end):
# - float32: @forward against the model in eval mode, the logits to 1e-5 of
#   the largest |logit|, run on the cpu backend;
# - float64 (the same model, .double()): one step of SGD with momentum 0.9
#   (test/lib/onnx_training.py; batch norm in training form) against
#   PyTorch's: the loss to 1e-5 relative, every weight, running statistic
#   and momentum buffer to 1e-8 relative + 1e-8 absolute (gradients reach
#   hundreds; the largest difference seen is 3e-10). The float32 step is no
#   oracle: through 50 batch norms over batches of 2, float32's rounding
#   changes some gradients by 20%, where float64 agrees to 1e-12.
#   mobilenet_v3_small's tolerance is 1e-6 + 1e-6: HardSigmoid's alpha is
#   a float in ONNX (1/6 to 7 digits) where PyTorch divides by 6, which
#   moves its gradients by 3e-7 of their largest.
#   shufflenet_v2_x1_0's channel split is a fluid.slice, whose gradient is
#   dy between zeros.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import copy
import os
import re
import sys
import time

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import onnx_training  # noqa: E402
from onnx_training import run  # noqa: E402

work = sys.argv[1]
BATCH, SIZE, CLASSES = 2, 64, 10
OPSETS = (13, 17)
LR, MOMENTUM = 0.1, 0.9

# The training step's tolerance (relative, absolute), 1e-8 + 1e-8 unless
# given here.
TOLERANCES = {"mobilenet_v3_small": (1e-6, 1e-6)}


class Tiny(torch.nn.Module):
    """A convolution, a batch norm, nn.AvgPool2d(3, stride=1, padding=1)
    and a head without bias."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.AvgPool2d(3, stride=1, padding=1)
        self.fc = torch.nn.Linear(8, CLASSES, bias=False)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.fc(x.mean([2, 3]))


def make(name):
    torch.manual_seed(0)
    net = (Tiny() if name == "tiny" else
           getattr(torchvision.models, name)(num_classes=CLASSES))
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2)
            elif isinstance(m, torch.nn.Dropout):
                m.p = 0.0
    return net.eval()


def export(net, images, file, opset):
    onnx_training.export_as_readme(net, images, file, opset)


def check(name, opset, problems):
    """Appends what is wrong with `name` at `opset` to `problems`;
    returns a summary of what was compared."""
    folder = os.path.join(work, f"{name}-{opset}")
    os.makedirs(folder, exist_ok=True)
    path = lambda file: os.path.join(folder, file)  # noqa: E731
    net = make(name)
    images = torch.randn(BATCH, 3, SIZE, SIZE, generator=torch.Generator()
                         .manual_seed(1))
    labels = torch.tensor([3, 7])
    np.save(path("images.npy"), images.numpy())
    np.save(path("labels.npy"), labels.numpy())

    # float32 inference.
    export(net, images, path("forward.onnx"), opset)
    run("fluid-import-onnx", path("forward.onnx"), "--batch", str(BATCH),
        "-o", path("forward.mlir"))
    run("fluid-run", path("forward.mlir"), "--params",
        path("forward.safetensors"), "--input", "images=" + path("images.npy"),
        "--save-outputs", path("forward"))
    with torch.no_grad():
        expected = net(images).numpy()
    logits = np.load(path("forward/output0.npy"))
    error = np.abs(logits - expected).max() / np.abs(expected).max()
    if logits.shape != expected.shape or error > 1e-5:
        problems.append(f"logits {logits.shape}, error {error:.3g} of the "
                        "largest")
    if name == "tiny":
        program = open(path("forward.mlir")).read()
        if not re.search(r"fluid\.avg_pool2d %\S+ \{count_include_pad, "
                         r"kernel_size = array<i64: 3, 3>, padding = "
                         r"array<i64: 1, 1, 1, 1>\}", program) \
                or "fluid.concat" in program:
            problems.append("the Pad is not the average pool's padding")

    # One float64 training step.
    net64 = copy.deepcopy(net).double()
    images64 = images.double()
    np.save(path("images.npy"), images64.numpy())
    export(net64, images64, path("net.onnx"), opset)
    run("fluid-import-onnx", path("net.onnx"), "--batch", str(BATCH),
        "--loss", "softmax_cross_entropy", "-o", path("net.mlir"))
    losses, torch_losses, compared = onnx_training.train_like_torch(
        net64, path, {"images": (path("images.npy"), images64)}, labels, 1,
        LR, MOMENTUM, problems, *TOLERANCES.get(name, (1e-8, 1e-8)))
    return (f"logits error {error:.2g}; loss {losses[0] if losses else '?'} "
            f"vs {torch_losses[0]:.8f}, {compared} tensors after the step")


problems = []
for name in ["mobilenet_v2", "mobilenet_v3_small", "mnasnet0_5",
             "densenet121", "shufflenet_v2_x1_0", "tiny"]:
    for opset in OPSETS:
        start = time.time()
        found = []
        summary = check(name, opset, found)
        problems += [f"{name} opset {opset}: {p}" for p in found]
        print(f"{name} opset {opset} ({time.time() - start:.1f} s): "
              f"{summary}")

if problems:
    print("FAIL torchvision CNNs through ONNX: " + "; ".join(problems[:8]))
    sys.exit(1)
print("PASS torchvision CNNs through ONNX")
