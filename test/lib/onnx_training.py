"""Shared by the ONNX training tests (test/Onnx/merged-initializers.py,
tied-weights.py): a tool run that fails the test with its error output,
and momentum-SGD steps of an imported model on fluid-run (cpu backend)
checked against the same steps of the PyTorch model: train_like_torch, or
its parts fluid_steps, torch_steps and compare_steps (torchvision-all.py
compares one PyTorch step with the steps of the models of two opsets);
export_as_readme, the README's export recipe; and small_transformer, the
small ViT and ConvNeXt of torchvision-transformers.py and
test/Passes/narrow-data-movement-vs-cpu.py."""

import re
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

import safetensors_io


def small_transformer(name, size, classes):
    """torchvision's VisionTransformer ("vit": patches of 16, 2 encoder
    layers of 2 heads, hidden 32, MLP 64) or ConvNeXt ("convnext": channels
    16 and 32, stochastic depth 0) at image size `size`, seeded, in eval
    mode, with the layer norms' weights and biases, the layer scales, the
    class token and the head randomized (they start at 1, 0, 1e-6 and 0:
    every block and every logit should count)."""
    from torchvision.models import ConvNeXt, VisionTransformer
    from torchvision.models.convnext import CNBlockConfig
    torch.manual_seed(0)
    if name == "vit":
        net = VisionTransformer(image_size=size, patch_size=16, num_layers=2,
                                num_heads=2, hidden_dim=32, mlp_dim=64,
                                num_classes=classes)
    else:
        net = ConvNeXt([CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 2)],
                       stochastic_depth_prob=0.0, num_classes=classes)
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
        for key, p in net.named_parameters():
            if key.endswith("layer_scale"):
                p.uniform_(0.5, 1.5)
            elif key == "class_token" or key.startswith("heads"):
                p.normal_(0, 0.5)
    return net.eval()


def run(*command):
    """Runs a tool; exits with FAIL and its stderr if it fails."""
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)}\n{result.stderr}")
    return result.stdout


def export_as_readme(net, images, file, opset):
    """torch.onnx.export as the README says: eval-mode weights kept as
    they are (TrainingMode.PRESERVE, no constant folding), the input named
    "images" and the batch dynamic; the exporter's warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, images, file, opset_version=opset,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False, input_names=["images"],
                          output_names=["logits"],
                          dynamic_axes={"images": {0: "batch"},
                                        "logits": {0: "batch"}})


def fluid_steps(path, inputs, steps, lr, momentum):
    """Builds momentum SGD for path("net.mlir") with fluid-opt and runs
    `steps` steps with fluid-run from path("net.safetensors") on `inputs`
    ({graph input name: (.npy path, tensor)}) and path("labels.npy"),
    saving the parameters to path("after.safetensors"). Returns the losses
    it printed."""
    run("fluid-opt", path("net.mlir"),
        f"--fluid-build-training=optimizer=momentum lr={lr} "
        f"momentum={momentum}", "-o", path("train.mlir"))
    feeds = []
    for name, (file, _) in inputs.items():
        feeds += ["--input", f"{name}={file}"]
    out = run("fluid-run", path("train.mlir"), "--repeat", str(steps),
              "--params", path("net.safetensors"), *feeds,
              "--input", "labels=" + path("labels.npy"),
              "--save-params", path("after.safetensors"),
              "--print-values", "1")
    return [float(m.group(1)) for m in
            re.finditer(r"output #0: \[\] f(?:32|64)  values: (\S+)", out)]


def torch_steps(net, inputs, labels, steps, lr, momentum):
    """The same steps of `net` (train mode, from its current state) with
    torch.optim. Returns (losses, {state-dict name and name +
    ".momentum_buffer": numpy array}), num_batches_tracked left out."""
    net.train()
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    torch_losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.cross_entropy(net(*[t for _, t in inputs.values()]), labels)
        torch_losses.append(loss.item())
        loss.backward()
        optimizer.step()
    expected = {k: v.numpy() for k, v in net.state_dict().items()
                if not k.endswith("num_batches_tracked")}
    for name, p in net.named_parameters():
        expected[name + ".momentum_buffer"] = \
            optimizer.state[p]["momentum_buffer"].numpy()
    return torch_losses, expected


def compare_steps(losses, torch_losses, after, expected, problems, rtol,
                  atol, errors=None, bound=None):
    """Appends to `problems` every loss off by more than 1e-5 relative, and
    every tensor of `expected` that `after` (a checkpoint's tensors) lacks
    or has off by more than `rtol` relative + `atol` absolute, or, if given,
    by more than bound(name, expected tensor) (a number or an array). If
    `errors` is a dict, it receives {tensor name: (max |diff|, max
    |expected|, max of |diff| over the allowed difference)} of every tensor
    compared. One tensor at a time, so that memory maps work."""
    steps = len(torch_losses)
    if len(losses) != steps:
        problems.append(f"{len(losses)} losses printed, expected {steps}")
    for step, (ours, theirs) in enumerate(zip(losses, torch_losses)):
        if abs(ours - theirs) > 1e-5 * abs(theirs):
            problems.append(f"step {step + 1}: loss {ours} vs PyTorch's "
                            f"{theirs}")
    extra = set(after) - set(expected) - {"global_step"}
    if extra:
        problems.append(f"checkpoint has tensors {sorted(extra)} that "
                        "PyTorch has not")
    for name, value in expected.items():
        if name not in after:
            problems.append(f"checkpoint lacks {name}")
            continue
        value = np.asarray(value)
        diff = np.abs(np.asarray(after[name]) - value)
        allowed = bound(name, value) if bound else \
            rtol * np.abs(value) + atol
        if errors is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(diff == 0, 0.0, diff / allowed)
            errors[name] = (float(diff.max(initial=0)),
                            float(np.abs(value).max(initial=0)),
                            float(ratio.max(initial=0)))
        if np.any(diff > allowed):
            problems.append(f"{name} after {steps} steps: max |diff| "
                            f"{diff.max():.3g}")


def train_like_torch(net, path, inputs, labels, steps, lr, momentum,
                     problems, rtol=1e-4, atol=1e-6):
    """Builds momentum SGD for path("net.mlir") with fluid-opt, runs
    `steps` steps with fluid-run from path("net.safetensors") on `inputs`
    ({graph input name: (.npy path, tensor)}) and `labels`, then the same
    steps of `net` (train mode, from its current state) with torch.optim.
    Appends to `problems` every loss off by more than 1e-5 relative, and
    every parameter, buffer or momentum buffer off by more than `rtol`
    relative + `atol` absolute. The model may be float32 or float64.
    Returns (fluid losses, torch losses, number of tensors compared)."""
    losses = fluid_steps(path, inputs, steps, lr, momentum)
    torch_losses, expected = torch_steps(net, inputs, labels, steps, lr,
                                         momentum)
    compare_steps(losses, torch_losses,
                  safetensors_io.load(path("after.safetensors")), expected,
                  problems, rtol, atol)
    return losses, torch_losses, len(expected)
