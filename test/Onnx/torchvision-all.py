# Every classification model of torchvision 0.14
# (torchvision.models.list_models: 80 builders, all of them taking 224 x
# 224 images) through ONNX, against PyTorch. Each model is built with
# seeded random weights (batch-norm and layer-norm weights, biases and
# statistics randomized, zero-initialized heads, class token and layer
# scales made random so that every block and logit counts, dropout and
# stochastic depth off, googlenet and inception_v3 without aux_logits),
# exported at opsets 13 and 17 as the README says (eval mode,
# TrainingMode.PRESERVE, no constant folding, input_names=["images"],
# dynamic batch), imported with --batch 2 and run on the cpu backend on a
# batch of 2 images:
# - float32: @forward against the model in eval mode, the logits to 1e-5
#   of the largest |logit|;
# - float64 (the same model, .double(), exported again): one step of SGD
#   with momentum 0.9 (test/lib/onnx_training.py; batch norm in training
#   form) against one PyTorch step: the loss to 1e-5 relative, every
#   weight, running statistic and momentum buffer to 1e-8 relative + 1e-8
#   absolute unless TOLERANCES says otherwise (the largest difference seen
#   is 3.9e-2 of that, inception_v3's). Integer buffers (maxvit's
#   relative_position_index) are constants of the graph, not compared.
#   A model over 2 GiB in float64 takes its step in float32 instead, in
#   half the memory (torch.onnx writes such models with external data,
#   which the importer reads), and the oracle is still PyTorch's float64
#   step: every tensor of Fluid's float32 step must be as close to it as
#   ORACLE_FACTOR times PyTorch's own float32 step is (plus 1e-6 of the
#   tensor's largest value), the loss within 1e-5. PyTorch's two steps run
#   one after the other, each saved to disk and read back as memory maps,
#   so that the largest (645 M parameters) fit this 23 GB machine.
# Image sizes (SIZES): 64 x 64, the smallest at which the last batch norms
# of a model of stride 32 see 2 x 2 values per image; at 32 x 32 they see
# one, batch norm's gradient over 2 values is nearly 0 but for eps, and the
# gradients of the first layers of mobilenet_v2 reach 1.5e8 and differ
# from PyTorch's by 1e-7 of that (no oracle). inception_v3 107 x 107 (the
# same, 75 x 75 being its smallest), alexnet and vgg 224 x 224
# (torch.onnx exports their AdaptiveAvgPool2d to 6 x 6 and 7 x 7 only from
# a multiple of that), maxvit_t and vit 224 x 224 (their builders fix the
# size).
#
# Modes:
# - CI (lit, no option): one representative of each family, its smallest
#   model, at both opsets; the float64 step of the representatives in
#   FULL_ONLY_TRAINING is left to --all (CI time): the test takes about 4
#   minutes on two cores, export by torch.onnx about half of it.
#   vit_b_16 and convnext_tiny are checked at full size by
#   torchvision-transformers-full.py (and trained in small configurations
#   by torchvision-transformers.py); they are not repeated here.
# - --all: every builder, smallest first by parameter count, each with its
#   float64 step; --smallest N the N smallest; --models a,b,c those.
#   --opsets 13,17 picks opsets; --verbose prints the tensors closest to
#   their tolerance and where the time went; --float32-step takes every
#   step in float32 (to measure FLOAT32_TOLERANCE); --keep keeps each
#   model's files in WORK/MODEL/ (removed after the model otherwise);
#   --float64-oracle takes every step in float32 against PyTorch's float64
#   step as the models over 2 GiB do (to check ORACLE_FACTOR on models
#   whose float64 step Fluid can also take).
#   Peak memory (this process and a tool together) is printed per model:
#   at most 16.1 GB at these sizes and batch 2 (vit_h_14 at 224 x 224,
#   its builder's size, and regnet_y_128gf at 15.1 GB: over 2 GiB in
#   float32, 632 and 645 million parameters; vit_h_14 took 89 minutes
#   for one opset on these two cores). PyTorch's float32
#   step is no oracle for the RegNets at 64 x 64 and batch 2: regnet_y_32gf's
#   differs from Fluid's float32 step by 0.31 of the largest value (the
#   first layers' gradients; 0.32 for regnet_y_128gf), while the float64
#   steps agree to 8.4e-13, and each float32 step is about as far from the
#   float64 one as the other (regnet_y_128gf: Fluid's at most 2.1 times
#   PyTorch's; bench/NOTES.md, sessions 24 and 25).
# Prints a table: model, opset, image size, import, forward error (of the
# largest logit), loss error (relative), param error (the largest
# difference of a tensor after the step relative to its largest value,
# over the tensors whose largest value is over 1e-6: the others are
# gradients that are 0 but for rounding, biases before a batch norm), the
# worst tensor's difference as a fraction of its tolerance, peak GB,
# seconds (PyTorch's share split between the opsets), status.
#
# A model that cannot be imported is listed in EXPECTED_FAILURES with the
# error that says why: the test fails if it then imports, if another model
# fails, or if torchvision has a model of no family listed here.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import onnx_training  # noqa: E402
import safetensors_io  # noqa: E402

