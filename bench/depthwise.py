#!/usr/bin/env python3
"""Channels-last depthwise convolutions on the cuda backend (the kernels of
runtime/cuda/KernelsDepthwise.cu) on ConvNeXt-tiny's four depthwise
shapes at batch 64: 7x7, stride 1, padding 3, groups = C, with bias,
input [64, 56, 56, 96], [64, 28, 28, 192], [64, 14, 14, 384] and
[64, 7, 7, 768] (NHWC), in f32 and bf16.

On the GPU machine, with the runtime built with CUDA:

  usage: python3 bench/depthwise.py build/lib/libfluid_runtime.so

Measures, with CUDA events on the context's stream, each call timed
alone after a 1 GiB memset that keeps the stream busy while the host
queues the call (so that host time does not show), median (min-max) of
20 after 5 warm-ups:
- the copy bandwidth: a 1 GiB device-to-device cudaMemcpyAsync, bytes read
  plus bytes written over the time;
- fluid_cuda_conv2d (read the input, the filter and the bias, write the
  output), fluid_cuda_conv2d_grad_input (read grad_output and the filter,
  write grad_input) and fluid_cuda_conv2d_grad_filter (read grad_output
  and the input, write grad_filter; its partial sums in the workspace are
  not counted), channels_last = 1;
- the three summed over one ConvNeXt-tiny training step (3, 3, 9 and 3
  blocks at the four shapes);
- if PyTorch is importable by TORCH_PYTHON (default
  /opt/torch/.venv/bin/python, in a separate process), the same three on
  torch.channels_last tensors: torch.nn.functional.conv2d without
  autograd, and aten.convolution_backward for the input gradient alone
  and for the filter gradient alone (what autograd's backward runs), with
  PyTorch's default TF32 setting for convolutions.
Prints a Markdown table per dtype: bytes moved at least, time, GB/s and
the fraction of the copy bandwidth, and checks that the filter gradient
is bitwise the same in two runs.
"""

import importlib
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "Runtime", "lib"))
group = importlib.import_module("optimizer-group")
pool = importlib.import_module("pool-grad")
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402

BATCH, KERNEL, PAD = 64, 7, 3
# (channels, height = width, blocks of ConvNeXt-tiny at that shape)
SHAPES = [(96, 56, 3), (192, 28, 3), (384, 14, 9), (768, 7, 3)]
# (name, NumPy storage dtype, fluid dtype code)
DTYPES = [("f32", np.float32, None), ("bf16", np.uint16, fluidrt.BF16)]
RUNS, WARMUP = 20, 5
TORCH_PYTHON = os.environ.get("TORCH_PYTHON", "/opt/torch/.venv/bin/python")
OPS = ["conv2d", "conv2d_grad_input", "conv2d_grad_filter"]


def values(rng, shape, storage, scale=1.0):
    """Random values of `shape` in the storage of a dtype (bf16: the top
    16 bits of f32 values)."""
    v = (rng.standard_normal(shape, np.float32) * scale).astype(np.float32)
    if storage == np.uint16:
        return np.ascontiguousarray((v.view(np.uint32) >> 16).astype(
            np.uint16))
    return v


def least_bytes(op, c, hw, itemsize):
    """Two activations (read one, write the other, or read both) and the
    filter; the forward also reads the bias."""
    moved = (2 * BATCH * hw * hw * c + c * KERNEL * KERNEL) * itemsize
    return moved + (c * itemsize if op == "conv2d" else 0)


def measure_fluid(ctx, timer, rng, storage, code):
    """{(op, c): (bytes, (median, min, max))} and whether every filter
    gradient was bitwise the same twice."""
    results, deterministic = {}, True
    itemsize = np.dtype(storage).itemsize
    for c, hw, _ in SHAPES:
        shape = (BATCH, hw, hw, c)
        x = ctx.upload(values(rng, shape, storage), code)
        gy = ctx.upload(values(rng, shape, storage), code)
        f = ctx.upload(values(rng, (c, KERNEL, KERNEL, 1), storage,
                              KERNEL ** -1), code)
        b = ctx.upload(values(rng, (c,), storage), code)
        y = fluidcuda.DeviceTensor(ctx, shape, storage, code)
        gx = fluidcuda.DeviceTensor(ctx, shape, storage, code)
        gf = fluidcuda.DeviceTensor(ctx, (c, KERNEL, KERNEL, 1), storage,
                                    code)
        params = fluidcuda.Conv2dParams([1, 1], [PAD] * 4, [1, 1], c,
                                        channels_last=1)
        calls = {
            "conv2d": lambda: ctx("conv2d", x, f, b, y, params),
            "conv2d_grad_input": lambda: ctx("conv2d_grad_input", gy, f, gx,
                                             params),
            "conv2d_grad_filter": lambda: ctx("conv2d_grad_filter", gy, x,
                                              gf, params),
        }
        for op in OPS:
            results[(op, c)] = (least_bytes(op, c, hw, itemsize),
                                timer.measure(calls[op], runs=RUNS,
                                              warmup=WARMUP))
        calls["conv2d_grad_filter"]()
        once = gf.download()
        calls["conv2d_grad_filter"]()
        deterministic &= once.tobytes() == gf.download().tobytes()
        for t in (x, gy, f, b, y, gx, gf):
            t.free()
    return results, deterministic


