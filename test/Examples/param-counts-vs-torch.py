# The examples' parameters against the PyTorch modules they transcribe:
# names, shapes and the trainable count must agree with the state dicts of
# torchvision's ResNet-50 layer1.0 and of an SE-ResNeXt-50 (32x4d) layer1.0
# block defined here as timm defines it (timm is not a Debian package).
# RUN: %python %s %fluid_src_root/examples

import re
import subprocess
import sys

import torch
from torch import nn
import torchvision


class SEModule(nn.Module):
    def __init__(self, channels, reduction=16):
        super().__init__()
        rd = channels // reduction
        self.fc1 = nn.Conv2d(channels, rd, 1, bias=True)
        self.fc2 = nn.Conv2d(rd, channels, 1, bias=True)


class SEBottleneck(nn.Module):
    """timm's Bottleneck with attn_layer='se', cardinality 32, base width 4."""

    def __init__(self, inplanes=64, planes=64, cardinality=32, base_width=4):
        super().__init__()
        width = int(planes * base_width / 64) * cardinality
        out = planes * 4
        self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1, groups=cardinality, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out)
        self.se = SEModule(out)
        self.downsample = nn.Sequential(nn.Conv2d(inplanes, out, 1, bias=False),
                                        nn.BatchNorm2d(out))


def fluid_params(path):
    """Parameters as fluid-opt prints them: {name: (shape, trainable)}."""
    text = subprocess.run(["fluid-opt", path], check=True, capture_output=True,
                          text=True).stdout
    params = {}
    for m in re.finditer(r"fluid\.param @([\w.]+) : tensor<([\dx]*)f32>[^\n]*", text):
        shape = tuple(int(d) for d in m.group(2).split("x") if d)
        params[m.group(1)] = (shape, "trainable = false" not in m.group(0))
    return params


def torch_params(module, prefix):
    params = {prefix + n: (tuple(p.shape), True) for n, p in module.named_parameters()}
    for n, b in module.named_buffers():
        if not n.endswith("num_batches_tracked"):
            params[prefix + n] = (tuple(b.shape), False)
    return params


def compare(label, ours, theirs):
    if ours != theirs:
        for name in sorted(set(ours) | set(theirs)):
            if ours.get(name) != theirs.get(name):
                print(f"  {name}: fluid {ours.get(name)} vs torch {theirs.get(name)}")
        print(f"FAIL {label}")
        return False
    trainable = sum(torch.Size(s).numel() for s, t in ours.values() if t)
    print(f"PASS {label}: {len(ours)} tensors, {trainable} trainable elements")
    return True


examples = sys.argv[1]
resnet_block = torchvision.models.resnet50().layer1[0]
ok = compare("resnet-bottleneck.mlir vs torchvision resnet50 layer1.0",
             fluid_params(f"{examples}/resnet-bottleneck.mlir"),
             torch_params(resnet_block, "layer1.0."))
ok &= compare("se-resnext-block.mlir vs SE-ResNeXt-50 layer1.0",
              fluid_params(f"{examples}/se-resnext-block.mlir"),
              torch_params(SEBottleneck(), "layer1.0."))
sys.exit(0 if ok else 1)
