# What the node tests do not cover, on a small PyTorch model exported at
# opset 11 (eval mode, TrainingMode.PRESERVE, no constant folding): 1-D
# convolution, batch norm and pooling (imported as 2-D over height 1), a
# matmul broadcasting a parameter over a batch, and the Shape -> Gather ->
# Unsqueeze -> Concat -> Reshape chain that x.view(x.size(0), -1) exports
# to (folded into one reshape). @forward against the model in eval mode,
# and @loss's loss and gradients against train mode; tolerances as in
# resnet18-roundtrip.py: logits 1e-4 of the largest, loss 1e-5 relative,
# gradients 1e-3 of each tensor's largest element.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import subprocess
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F

work = sys.argv[1]
path = lambda name: os.path.join(work, name)  # noqa: E731


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(3, 8, 3, padding=2, dilation=2,
                                    bias=False)
        self.bn = torch.nn.BatchNorm1d(8)
        self.pool = torch.nn.MaxPool1d(2)
        self.avg = torch.nn.AvgPool1d(3, stride=1, padding=1,
                                      count_include_pad=False)
        self.proj = torch.nn.Parameter(torch.randn(8, 6) / 3)
        self.fc = torch.nn.Linear(48, 10)

    def forward(self, x):
        y = self.avg(self.pool(F.relu(self.bn(self.conv(x)))))
        y = torch.tanh(y @ self.proj)
        return self.fc(y.view(y.size(0), -1))


torch.manual_seed(0)
net = Net()
with torch.no_grad():
    net.bn.weight.uniform_(0.5, 1.5)
    net.bn.bias.uniform_(-0.5, 0.5)
    net.bn.running_mean.uniform_(-0.2, 0.2)
    net.bn.running_var.uniform_(0.5, 2)
net.eval()
x = torch.randn(4, 3, 16)
labels = torch.tensor([1, 7, 3, 3])
np.save(path("x.npy"), x.numpy())
np.save(path("labels.npy"), labels.numpy())
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.onnx.export(net, x, path("net.onnx"), opset_version=11,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False, input_names=["x"],
                      output_names=["logits"],
                      dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
ops = {n.op_type for n in onnx.load(path("net.onnx")).graph.node}
print("exported operators:", ", ".join(sorted(ops)))


def run(*command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)}\n{result.stderr}")


problems = []
if not {"Shape", "Gather", "Unsqueeze", "Concat"} <= ops:
    problems.append("the export has no Shape -> Gather -> Unsqueeze -> Concat")
run("fluid-import-onnx", path("net.onnx"), "--batch", "4",
    "-o", path("forward.mlir"))
forward = open(path("forward.mlir")).read()
if "fluid.slice" in forward or "fluid.concat" in forward:
    problems.append("the view's shape computation was not folded")
run("fluid-run", path("forward.mlir"), "--params", path("forward.safetensors"),
    "--input", "x=" + path("x.npy"), "--save-outputs", path("forward"))
with torch.no_grad():
    expected = net(x).numpy()
logits = np.load(path("forward/output0.npy"))
logits_error = np.abs(logits - expected).max() / np.abs(expected).max()
if logits_error > 1e-4:
    problems.append(f"logits: error {logits_error:.3g} of the largest")

run("fluid-import-onnx", path("net.onnx"), "--batch", "4",
    "--loss", "softmax_cross_entropy", "-o", path("train.mlir"))
run("fluid-opt", path("train.mlir"), "--fluid-append-backward",
    "-o", path("step.mlir"))
run("fluid-run", path("step.mlir"), "--params", path("train.safetensors"),
    "--input", "x=" + path("x.npy"), "--input", "labels=" + path("labels.npy"),
    "--save-outputs", path("step"))
signature = re.search(r"func\.func @loss\(.*", open(path("step.mlir")).read())
names = re.findall(r'fluid\.grad_of = @("[^"]*"|[\w.$]+)', signature.group(0))
net.train()
loss = F.cross_entropy(net(x), labels)
loss.backward()
grads = {n: p.grad.numpy() for n, p in net.named_parameters()}
ours = np.load(path("step/output0.npy")).item()
if abs(ours - loss.item()) > 1e-5 * abs(loss.item()):
    problems.append(f"loss {ours} vs {loss.item()}")
if sorted(n.strip('"') for n in names) != sorted(grads):
    problems.append(f"gradients of {names}, expected {sorted(grads)}")
for i, name in enumerate(names):
    grad = grads[name.strip('"')]
    error = np.abs(np.load(path(f"step/output{i + 1}.npy")) - grad).max()
    if error > 1e-3 * np.abs(grad).max():
        problems.append(f"gradient of {name}: error {error:.3g}")

if problems:
    print("FAIL: " + "; ".join(problems))
    sys.exit(1)
print(f"PASS: logits error {logits_error:.2g} of the largest; loss {ours:.6f}"
      f" vs {loss.item():.6f}; {len(names)} gradients")
