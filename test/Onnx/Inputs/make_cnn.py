"""Exports a small CNN (convolution, batch norm, ReLU, flatten, linear; 3x4x4
images, 3 classes) the way the README says, into the folder given as the
only argument: cnn.onnx with a dynamic batch (input "images",
dynamic_axes), cnn-static.onnx with a static batch of 2. Every weight and
running statistic is random (seeded), so no two initializers are merged;
batch norm's momentum is 0, so training leaves the running statistics
as they are loaded."""

import os
import sys
import warnings

import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Conv2d(3, 4, 3, padding=1),
    torch.nn.BatchNorm2d(4, momentum=0.0),
    torch.nn.ReLU(),
    torch.nn.Flatten(),
    torch.nn.Linear(4 * 4 * 4, 3))
with torch.no_grad():
    for tensor in list(net.parameters()) + [net[1].running_mean]:
        tensor.copy_(torch.randn_like(tensor))
    net[1].running_var.copy_(torch.rand(4) + 0.5)
net.eval()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name, batch, axes in [
            ("cnn.onnx", 4, {"images": {0: "batch"}, "logits": {0: "batch"}}),
            ("cnn-static.onnx", 2, None)]:
        torch.onnx.export(net, torch.randn(batch, 3, 4, 4),
                          os.path.join(out, name), opset_version=17,
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False, input_names=["images"],
                          output_names=["logits"], dynamic_axes=axes)
