#!/usr/bin/env python3
"""Where a PyTorch eager training step's GPU time goes, per op class.

The counterpart of a Fluid executable's `--profile N` table (bench/NOTES.md):
the same ResNet step as bench/torch_resnet.py (batch 128, TF32, momentum
SGD, cudnn.benchmark), profiled with torch.profiler over N steps after a
warm-up; each CUDA kernel's time is charged to the aten op that launched it
and the aten ops are grouped into Fluid's op classes by name. Prints a
Markdown table (ms per step, %, kernels per step) and writes JSON.

  usage: torch_profile.py --model resnet50 [--memory-format channels_last]
                          [--steps 5] [--json OUT.json]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_resnet  # noqa: E402

# Fluid's classes (runtime/driver/Profile.cpp), matched against aten op
# names in this order.
CLASSES = [
    ("convolution", ("conv",)),
    ("batch norm", ("batch_norm",)),
    ("pooling", ("pool",)),
    ("matmul", ("addmm", "mm", "linear", "matmul")),
    ("softmax+loss", ("softmax", "nll_loss", "cross_entropy")),
    ("activations", ("relu", "threshold")),
    ("optimizer", ("_foreach", "sgd")),
    ("reductions", ("sum", "mean")),
    ("elementwise", ("add", "mul", "sub", "div", "copy", "fill", "zero")),
]


def op_class(name):
    lowered = name.lower()
    for cls, keys in CLASSES:
        if any(key in lowered for key in keys):
            return cls
    return "other"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--memory-format", default="nchw",
                        choices=["nchw", "channels_last"])
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args(argv)

    import torch
    from torch.profiler import ProfilerActivity, profile

    # The benchmark's own setup: same model, optimizer, data and backends.
    bench_args = torch_resnet.parse_args([
        "--model", args.model, "--memory-format", args.memory_format])
    step = torch_resnet.make_step(bench_args, {})
    for i in range(args.warmup):
        step(i)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for i in range(args.steps):
            step(args.warmup + i)
        torch.cuda.synchronize()
    # Self CUDA time of each aten op: the kernels it launched itself.
    totals, counts = {}, {}
    for event in prof.key_averages():
        cuda_us = getattr(event, "self_device_time_total",
                          getattr(event, "self_cuda_time_total", 0))
        if cuda_us <= 0 or not event.key.startswith("aten::"):
            continue
        cls = op_class(event.key[len("aten::"):])
        totals[cls] = totals.get(cls, 0.0) + cuda_us / 1000.0 / args.steps
        counts[cls] = counts.get(cls, 0) + event.count / args.steps
    total = sum(totals.values())
    rows = sorted(totals.items(), key=lambda item: -item[1])
    title = "%s torch eager %s" % (args.model, args.memory_format)
    print("### %s: GPU time per op class (torch.profiler, %d steps)\n"
          % (title, args.steps))
    print("| op class | ms/step | % | aten calls/step |")
    print("| --- | --- | --- | --- |")
    for cls, ms in rows:
        print("| %s | %.3f | %.1f%% | %.0f |" % (cls, ms, 100 * ms / total,
                                                 counts[cls]))
    print("| **total** | **%.3f** | 100%% | |" % total)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"system": title, "steps": args.steps,
                       "profile": [{"class": c, "ms_per_step": ms,
                                    "calls": counts[c]} for c, ms in rows]},
                      out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
