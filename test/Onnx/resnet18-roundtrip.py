# torchvision's ResNet-18 through ONNX: exported by torch.onnx (opset 13,
# 64x64 images, dynamic batch), imported with fluid-import-onnx --batch 2,
# and run on the cpu backend against PyTorch on the CPU, from the same
# weights:
# - @forward against the model in eval mode: logits to 1e-4 of the largest
#   |logit|;
# - @loss (--loss softmax_cross_entropy) with --fluid-append-backward, one
#   step against the model in train mode (batch norm on the batch's
#   statistics): the loss to 1e-5 (relative), every gradient to 1e-3 of its
#   tensor's largest |element| (convolutions sum in another order than
#   PyTorch's, in float32), and the updated running statistics to 1e-5 of
#   |value| + 1 (ONNX's momentum 0.9 is PyTorch's 0.1).
#
# How torch 1.13 keeps the state-dict names: export the model in eval mode
# with training=TrainingMode.PRESERVE and do_constant_folding=False. The
# default (TrainingMode.EVAL) folds every batch norm into the convolution
# before it, leaving initializers named like "onnx::Conv_193";
# TrainingMode.TRAINING keeps the batch norms but exports them in training
# form (five outputs), which the importer rejects. Batch-norm parameters are
# randomized, because torch.onnx also merges initializers with equal values
# (a fresh model's all-ones weights) into one, behind Identity nodes.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import safetensors_io  # noqa: E402

work = sys.argv[1]
path = lambda name: os.path.join(work, name)  # noqa: E731

torch.manual_seed(0)
net = torchvision.models.resnet18()
with torch.no_grad():
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.weight.uniform_(0.5, 1.5)
            m.bias.uniform_(-0.5, 0.5)
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2)
net.eval()
state = {k: v.detach().clone() for k, v in net.state_dict().items()
         if not k.endswith("num_batches_tracked")}

images = torch.randn(2, 3, 64, 64)
labels = torch.tensor([7, 421])
np.save(path("images.npy"), images.numpy())
np.save(path("labels.npy"), labels.numpy())

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.onnx.export(net, images, path("resnet18.onnx"), opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False, input_names=["images"],
                      output_names=["logits"],
                      dynamic_axes={"images": {0: "batch"},
                                    "logits": {0: "batch"}})

problems = []


def run(*command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)}\n{result.stderr}")
    return result


# Inference: parameters named and valued as in the state dict.
run("fluid-import-onnx", path("resnet18.onnx"), "--batch", "2",
    "-o", path("forward.mlir"))
params = safetensors_io.load(path("forward.safetensors"))
if set(params) != set(state):
    problems.append(f"parameters {sorted(set(params) ^ set(state))[:5]} "
                    "differ from the state dict")
for name, value in state.items():
    if name in params and not np.array_equal(params[name], value.numpy()):
        problems.append(f"parameter {name} differs from the state dict")
run("fluid-run", path("forward.mlir"), "--params", path("forward.safetensors"),
    "--input", "images=" + path("images.npy"),
    "--save-outputs", path("forward"))
with torch.no_grad():
    expected = net(images).numpy()
logits = np.load(path("forward/output0.npy"))
logits_error = np.abs(logits - expected).max() / np.abs(expected).max()
if logits.shape != expected.shape or logits_error > 1e-4:
    problems.append(f"logits: error {logits_error:.3g} of the largest")

# Training: one step of @loss and its backward pass.
run("fluid-import-onnx", path("resnet18.onnx"), "--batch", "2",
    "--loss", "softmax_cross_entropy", "-o", path("train.mlir"))
run("fluid-opt", path("train.mlir"), "--fluid-append-backward",
    "-o", path("step.mlir"))
run("fluid-run", path("step.mlir"), "--params", path("train.safetensors"),
    "--input", "images=" + path("images.npy"),
    "--input", "labels=" + path("labels.npy"),
    "--save-outputs", path("step"), "--save-params", path("after.safetensors"))
step = open(path("step.mlir")).read()
signature = re.search(r"func\.func @loss\(.*", step).group(0)
grad_names = [name.strip('"') for name in
              re.findall(r'fluid\.grad_of = @("[^"]*"|[\w.$]+)', signature)]

net.train()
loss = F.cross_entropy(net(images), labels)
loss.backward()
grads = {n: p.grad for n, p in net.named_parameters()}
ours_loss = np.load(path("step/output0.npy")).item()
if abs(ours_loss - loss.item()) > 1e-5 * abs(loss.item()):
    problems.append(f"loss {ours_loss} vs {loss.item()}")
if sorted(grad_names) != sorted(grads):
    problems.append(f"gradients of {sorted(set(grad_names) ^ set(grads))[:5]}"
                    " are missing or extra")
worst_grad = 0.0
for i, name in enumerate(grad_names):
    ours = np.load(path(f"step/output{i + 1}.npy"))
    grad = grads[name].numpy()
    error = np.abs(ours - grad).max() / max(np.abs(grad).max(), 1e-30)
    worst_grad = max(worst_grad, error)
    if error > 1e-3:
        problems.append(f"gradient of {name}: error {error:.3g} of its max")
after = safetensors_io.load(path("after.safetensors"))
stats = 0
for name, value in net.state_dict().items():
    if name.endswith(("running_mean", "running_var")):
        stats += 1
        diff = np.abs(after[name] - value.numpy())
        if np.any(diff > 1e-5 * (np.abs(value.numpy()) + 1)):
            problems.append(f"{name} after the step: max |diff| "
                            f"{diff.max():.3g}")

if problems:
    print("FAIL resnet18 through ONNX: " + "; ".join(problems[:8]))
    sys.exit(1)
print(f"PASS resnet18 through ONNX: {len(params)} parameters as in the "
      f"state dict; logits error {logits_error:.2g} of the largest; loss "
      f"{ours_loss:.6f} vs {loss.item():.6f}; {len(grad_names)} gradients "
      f"(worst error {worst_grad:.2g} of a tensor's max); {stats} running "
      "statistics updated")
