# fluid-models' programs compute what their PyTorch models compute: with the
# reference module's weights (lib/reference_models.py) and the same batch,
# the loss fluid-run returns equals PyTorch's training-mode forward pass and
# cross-entropy, and the parameters after the step (batch-norm running
# statistics updated, the rest unchanged) equal the module's state dict.
# Strides, paddings, the squeeze-excite gate and the shortcuts are all
# exercised, which parameter shapes alone cannot show. The programs run in
# float64 (their f32 types rewritten), so a wrong network shows as an O(1)
# difference, far above the 1e-7 allowed for rounding (deep layers
# normalize over as few as two values, which amplifies it to about 1e-9).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from reference_models import reference  # noqa: E402
import safetensors_io  # noqa: E402

# (model, batch, channels, image size, classes): small images keep the cpu
# reference kernels fast; every stage still downsamples.
CASES = [
    ("mlp", 4, 1, 28, 10),
    ("lenet5", 4, 3, 32, 10),
    ("resnet18", 2, 3, 32, 100),
    ("resnet50", 2, 3, 32, 100),
    ("se_resnext50_32x4d", 2, 3, 32, 100),
]

work = sys.argv[1]
torch.manual_seed(0)
failures = 0

for model, batch, channels, image_size, classes in CASES:
    label = f"{model} {batch}x{channels}x{image_size}x{image_size}, {classes} classes"
    prefix = os.path.join(work, model)
    generated = subprocess.run(
        ["fluid-models", model, "--batch", str(batch), "--channels", str(channels),
         "--image-size", str(image_size), "--classes", str(classes)],
        capture_output=True, text=True)
    if generated.returncode != 0:
        print(f"FAIL {label}: fluid-models exited {generated.returncode}:\n{generated.stderr}")
        failures += 1
        continue
    with open(prefix + ".mlir", "w") as f:
        f.write(generated.stdout.replace("f32>", "f64>"))

    module = reference(model, channels, image_size, classes).double()
    # Batch norms away from their initial identity (timm even zeroes the
    # last one of each block), so that every branch shows in the loss.
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.5, 2)
    state = {name: t.numpy().copy() for name, t in module.state_dict().items()
             if not name.endswith("num_batches_tracked")}
    safetensors_io.save(prefix + "-params.safetensors", state)
    images = torch.randn(batch, channels, image_size, image_size, dtype=torch.float64)
    labels = torch.randint(0, classes, (batch,))
    np.save(prefix + "-images.npy", images.numpy())
    np.save(prefix + "-labels.npy", labels.numpy())

    run = subprocess.run(
        ["fluid-run", prefix + ".mlir", "--params", prefix + "-params.safetensors",
         "--input", f"images={prefix}-images.npy", "--input", f"labels={prefix}-labels.npy",
         "--save-outputs", prefix + "-out", "--save-params", prefix + "-after.safetensors"],
        capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL {label}: fluid-run exited {run.returncode}:\n{run.stderr}")
        failures += 1
        continue

    module.train()
    with torch.no_grad():
        expected = F.cross_entropy(module(images), labels).item()
    loss = np.load(os.path.join(prefix + "-out", "output0.npy")).item()
    problems = []
    if not np.isclose(loss, expected, rtol=1e-7, atol=1e-7):
        problems.append(f"loss {loss!r}, PyTorch {expected!r}")
    after = safetensors_io.load(prefix + "-after.safetensors")
    for name, t in module.state_dict().items():
        if name.endswith("num_batches_tracked"):
            continue
        if name not in after:
            problems.append(f"{name}: missing after the step")
        elif not np.allclose(after[name], t.numpy(), rtol=1e-7, atol=1e-7):
            diff = np.abs(after[name] - t.numpy()).max()
            problems.append(f"{name}: differs from PyTorch after the step by {diff:.3g}")
    if problems:
        print(f"FAIL {label}:")
        for p in problems[:10]:
            print(f"  {p}")
        failures += 1
    else:
        print(f"PASS {label}: loss {loss:.12g}, {len(state)} tensors after the step")

sys.exit(1 if failures else 0)
