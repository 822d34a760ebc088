"""PyTorch's optimizer step on a model's parameters, on the GPU: the
baseline of the grouped update in bench/optimizer.sh. torch.optim.SGD
(momentum 0.9, weight decay 1e-4, as the Fluid executables) with
foreach=True (one multi-tensor launch per list, PyTorch's default on CUDA)
and foreach=False (one launch per parameter), gradients filled once; each
step.step() timed with CUDA events, median (min-max) of --steps after
--warmup. Prints one markdown row per mode and writes --json.

  python bench/torch_optimizer.py --model resnet50 --json out.json
"""

import argparse
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_resnet import build_model  # noqa: E402


def time_steps(optimizer, steps, warmup):
    times = []
    for i in range(warmup + steps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        optimizer.step()
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    model, source = build_model(args.model, 1000, "auto")
    model = model.cuda()
    params = [p for p in model.parameters() if p.requires_grad]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    elements = sum(p.numel() for p in params)
    record = {"model": args.model, "source": source,
              "parameters": len(params), "elements": elements,
              "torch": torch.__version__, "rows": []}
    for foreach in (True, False):
        optimizer = torch.optim.SGD(params, lr=0.1, momentum=0.9,
                                    weight_decay=1e-4, foreach=foreach)
        times = time_steps(optimizer, args.steps, args.warmup)
        row = {"foreach": foreach, "median_ms": statistics.median(times),
               "min_ms": min(times), "max_ms": max(times)}
        record["rows"].append(row)
        print(f"| {args.model} | torch SGD foreach={foreach} | {len(params)} "
              f"| {row['median_ms']:.3f} ({row['min_ms']:.3f}-"
              f"{row['max_ms']:.3f}) |")
    with open(args.json, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
