# Every learning-rate schedule of --fluid-append-optimizer against
# torch.optim.lr_scheduler over 100 steps: the rate each training step
# reports (its second result) must equal the rate PyTorch's optimizer uses
# at that step, to 1e-6 relative.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import subprocess
import sys

import warnings

import torch

# SequentialLR steps its schedulers with an epoch argument, which warns.
warnings.filterwarnings("ignore", category=UserWarning)

work = sys.argv[1]
STEPS = 100
PROGRAM = """
fluid.param @w : tensor<4xf32> init ones
func.func @loss() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
"""
program = os.path.join(work, "tiny.mlir")
open(program, "w").write(PROGRAM)


def fluid_rates(options):
    train = os.path.join(work, "train.mlir")
    subprocess.run(["fluid-opt", program, f"--fluid-build-training={options}",
                    "-o", train], check=True)
    out = subprocess.run(["fluid-run", train, "--repeat", str(STEPS),
                          "--print-values", "1"], check=True,
                         capture_output=True, text=True).stdout
    return [float(m.group(1)) for m in
            re.finditer(r"output #1: \[\] f64  values: (\S+)", out)]


def torch_rates(make_scheduler, lr):
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=lr)
    scheduler = make_scheduler(opt)
    rates = []
    for _ in range(STEPS):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        scheduler.step()
    return rates


S = torch.optim.lr_scheduler
cases = [
    ("constant", "lr=0.1", 0.1, lambda o: S.LambdaLR(o, lambda t: 1.0)),
    ("step", "lr=0.1 schedule=step step-size=30 gamma=0.1", 0.1,
     lambda o: S.StepLR(o, step_size=30, gamma=0.1)),
    ("multistep", "lr=0.4 schedule=multistep milestones=10,35,80 gamma=0.5",
     0.4, lambda o: S.MultiStepLR(o, milestones=[10, 35, 80], gamma=0.5)),
    ("exponential", "lr=0.2 schedule=exponential gamma=0.97", 0.2,
     lambda o: S.ExponentialLR(o, gamma=0.97)),
    ("cosine", "lr=0.1 schedule=cosine total-steps=100 eta-min=0.001", 0.1,
     lambda o: S.CosineAnnealingLR(o, T_max=100, eta_min=0.001)),
    ("cosine, periodic past T", "lr=0.1 schedule=cosine total-steps=40", 0.1,
     lambda o: S.CosineAnnealingLR(o, T_max=40)),
    ("warm-up + cosine",
     "lr=0.1 schedule=cosine total-steps=90 warmup-steps=10 "
     "warmup-start-factor=0.1", 0.1,
     lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.1,
                                             total_iters=10),
                                  S.CosineAnnealingLR(o, T_max=90)],
                              milestones=[10])),
    ("warm-up + step",
     "lr=0.1 schedule=step step-size=25 gamma=0.5 warmup-steps=5 "
     "warmup-start-factor=0.25", 0.1,
     lambda o: S.SequentialLR(o, [S.LinearLR(o, start_factor=0.25,
                                             total_iters=5),
                                  S.StepLR(o, step_size=25, gamma=0.5)],
                              milestones=[5])),
    ("warm-up + constant", "lr=0.05 warmup-steps=20 warmup-start-factor=0.5",
     0.05, lambda o: S.LinearLR(o, start_factor=0.5, total_iters=20)),
]

failures = 0
for name, options, lr, make in cases:
    ours = fluid_rates("optimizer=sgd " + options)
    theirs = torch_rates(make, lr)
    bad = [(t, a, b) for t, (a, b) in enumerate(zip(ours, theirs))
           if abs(a - b) > 1e-6 * abs(b) + 1e-12]
    if len(ours) != STEPS or bad:
        failures += 1
        print(f"FAIL {name}: {len(ours)} rates; first differences "
              f"(step, fluid, torch): {bad[:3]}")
    else:
        print(f"PASS {name}: {STEPS} steps")
sys.exit(1 if failures else 0)
