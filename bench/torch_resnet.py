#!/usr/bin/env python3
"""PyTorch baseline for bench/resnet.sh: ResNet-34/50 training steps
(also SE-ResNeXt, and torchvision's vit_b_16 and convnext_tiny for
bench/onnx-models.sh).

Matches what the Fluid executables in build/bench/ do: fp32 storage with TF32
math, batch norm in training mode, momentum SGD (lr 0.1, momentum 0.9,
dampening 0, no Nesterov, weight decay 0: the defaults of
--fluid-append-optimizer), mean cross-entropy. Inputs are synthetic uint8
images normalized as (p/255 - 0.2860)/0.3530 with random labels, generated
once on the GPU (a few distinct batches): PyTorch's input copies are NOT
timed (Fluid's executables copy each batch from the host, overlapped).

Timing: one CUDA event pair around each timed step (no per-step
synchronization), one synchronize at the end; images/s per step, median,
min and max. Peak memory: torch.cuda.max_memory_allocated() (and _reserved)
since a reset just before the warm-up steps (model, optimizer state and the
input batches included).

  usage: torch_resnet.py --model resnet50 [--memory-format channels_last]
                         [--compile] --json OUT.json

--compile (torch.compile(model), default mode) is optional; the default run
is eager. --device cpu exists only to check the script without a GPU.

--ddp: one rank of `torchrun --nproc_per_node N` (PyTorch DDP, NCCL on cuda,
gloo on cpu; gradient buckets of 25 MiB, DDP's default): each rank trains on
its own --batch on GPU LOCAL_RANK; images/s counts the global batch (batch x
ranks); rank 0 alone prints and writes the JSON (its own peak memory).
"""

import argparse
import json
import math
import os
import signal
import statistics
import sys
import time
import traceback

MEAN = 0.2860
STD = 0.3530


# --- ResNet, the same modules as torchvision's (v1.5: the stride of a
# --- bottleneck is in its 3x3 convolution), used when torchvision is absent.

