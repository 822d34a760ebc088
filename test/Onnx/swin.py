# torchvision 0.14's swin_t through ONNX (random weights, seeded; the
# zero-initialized head randomized, as in torchvision-all.py), exported at
# opsets 13 and 17 as the README says (eval mode, TrainingMode.PRESERVE, no
# constant folding, input_names=["images"], dynamic batch) on images of
# 32 x 32, the smallest size it takes (4 x 4 patches, then 8 x 8, 4 x 4,
# 2 x 2 and 1 x 1 tokens; the first stage's 8 x 8 is padded to 14 x 14, two
# windows of 7, so its odd blocks shift them and mask the attention).
#
# What the importer folds, since every input is known: the windows' shape
# arithmetic (Mod, Range, Cast, Div) and the shifted windows' attention
# mask, built from a ConstantOfShape by ScatterND, float Sub, Equal, Not,
# a Cast to BOOL and Where; the attention's Dropout of ratio 0 (the
# identity). What runs: torch.roll as Slice and Concat, and the relative
# position bias, a Gather of a [169, 3] parameter at 2401 constant indices,
# as one fluid.gather (its gradient a fluid.gather_grad).
#
# - float32 @forward, imported with --batch 1 and --batch 2, on the cpu
#   backend: the logits against the model in eval mode, to 1e-5 of the
#   largest |logit|;
# - float64 (the same model, .double(), stochastic depth off: its random
#   drops have no counterpart in fluid), imported with --loss at --batch 2:
#   one step of SGD with momentum 0.9 (test/lib/onnx_training.py) against
#   PyTorch's: the loss to 1e-5 relative, every weight and momentum buffer
#   to 1e-8 relative + 1e-8 absolute. The relative position indices are
#   integer buffers the program holds as constants, not parameters: they
#   are left out of the comparison.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import copy
import os
import sys
import time
import warnings

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import onnx_training  # noqa: E402
import safetensors_io  # noqa: E402
from onnx_training import run  # noqa: E402

work = sys.argv[1]
SIZE = 32
OPSETS = (13, 17)
LR, MOMENTUM = 0.1, 0.9
warnings.simplefilter("ignore")


def make():
    torch.manual_seed(0)
    net = torchvision.models.swin_t()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.Linear) and not m.weight.any():
                m.weight.normal_(0, 0.02)
    return net.eval()


def export(net, images, file, opset):
    onnx_training.export_as_readme(net, images, file, opset)


def forward(net, opset, path, problems):
    """The float32 logits at batch 1 and 2; returns the worst error."""
    images = torch.randn(2, 3, SIZE, SIZE,
                         generator=torch.Generator().manual_seed(1))
    export(net, images[:1], path("forward.onnx"), opset)
    program = ""
    worst = 0.0
    for batch in (1, 2):
        name = f"forward{batch}"
        np.save(path(f"images{batch}.npy"), images[:batch].numpy())
        run("fluid-import-onnx", path("forward.onnx"), "--batch", str(batch),
            "-o", path(name + ".mlir"))
        run("fluid-run", path(name + ".mlir"), "--params",
            path(name + ".safetensors"), "--input",
            "images=" + path(f"images{batch}.npy"), "--save-outputs",
            path(name))
        with torch.no_grad():
            expected = net(images[:batch]).numpy()
        logits = np.load(path(name + "/output0.npy"))
        if logits.shape != expected.shape:
            problems.append(f"batch {batch}: logits {logits.shape}")
            continue
        error = np.abs(logits - expected).max() / np.abs(expected).max()
        worst = max(worst, error)
        if error > 1e-5:
            problems.append(f"batch {batch}: logits error {error:.3g} of the "
                            "largest")
        program = open(path(name + ".mlir")).read()
    if program.count("fluid.gather ") != 12:
        problems.append(f"{program.count('fluid.gather ')} fluid.gather, "
                        "expected one per block (12)")
    return worst


def train(net, opset, path, problems):
    """One float64 step; returns the loss, PyTorch's, and the largest
    difference of a tensor after the step as a fraction of its tolerance."""
    net64 = copy.deepcopy(net).double()
    for m in net64.modules():
        if isinstance(m, torchvision.ops.StochasticDepth):
            m.p = 0.0
    images = torch.randn(2, 3, SIZE, SIZE, dtype=torch.float64,
                         generator=torch.Generator().manual_seed(2))
    labels = torch.tensor([3, 7])
    np.save(path("images.npy"), images.numpy())
    np.save(path("labels.npy"), labels.numpy())
    export(net64, images, path("net.onnx"), opset)
    run("fluid-import-onnx", path("net.onnx"), "--batch", "2", "--loss",
        "softmax_cross_entropy", "-o", path("net.mlir"))
    for m in net64.modules():
        index = m._buffers.pop("relative_position_index", None)
        if index is not None:
            m.relative_position_index = index
    losses, torch_losses, _ = onnx_training.train_like_torch(
        net64, path, {"images": (path("images.npy"), images)}, labels, 1, LR,
        MOMENTUM, problems, 1e-8, 1e-8)
    after = safetensors_io.load(path("after.safetensors"))
    worst = 0.0
    for name, value in net64.state_dict().items():
        if name in after:
            value = value.numpy()
            worst = max(worst, (np.abs(after[name] - value) /
                                (1e-8 * np.abs(value) + 1e-8)).max())
    return (losses[0] if losses else float("nan")), torch_losses[0], worst


problems = []
for opset in OPSETS:
    start = time.time()
    folder = os.path.join(work, f"opset{opset}")
    os.makedirs(folder, exist_ok=True)
    path = lambda file: os.path.join(folder, file)  # noqa: E731
    found = []
    net = make()
    error = forward(net, opset, path, found)
    loss, torch_loss, worst = train(net, opset, path, found)
    problems += [f"opset {opset}: {p}" for p in found]
    print(f"opset {opset} ({time.time() - start:.1f} s): logits error "
          f"{error:.2g} of the largest; loss {loss} vs {torch_loss:.8f}, "
          f"tensors after the step within {worst:.2g} of the tolerance")

if problems:
    print("FAIL swin_t through ONNX: " + "; ".join(problems[:8]))
    sys.exit(1)
print("PASS swin_t through ONNX")