OPSETS = (13, 17)
BATCH = 2
LR, MOMENTUM = 0.1, 0.9
# One thread: batches of 2 gain nothing from more, and spinning threads
# cost CPU time where lit runs other tests beside this one.
torch.set_num_threads(1)
# The exporter's and the models' warnings (deprecations, tracing).
warnings.simplefilter("ignore")

# Each family (the builders whose names match the pattern): its
# representative, or where it is checked instead.
FAMILIES = [
    (r"alexnet", "alexnet"),
    (r"convnext_.*", "convnext_tiny: torchvision-transformers(-full).py"),
    (r"densenet\d+", "densenet121"),
    (r"efficientnet_b\d", "efficientnet_b0"),
    (r"efficientnet_v2_.", "efficientnet_v2_s"),
    (r"googlenet", "googlenet"),
    (r"inception_v3", "inception_v3"),
    (r"maxvit_t", "maxvit_t"),
    (r"mnasnet.*", "mnasnet0_5"),
    (r"mobilenet_v2", "mobilenet_v2"),
    (r"mobilenet_v3_.*", "mobilenet_v3_small"),
    (r"regnet_x_.*", "regnet_x_400mf"),
    (r"regnet_y_.*", "regnet_y_400mf"),
    (r"resnet\d+", "resnet18"),
    (r"resnext.*", "resnext50_32x4d"),
    (r"shufflenet_v2_.*", "shufflenet_v2_x0_5"),
    (r"squeezenet1_0", "squeezenet1_0"),
    (r"squeezenet1_1", "squeezenet1_1"),
    (r"swin_[tsb]", "swin_t"),
    (r"swin_v2_.", "swin_v2_t"),
    (r"vgg\d+(_bn)?", "vgg11_bn"),
    (r"vit_.*", "vit_b_16: torchvision-transformers(-full).py"),
    (r"wide_resnet.*", "wide_resnet50_2"),
]

# The image size of each model (the first pattern that matches).
SIZES = [
    (r"alexnet|vgg.*|maxvit_t|vit_.*", 224),
    (r"inception_v3", 107),
    (r".*", 64),
]

# The models that do not come through, and the error that says why.
EXPECTED_FAILURES = {
    # torch.onnx of PyTorch 1.13 cannot export it (Tensor.zero_).
    r"swin_v2_.": "Exporting the operator 'aten::zero' to ONNX opset version",
}

# The training step's tolerance (relative, absolute), 1e-8 + 1e-8 unless
# listed.
TOLERANCES = [
    (r"mobilenet_v3_.*", (1e-6, 1e-6)),
]

# The tolerance of a float32 step against PyTorch's float32 step
# (--float32-step).
FLOAT32_TOLERANCE = (1e-3, 1e-5)
# A float32 step against PyTorch's float64 step (the models over 2 GiB in
# float64, --float64-oracle): Fluid's error may be this many times PyTorch's
# float32 step's, tensor by tensor, plus ORACLE_FLOOR of the tensor's
# largest value.
ORACLE_FACTOR = 4.0
ORACLE_FLOOR = 1e-6

# Representatives whose float64 step is left to --all (CI time); swin_t's
# is also checked by swin.py, at 32 x 32.
FULL_ONLY_TRAINING = {"alexnet", "efficientnet_v2_s", "maxvit_t",
                      "resnext50_32x4d", "swin_t", "vgg11_bn",
                      "wide_resnet50_2"}


def lookup(table, name, default=None):
    for pattern, value in (table.items() if isinstance(table, dict)
                           else table):
        if re.fullmatch(pattern, name):
            return value
    return default


class ToolError(Exception):
    pass


def rss_kib():
    """This process's resident memory."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


peak_kib = [0]  # of the current model: this process and a tool together


def run(*command):
    """Runs a tool, raises ToolError with its stderr if it fails, and
    records its peak memory with this process's."""
    with tempfile.TemporaryFile("w+") as out, \
            tempfile.TemporaryFile("w+") as err:
        mine, start = rss_kib(), time.time()
        process = subprocess.Popen(command, stdout=out, stderr=err,
                                   text=True)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        peak_kib[0] = max(peak_kib[0], mine + usage.ru_maxrss)
        tool = os.path.basename(command[0])
        spent[tool] = spent.get(tool, 0) + time.time() - start
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            raise ToolError(err.read().strip() or
                            f"{command[0]} exited with {process.returncode}")
        return out.read()