def _build_resnet_local(name, num_classes):
    import torch.nn as nn

    def conv3x3(cin, cout, stride=1):
        return nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)

    def conv1x1(cin, cout, stride=1):
        return nn.Conv2d(cin, cout, 1, stride=stride, bias=False)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = conv3x3(inplanes, planes, stride)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = conv3x3(planes, planes)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = conv1x1(inplanes, planes)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = conv3x3(planes, planes, stride)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = conv1x1(planes, planes * 4)
            self.bn3 = nn.BatchNorm2d(planes * 4)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, block, layers, num_classes):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(block, 64, layers[0])
            self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
            self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
            self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512 * block.expansion, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out",
                                            nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            # zero_init_residual=False, as torchvision's default.

        def _make_layer(self, block, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes * block.expansion:
                downsample = nn.Sequential(
                    conv1x1(self.inplanes, planes * block.expansion, stride),
                    nn.BatchNorm2d(planes * block.expansion))
            layers = [block(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * block.expansion
            for _ in range(1, blocks):
                layers.append(block(self.inplanes, planes))
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            x = self.avgpool(x).flatten(1)
            return self.fc(x)

    configs = {
        "resnet18": (BasicBlock, [2, 2, 2, 2]),
        "resnet34": (BasicBlock, [3, 4, 6, 3]),
        "resnet50": (Bottleneck, [3, 4, 6, 3]),
        "resnet101": (Bottleneck, [3, 4, 23, 3]),
    }
    block, layers = configs[name]
    return ResNet(block, layers, num_classes)


def build_model(name, num_classes, source):
    """Returns (model, description of where its definition came from)."""
    if name.startswith("se_resnext"):
        # timm is not a Debian package: the tests' transcription of timm's
        # SE-ResNeXt (test/Models/lib/reference_models.py), the model
        # fluid-models builds.
        here = os.path.dirname(os.path.abspath(__file__))
        sys.path.insert(0, os.path.join(here, "..", "test", "Models", "lib"))
        import reference_models
        return (reference_models.reference(name, 3, 224, num_classes),
                "test/Models/lib/reference_models.py (timm's SE-ResNeXt)")
    if source in ("auto", "torchvision"):
        try:
            import torchvision
            import torchvision.models as models
            ctor = getattr(models, name)
            try:
                model = ctor(weights=None, num_classes=num_classes)
            except TypeError:  # torchvision < 0.13
                model = ctor(pretrained=False, num_classes=num_classes)
            return model, "torchvision " + torchvision.__version__
        except ImportError:
            if source == "torchvision":
                raise
    return _build_resnet_local(name, num_classes), \
        "bench/torch_resnet.py (torchvision-equivalent definition)"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="resnet50",
                   choices=["resnet18", "resnet34", "resnet50", "resnet101",
                            "resnet152", "se_resnext50_32x4d",
                            "se_resnext101_32x4d", "se_resnext152_32x4d",
                            "vit_b_16", "convnext_tiny"])
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--classes", type=int, default=1000)
    p.add_argument("--steps", type=int, default=30, help="timed steps")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    p.add_argument("--memory-format", default="nchw",
                   choices=["nchw", "channels_last"])
    p.add_argument("--compile", action="store_true",
                   help="OPTIONAL: torch.compile(model) (default mode); the "
                        "default run is eager")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=0.0)
    p.add_argument("--distinct-batches", type=int, default=4,
                   help="input batches generated on the device, cycled")
    p.add_argument("--no-tf32", action="store_true",
                   help="full fp32 math (default: TF32, as Fluid's default)")
    p.add_argument("--precision", default="tf32",
                   choices=["tf32", "bf16", "fp16"],
                   help="bf16 or fp16: the forward pass under "
                        "torch.autocast(dtype) (fp16 with a GradScaler), as "
                        "fluid-compile --precision; default tf32 (f32)")
    p.add_argument("--model-source", default="auto",
                   choices=["auto", "torchvision", "local"],
                   help="auto: torchvision if importable, else the local "
                        "torchvision-equivalent definition")
    p.add_argument("--device", default="cuda",
                   help="cuda (the benchmark) or cpu (only to test the script)")
    p.add_argument("--ddp", action="store_true",
                   help="one rank of torchrun: DistributedDataParallel")
    p.add_argument("--deterministic", action="store_true",
                   help="torch.backends.cudnn.deterministic: only cuDNN "
                        "algorithms that give the same result every run (as "
                        "Fluid's convolutions by default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="write the results here")
    args = p.parse_args(argv)
    if args.steps < 1 or args.warmup < 0 or args.batch < 1:
        p.error("need --steps >= 1, --warmup >= 0, --batch >= 1")
    if args.distinct_batches < 1:
        p.error("need --distinct-batches >= 1")
    return args


def system_name(args):
    kind = "torch.compile" if args.compile else "torch eager"
    name = "%s %s" % (kind, args.memory_format)
    if args.precision != "tf32":
        name += " " + args.precision
    if args.ddp:
        name += " DDP x%s" % os.environ.get("WORLD_SIZE", "?")
    if args.device != "cuda":
        name += " (" + args.device + ")"
    return name


def write_json(path, record):
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def summary(values):
    return {"median": statistics.median(values), "min": min(values),
            "max": max(values)}


def make_step(args, record):
    """The benchmark's setup (backends, model, optimizer, inputs on the
    device); returns step(i), one training step on input batch i."""
    import torch
    import torch.nn as nn

    record["torch_version"] = torch.__version__
    cuda = args.device.startswith("cuda")
    if cuda and not torch.cuda.is_available():
        raise RuntimeError("CUDA is not available to this PyTorch")
    device = torch.device(args.device)
    if args.ddp and cuda:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)

    tf32 = not args.no_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = args.deterministic
    record["cudnn_deterministic"] = args.deterministic
    record["tf32"] = tf32 if cuda else False
    if cuda:
        record["device_name"] = torch.cuda.get_device_name(device)
        record["cuda_version"] = torch.version.cuda
        record["cudnn_version"] = torch.backends.cudnn.version()
    torch.manual_seed(args.seed)

    fmt = (torch.channels_last if args.memory_format == "channels_last"
           else torch.contiguous_format)
    model, source = build_model(args.model, args.classes, args.model_source)
    record["model_source"] = source
    model = model.to(device=device, memory_format=fmt)
    model.train()
    if args.ddp:
        model = nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if cuda else None,
            bucket_cap_mb=25)
    record["param_bytes"] = sum(p.numel() * p.element_size()
                                for p in model.parameters())
    record["module_buffer_bytes"] = sum(b.numel() * b.element_size()
                                        for b in model.buffers())
    record["param_count"] = sum(p.numel() for p in model.parameters())

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr,
                                momentum=args.momentum, dampening=0,
                                weight_decay=args.weight_decay,
                                nesterov=False)
    criterion = nn.CrossEntropyLoss()  # mean over the batch

    step_model = model
    if args.compile:
        if not hasattr(torch, "compile"):
            raise RuntimeError("torch.compile needs PyTorch 2.0 or newer "
                               "(this is %s)" % torch.__version__)
        step_model = torch.compile(model)

    # Synthetic inputs, made on the device once: uint8 pixels normalized as
    # the Fluid driver's synthetic data, random labels in [0, classes).
    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed + 1)
    shape = (args.batch, 3, args.image_size, args.image_size)
    images, labels = [], []
    for _ in range(args.distinct_batches):
        pixels = torch.randint(0, 256, shape, dtype=torch.uint8,
                               device=device, generator=gen)
        x = pixels.float().div_(255.0).sub_(MEAN).div_(STD)
        images.append(x.contiguous(memory_format=fmt))
        labels.append(torch.randint(0, args.classes, (args.batch,),
                                    dtype=torch.int64, device=device,
                                    generator=gen))
        del pixels, x
    record["input_bytes"] = sum(t.numel() * t.element_size()
                                for t in images + labels)
    record["inputs_timed"] = False

    # bf16 and fp16: torch.autocast's mixed precision, the recipe of
    # PyTorch's AMP documentation (fp16 with a GradScaler, bf16 without);
    # tf32: both disabled, a plain f32 step.
    record["precision"] = args.precision
    mixed = args.precision != "tf32"
    dtype = torch.float16 if args.precision == "fp16" else torch.bfloat16
    scaling = args.precision == "fp16" and cuda
    if hasattr(torch.amp, "GradScaler"):
        scaler = torch.amp.GradScaler("cuda", enabled=scaling)
    else:  # PyTorch < 2.3
        scaler = torch.cuda.amp.GradScaler(enabled=scaling)

    def step(i):
        x = images[i % len(images)]
        y = labels[i % len(labels)]
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, dtype=dtype,
                            enabled=mixed):
            loss = criterion(step_model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss

    return step


def run(args, record):
    import torch

    cuda = args.device.startswith("cuda")
    device = torch.device(args.device)
    if args.ddp and cuda:
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
    step = make_step(args, record)
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)

    t0 = time.perf_counter()
    first_loss = None
    for i in range(args.warmup):
        loss = step(i)
        if i == 0:
            first_loss = loss.item()  # synchronizes; warm-up is not timed
    if cuda:
        torch.cuda.synchronize(device)
    record["warmup_s"] = time.perf_counter() - t0

    times_ms = []
    t0 = time.perf_counter()
    if cuda:
        starts = [torch.cuda.Event(enable_timing=True)
                  for _ in range(args.steps)]
        ends = [torch.cuda.Event(enable_timing=True)
                for _ in range(args.steps)]
        for i in range(args.steps):
            starts[i].record()
            loss = step(args.warmup + i)
            ends[i].record()
        torch.cuda.synchronize(device)
        wall = time.perf_counter() - t0
        times_ms = [s.elapsed_time(e) for s, e in zip(starts, ends)]
        record["timed_span_ms"] = starts[0].elapsed_time(ends[-1])
    else:
        for i in range(args.steps):
            s = time.perf_counter()
            loss = step(args.warmup + i)
            loss.item()
            times_ms.append((time.perf_counter() - s) * 1e3)
        wall = time.perf_counter() - t0
    record["timed_wall_s"] = wall
    last_loss = loss.item()

    record["timed_steps"] = len(times_ms)
    record["step_ms_all"] = [round(t, 4) for t in times_ms]
    record["step_ms"] = summary(times_ms)
    ranks = int(os.environ.get("WORLD_SIZE", "1")) if args.ddp else 1
    record["ranks"] = ranks
    record["images_per_s"] = summary([args.batch * ranks * 1e3 / t
                                      for t in times_ms])
    record["images_per_s_overall"] = (args.batch * ranks * len(times_ms) /
                                      wall)
    record["first_loss"] = first_loss
    record["final_loss"] = last_loss
    if not math.isfinite(last_loss):
        record["warning"] = "non-finite loss (timing still valid)"
    if cuda:
        record["peak_memory_bytes"] = torch.cuda.max_memory_allocated(device)
        record["peak_reserved_bytes"] = torch.cuda.max_memory_reserved(device)
    else:
        record["peak_memory_bytes"] = None
        record["peak_reserved_bytes"] = None


