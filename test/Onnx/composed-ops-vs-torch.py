# The operators that fluid-import-onnx composes of fluid ops, in what
# torch.onnx exports for a small model (opsets 13 and 17, as in
# torchvision-cnns.py): F.pad of zeros before a convolution (its padding;
# the pads are computed in the graph with ConstantOfShape, Slice of step -1,
# Transpose and Cast, all folded), F.pad of 0.5 before a max pool
# (concatenations), nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True)
# (a Pad that ceil_mode keeps apart from the pool), ReLU6 and
# hardtanh(0.25, 2) (Clip), and sum, mean and amax over the image (ReduceSum,
# ReduceMean, ReduceMax). (HardSigmoid and HardSwish are mobilenet_v3's.)
# A second model has the transformer's operators, each in a form that the
# torchvision models (torchvision-transformers.py) do not export: a layer
# scale (Mul by a [C, 1, 1] parameter), a token's expand(n, -1, -1)
# (Equal, Where, Expand) and Concat, nn.LayerNorm over the last dimension
# and over the last two (ReduceMean, Sub, Pow, Sqrt, Div at opset 13;
# LayerNormalization at 17), GELU (Erf), 4-D MatMul with broadcasting batch
# dimensions ([B, 1, S, D] x [B, H, D, S]) and by a matrix, Softmax,
# sqrt(x * x + 1) + x ** 3 (Pow by 2 and by 3), torch.where with a
# constant BOOL mask, and x[:, 0] (Gather).
# A third model pads with its own elements: F.pad in modes 'reflect' and
# 'replicate' (Pad modes 'reflect' and 'edge': concatenations of slices)
# on images, before and after a convolution, and on a sequence; and has
# two einsums (Einsum: transposes and reshapes around one batched
# fluid.matmul), maxvit's "bhid,bhjd->bhij" form and one whose batch,
# free and contracted subscripts are interleaved.
# @forward in float32 against the model to 1e-5 of the largest |output|,
# and one step of SGD with momentum in float64 (the gradients of the
# compositions) to 1e-8 relative + 1e-8 absolute, as torchvision-cnns.py
# says why.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import copy
import os
import re
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import onnx_training  # noqa: E402
from onnx_training import run  # noqa: E402

work = sys.argv[1]


class Blocks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 4, stride=4)
        self.scale = torch.nn.Parameter(torch.rand(8, 1, 1) + 0.5)
        self.token = torch.nn.Parameter(torch.randn(1, 1, 8))
        self.ln = torch.nn.LayerNorm(8)
        self.ln2 = torch.nn.LayerNorm([17, 8], eps=1e-3)
        self.proj = torch.nn.Parameter(torch.randn(4, 4) / 2)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = self.conv(x) * self.scale
        t = x.flatten(2).transpose(1, 2)
        t = torch.cat([self.token.expand(t.shape[0], -1, -1), t], dim=1)
        t = F.gelu(self.ln(t))
        h = t.reshape(t.shape[0], 17, 2, 4).permute(0, 2, 1, 3)
        a = torch.softmax(h[:, :1] @ h.transpose(-1, -2) / 2, dim=-1)
        h = (a @ h) @ self.proj
        t = h.permute(0, 2, 1, 3).reshape(t.shape[0], 17, 8)
        t = torch.sqrt(t * t + 1) + t ** 3
        first = torch.arange(17).unsqueeze(1) == 0
        t = self.ln2(torch.where(first, t, 0.5 * t))
        return self.fc(t[:, 0])


class Edges(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.mix = torch.nn.Parameter(torch.randn(2, 3, 2) / 2)
        self.fc = torch.nn.Linear(4 * 24 + 16 + 24, 5)

    def forward(self, x):
        x = self.conv(F.pad(x, (2, 1, 3, 1), mode="reflect"))
        x = F.pad(torch.tanh(x), (1, 2, 0, 3), mode="replicate")
        t = F.pad(x.mean(dim=2), (3, 0), mode="reflect")
        t = F.pad(t, (0, 1), mode="replicate")
        gram = torch.einsum("bhid,bhjd->bhij", t.unsqueeze(1), t.unsqueeze(1))
        mixed = torch.einsum("nclk,kcm->nlm", t.reshape(-1, 4, 12, 2)[:, :3],
                             self.mix)
        return self.fc(torch.cat([t.flatten(1), gram.flatten(1),
                                  mixed.flatten(1)], dim=1))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3)
        self.bn = torch.nn.BatchNorm2d(6)
        self.avg = torch.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.fc = torch.nn.Linear(18, 5)

    def forward(self, x):
        x = self.bn(self.conv(F.pad(x, (1, 2, 0, 1))))
        x = F.max_pool2d(F.pad(F.relu6(x), (1, 0, 1, 0), value=0.5), 2)
        x = F.hardtanh(self.avg(x), 0.25, 2.0)
        features = torch.cat([x.sum(dim=(2, 3)), x.mean(dim=(2, 3)),
                              x.amax(dim=(2, 3))], dim=1)
        return self.fc(features)


