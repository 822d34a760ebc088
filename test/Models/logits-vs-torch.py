# The acceptance check of the model zoo, in float32 as users run it:
# `fluid-models resnet18 --batch 2 --image-size 64`, run by fluid-run on
# weights exported from torchvision's resnet18, gives the logits of
# model.eval() (the @predict function) and the training-mode loss (@loss)
# of PyTorch to 1e-4 relative; likewise se_resnext50_32x4d against the
# PyTorch transcription of timm's model in lib/reference_models.py.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from reference_models import reference  # noqa: E402
import safetensors_io  # noqa: E402

work = sys.argv[1]
torch.manual_seed(0)
RTOL = 1e-4
failures = 0

for name, module in [("resnet18", torchvision.models.resnet18()),
                     ("se_resnext50_32x4d",
                      reference("se_resnext50_32x4d", 3, 64, 1000))]:
    prefix = os.path.join(work, name)
    subprocess.run(["fluid-models", name, "--batch", "2", "--image-size", "64",
                    "-o", prefix + ".mlir"], check=True)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2)
    safetensors_io.save(prefix + ".safetensors",
                        {k: v.numpy() for k, v in module.state_dict().items()
                         if not k.endswith("num_batches_tracked")})
    images = torch.randn(2, 3, 64, 64)
    labels = torch.tensor([3, 917])
    np.save(prefix + "-images.npy", images.numpy())
    np.save(prefix + "-labels.npy", labels.numpy())

    def run(entry, *inputs):
        out = prefix + "-" + entry
        subprocess.run(["fluid-run", prefix + ".mlir", "--entry", entry,
                        "--params", prefix + ".safetensors", *inputs,
                        "--save-outputs", out], check=True)
        return np.load(os.path.join(out, "output0.npy"))

    logits = run("predict", "--input", f"images={prefix}-images.npy")
    loss = run("loss", "--input", f"images={prefix}-images.npy",
               "--input", f"labels={prefix}-labels.npy")
    with torch.no_grad():
        module.eval()
        expected_logits = module(images).numpy()
        module.train()
        expected_loss = F.cross_entropy(module(images), labels).item()
    scale = np.abs(expected_logits).max()
    logit_error = np.abs(logits - expected_logits).max() / scale
    loss_error = abs(loss.item() - expected_loss) / abs(expected_loss)
    verdict = "PASS" if logit_error < RTOL and loss_error < RTOL else "FAIL"
    failures += verdict == "FAIL"
    print(f"{verdict} {name}: logits max relative error {logit_error:.2g}, "
          f"loss {loss.item():.6f} vs {expected_loss:.6f} "
          f"(relative error {loss_error:.2g})")
sys.exit(1 if failures else 0)
