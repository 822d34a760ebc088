# Whole training steps against PyTorch: a small CNN (conv with bias, batch
# norm, relu, max pool, a residual add, global pooling, linear) built into
# a training step by --fluid-build-training, run for 5 steps on the cpu
# backend from PyTorch's initial weights, for every optimizer. Per-parameter
# lr_mult / decay_mult are PyTorch parameter groups. After each run the
# loss and every parameter, optimizer state and running statistic must equal
# PyTorch's: float64 to 1e-9 relative, float32 to 1e-4.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import safetensors_io  # noqa: E402

work = sys.argv[1]
N, C, H, W, CLASSES, STEPS = 4, 3, 8, 8, 5, 5

PROGRAM = """
fluid.param @conv.weight : tensor<4x3x3x3xT> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @conv.bias : tensor<4xT> init zeros {lr_mult = 2.0 : f64, decay_mult = 0.0 : f64}
fluid.param @bn.weight : tensor<4xT> init ones {decay_mult = 0.0 : f64}
fluid.param @bn.bias : tensor<4xT> init zeros {decay_mult = 0.0 : f64}
fluid.param @bn.running_mean : tensor<4xT> init zeros {trainable = false}
fluid.param @bn.running_var : tensor<4xT> init ones {trainable = false}
fluid.param @fc.weight : tensor<5x4xT> init kaiming_uniform(fan_in, gain = 0.57735026918962584) {lr_mult = 0.5 : f64}
fluid.param @fc.bias : tensor<5xT> init zeros

func.func @loss(%x: tensor<4x3x8x8xT>, %labels: tensor<4xi64>) -> tensor<T> attributes {fluid.entry} {
  %w = fluid.get_param @conv.weight : tensor<4x3x3x3xT>
  %b = fluid.get_param @conv.bias : tensor<4xT>
  %c = fluid.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<4x3x8x8xT>, tensor<4x3x3x3xT>, tensor<4xT>) -> tensor<4x4x8x8xT>
  %g = fluid.get_param @bn.weight : tensor<4xT>
  %be = fluid.get_param @bn.bias : tensor<4xT>
  %rm = fluid.get_param @bn.running_mean : tensor<4xT>
  %rv = fluid.get_param @bn.running_var : tensor<4xT>
  %y, %mean, %inv, %nm, %nv = fluid.batch_norm %c, %g, %be, %rm, %rv : tensor<4x4x8x8xT>, tensor<4xT>
  fluid.set_param @bn.running_mean, %nm : tensor<4xT>
  fluid.set_param @bn.running_var, %nv : tensor<4xT>
  %r = fluid.relu %y : tensor<4x4x8x8xT>
  %sum = fluid.add %r, %c : tensor<4x4x8x8xT>, tensor<4x4x8x8xT> -> tensor<4x4x8x8xT>
  %p = fluid.max_pool2d %sum {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<4x4x8x8xT> -> tensor<4x4x4x4xT>
  %gp = fluid.global_avg_pool %p : tensor<4x4x4x4xT> -> tensor<4x4x1x1xT>
  %f = fluid.flatten %gp : tensor<4x4x1x1xT> -> tensor<4x4xT>
  %fw = fluid.get_param @fc.weight : tensor<5x4xT>
  %fb = fluid.get_param @fc.bias : tensor<5xT>
  %logits = fluid.linear %f, %fw, %fb : tensor<4x4xT>, tensor<5x4xT>, tensor<5xT> -> tensor<4x5xT>
  %loss = fluid.softmax_cross_entropy %logits, %labels : tensor<4x5xT>, tensor<4xi64> -> tensor<T>
  return %loss : tensor<T>
}
"""

LR_MULT = {"conv.bias": 2.0, "fc.weight": 0.5}
DECAY_MULT = {"conv.bias": 0.0, "bn.weight": 0.0, "bn.bias": 0.0}


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4, 5)

    def forward(self, x, labels):
        c = self.conv(x)
        s = F.relu(self.bn(c)) + c
        p = F.max_pool2d(s, 2, 2)
        f = F.adaptive_avg_pool2d(p, 1).flatten(1)
        return F.cross_entropy(self.fc(f), labels)


