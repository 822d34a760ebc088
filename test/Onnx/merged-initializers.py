# A freshly initialized model through ONNX trains like PyTorch although
# torch.onnx merged its batch-norm tensors: every weight of one width (all
# ones) is one initializer, and so is every bias and running mean (all
# zeros), read through Identity nodes whose outputs carry the state-dict
# names (bn2.weight = Identity(bn1.weight), bn1.running_var =
# Identity(bn1.weight), ...). Each of those is a parameter of its own, with
# its own copy of the value:
# - the parameter file and the module's fluid.params are named exactly as
#   the state dict, and hold its values;
# - two steps of SGD with momentum (fluid-opt --fluid-build-training, run by
#   fluid-run on the cpu backend) give PyTorch's losses to 1e-5 (relative),
#   and afterwards every weight, running statistic and momentum buffer is
#   PyTorch's to 1e-4 relative (+ 1e-6 absolute), under the same names.
# Before, the merged tensors were one parameter: later layers read an
# earlier one's updated running variance as their weight.
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
    """Three convolutions of width 8, each with a batch norm, a residual
    add, global pooling and a linear head."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(8)
        self.conv3 = torch.nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn3 = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(x)))
        x = F.relu(self.bn3(self.conv3(y)) + x)
        return self.fc(torch.flatten(self.pool(x), 1))


torch.manual_seed(0)
net = Net().eval()
state = {k: v.detach().clone() for k, v in net.state_dict().items()
         if not k.endswith("num_batches_tracked")}
images = torch.randn(4, 3, 8, 8)
labels = torch.tensor([0, 3, 1, 4])
np.save(path("images.npy"), images.numpy())
np.save(path("labels.npy"), labels.numpy())
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    torch.onnx.export(net, images, path("net.onnx"), opset_version=13,
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False, input_names=["images"],
                      output_names=["logits"])

problems = []

# The test is only worth something if the exporter merged the tensors.
graph = onnx.load(path("net.onnx")).graph
identities = [n for n in graph.node if n.op_type == "Identity"]
if len(graph.initializer) >= len(state) or len(identities) < 6:
    sys.exit(f"FAIL: the export has {len(graph.initializer)} initializers "
             f"and {len(identities)} Identity nodes for {len(state)} "
             "tensors: torch.onnx did not merge them, so nothing is tested")



run("fluid-import-onnx", path("net.onnx"), "--loss", "softmax_cross_entropy",
    "-o", path("net.mlir"))
params = safetensors_io.load(path("net.safetensors"))
if sorted(params) != sorted(state):
    problems.append(f"parameter file: {sorted(set(params) ^ set(state))} "
                    "differ from the state dict")
declared = re.findall(r"fluid\.param @([\w.]+)",
                      open(path("net.mlir")).read())
if sorted(declared) != sorted(state):
    problems.append(f"fluid.params {sorted(set(declared) ^ set(state))} "
                    "differ from the state dict")
for name, value in state.items():
    if name in params and not np.array_equal(params[name], value.numpy()):
        problems.append(f"parameter {name} differs from the state dict")

losses, torch_losses, compared = onnx_training.train_like_torch(
    net, path, {"images": (path("images.npy"), images)}, labels, STEPS,
    LR, MOMENTUM, problems)

if problems:
    print("FAIL merged initializers: " + "; ".join(problems[:8]))
    sys.exit(1)
print(f"PASS merged initializers: {len(graph.initializer)} initializers and "
      f"{len(identities)} Identity nodes became {len(params)} parameters "
      f"named as the state dict; losses "
      + ", ".join(f"{a:.6f} vs {b:.6f}" for a, b in zip(losses, torch_losses))
      + f"; {compared} tensors after {STEPS} steps as PyTorch's")
