# One full training step of torchvision's ResNet-18 (batch 2, 64x64 images)
# on the cpu backend against PyTorch on the CPU, from the same weights
# (exported as safetensors): the loss, every trainable parameter's gradient
# (--fluid-append-backward) and every parameter and optimizer state after a
# momentum SGD step with weight decay (--fluid-build-training), including
# the batch-norm running statistics.
# Tolerances: float64 1e-9 (gradients relative to each tensor's largest
# element, running statistics relative to their values); float32 1e-5 for
# the loss and the running statistics (relative to |value| + 1), and 1e-3 of each gradient's largest
# element (convolution sums run in another order than PyTorch's), which
# carries over to the momentum buffers (= gradient + decay on the first
# step) and, times the learning rate, to the updated parameters.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import safetensors_io  # noqa: E402

work = sys.argv[1]
OPTIONS = "optimizer=momentum lr=0.1 momentum=0.9 weight-decay=1e-4"


def check(dtype, mlir_type, loss_tol, grad_tol, param_rtol, passes=()):
    torch.manual_seed(0)
    net = torchvision.models.resnet18().to(dtype)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2)
    prefix = os.path.join(work, mlir_type + ("-expanded" if passes else ""))
    forward = subprocess.run(["fluid-models", "resnet18", "--batch", "2",
                              "--image-size", "64"], check=True,
                             capture_output=True, text=True).stdout
    open(prefix + ".mlir", "w").write(forward.replace("f32>", f"{mlir_type}>"))
    state = {k: v.numpy() for k, v in net.state_dict().items()
             if not k.endswith("num_batches_tracked")}
    safetensors_io.save(prefix + "-init.safetensors", state)
    images = torch.randn(2, 3, 64, 64, dtype=dtype)
    labels = torch.tensor([7, 421])
    np.save(prefix + "-images.npy", images.numpy())
    np.save(prefix + "-labels.npy", labels.numpy())
    inputs = ["--params", prefix + "-init.safetensors",
              "--input", f"images={prefix}-images.npy",
              "--input", f"labels={prefix}-labels.npy"]

    subprocess.run(["fluid-opt", prefix + ".mlir", "--fluid-append-backward",
                    *passes, "-o", prefix + "-grad.mlir"], check=True)
    subprocess.run(["fluid-run", prefix + "-grad.mlir", *inputs,
                    "--save-outputs", prefix + "-grads"], check=True,
                   capture_output=True)
    subprocess.run(["fluid-opt", prefix + ".mlir",
                    f"--fluid-build-training={OPTIONS}", *passes,
                    "-o", prefix + "-train.mlir"], check=True)
    subprocess.run(["fluid-run", prefix + "-train.mlir", *inputs,
                    "--save-params", prefix + "-after.safetensors"],
                   check=True, capture_output=True)

    net.train()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9,
                                weight_decay=1e-4)
    optimizer.zero_grad()
    loss = F.cross_entropy(net(images), labels)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in net.named_parameters()}
    optimizer.step()

    problems = []
    ours_loss = np.load(os.path.join(prefix + "-grads", "output0.npy")).item()
    if abs(ours_loss - loss.item()) > loss_tol * abs(loss.item()):
        problems.append(f"loss {ours_loss} vs {loss.item()}")
    worst_grad = 0.0
    for i, (name, grad) in enumerate(grads.items()):
        ours = np.load(os.path.join(prefix + "-grads", f"output{i + 1}.npy"))
        scale = max(grad.abs().max().item(), 1e-30)
        error = np.abs(ours - grad.numpy()).max() / scale
        worst_grad = max(worst_grad, error)
        if error > grad_tol:
            problems.append(f"gradient of {name}: error {error:.3g} of its max")
    after = safetensors_io.load(prefix + "-after.safetensors")
    expected = {k: v.numpy() for k, v in net.state_dict().items()
                if not k.endswith("num_batches_tracked")}
    for name, p in net.named_parameters():
        expected[name + ".momentum_buffer"] = \
            optimizer.state[p]["momentum_buffer"].numpy()
    for name, value in expected.items():
        # A parameter and its buffer inherit the gradient's error.
        base = name.removesuffix(".momentum_buffer")
        tol = param_rtol * (np.abs(value) + 1)
        if base in grads:
            scale = grads[base].abs().max().item() * grad_tol
            tol = tol + (scale if name != base else 0.1 * scale) + 1e-30
        if np.any(np.abs(after[name] - value) > tol):
            problems.append(f"{name} after the step: max |diff| "
                            f"{np.abs(after[name] - value).max():.3g}")
    label = f"resnet18 {mlir_type}" + (" " + " ".join(passes) if passes else "")
    if problems:
        print(f"FAIL {label}: " + "; ".join(problems[:8]))
        return False
    print(f"PASS {label}: loss {ours_loss:.6f}, {len(grads)} gradients "
          f"(worst error {worst_grad:.2g} of a tensor's max), "
          f"{len(expected)} tensors after the step")
    return True


# The same step with batch norm expanded into reductions and elementwise
# ops and those fused (docs/FUSION.md), to the same tolerances.
EXPANDED = ("--fluid-expand-batch-norm", "--fluid-fuse-elementwise")
ok = check(torch.float64, "f64", 1e-9, 1e-9, 1e-9)
ok &= check(torch.float32, "f32", 1e-5, 1e-3, 1e-5)
ok &= check(torch.float64, "f64", 1e-9, 1e-9, 1e-9, EXPANDED)
ok &= check(torch.float32, "f32", 1e-5, 1e-3, 1e-5, EXPANDED)
sys.exit(0 if ok else 1)