TORCH_SCRIPT = r"""
import json, statistics, torch
import torch.nn.functional as F
shapes, batch, k, pad = %(shapes)s, %(batch)d, %(kernel)d, %(pad)d
""" + pool.TORCH_TIMER + r"""out = {"version": torch.__version__}
for name, dtype in [("f32", torch.float32), ("bf16", torch.bfloat16)]:
    rows = {}
    for c, hw, _ in shapes:
        last = torch.channels_last
        x = torch.randn(batch, c, hw, hw, device="cuda", dtype=dtype
                        ).contiguous(memory_format=last)
        g = torch.randn_like(x).contiguous(memory_format=last)
        w = (torch.randn(c, 1, k, k, device="cuda", dtype=dtype) / k
             ).contiguous(memory_format=last)
        b = torch.randn(c, device="cuda", dtype=dtype)
        def backward(mask):
            return torch.ops.aten.convolution_backward(
                g, x, w, [c], [1, 1], [pad, pad], [1, 1], False, [0, 0], c,
                mask)
        with torch.no_grad():
            rows[c] = [
                timed(lambda: F.conv2d(x, w, b, 1, pad, 1, c)),
                timed(lambda: backward([True, False, False])),
                timed(lambda: backward([False, True, False]))]
    out[name] = rows
print(json.dumps(out))
"""


def measure_torch():
    """PyTorch's times by dtype name and channels, or a line saying why
    there are none."""
    if not os.path.exists(TORCH_PYTHON):
        return None, f"PyTorch not measured: no {TORCH_PYTHON}"
    script = TORCH_SCRIPT % {"shapes": SHAPES, "batch": BATCH,
                             "kernel": KERNEL, "pad": PAD,
                             "spacer": pool.SPACER_BYTES, "runs": RUNS,
                             "warmup": WARMUP}
    result = None
    try:
        result = subprocess.run([TORCH_PYTHON, "-c", script],
                                capture_output=True, text=True, timeout=600)
        return json.loads(result.stdout.strip().splitlines()[-1]), None
    except (OSError, subprocess.TimeoutExpired, ValueError,
            IndexError) as error:
        detail = result.stderr.strip()[-500:] if result is not None else ""
        return None, f"PyTorch not measured: {error} {detail}"


def row(name, moved, times, copy_rate, torch_times=None):
    median, low, high = times
    rate = moved / (median * 1e-3)
    line = (f"| {name} | {moved / 1e6:,.1f} MB | {median:.4f} "
            f"({low:.4f}-{high:.4f}) | {rate / 1e9:,.0f} | "
            f"{rate / copy_rate:.1%} |")
    if torch_times is not None:
        t_median, t_low, t_high = torch_times
        line += (f" {t_median:.4f} ({t_low:.4f}-{t_high:.4f}) | "
                 f"{t_median / median:.2f}x |")
    return line


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libfluid_runtime.so")
    lib = fluidcuda.load(sys.argv[1])
    rng = np.random.default_rng(0)
    measured = {}
    with fluidcuda.Context(lib) as ctx:
        cuda = group.Cuda(group.load_cudart(), ctx.stream())
        timer = pool.Timer(ctx, cuda)
        copy_bytes, copy_time = pool.copy_bandwidth(ctx, cuda, timer)
        copy_rate = copy_bytes / (copy_time[0] * 1e-3)
        for name, storage, code in DTYPES:
            measured[name] = measure_fluid(ctx, timer, rng, storage, code)
        searches = ctx.stats()["algorithm_searches"]
    torch, why_not = measure_torch()

    print(f"{group.device_name()}; ConvNeXt-tiny's depthwise convolutions, "
          f"channels last, 7x7 stride 1 padding 3, batch {BATCH}; CUDA "
          f"event times in ms, median (min-max) of {RUNS}; bytes: the least "
          "each call must move.\n")
    median, low, high = copy_time
    print(f"Copy bandwidth (1 GiB device to device): {copy_rate / 1e9:,.0f} "
          f"GB/s, {median:.4f} ({low:.4f}-{high:.4f}) ms.\n")
    for name, _, _ in DTYPES:
        results, deterministic = measured[name]
        header = ("| measurement | bytes moved | time (ms) | GB/s | of copy "
                  "bandwidth |")
        rule = "| --- | ---: | ---: | ---: | ---: |"
        if torch:
            header += f" PyTorch {torch['version']} (ms) | PyTorch / fluid |"
            rule += " ---: | ---: |"
        print(f"{name}:\n")
        print(header)
        print(rule)
        step = [0.0, 0.0]  # fluid, PyTorch: a ConvNeXt-tiny step's sum
        for c, hw, blocks in SHAPES:
            for i, op in enumerate(OPS):
                moved, times = results[(op, c)]
                theirs = (torch[name][str(c)][i] if torch else None)
                print(row(f"fluid {op} [{BATCH}, {hw}, {hw}, {c}]", moved,
                          times, copy_rate, theirs))
                step[0] += blocks * times[0]
                if theirs:
                    step[1] += blocks * theirs[0]
        line = (f"\nA ConvNeXt-tiny step's depthwise convolutions (3, 3, 9, "
                f"3 blocks; forward and both gradients, sum of medians): "
                f"fluid {step[0]:.3f} ms")
        if torch:
            line += f", PyTorch {step[1]:.3f} ms"
        print(line + ".")
        print(f"Check: the filter gradients are "
              f"{'bitwise the same' if deterministic else 'NOT the same'} "
              "in two runs.\n")
    print(f"cuDNN algorithm searches by the context: {searches} (0: every "
          "call took the depthwise kernels).")
    if why_not:
        print(why_not)


if __name__ == "__main__":
    main()