class Terminated(Exception):
    pass


def _on_sigterm(signum, frame):
    raise Terminated("signal %d (the run's timeout?)" % signum)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    record = {
        "program": "bench/torch_resnet.py --model %s" % args.model,
        "system": system_name(args),
        "model": args.model,
        "backend": args.device,
        "batch": args.batch,
        "image_size": args.image_size,
        "classes": args.classes,
        "warmup_steps": args.warmup,
        "memory_format": args.memory_format,
        "compile": bool(args.compile),
        "graph": False,
        "workspace_bytes": None,
        "optimizer": {"kind": "momentum", "lr": args.lr,
                      "momentum": args.momentum,
                      "weight_decay": args.weight_decay},
        "distinct_batches": args.distinct_batches,
    }
    rank = 0
    if args.ddp:
        import torch.distributed as dist
        dist.init_process_group(
            "nccl" if args.device.startswith("cuda") else "gloo")
        rank = dist.get_rank()
        if rank != 0:
            args.json = None
    try:
        run(args, record)
    except BaseException as e:  # noqa: BLE001 (OOM, KeyboardInterrupt, ...)
        record["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0]
                                      if str(e) else "")
        traceback.print_exc()
        write_json(args.json, record)
        print("%s %s: FAILED: %s" % (args.model, record["system"],
                                     record["error"]), flush=True)
        return 1
    write_json(args.json, record)
    if args.ddp:
        import torch.distributed as dist
        dist.destroy_process_group()
    if rank != 0:
        return 0

    ips = record["images_per_s"]
    if record["peak_memory_bytes"] is not None:
        mem = "peak %.2f GiB allocated / %.2f GiB reserved" % (
            record["peak_memory_bytes"] / 2**30,
            record["peak_reserved_bytes"] / 2**30)
    else:
        mem = "peak memory n/a"
    print("%s %s: batch %d, %.1f images/s median (min %.1f, max %.1f) over "
          "%d steps, step %.2f ms median, %s, loss %.3f -> %.3f; inputs "
          "pre-generated on the device, copies not timed; %s; torch %s" % (
              args.model, record["system"], args.batch, ips["median"],
              ips["min"], ips["max"], record["timed_steps"],
              record["step_ms"]["median"], mem,
              record["first_loss"] if record["first_loss"] is not None
              else float("nan"), record["final_loss"],
              record["model_source"], record["torch_version"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
