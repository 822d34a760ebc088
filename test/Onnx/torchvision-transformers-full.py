# The full-size vit_b_16 and convnext_tiny of torchvision 0.14 (random
# weights, seeded; vit's zero-initialized head randomized so that the logits
# are not all 0) through ONNX: exported at opset 17 as the README says,
# imported with --batch 1, and @forward run on the cpu backend on one
# 224 x 224 image against the model in eval mode, the logits to 1e-5 of the
# largest |logit| (float32). torchvision-transformers.py checks small
# configurations of the same classes at opsets 13 and 17 and trains them.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import sys
import time
import warnings

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from onnx_training import run  # noqa: E402

work = sys.argv[1]
OPSET = 17

problems = []
for name in ["vit_b_16", "convnext_tiny"]:
    start = time.time()
    path = lambda file: os.path.join(work, f"{name}-{file}")  # noqa: E731
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)()
    if name == "vit_b_16":
        with torch.no_grad():
            net.heads.head.weight.normal_(0, 0.02)
    net.eval()
    images = torch.randn(1, 3, 224, 224,
                         generator=torch.Generator().manual_seed(1))
    np.save(path("images.npy"), images.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, images, path("forward.onnx"),
                          opset_version=OPSET,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False, input_names=["images"],
                          output_names=["logits"],
                          dynamic_axes={"images": {0: "batch"},
                                        "logits": {0: "batch"}})
    with torch.no_grad():
        expected = net(images).numpy()
    del net
    run("fluid-import-onnx", path("forward.onnx"), "--batch", "1", "-o",
        path("forward.mlir"))
    os.remove(path("forward.onnx"))
    run("fluid-run", path("forward.mlir"), "--params",
        path("forward.safetensors"), "--input", "images=" + path("images.npy"),
        "--save-outputs", path("forward"))
    logits = np.load(path("forward/output0.npy"))
    error = np.abs(logits - expected).max() / np.abs(expected).max()
    if logits.shape != expected.shape or error > 1e-5:
        problems.append(f"{name}: logits {logits.shape}, error {error:.3g} "
                        "of the largest")
    os.remove(path("forward.safetensors"))
    print(f"{name} ({time.time() - start:.1f} s): logits error {error:.2g} "
          "of the largest")

if problems:
    print("FAIL full-size transformers through ONNX: " + "; ".join(problems))
    sys.exit(1)
print("PASS full-size transformers through ONNX")