torch.manual_seed(0)
net = Net()
with torch.no_grad():
    net.bn.weight.uniform_(0.5, 1.5)
    net.bn.bias.uniform_(-0.5, 0.5)
    net.bn.running_mean.uniform_(-0.2, 0.2)
    net.bn.running_var.uniform_(0.5, 2)
net.eval()
blocks = Blocks()
with torch.no_grad():
    for ln in (blocks.ln, blocks.ln2):
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-0.5, 0.5)
blocks.eval()
images = torch.randn(2, 3, 16, 16) * 3
labels = torch.tensor([1, 4])
torch.manual_seed(1)
edges = Edges().eval()

problems = []
for opset, net in ((13, net), (17, net), (13, blocks), (17, blocks),
                   (13, edges), (17, edges)):
    which = {id(blocks): "blocks ", id(edges): "edges "}.get(id(net), "")
    folder = os.path.join(work, f"{which.strip()}{opset}")
    os.makedirs(folder, exist_ok=True)
    path = lambda file: os.path.join(folder, file)  # noqa: E731
    np.save(path("labels.npy"), labels.numpy())
    for model, x, name in ((net, images, "forward"),
                           (copy.deepcopy(net).double(), images.double(),
                            "net")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, x, path(name + ".onnx"),
                              opset_version=opset,
                              training=torch.onnx.TrainingMode.PRESERVE,
                              do_constant_folding=False,
                              input_names=["images"],
                              dynamic_axes={"images": {0: "batch"}})

    np.save(path("images.npy"), images.numpy())
    run("fluid-import-onnx", path("forward.onnx"), "--batch", "2", "-o",
        path("forward.mlir"))
    program = open(path("forward.mlir")).read()
    if net is blocks and not all(f"fluid.{op} " in program for op in
                                 ("erf", "broadcast_to", "select", "pow")):
        problems.append(f"{which}opset {opset}: no fluid.erf, broadcast_to, "
                        "select or pow")
    if which == "edges " and (program.count("fluid.concat") < 6 or
                              program.count("fluid.matmul") != 2):
        problems.append(f"{which}opset {opset}: the pads are not "
                        "concatenations or the einsums not two products")
    if which == "" and not re.search(
            r"fluid\.conv2d %arg0, .* \{padding = array<i64: 0, 1, 1, 2>\}",
            program):
        problems.append(f"opset {opset}: the zeros before the convolution "
                        "are not its padding")
    run("fluid-run", path("forward.mlir"), "--params",
        path("forward.safetensors"), "--input", "images=" + path("images.npy"),
        "--save-outputs", path("forward"))
    with torch.no_grad():
        expected = net(images).numpy()
    ours = np.load(path("forward/output0.npy"))
    error = np.abs(ours - expected).max() / np.abs(expected).max()
    if ours.shape != expected.shape or error > 1e-5:
        problems.append(f"{which}opset {opset}: output {ours.shape}, error "
                        f"{error:.3g} of the largest")

    np.save(path("images.npy"), images.double().numpy())
    run("fluid-import-onnx", path("net.onnx"), "--batch", "2", "--loss",
        "softmax_cross_entropy", "-o", path("net.mlir"))
    found = []
    losses, torch_losses, compared = onnx_training.train_like_torch(
        copy.deepcopy(net).double(), path,
        {"images": (path("images.npy"), images.double())}, labels, 1, 0.1,
        0.9, found, rtol=1e-8, atol=1e-8)
    problems += [f"{which}opset {opset}: {p}" for p in found]
    print(f"{which}opset {opset}: output error {error:.2g} of the largest; "
          f"loss {losses} vs {torch_losses}; {compared} tensors after the "
          "step")

if problems:
    print("FAIL composed operators: " + "; ".join(problems[:8]))
    sys.exit(1)
print("PASS composed operators")
