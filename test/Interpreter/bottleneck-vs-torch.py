# fluid-run against PyTorch: the hand-written ResNet-50 bottleneck block
# (examples/resnet-bottleneck.mlir) with torchvision's layer1[0] weights, in
# training mode, in float64 and float32. The block's output and the updated
# batch-norm running statistics must equal PyTorch's.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %fluid_src_root/examples/resnet-bottleneck.mlir %t

import os
import re
import subprocess
import sys

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import safetensors_io  # noqa: E402

example, work = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
failures = 0

for dtype, np_dtype, mlir_type, rtol, atol in [
        (torch.float64, np.float64, "f64", 1e-10, 1e-10),
        (torch.float32, np.float32, "f32", 1e-4, 1e-5)]:
    block = torchvision.models.resnet50().layer1[0].to(dtype)
    # Non-trivial batch-norm affine parameters and running statistics.
    with torch.no_grad():
        for module in block.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
                module.running_mean.uniform_(-1, 1)
                module.running_var.uniform_(0.5, 2)
    program = open(example).read().replace("xf32>", f"x{mlir_type}>")
    program_path = os.path.join(work, f"bottleneck-{mlir_type}.mlir")
    open(program_path, "w").write(program)

    state = {k: v.numpy() for k, v in block.state_dict().items()
             if not k.endswith("num_batches_tracked")}
    params = os.path.join(work, f"params-{mlir_type}.safetensors")
    safetensors_io.save(params, {"layer1.0." + k: v for k, v in state.items()})
    x = torch.randn(2, 64, 56, 56, dtype=dtype)
    np.save(os.path.join(work, f"x-{mlir_type}.npy"), x.numpy())

    out_dir = os.path.join(work, f"out-{mlir_type}")
    updated = os.path.join(work, f"updated-{mlir_type}.safetensors")
    result = subprocess.run(
        ["fluid-run", program_path, "--params", params,
         "--input", f"0={os.path.join(work, f'x-{mlir_type}.npy')}",
         "--save-outputs", out_dir, "--save-params", updated],
        capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stderr)
        print(f"FAIL {mlir_type}: fluid-run exited {result.returncode}")
        failures += 1
        continue

    block.train()
    with torch.no_grad():
        expected = block(x).numpy()
    got = np.load(os.path.join(out_dir, "output0.npy"))
    if np.allclose(got, expected, rtol=rtol, atol=atol):
        print(f"PASS {mlir_type} block output, max |diff| "
              f"{np.abs(got - expected).max():.3g}")
    else:
        print(f"FAIL {mlir_type} block output, max |diff| "
              f"{np.abs(got - expected).max():.3g}")
        failures += 1

    new_state = safetensors_io.load(updated)
    for name, value in block.state_dict().items():
        if not re.search(r"running_(mean|var)$", name):
            continue
        ours = new_state["layer1.0." + name]
        if not np.allclose(ours, value.numpy(), rtol=rtol, atol=atol):
            print(f"FAIL {mlir_type} {name} after the step")
            failures += 1
    print(f"PASS {mlir_type} running statistics checked")

sys.exit(1 if failures else 0)