OPTIMIZERS = [
    ("sgd", "optimizer=sgd lr=0.1 weight-decay=0.01",
     lambda groups: torch.optim.SGD(groups, lr=0.1), {}),
    ("momentum", "optimizer=momentum lr=0.05 momentum=0.9 weight-decay=0.001",
     lambda groups: torch.optim.SGD(groups, lr=0.05, momentum=0.9),
     {"momentum_buffer": "momentum_buffer"}),
    ("nesterov", "optimizer=momentum lr=0.05 momentum=0.8 nesterov=true "
     "weight-decay=0.001",
     lambda groups: torch.optim.SGD(groups, lr=0.05, momentum=0.8,
                                    nesterov=True),
     {"momentum_buffer": "momentum_buffer"}),
    ("adam", "optimizer=adam lr=0.01 beta1=0.8 beta2=0.99 epsilon=1e-6 "
     "weight-decay=0.01",
     lambda groups: torch.optim.Adam(groups, lr=0.01, betas=(0.8, 0.99),
                                     eps=1e-6),
     {"exp_avg": "exp_avg", "exp_avg_sq": "exp_avg_sq"}),
    ("adamw", "optimizer=adamw lr=0.01 weight-decay=0.05",
     lambda groups: torch.optim.AdamW(groups, lr=0.01),
     {"exp_avg": "exp_avg", "exp_avg_sq": "exp_avg_sq"}),
]

WEIGHT_DECAY = {"sgd": 0.01, "momentum": 0.001, "nesterov": 0.001,
                "adam": 0.01, "adamw": 0.05}


def run(dtype, mlir_type, rtol, name, options, make_optimizer, states):
    torch.manual_seed(0)
    net = Net().to(dtype)
    x = torch.randn(N, C, H, W, dtype=dtype)
    labels = torch.randint(0, CLASSES, (N,))
    prefix = os.path.join(work, f"{name}-{mlir_type}")
    program = prefix + ".mlir"
    open(program, "w").write(PROGRAM.replace("xT>", f"x{mlir_type}>")
                             .replace("tensor<T>", f"tensor<{mlir_type}>"))
    safetensors_io.save(prefix + "-init.safetensors",
                        {k: v.numpy() for k, v in net.state_dict().items()
                         if not k.endswith("num_batches_tracked")})
    np.save(prefix + "-x.npy", x.numpy())
    np.save(prefix + "-labels.npy", labels.numpy())
    subprocess.run(["fluid-opt", program, f"--fluid-build-training={options}",
                    "-o", prefix + "-train.mlir"], check=True)
    out = subprocess.run(
        ["fluid-run", prefix + "-train.mlir", "--repeat", str(STEPS),
         "--params", prefix + "-init.safetensors",
         "--input", f"arg0={prefix}-x.npy",
         "--input", f"arg1={prefix}-labels.npy",
         "--save-params", prefix + "-after.safetensors", "--print-values", "1"],
        check=True, capture_output=True, text=True).stdout
    our_losses = [float(m.group(1)) for m in
                  re.finditer(r"output #0: \[\] \w+  values: (\S+)", out)]

    decay = WEIGHT_DECAY[name]
    groups = [{"params": [p], "name": n,
               "lr": make_optimizer([torch.zeros(1, requires_grad=True)])
               .defaults["lr"] * LR_MULT.get(n, 1.0),
               "weight_decay": decay * DECAY_MULT.get(n, 1.0)}
              for n, p in net.named_parameters()]
    optimizer = make_optimizer(groups)
    net.train()
    torch_losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = net(x, labels)
        torch_losses.append(loss.item())
        loss.backward()
        optimizer.step()

    ours = safetensors_io.load(prefix + "-after.safetensors")
    failures = []
    for a, b in zip(our_losses, torch_losses):
        if not np.isclose(a, b, rtol=max(rtol, 1e-7), atol=0):
            failures.append(f"loss {a} vs {b}")
    expected = {k: v.numpy() for k, v in net.state_dict().items()
                if not k.endswith("num_batches_tracked")}
    for pname, p in net.named_parameters():
        for ours_suffix, torch_key in states.items():
            expected[f"{pname}.{ours_suffix}"] = \
                optimizer.state[p][torch_key].numpy()
    for key, value in expected.items():
        if key not in ours:
            failures.append(f"{key} missing")
        elif not np.allclose(ours[key], value, rtol=rtol, atol=rtol * 1e-2):
            failures.append(f"{key}: max |diff| "
                            f"{np.abs(ours[key] - value).max():.3g}")
    if int(ours["global_step"]) != STEPS:
        failures.append(f"global_step {ours['global_step']}")
    label = f"{name} {mlir_type}"
    if failures or len(our_losses) != STEPS:
        print(f"FAIL {label}: " + "; ".join(failures[:6]))
        return False
    print(f"PASS {label}: {STEPS} steps, {len(expected)} tensors, losses "
          f"{our_losses[0]:.6f} -> {our_losses[-1]:.6f}")
    return True


ok = True
for name, options, make_optimizer, states in OPTIMIZERS:
    ok &= run(torch.float64, "f64", 1e-9, name, options, make_optimizer, states)
    ok &= run(torch.float32, "f32", 1e-4, name, options, make_optimizer, states)
sys.exit(0 if ok else 1)
