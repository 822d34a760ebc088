"""The PyTorch models fluid-models transcribes, as the Models tests' oracle.

torchvision's ResNets are used as they are. timm is not a Debian package, so
its SE-ResNeXt is transcribed here from timm.models.resnet (ResNet with
Bottleneck, cardinality 32, base width 4, attn_layer='se') and
timm.layers.SEModule, keeping timm's module names and registration order
(hence its state-dict order) and its init_weights. The MLP and LeNet-5 are
defined as fluid-models describes them."""

import math

import torch
from torch import nn
import torchvision


def make_divisible(v, divisor=8, min_value=None, round_limit=0.0):
    """timm.layers.helpers.make_divisible."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < round_limit * v:
        new_v += divisor
    return new_v


class SEModule(nn.Module):
    """timm.layers.SEModule with its defaults: rd_ratio 1/16, divisor 8."""

    def __init__(self, channels):
        super().__init__()
        rd = make_divisible(channels / 16, 8, round_limit=0.0)
        self.fc1 = nn.Conv2d(channels, rd, kernel_size=1, bias=True)
        self.bn = nn.Identity()
        self.act = nn.ReLU(inplace=True)
        self.fc2 = nn.Conv2d(rd, channels, kernel_size=1, bias=True)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        x_se = x.mean((2, 3), keepdim=True)
        x_se = self.act(self.bn(self.fc1(x_se)))
        return x * self.gate(self.fc2(x_se))


class SEBottleneck(nn.Module):
    """timm.models.resnet.Bottleneck with attn_layer='se'."""

    expansion = 4

    def __init__(self, inplanes, planes, stride, downsample, cardinality, base_width):
        super().__init__()
        width = int(math.floor(planes * (base_width / 64)) * cardinality)
        outplanes = planes * self.expansion
        self.conv1 = nn.Conv2d(inplanes, width, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.act1 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(width, width, kernel_size=3, stride=stride, padding=1,
                               groups=cardinality, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.act2 = nn.ReLU(inplace=True)
        self.conv3 = nn.Conv2d(width, outplanes, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(outplanes)
        self.se = SEModule(outplanes)
        self.act3 = nn.ReLU(inplace=True)
        self.downsample = downsample

    def zero_init_last(self):
        nn.init.zeros_(self.bn3.weight)

    def forward(self, x):
        shortcut = x
        x = self.act1(self.bn1(self.conv1(x)))
        x = self.act2(self.bn2(self.conv2(x)))
        x = self.se(self.bn3(self.conv3(x)))
        if self.downsample is not None:
            shortcut = self.downsample(shortcut)
        return self.act3(x + shortcut)


class SEResNeXt(nn.Module):
    """timm's ResNet(Bottleneck, layers, cardinality=32, base_width=4,
    block_args=dict(attn_layer='se')) with the default stem and head."""

    def __init__(self, layers, num_classes=1000, in_chans=3, cardinality=32, base_width=4):
        super().__init__()
        self.conv1 = nn.Conv2d(in_chans, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.act1 = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        inplanes = 64
        for stage, (planes, depth) in enumerate(zip((64, 128, 256, 512), layers)):
            stride = 1 if stage == 0 else 2
            downsample = None
            if stride != 1 or inplanes != planes * 4:
                downsample = nn.Sequential(
                    nn.Conv2d(inplanes, planes * 4, 1, stride=stride, bias=False),
                    nn.BatchNorm2d(planes * 4))
            blocks = []
            for index in range(depth):
                blocks.append(SEBottleneck(inplanes, planes, stride if index == 0 else 1,
                                           downsample if index == 0 else None,
                                           cardinality, base_width))
                inplanes = planes * 4
            self.add_module(f"layer{stage + 1}", nn.Sequential(*blocks))
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(inplanes, num_classes)
        # timm's ResNet.init_weights(zero_init_last=True).
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        for m in self.modules():
            if hasattr(m, "zero_init_last"):
                m.zero_init_last()

    def forward(self, x):
        x = self.maxpool(self.act1(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.global_pool(x), 1))


class MLP(nn.Module):
    def __init__(self, in_features, classes):
        super().__init__()
        self.flatten = nn.Flatten()
        self.fc1 = nn.Linear(in_features, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 128)
        self.relu2 = nn.ReLU()
        self.fc3 = nn.Linear(128, classes)

    def forward(self, x):
        x = self.relu1(self.fc1(self.flatten(x)))
        return self.fc3(self.relu2(self.fc2(x)))


class LeNet5(nn.Module):
    """Two 5x5 convolutions (the first padded) with ReLU and 2x2 max
    pooling, then three linear layers; the flattened size follows the
    image size."""

    def __init__(self, channels, image_size, classes):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 6, 5, padding=2)
        self.relu1 = nn.ReLU()
        self.pool1 = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.relu2 = nn.ReLU()
        self.pool2 = nn.MaxPool2d(2, 2)
        self.flatten = nn.Flatten()
        with torch.no_grad():
            flat = self.features(torch.zeros(1, channels, image_size, image_size)).shape[1]
        self.fc1 = nn.Linear(flat, 120)
        self.relu3 = nn.ReLU()
        self.fc2 = nn.Linear(120, 84)
        self.relu4 = nn.ReLU()
        self.fc3 = nn.Linear(84, classes)

    def features(self, x):
        x = self.pool1(self.relu1(self.conv1(x)))
        return self.flatten(self.pool2(self.relu2(self.conv2(x))))

    def forward(self, x):
        x = self.relu3(self.fc1(self.features(x)))
        return self.fc3(self.relu4(self.fc2(x)))


def torchvision_resnet(name, channels=3, classes=1000):
    """torchvision.models.NAME, with a `channels`-channel stem if not 3."""
    model = getattr(torchvision.models, name)(num_classes=classes)
    if channels != 3:
        model.conv1 = nn.Conv2d(channels, 64, kernel_size=7, stride=2, padding=3, bias=False)
        nn.init.kaiming_normal_(model.conv1.weight, mode="fan_out", nonlinearity="relu")
    return model


def reference(model, channels, image_size, classes):
    """The PyTorch module fluid-models' MODEL transcribes."""
    if model == "mlp":
        return MLP(channels * image_size * image_size, classes)
    if model == "lenet5":
        return LeNet5(channels, image_size, classes)
    if model.startswith("resnet"):
        return torchvision_resnet(model, channels, classes)
    depths = {"se_resnext50_32x4d": (3, 4, 6, 3), "se_resnext101_32x4d": (3, 4, 23, 3),
              "se_resnext152_32x4d": (3, 8, 36, 3)}
    return SEResNeXt(depths[model], num_classes=classes, in_chans=channels)

