# Tied weights through ONNX: one nn.Linear applied twice (two Gemm nodes
# read the initializer fc.weight) and one matrix multiplied by twice (two
# MatMul nodes read `tied`). Each initializer that several nodes read
# directly, without Identity, is one parameter:
# - the parameter file and the module's fluid.params are named exactly as
#   the state dict;
# - --fluid-append-backward returns one gradient per parameter, the sum
#   over its uses: PyTorch's to 1e-5 of its tensor's largest |element|;
# - two steps of SGD with momentum (fluid-opt --fluid-build-training, run by
#   fluid-run on the cpu backend) update each parameter once per step:
#   losses PyTorch's to 1e-5 (relative), every parameter and momentum buffer
#   afterwards to 1e-4 relative (+ 1e-6 absolute).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import onnx_training  # noqa: E402
from onnx_training import run  # noqa: E402
import safetensors_io  # noqa: E402

work = sys.argv[1]
path = lambda name: os.path.join(work, name)  # noqa: E731
STEPS, LR, MOMENTUM = 2, 0.1, 0.9


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(6, 6)
        self.tied = torch.nn.Parameter(torch.randn(6, 6) / 3)
        self.head = torch.nn.Linear(6, 4)

    def forward(self, x):
        x = torch.tanh(self.fc(torch.tanh(self.fc(x))))
        x = torch.tanh(torch.matmul(torch.matmul(x, self.tied), self.tied))
        return self.head(x)


torch.manual_seed(0)
net = Net()
state = {k: v.detach().clone() for k, v in net.state_dict().items()}
x = torch.randn(3, 6)
labels = torch.tensor([1, 3, 0])
np.save(path("x.npy"), x.numpy())
np.save(path("labels.npy"), labels.numpy())
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.onnx.export(net, x, path("net.onnx"), opset_version=13,
                      do_constant_folding=False, input_names=["x"],
                      output_names=["logits"])

# The test is only worth something if the weights are read twice.
graph = onnx.load(path("net.onnx")).graph
reads = {name: sum(name in n.input for n in graph.node)
         for name in ("fc.weight", "tied")}
if any(count != 2 for count in reads.values()) or any(
        n.op_type == "Identity" for n in graph.node):
    sys.exit(f"FAIL: the export reads the weights {reads} times (or through "
             "Identity nodes), not twice each: nothing is tested")

problems = []



run("fluid-import-onnx", path("net.onnx"), "--loss", "softmax_cross_entropy",
    "-o", path("net.mlir"))
params = safetensors_io.load(path("net.safetensors"))
declared = re.findall(r"fluid\.param @([\w.]+)",
                      open(path("net.mlir")).read())
for what, names in (("parameter file", sorted(params)),
                    ("fluid.params", sorted(declared))):
    if names != sorted(state):
        problems.append(f"{what}: {names} differ from the state dict "
                        f"{sorted(state)}")

# Gradients: one per parameter, summed over its uses.
run("fluid-opt", path("net.mlir"), "--fluid-append-backward",
    "-o", path("backward.mlir"))
run("fluid-run", path("backward.mlir"), "--params", path("net.safetensors"),
    "--input", "x=" + path("x.npy"), "--input", "labels=" + path("labels.npy"),
    "--save-outputs", path("backward"))
signature = re.search(r"func\.func @loss\(.*",
                      open(path("backward.mlir")).read()).group(0)
grad_names = re.findall(r"fluid\.grad_of = @([\w.]+)", signature)
loss = F.cross_entropy(net(x), labels)
loss.backward()
grads = {n: p.grad.clone() for n, p in net.named_parameters()}
if sorted(grad_names) != sorted(grads):
    problems.append(f"gradients of {grad_names}, PyTorch's of "
                    f"{sorted(grads)}")
for i, name in enumerate(grad_names):
    ours = np.load(path(f"backward/output{i + 1}.npy"))
    grad = grads[name].numpy()
    error = np.abs(ours - grad).max() / np.abs(grad).max()
    if error > 1e-5:
        problems.append(f"gradient of {name}: error {error:.3g} of its max")

# Training: each parameter updated once per step.
net.load_state_dict(state)
losses, torch_losses, compared = onnx_training.train_like_torch(
    net, path, {"x": (path("x.npy"), x)}, labels, STEPS, LR, MOMENTUM,
    problems)

if problems:
    print("FAIL tied weights: " + "; ".join(problems[:8]))
    sys.exit(1)
print(f"PASS tied weights: {len(params)} parameters named as the state "
      f"dict, {len(grad_names)} gradients summed over their uses; losses "
      + ", ".join(f"{a:.6f} vs {b:.6f}" for a, b in zip(losses, torch_losses))
      + f"; {compared} tensors after {STEPS} steps as PyTorch's")