# A tool that fails ends that model's check, not the run.
onnx_training.run = run


def make(name):
    torch.manual_seed(0)
    kwargs = {"aux_logits": False, "init_weights": True} \
        if name in ("googlenet", "inception_v3") else {}
    net = getattr(torchvision.models, name)(**kwargs)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2)
            elif isinstance(m, torch.nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
            elif isinstance(m, torch.nn.Linear) and not m.weight.any():
                m.weight.normal_(0, 0.02)
            elif isinstance(m, (torch.nn.Dropout,
                                torchvision.ops.StochasticDepth)):
                m.p = 0.0
            elif isinstance(m, torch.nn.MultiheadAttention):
                m.dropout = 0.0
        for key, p in net.named_parameters():
            if key.endswith("layer_scale"):
                p.uniform_(0.5, 1.5)
            elif key == "class_token":
                p.normal_(0, 0.5)
    return net.eval()


spent = {}  # seconds by what: export, each tool, PyTorch (--verbose)


def export(net, images, file, opset):
    start = time.time()
    onnx_training.export_as_readme(net, images, file, opset)
    spent["export"] = spent.get("export", 0) + time.time() - start


def check(name, opsets, size, train):
    """Checks `name` at each opset; returns {opset: row}, where a row's
    "failure" says what went wrong first (None if nothing did)."""
    rows = {o: {"model": name, "opset": o, "size": size, "imported": False,
                "forward": None, "loss": None, "param": None, "tol": None,
                "failure": None, "seconds": 0.0} for o in opsets}
    folder = os.path.join(work, name)
    paths = {}
    for opset in opsets:
        os.makedirs(os.path.join(folder, str(opset)), exist_ok=True)
        paths[opset] = (lambda o: lambda file: os.path.join(
            folder, str(o), file))(opset)
    shared = [time.time()]  # the PyTorch side, shared by the opsets

    def timed(opset, start):
        rows[opset]["seconds"] += time.time() - start

    net = make(name)
    params = sum(p.numel() for p in net.parameters())
    float32 = args.float32_step or args.float64_oracle or \
        8 * params > 2**31 - 2**26
    oracle = float32 and not args.float32_step
    images = torch.randn(BATCH, 3, size, size,
                         generator=torch.Generator().manual_seed(1))
    labels = (torch.arange(BATCH) * 4 + 3) % 1000
    np.save(os.path.join(folder, "images.npy"), images.numpy())
    expected = None
    for row in rows.values():
        row["params"] = params / 1e6
    shared[0] = time.time() - shared[0]

    # float32 inference.
    for opset in opsets:
        row, path, start = rows[opset], paths[opset], time.time()
        try:
            export(net, images, path("forward.onnx"), opset)
        except Exception as e:  # noqa: BLE001 (the exporter's own errors)
            row["failure"] = f"torch.onnx.export: {str(e).splitlines()[0]}"
            timed(opset, start)
            continue
        try:
            run("fluid-import-onnx", path("forward.onnx"), "--batch",
                str(BATCH), "-o", path("forward.mlir"))
            row["imported"] = True
            if not (train and float32):
                os.remove(path("forward.onnx"))
            run("fluid-run", path("forward.mlir"), "--params",
                path("forward.safetensors"), "--input",
                "images=" + os.path.join(folder, "images.npy"),
                "--save-outputs", path("forward"))
            os.remove(path("forward.safetensors"))
        except ToolError as e:
            row["failure"] = str(e)
            timed(opset, start)
            continue
        timed(opset, start)
        if expected is None:
            start = time.time()
            with torch.no_grad():
                expected = net(images).numpy()
            shared[0] += time.time() - start
        logits = np.load(path("forward/output0.npy"))
        if logits.shape != expected.shape:
            row["failure"] = f"logits {logits.shape}, " \
                             f"expected {expected.shape}"
            continue
        row["forward"] = np.abs(logits - expected).max() / \
            np.abs(expected).max()
        if row["forward"] > 1e-5:
            row["failure"] = f"logits error {row['forward']:.3g} of the " \
                             "largest"

    # One training step of each model that ran, against one of PyTorch's:
    # in float64 unless the model is over 2 GiB in float64 (`float32`).
    trained = [o for o in opsets if rows[o]["forward"] is not None]
    if not train or not trained:
        for opset in opsets:
            rows[opset]["seconds"] += shared[0] / len(opsets)
        return rows
    start = time.time()
    if float32:
        inputs = {"images": (os.path.join(folder, "images.npy"), images)}
    else:
        net = net.double()
        images = images.double()
        inputs = {"images": (os.path.join(folder, "images64.npy"), images)}
        np.save(inputs["images"][0], images.numpy())
    shared[0] += time.time() - start
    losses = {}
    for opset in trained:
        row, path, start = rows[opset], paths[opset], time.time()
        row["step"] = "float32" if float32 else "float64"
        np.save(path("labels.npy"), labels.numpy())
        try:
            if float32:
                os.rename(path("forward.onnx"), path("net.onnx"))
            else:
                export(net, images, path("net.onnx"), opset)
            run("fluid-import-onnx", path("net.onnx"), "--batch",
                str(BATCH), "--loss", "softmax_cross_entropy", "-o",
                path("net.mlir"))
            os.remove(path("net.onnx"))
            losses[opset] = onnx_training.fluid_steps(path, inputs, 1, LR,
                                                      MOMENTUM)
            os.remove(path("net.safetensors"))
        except Exception as e:  # noqa: BLE001 (a tool's or the exporter's)
            row["failure"] = row["failure"] or str(e)
        timed(opset, start)
    if losses and oracle:
        start = time.time()
        # The float64 step from the same weights (exact in float64), saved;
        # then the float32 step of the model made again.
        images = inputs["images"][1]
        torch_losses, after_torch = onnx_training.torch_steps(
            net.double(), {"images": (None, images.double())}, labels, 1, LR,
            MOMENTUM)
        safetensors_io.save(os.path.join(folder, "torch64.safetensors"),
                            floating(after_torch))
        net = after_torch = None
        gc.collect()
        torch32_losses, after32 = onnx_training.torch_steps(
            make(name), inputs, labels, 1, LR, MOMENTUM)
        safetensors_io.save(os.path.join(folder, "torch32.safetensors"),
                            floating(after32))
        after32 = None
        gc.collect()
        after_torch = safetensors_io.load_lazy(
            os.path.join(folder, "torch64.safetensors"))
        after32 = safetensors_io.load_lazy(
            os.path.join(folder, "torch32.safetensors"))
        shared[0] += time.time() - start
    elif losses:
        start = time.time()
        torch_losses, after_torch = onnx_training.torch_steps(
            net, inputs, labels, 1, LR, MOMENTUM)
        after_torch = floating(after_torch)
        shared[0] += time.time() - start
    rtol, atol = FLOAT32_TOLERANCE if float32 else \
        lookup(TOLERANCES, name, (1e-8, 1e-8))
    for opset, fluid_losses in losses.items():
        row, path, start = rows[opset], paths[opset], time.time()
        problems, errors = [], {}
        if oracle:
            row["step"] = "float32 vs float64"
        onnx_training.compare_steps(
            fluid_losses, torch_losses,
            safetensors_io.load_lazy(path("after.safetensors")), after_torch,
            problems, rtol, atol, errors,
            oracle_bound(after32) if oracle else None)
        os.remove(path("after.safetensors"))
        if fluid_losses:
            row["loss"] = abs(fluid_losses[0] - torch_losses[0]) / \
                abs(torch_losses[0])
        if errors:
            worst = max(errors, key=lambda k: errors[k][2])
            row["tol"] = errors[worst][2]
            row["param"] = max([e[0] / e[1] for e in errors.values()
                                if e[1] > 1e-6], default=None)
            row["worst"] = worst
            row["errors"] = errors
        if problems:
            row["failure"] = row["failure"] or "; ".join(problems[:4])
        timed(opset, start)
    for opset in opsets:
        rows[opset]["seconds"] += shared[0] / len(opsets)
    if oracle and losses:
        after_torch = after32 = None
        for file in ("torch64.safetensors", "torch32.safetensors"):
            os.remove(os.path.join(folder, file))
    return rows


def floating(tensors):
    """The floating-point tensors of a state: integer buffers (maxvit's
    relative_position_index) are constants of the graph, not parameters."""
    return {k: v for k, v in tensors.items() if v.dtype.kind == "f"}


def oracle_bound(torch32):
    """compare_steps' bound for a float32 step against PyTorch's float64
    one: ORACLE_FACTOR times PyTorch's own float32 step's distance from it
    (`torch32`), plus ORACLE_FLOOR of the tensor's largest value."""
    def bound(name, value):
        theirs = np.abs(np.asarray(torch32[name], np.float64) - value)
        return ORACLE_FACTOR * float(theirs.max(initial=0)) + \
            ORACLE_FLOOR * float(np.abs(value).max(initial=0))
    return bound


def param_count(name):
    kwargs = {"aux_logits": False, "init_weights": False} \
        if name in ("googlenet", "inception_v3") else {}
    with torch.no_grad():
        net = getattr(torchvision.models, name)(**kwargs)
    return sum(p.numel() for p in net.parameters())


parser = argparse.ArgumentParser()
parser.add_argument("work")
parser.add_argument("--all", action="store_true")
parser.add_argument("--models")
parser.add_argument("--smallest", type=int)
parser.add_argument("--opsets", default=",".join(map(str, OPSETS)))
parser.add_argument("--float32-step", action="store_true")
parser.add_argument("--float64-oracle", action="store_true")
parser.add_argument("--keep", action="store_true")
parser.add_argument("--verbose", action="store_true")
args = parser.parse_args()
work = args.work
opsets = [int(o) for o in args.opsets.split(",")]

builders = torchvision.models.list_models(module=torchvision.models)
problems = []
for builder in builders:
    matches = [f for f in FAMILIES if re.fullmatch(f[0], builder)]
    if len(matches) != 1:
        problems.append(f"{builder} is in {len(matches)} families")

full = bool(args.all or args.models or args.smallest)
if args.models:
    models = args.models.split(",")
elif args.all or args.smallest:
    counts = {b: param_count(b) for b in builders}
    models = sorted(builders, key=counts.get)[:args.smallest]
else:
    models = [r for _, r in FAMILIES]

rows = []
begin = time.time()
for name in models:
    if ":" in name:
        print(f"(checked elsewhere: {name})", flush=True)
        continue
    train = full or name not in FULL_ONLY_TRAINING
    peak_kib[0] = rss_kib()
    checked = check(name, opsets, lookup(SIZES, name), train)
    if not args.keep:
        shutil.rmtree(os.path.join(work, name))
    for opset, row in checked.items():
        failure = row["failure"]
        expected = lookup(EXPECTED_FAILURES, name)
        if expected and not failure:
            status = "PASSES: remove it from EXPECTED_FAILURES"
        elif expected and expected not in failure:
            status = "FAILED otherwise than expected"
        elif failure:
            status = "expected failure" if expected else "FAILED"
        else:
            step = row.get("step")
            status = "ok, forward only" if step is None else \
                "ok" if step == "float64" else f"ok, {step} step"
        if status != "expected failure" and not status.startswith("ok"):
            problems.append(f"{name} opset {opset}: {status}: {failure}")
        row["status"] = status
        row["gb"] = peak_kib[0] / 2**20
        rows.append(row)
        print(f"{name} opset {opset}: {status} ({row['seconds']:.1f} s)" +
              (f": {failure.splitlines()[0][:200]}" if failure else ""),
              flush=True)
        if args.verbose and row.get("errors"):
            errors = row["errors"]
            for k in sorted(errors, key=lambda k: -errors[k][2])[:5]:
                print(f"    {k}: diff {errors[k][0]:.3g} of max "
                      f"{errors[k][1]:.3g} ({errors[k][2]:.3g} of tol)")

fmt = lambda v: "-" if v is None else f"{v:.2g}"  # noqa: E731
print(f"\n{'model':<19} {'Mparam':<6} {'opset':<5} {'size':<4} "
      f"{'import':<6} "
      f"{'forward':<8} {'loss':<8} {'param':<8} {'of tol':<7} "
      f"{'GB':<4} {'seconds':<7} status")
for row in rows:
    print(f"{row['model']:<19} {row.get('params', 0):<6.1f} "
          f"{row['opset']:<5} {row['size']:<4} "
          f"{'yes' if row['imported'] else 'no':<6} "
          f"{fmt(row['forward']):<8} {fmt(row['loss']):<8} "
          f"{fmt(row['param']):<8} {fmt(row['tol']):<7} "
          f"{row['gb']:<4.1f} {row['seconds']:<7.1f} {row['status']}")
times = os.times()
print(f"{len(rows)} checks in {time.time() - begin:.0f} s; cpu "
      f"{times.user + times.system:.0f} s here, "
      f"{times.children_user + times.children_system:.0f} s in the tools")
if args.verbose:
    print(", ".join(f"{k} {v:.0f} s" for k, v in spent.items()))

if problems:
    print("FAIL torchvision models through ONNX:\n" + "\n".join(problems))
    sys.exit(1)
print("PASS torchvision models through ONNX")
