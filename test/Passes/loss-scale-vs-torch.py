# Dynamic loss scaling against an oracle: training steps of a small program
# built with --fluid-build-training loss-scale=... and run by the
# interpreter (fluid-run) against the same steps in PyTorch, with the loss
# scaled, unscaled and the scale updated as torch.cuda.amp.GradScaler does
# (its _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_,
# written out below: PyTorch 1.13 has no cpu kernels for them), plus the
# pass's bounds [min-loss-scale, max-loss-scale], and the update done by
# torch.optim. The cases force overflows (a scale of 2^127 makes a gradient
# of 2^128, which is infinite in f32), so that steps are skipped, the scale
# backs off and grows again; they check every step's loss (1e-6 relative),
# the parameters and optimizer state at the end (1e-6 relative), and the
# scale, its growth tracker and the count of skipped steps (exactly).
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
import torch

work = sys.argv[1]
PROGRAM = """
fluid.param @w : tensor<4xf32> init ones
fluid.param @b : tensor<f32> init zeros
func.func @loss(%x: tensor<4xf32> {fluid.name = "x"}) -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %b = fluid.get_param @b : tensor<f32>
  %p = fluid.mul %w, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %s = fluid.add %p, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %l = fluid.mean %s : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
"""
program = os.path.join(work, "tiny.mlir")
open(program, "w").write(PROGRAM)
F32_MAX = float(np.finfo(np.float32).max)


def read_safetensors(path):
    data = open(path, "rb").read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    dtypes = {"F32": np.float32, "I64": np.int64, "F64": np.float64}
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(data[8 + size + begin:8 + size + end],
                                  dtype=dtypes[entry["dtype"]]).reshape(
                                      entry["shape"])
    return out


def fluid_run(options, x, steps):
    train = os.path.join(work, "train.mlir")
    subprocess.run(["fluid-opt", program,
                    f"--fluid-build-training={options}", "-o", train],
                   check=True)
    xfile = os.path.join(work, "x.npy")
    np.save(xfile, np.asarray(x, dtype=np.float32))
    params = os.path.join(work, "params.safetensors")
    out = subprocess.run(["fluid-run", train, "--input", f"x={xfile}",
                          "--repeat", str(steps), "--print-values", "1",
                          "--save-params", params], check=True,
                         capture_output=True, text=True).stdout
    losses = [float(m.group(1)) for m in
              re.finditer(r"output #0: \[\] f32  values: (\S+)", out)]
    return losses, read_safetensors(params)


def torch_run(case, x, steps):
    """GradScaler's algorithm around a torch.optim optimizer."""
    w = torch.nn.Parameter(torch.ones(4))
    b = torch.nn.Parameter(torch.zeros(()))
    opt = case["make"]([w, b])
    scale = np.float32(case["init"])
    tracker, skipped = 0, 0
    x = torch.tensor(x, dtype=torch.float32)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = (w * x + b).mean()
        losses.append(float(loss))
        (loss * torch.tensor(scale)).backward()
        # _amp_foreach_non_finite_check_and_unscale_: inv_scale in f32.
        inverse = torch.tensor(np.float32(1.0 / np.float64(scale)))
        found = any(not torch.isfinite(p.grad).all() for p in (w, b))
        for p in (w, b):
            p.grad.mul_(inverse)
        if not found:
            opt.step()
        # _amp_update_scale_, then the pass's bounds.
        if found:
            skipped += 1
            scale = np.float32(scale * np.float32(case["backoff"]))
            tracker = 0
        else:
            tracker += 1
            if tracker == case["interval"]:
                scale = np.float32(scale * np.float32(case["growth"]))
                tracker = 0
        scale = np.float32(min(max(scale, np.float32(case["min"])),
                               np.float32(case["max"])))
    state = {"w": w.detach().numpy(), "b": b.detach().numpy()}
    if isinstance(opt, torch.optim.SGD) and case.get("momentum"):
        state["w.momentum_buffer"] = opt.state[w]["momentum_buffer"].numpy()
    if isinstance(opt, torch.optim.Adam):
        state["w.exp_avg"] = opt.state[w]["exp_avg"].numpy()
        state["w.exp_avg_sq"] = opt.state[w]["exp_avg_sq"].numpy()
    return losses, state, scale, tracker, skipped


CASES = [
    # Overflow at 2^127, back off to 2^126, grow back after 2 good steps,
    # overflow again: skips, growth and the bound max-loss-scale.
    dict(name="momentum, grouped",
         options="optimizer=momentum lr=0.5 momentum=0.9",
         make=lambda p: torch.optim.SGD(p, lr=0.5, momentum=0.9),
         momentum=True, x=[1, 2, 3, 8], steps=7, init=2.0**127,
         interval=2, growth=2.0, backoff=0.5, min=1.0, max=F32_MAX),
    # No overflow: growth every 3 steps, capped by max-loss-scale.
    dict(name="sgd, weight decay",
         options="optimizer=sgd lr=0.1 weight-decay=0.01",
         make=lambda p: torch.optim.SGD(p, lr=0.1, weight_decay=0.01),
         x=[0.5, -1, 2, 0.25], steps=10, init=1024.0, interval=3,
         growth=2.0, backoff=0.5, min=1.0, max=4096.0),
    # Single (ungrouped) Adam updates; back off by 4 to the lower bound.
    dict(name="adam, single updates",
         options="optimizer=adam lr=0.01 group-optimizer=false",
         make=lambda p: torch.optim.Adam(p, lr=0.01),
         x=[1, 2, 3, 8], steps=6, init=2.0**127, interval=2, growth=2.0,
         backoff=0.25, min=2.0**125, max=F32_MAX),
]

failures = 0
for case in CASES:
    options = (f"{case['options']} loss-scale={case['init']!r} "
               f"scale-growth-interval={case['interval']} "
               f"scale-growth-factor={case['growth']!r} "
               f"scale-backoff-factor={case['backoff']!r} "
               f"min-loss-scale={case['min']!r} "
               f"max-loss-scale={case['max']!r}")
    losses, params = fluid_run(options, case["x"], case["steps"])
    want_losses, state, scale, tracker, skipped = torch_run(
        case, case["x"], case["steps"])
    problems = []
    if len(losses) != case["steps"] or not np.allclose(
            losses, want_losses, rtol=1e-6, atol=0):
        problems.append(f"losses {losses} != {want_losses}")
    for name, want in state.items():
        if not np.allclose(params[name], want, rtol=1e-6, atol=1e-7):
            problems.append(f"{name} {params[name]} != {want}")
    got = (float(params["loss_scale"]),
           float(params["loss_scale.growth_tracker"]),
           int(params["loss_scale.skipped_steps"]))
    if got != (float(scale), float(tracker), skipped):
        problems.append(f"scale, tracker, skipped {got} != "
                        f"{(float(scale), float(tracker), skipped)}")
    # The cases are built to skip (or, without overflow, to grow).
    if skipped == 0 and case["init"] > 2.0**100:
        problems.append("the oracle skipped no step: the case tests nothing")
    status = "FAIL" if problems else "ok"
    print(f"{status}: {case['name']}: {case['steps']} steps, "
          f"{skipped} skipped, final scale {float(scale):g}")
    for problem in problems:
        print("   ", problem)
    failures += bool(problems)

print(f"{len(CASES) - failures} of {len(CASES)} cases match")
sys.exit(1 if failures else 0)
