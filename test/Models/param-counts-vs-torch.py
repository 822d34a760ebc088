# Every model of fluid-models against its PyTorch definition: the
# parameters must have the state dict's names, order, shapes and trainable
# flags (num_batches_tracked aside), and each initializer must describe the
# values PyTorch actually draws for that tensor. The references
# (lib/reference_models.py) are torchvision's resnets and transcriptions of
# timm's SE-ResNeXt and of the MLP and LeNet-5. Each output must also verify
# in fluid-opt and declare the loss function tools look for.
# RUN: %python %s

import math
import os
import re
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "lib"))
from reference_models import reference  # noqa: E402

torch.manual_seed(0)

# (model, channels, image size, classes); batch 2 throughout.
CASES = [
    ("mlp", 1, 28, 10),
    ("lenet5", 1, 28, 10),
    ("lenet5", 3, 32, 7),
    ("resnet18", 3, 64, 1000),
    ("resnet18", 1, 64, 10),
    ("resnet34", 3, 64, 1000),
    ("resnet50", 3, 64, 1000),
    ("resnet101", 3, 64, 1000),
    ("resnet152", 3, 64, 1000),
    ("se_resnext50_32x4d", 3, 64, 1000),
    ("se_resnext50_32x4d", 1, 64, 10),
    ("se_resnext101_32x4d", 3, 64, 1000),
    ("se_resnext152_32x4d", 3, 64, 1000),
]

# Published trainable counts, as a check on the reference definitions
# themselves: torchvision's documentation and timm's model card.
KNOWN_TRAINABLE = {("resnet50", 3, 1000): 25_557_032,
                   ("se_resnext50_32x4d", 3, 1000): 27_559_896}

PARAM = re.compile(r"^\s*fluid\.param @([\w.]+) : tensor<([\dx]*)xf32> init (.*?)"
                   r"(?: \{(.*)\})?$", re.MULTILINE)
SIGNATURE = ('func.func @loss(%{}: tensor<2x{}x{}x{}xf32> {{fluid.name = "images"}}, '
             '%{}: tensor<2xi64> {{fluid.name = "labels"}}) -> tensor<f32> '
             'attributes {{fluid.entry}}')


def fluid_params(text):
    """[(name, shape, trainable, init)] in declaration order."""
    return [(m.group(1), tuple(int(d) for d in m.group(2).split("x")),
             "trainable = false" not in (m.group(4) or ""), m.group(3))
            for m in PARAM.finditer(text)]


def torch_params(module):
    """[(name, tensor, trainable)] in state-dict order."""
    trainable = {name for name, _ in module.named_parameters()}
    return [(name, t, name in trainable) for name, t in module.state_dict().items()
            if not name.endswith("num_batches_tracked")]


def init_mismatch(init, t):
    """Why the values in `t` cannot come from `init`, or None."""
    v = t.detach().double().flatten()
    n = v.numel()

    def spread(expected_std):
        if n >= 1000 and abs(v.std().item() / expected_std - 1) > 0.1:
            return f"std {v.std().item():.4g}, expected {expected_std:.4g}"
        return None

    if init == "zeros":
        return None if torch.all(v == 0) else "not all zeros"
    if init == "ones":
        return None if torch.all(v == 1) else "not all ones"
    m = re.fullmatch(r"uniform\((\S+), (\S+)\)", init)
    if m:
        lo, hi = float(m.group(1)), float(m.group(2))
        if v.min() < lo - 1e-7 or v.max() > hi + 1e-7:
            return f"values in [{v.min():.4g}, {v.max():.4g}] outside [{lo:.4g}, {hi:.4g}]"
        return spread((hi - lo) / math.sqrt(12))
    m = re.fullmatch(r"kaiming_(normal|uniform)\((fan_in|fan_out), gain = (\S+)\)", init)
    if m:
        receptive = math.prod(t.shape[2:])
        fan = (t.shape[1] if m.group(2) == "fan_in" else t.shape[0]) * receptive
        std = float(m.group(3)) / math.sqrt(fan)
        if m.group(1) == "uniform" and v.abs().max() > math.sqrt(3) * std + 1e-7:
            return f"max |value| {v.abs().max():.4g} beyond the bound {math.sqrt(3) * std:.4g}"
        return spread(std)
    return f"unexpected initializer {init!r}"


def check(model, channels, image_size, classes):
    options = ["--batch", "2", "--channels", str(channels), "--image-size", str(image_size),
               "--classes", str(classes)]
    label = " ".join([model] + options)
    module = reference(model, channels, image_size, classes)
    result = subprocess.run(["fluid-models", model] + options, capture_output=True, text=True)
    if result.returncode != 0:
        print(f"FAIL {label}: fluid-models exited with {result.returncode}:\n{result.stderr}")
        return False
    text = result.stdout
    verified = subprocess.run(["fluid-opt", "-o", "/dev/null"], input=text,
                              capture_output=True, text=True)
    if verified.returncode != 0:
        print(f"FAIL {label}: fluid-opt rejects the output:\n{verified.stderr}")
        return False
    signature = re.escape(SIGNATURE.format("ARG", channels, image_size, image_size, "ARG"))
    if not re.search(signature.replace("ARG", r"\w+"), text):
        print(f"FAIL {label}: no {SIGNATURE.format('images', channels, image_size, image_size, 'labels')}")
        return False

    ours = fluid_params(text)
    theirs = torch_params(module)
    problems = []
    if [p[0] for p in ours] != [p[0] for p in theirs]:
        names = set(p[0] for p in ours)
        torch_names = set(p[0] for p in theirs)
        problems.append(f"names or order differ; only in fluid: {sorted(names - torch_names)[:5]}, "
                        f"only in torch: {sorted(torch_names - names)[:5]}")
    else:
        for (name, shape, trainable, init), (_, tensor, torch_trainable) in zip(ours, theirs):
            if shape != tuple(tensor.shape):
                problems.append(f"{name}: shape {shape} vs torch {tuple(tensor.shape)}")
            if trainable != torch_trainable:
                problems.append(f"{name}: trainable {trainable} vs torch {torch_trainable}")
            why = init_mismatch(init, tensor)
            if why:
                problems.append(f"{name}: init {init}: {why}")
    if problems:
        print(f"FAIL {label}:")
        for p in problems[:20]:
            print(f"  {p}")
        return False

    count = sum(math.prod(shape) for _, shape, trainable, _ in ours if trainable)
    torch_count = sum(p.numel() for p in module.parameters())
    known = KNOWN_TRAINABLE.get((model, channels, classes))
    if count != torch_count or (known is not None and count != known):
        print(f"FAIL {label}: {count} trainable elements, torch {torch_count}, known {known}")
        return False
    print(f"PASS {label}: {len(ours)} tensors, {count:,} trainable elements")
    return True


ok = True
for case in CASES:
    ok &= check(*case)
sys.exit(0 if ok else 1)
