# Every classification model of torchvision 0.14
# (torchvision.models.list_models: 80 builders) through ONNX, one
# representative of each family: the family's smallest model, seeded random
# weights (batch-norm statistics randomized, zero-initialized heads made
# random so that the logits are not all 0), exported at opset 17 as the
# README says (eval mode, TrainingMode.PRESERVE, no constant folding,
# input_names=["images"], dynamic batch), imported with --batch 1, and
# @forward run on the cpu backend on one image of the smallest size the
# model takes: 32 x 32, but inception_v3 75 x 75, maxvit_t 224 x 224, and
# alexnet and vgg11_bn 224 x 224 too (torch.onnx exports their
# AdaptiveAvgPool2d to 6 x 6 and 7 x 7 only from a multiple of that). The
# logits are compared with PyTorch's to 1e-5 of the largest |logit|
# (float32). Prints a table: model, import, forward error, seconds, status.
# About 70 s on two cores, maxvit_t a third of it.
#
# vit_b_16 and convnext_tiny are checked at full size by
# torchvision-transformers-full.py (and trained in small configurations by
# torchvision-transformers.py); they are not repeated here. A model that
# the importer cannot import is listed in EXPECTED_FAILURES with the error
# that says why: the test fails if it then imports, if another model fails,
# or if torchvision has a model of no family listed here.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np
import torch
import torchvision

work = sys.argv[1]
OPSET = 17
# The exporter's and the models' warnings (deprecations, tracing).
warnings.simplefilter("ignore")

# Each family (the builders whose names match the pattern): its
# representative and image size, or where it is checked instead.
FAMILIES = [
    (r"alexnet", "alexnet", 224),
    (r"convnext_.*", None, "convnext_tiny: torchvision-transformers-full.py"),
    (r"densenet\d+", "densenet121", 32),
    (r"efficientnet_b\d", "efficientnet_b0", 32),
    (r"efficientnet_v2_.", "efficientnet_v2_s", 32),
    (r"googlenet", "googlenet", 32),
    (r"inception_v3", "inception_v3", 75),
    (r"maxvit_t", "maxvit_t", 224),
    (r"mnasnet.*", "mnasnet0_5", 32),
    (r"mobilenet_v2", "mobilenet_v2", 32),
    (r"mobilenet_v3_.*", "mobilenet_v3_small", 32),
    (r"regnet_x_.*", "regnet_x_400mf", 32),
    (r"regnet_y_.*", "regnet_y_400mf", 32),
    (r"resnet\d+", "resnet18", 32),
    (r"resnext.*", "resnext50_32x4d", 32),
    (r"shufflenet_v2_.*", "shufflenet_v2_x0_5", 32),
    (r"squeezenet1_0", "squeezenet1_0", 32),
    (r"squeezenet1_1", "squeezenet1_1", 32),
    (r"swin_[tsb]", "swin_t", 32),
    (r"swin_v2_.", "swin_v2_t", 32),
    (r"vgg\d+(_bn)?", "vgg11_bn", 224),
    (r"vit_.*", None, "vit_b_16: torchvision-transformers-full.py"),
    (r"wide_resnet.*", "wide_resnet50_2", 32),
]

# The models that do not come through, and the error that says why (the
# first of several; the operators the graph has that the importer lacks).
EXPECTED_FAILURES = {
    # Also Range, Not and ScatterND (the shifted windows' mask, built in
    # the graph from the image size) and Dropout.
    "swin_t": "operator 'Mod' is not supported",
    # torch.onnx of PyTorch 1.13 cannot export it (Tensor.zero_).
    "swin_v2_t": "Exporting the operator 'aten::zero' to ONNX opset "
                 "version 17 is not supported",
}


def make(name):
    torch.manual_seed(0)
    net = getattr(torchvision.models, name)()
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2)
            elif isinstance(m, torch.nn.Linear) and not m.weight.any():
                m.weight.normal_(0, 0.02)
    return net.eval()


def check(name, size):
    """Returns (imported, error of the logits or None, what went wrong)."""
    path = lambda file: os.path.join(work, f"{name}-{file}")  # noqa: E731
    net = make(name)
    images = torch.randn(1, 3, size, size,
                         generator=torch.Generator().manual_seed(1))
    np.save(path("images.npy"), images.numpy())
    try:
        torch.onnx.export(net, images, path("forward.onnx"),
                          opset_version=OPSET,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False, input_names=["images"],
                          output_names=["logits"],
                          dynamic_axes={"images": {0: "batch"},
                                        "logits": {0: "batch"}})
    except Exception as e:  # noqa: BLE001 (the exporter's own errors)
        return False, None, f"torch.onnx.export: {str(e).splitlines()[0]}"
    with torch.no_grad():
        expected = net(images).numpy()
    del net
    imported = subprocess.run(
        ["fluid-import-onnx", path("forward.onnx"), "--batch", "1", "-o",
         path("forward.mlir")], capture_output=True, text=True)
    os.remove(path("forward.onnx"))
    if imported.returncode != 0:
        return False, None, imported.stderr.strip()
    ran = subprocess.run(
        ["fluid-run", path("forward.mlir"), "--params",
         path("forward.safetensors"), "--input",
         "images=" + path("images.npy"), "--save-outputs", path("forward")],
        capture_output=True, text=True)
    os.remove(path("forward.safetensors"))
    if ran.returncode != 0:
        return True, None, "fluid-run: " + ran.stderr.strip()
    logits = np.load(path("forward/output0.npy"))
    if logits.shape != expected.shape:
        return True, None, f"logits {logits.shape}, expected {expected.shape}"
    error = np.abs(logits - expected).max() / np.abs(expected).max()
    return True, error, None if error <= 1e-5 else \
        f"logits error {error:.3g} of the largest"


problems = []
for builder in torchvision.models.list_models(module=torchvision.models):
    matches = [f for f in FAMILIES if re.fullmatch(f[0], builder)]
    if len(matches) != 1:
        problems.append(f"{builder} is in {len(matches)} families")

print(f"{'model':<19} {'import':<7} {'forward error':<14} {'seconds':<8} "
      "status")
for _, name, size in FAMILIES:
    if name is None:
        print(f"{'':<19} (checked elsewhere: {size})")
        continue
    start = time.time()
    imported, error, failure = check(name, size)
    seconds = time.time() - start
    expected = EXPECTED_FAILURES.get(name)
    if expected and not failure:
        status = "PASSES: remove it from EXPECTED_FAILURES"
    elif expected and expected not in failure:
        status = "FAILED otherwise than expected"
    elif failure:
        status = "expected failure" if expected else "FAILED"
    else:
        status = "ok"
    if status != "ok" and status != "expected failure":
        problems.append(f"{name}: {status}: {failure}")
    print(f"{name:<19} {'yes' if imported else 'no':<7} "
          f"{'-' if error is None else f'{error:.2g}':<14} {seconds:<8.1f} "
          f"{status}", flush=True)
    if failure:
        print(f"  {failure.splitlines()[0][:160]}")

if problems:
    print("FAIL torchvision models through ONNX:\n" + "\n".join(problems))
    sys.exit(1)
print("PASS torchvision models through ONNX")
