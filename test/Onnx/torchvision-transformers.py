# torchvision 0.14's vision transformer and ConvNeXt through ONNX, in small
# configurations of the classes that vit_b_16 and convnext_tiny are
# (torchvision.models.VisionTransformer and ConvNeXt): the same operators
# are exported, and the cpu test stays fast (torchvision-transformers-full.py
# checks the full-size models' forward pass).
# - vit: image 32, patches of 16 (a Conv of stride 16), 2 encoder layers of
#   2 heads, hidden 32, MLP 64. Exported: the class token's
#   expand(n, -1, -1) (ConstantOfShape, Equal, Where on the shape, folded;
#   Expand of a parameter, a fluid.broadcast_to) and Concat, nn.LayerNorm
#   (ReduceMean, Sub, Pow, Sqrt, Div at opset 13; LayerNormalization at
#   opset 17), nn.MultiheadAttention (MatMul of [B, S, D] by [D, 3D], Slice,
#   Transpose, batched MatMul, Softmax over the last axis, Gemm), GELU
#   (Div, Erf, Add, Mul) and x[:, 0] (Gather of a constant index).
# - convnext: channels 16 (1 block) and 32 (2 blocks), stochastic depth 0:
#   the depthwise 7x7 convolution (group = channels), Permute + LayerNorm +
#   Linear on [N, H, W, C] (MatMul of a 4-D tensor by a matrix), GELU, the
#   layer scale (Mul by a [C, 1, 1] parameter), LayerNorm2d (Permute,
#   LayerNorm, Permute) before each downsampling and in the head.
# Each is exported at opsets 13 and 17 as the README says (eval mode,
# TrainingMode.PRESERVE, no constant folding, input_names=["images"],
# dynamic batch), with 10 classes, seeded weights, the layer norms' weights
# and biases, the layer scales, the class token and the zero-initialized
# head randomized, and imported with --batch 2; images are 2 x 3 x 32 x 32:
# - float32: @forward against the model in eval mode, the logits to 1e-5 of
#   the largest |logit|, run on the cpu backend;
# - float64 (the same model, .double()): one step of SGD with momentum 0.9
#   (test/lib/onnx_training.py) against PyTorch's: the loss to 1e-5
#   relative, every weight and momentum buffer to 1e-8 relative + 1e-8
#   absolute (the float32 step is no oracle, as torchvision-cnns.py says).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import copy
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import onnx_training  # noqa: E402
from onnx_training import run  # noqa: E402

work = sys.argv[1]
BATCH, SIZE, CLASSES = 2, 32, 10
OPSETS = (13, 17)
LR, MOMENTUM = 0.1, 0.9


def make(name):
    return onnx_training.small_transformer(name, SIZE, CLASSES)


def export(net, images, file, opset):
    onnx_training.export_as_readme(net, images, file, opset)


def check(name, opset, problems):
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
    program = open(path("forward.mlir")).read()
    if "fluid.erf" not in program:
        problems.append("GELU's Erf is not a fluid.erf")

    # One float64 training step.
    net64 = copy.deepcopy(net).double()
    images64 = images.double()
    np.save(path("images.npy"), images64.numpy())
    export(net64, images64, path("net.onnx"), opset)
    run("fluid-import-onnx", path("net.onnx"), "--batch", str(BATCH),
        "--loss", "softmax_cross_entropy", "-o", path("net.mlir"))
    losses, torch_losses, compared = onnx_training.train_like_torch(
        net64, path, {"images": (path("images.npy"), images64)}, labels, 1,
        LR, MOMENTUM, problems, 1e-8, 1e-8)
    return (f"logits error {error:.2g}; loss {losses[0] if losses else '?'} "
            f"vs {torch_losses[0]:.8f}, {compared} tensors after the step")


problems = []
for name in ["vit", "convnext"]:
    for opset in OPSETS:
        start = time.time()
        found = []
        summary = check(name, opset, found)
        problems += [f"{name} opset {opset}: {p}" for p in found]
        print(f"{name} opset {opset} ({time.time() - start:.1f} s): "
              f"{summary}")

if problems:
    print("FAIL torchvision transformers through ONNX: " +
          "; ".join(problems[:8]))
    sys.exit(1)
print("PASS torchvision transformers through ONNX")
