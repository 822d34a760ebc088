#!/usr/bin/env python3
"""How close max pooling and its gradient on the cuda backend come to the
device's copy bandwidth, on ResNet-50's stem at batch 128: input
[128, 64, 112, 112] f32, kernel 3x3, stride 2, padding 1, output
[128, 64, 56, 56].

On the GPU machine, with the runtime built with CUDA:

  usage: python3 bench/pool-grad.py build/lib/libfluid_runtime.so

Measures, with CUDA events on the context's stream, each call timed
alone after a 1 GiB memset that keeps the stream busy while the host
queues the call (so that host time does not show), median (min-max) of
30 after 5 warm-ups:
- the copy bandwidth: a 1 GiB device-to-device cudaMemcpyAsync, bytes read
  plus bytes written over the time;
- fluid_cuda_max_pool2d: at least 514 MB moved (read the input, write the
  output);
- fluid_cuda_max_pool2d_grad, the whole call: at least 925 MB moved (read
  the input and grad_output, write grad_input; the windows' picks are
  recomputed from the input, not stored);
- fluid_cuda_max_pool2d_with_indices: at least 540 MB moved (read the
  input, write the output and one byte of pick per window), and
  fluid_cuda_max_pool2d_grad_indices: at least 539 MB moved (read
  grad_output and the picks, write grad_input), the pair that
  --fluid-pool-indices puts in a training step instead;
- the same four channels-last (channels_last = 1: input [128, 112, 112,
  64], output and picks [128, 56, 56, 64]; what --layout nhwc runs), with
  the same least bytes moved;
- if PyTorch is importable by TORCH_PYTHON (default
  /opt/torch/.venv/bin/python, in a separate process),
  torch.nn.functional.max_pool2d without autograd, the backward op
  max_pool2d_with_indices_backward alone (it reads grad_output and the
  int64 indices and writes grad_input: 719 MB) and forward + backward
  through autograd (the forward also writes the indices), in NCHW and in
  torch.channels_last.
Prints a Markdown table: bytes moved at least, time, GB/s and the
fraction of the copy bandwidth, and checks that grad_input sums to what
grad_output does, that the gradient from the picks is bitwise the one
from the input, and that the channels-last outputs, picks and gradients
are bitwise the NCHW ones transposed.
"""

import ctypes
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
import fluidcuda  # noqa: E402

VOID_P, I32, I64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64
TENSOR = fluidcuda.TENSOR
MEMCPY_DEVICE_TO_DEVICE = 3
SHAPE = (128, 64, 112, 112)
OUT_SHAPE = (128, 64, 56, 56)
NHWC_SHAPE = (128, 112, 112, 64)
NHWC_OUT_SHAPE = (128, 56, 56, 64)
RUNS, WARMUP = 30, 5
SPACER_BYTES = 1 << 30
TORCH_PYTHON = os.environ.get("TORCH_PYTHON", "/opt/torch/.venv/bin/python")


class MaxPool2dParams(ctypes.Structure):
    _fields_ = [("kernel", I64 * 2), ("strides", I64 * 2),
                ("padding", I64 * 4), ("dilation", I64 * 2),
                ("ceil_mode", I32), ("channels_last", I32)]


def nbytes(shape, itemsize=4):
    return int(np.prod(shape)) * itemsize


class Timer:
    """Device time of one call: a memset of `SPACER_BYTES` first keeps the
    stream busy while the events and the call are queued."""

    def __init__(self, ctx, cuda):
        self.cuda = cuda
        self.scratch = ctx.malloc(SPACER_BYTES)
        cudart = cuda.cudart
        cudart.cudaMemsetAsync.argtypes = [VOID_P, ctypes.c_int,
                                           ctypes.c_size_t, VOID_P]
        cudart.cudaMemsetAsync.restype = ctypes.c_int

    def spacer(self):
        self.cuda.check(self.cuda.cudart.cudaMemsetAsync(
            self.scratch, 0, SPACER_BYTES, self.cuda.stream),
            "cudaMemsetAsync")

    def measure(self, work, runs=RUNS, warmup=WARMUP):
        for _ in range(warmup):
            work()
        times = []
        for _ in range(runs):
            self.spacer()
            times.append(self.cuda.time_ms(work))
        return group.summary(times)


def copy_bandwidth(ctx, cuda, timer):
    size = 1 << 30
    source, destination = ctx.malloc(size), ctx.malloc(size)
    ctx.check(ctx.lib.fluid_cuda_memset_zero(ctx.handle, source, size))

    def copy():
        cuda.check(cuda.cudart.cudaMemcpyAsync(
            destination, source, size, MEMCPY_DEVICE_TO_DEVICE, cuda.stream),
            "cudaMemcpyAsync")
    result = timer.measure(copy, runs=20, warmup=3)
    for pointer in (source, destination):
        ctx.lib.fluid_cuda_free(ctx.handle, pointer)
    return 2 * size, result


def start_timing(ctx):
    """The context's Timer and the copy bandwidth (bytes per second), with
    the copy's row for optimizer-group.py's print_rows."""
    cuda = group.Cuda(group.load_cudart(), ctx.stream())
    timer = Timer(ctx, cuda)
    copy_bytes, copy_time = copy_bandwidth(ctx, cuda, timer)
    copy_rate = copy_bytes / (copy_time[0] * 1e-3)
    return timer, copy_rate, ("device-to-device copy of 1 GiB", copy_bytes,
                              copy_time)


# The PyTorch side's timer (also bench/depthwise.py's): CUDA event times of
# `runs` calls after `warmup`, each after clearing a scratch buffer larger
# than the L2 cache; formatted with runs, warmup and spacer.
TORCH_TIMER = r"""
scratch = torch.empty(%(spacer)d // 4, device="cuda")
def timed(fn, runs=%(runs)d, warmup=%(warmup)d):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        scratch.zero_()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return [statistics.median(times), min(times), max(times)]
"""

TORCH_SCRIPT = r"""
import json, statistics, torch
import torch.nn.functional as F
x = torch.randn(%(shape)s, device="cuda")
g = torch.randn(%(out_shape)s, device="cuda")
""" + TORCH_TIMER + r"""def measure(x, g):
    with torch.no_grad():
        forward = timed(lambda: F.max_pool2d(x, 3, 2, 1))
        _, indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        backward = timed(
            lambda: torch.ops.aten.max_pool2d_with_indices_backward(
                g, x, [3, 3], [2, 2], [1, 1], [1, 1], False, indices))
    leaf = x.detach().requires_grad_()
    def both():
        leaf.grad = None
        F.max_pool2d(leaf, 3, 2, 1).backward(g)
    return forward, backward, timed(both)
last = torch.channels_last
nchw = measure(x, g)
nhwc = measure(x.contiguous(memory_format=last),
               g.contiguous(memory_format=last))
print(json.dumps({"version": torch.__version__, "nchw": nchw,
                  "nhwc": nhwc}))
"""


def torch_rows():
    """PyTorch's rows, or a line saying why there are none."""
    if not os.path.exists(TORCH_PYTHON):
        return [], f"PyTorch not measured: no {TORCH_PYTHON}"
    script = TORCH_SCRIPT % {"shape": SHAPE, "out_shape": OUT_SHAPE,
                             "spacer": SPACER_BYTES, "runs": RUNS,
                             "warmup": WARMUP}
    result = None
    try:
        result = subprocess.run([TORCH_PYTHON, "-c", script],
                                capture_output=True, text=True, timeout=300)
        data = json.loads(result.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError,
            IndexError) as error:
        detail = result.stderr.strip()[-500:] if result is not None else ""
        return [], f"PyTorch not measured: {error} {detail}"
    indices = nbytes(OUT_SHAPE, 8)
    forward_bytes = nbytes(SHAPE) + nbytes(OUT_SHAPE)
    backward_bytes = nbytes(OUT_SHAPE) + indices + nbytes(SHAPE)
    version = data["version"]
    rows = []
    for layout, label in [("nchw", ""), ("nhwc", " channels_last")]:
        forward, backward, both = data[layout]
        rows += [
            (f"PyTorch {version}{label} max_pool2d, no autograd",
             forward_bytes, tuple(forward)),
            (f"PyTorch {version}{label} max_pool2d_with_indices_backward",
             backward_bytes, tuple(backward)),
            (f"PyTorch {version}{label} max_pool2d forward + backward "
             "(autograd)", forward_bytes + indices + backward_bytes,
             tuple(both)),
        ]
    return rows, None


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libfluid_runtime.so")
    lib = fluidcuda.load(sys.argv[1])
    lib.fluid_cuda_max_pool2d.restype = I32
    lib.fluid_cuda_max_pool2d.argtypes = [VOID_P, TENSOR, TENSOR,
                                          ctypes.POINTER(MaxPool2dParams)]
    lib.fluid_cuda_max_pool2d_grad.restype = I32
    lib.fluid_cuda_max_pool2d_grad.argtypes = [
        VOID_P, TENSOR, TENSOR, TENSOR, ctypes.POINTER(MaxPool2dParams)]
    for name in ("fluid_cuda_max_pool2d_with_indices",
                 "fluid_cuda_max_pool2d_grad_indices"):
        getattr(lib, name).restype = I32
        getattr(lib, name).argtypes = [VOID_P, TENSOR, TENSOR, TENSOR,
                                       ctypes.POINTER(MaxPool2dParams)]
    params = MaxPool2dParams((I64 * 2)(3, 3), (I64 * 2)(2, 2),
                             (I64 * 4)(1, 1, 1, 1), (I64 * 2)(1, 1), 0, 0)
    nhwc_params = MaxPool2dParams((I64 * 2)(3, 3), (I64 * 2)(2, 2),
                                  (I64 * 4)(1, 1, 1, 1), (I64 * 2)(1, 1), 0,
                                  1)
    rng = np.random.default_rng(0)
    host_x = rng.standard_normal(SHAPE, np.float32)
    host_g = rng.standard_normal(OUT_SHAPE, np.float32)

    with fluidcuda.Context(lib) as ctx:
        timer, copy_rate, copy_row = start_timing(ctx)
        x = ctx.upload(host_x)
        g = ctx.upload(host_g)
        y = fluidcuda.DeviceTensor(ctx, OUT_SHAPE, np.float32)
        gx = fluidcuda.DeviceTensor(ctx, SHAPE, np.float32)
        picks = fluidcuda.DeviceTensor(ctx, OUT_SHAPE, np.uint8)
        gx_picks = fluidcuda.DeviceTensor(ctx, SHAPE, np.float32)
        handle, p = ctx.handle, ctypes.byref(params)
        # Channels last: the same values transposed.
        nx = ctx.upload(np.ascontiguousarray(host_x.transpose(0, 2, 3, 1)))
        ng = ctx.upload(np.ascontiguousarray(host_g.transpose(0, 2, 3, 1)))
        ny = fluidcuda.DeviceTensor(ctx, NHWC_OUT_SHAPE, np.float32)
        ngx = fluidcuda.DeviceTensor(ctx, NHWC_SHAPE, np.float32)
        npicks = fluidcuda.DeviceTensor(ctx, NHWC_OUT_SHAPE, np.uint8)
        ngx_picks = fluidcuda.DeviceTensor(ctx, NHWC_SHAPE, np.float32)
        pn = ctypes.byref(nhwc_params)

        def nhwc_forward():
            ctx.check(lib.fluid_cuda_max_pool2d(
                handle, ctypes.byref(nx.desc), ctypes.byref(ny.desc), pn))

        def nhwc_backward():
            ctx.check(lib.fluid_cuda_max_pool2d_grad(
                handle, ctypes.byref(ng.desc), ctypes.byref(nx.desc),
                ctypes.byref(ngx.desc), pn))

        def nhwc_forward_indices():
            ctx.check(lib.fluid_cuda_max_pool2d_with_indices(
                handle, ctypes.byref(nx.desc), ctypes.byref(ny.desc),
                ctypes.byref(npicks.desc), pn))

        def nhwc_backward_indices():
            ctx.check(lib.fluid_cuda_max_pool2d_grad_indices(
                handle, ctypes.byref(ng.desc), ctypes.byref(npicks.desc),
                ctypes.byref(ngx_picks.desc), pn))

        def forward():
            ctx.check(lib.fluid_cuda_max_pool2d(
                handle, ctypes.byref(x.desc), ctypes.byref(y.desc), p))

        def backward():
            ctx.check(lib.fluid_cuda_max_pool2d_grad(
                handle, ctypes.byref(g.desc), ctypes.byref(x.desc),
                ctypes.byref(gx.desc), p))

        def forward_indices():
            ctx.check(lib.fluid_cuda_max_pool2d_with_indices(
                handle, ctypes.byref(x.desc), ctypes.byref(y.desc),
                ctypes.byref(picks.desc), p))

        def backward_indices():
            ctx.check(lib.fluid_cuda_max_pool2d_grad_indices(
                handle, ctypes.byref(g.desc), ctypes.byref(picks.desc),
                ctypes.byref(gx_picks.desc), p))
        forward_bytes = nbytes(SHAPE) + nbytes(OUT_SHAPE)
        backward_bytes = 2 * nbytes(SHAPE) + nbytes(OUT_SHAPE)
        indices_bytes = nbytes(OUT_SHAPE, 1)
        forward_indices_bytes = forward_bytes + indices_bytes
        backward_indices_bytes = (nbytes(OUT_SHAPE) + indices_bytes +
                                  nbytes(SHAPE))
        forward_time = timer.measure(forward)
        backward_time = timer.measure(backward)
        forward_indices_time = timer.measure(forward_indices)
        backward_indices_time = timer.measure(backward_indices)
        nhwc_times = [timer.measure(work) for work in (
            nhwc_forward, nhwc_backward, nhwc_forward_indices,
            nhwc_backward_indices)]
        ctx.synchronize()
        # Each window sends its gradient to one cell.
        from_input = gx.download()
        from_picks = gx_picks.download()
        grad_sum = float(from_input.sum(dtype=np.float64))
        out_sum = float(g.download().sum(dtype=np.float64))
        same = from_input.tobytes() == from_picks.tobytes()

        def nchw(t):
            return np.ascontiguousarray(t.download().transpose(0, 3, 1, 2))
        # y and picks were last written by max_pool2d_with_indices, as were
        # ny and npicks.
        nhwc_same = all(a.tobytes() == b.tobytes() for a, b in [
            (nchw(ny), y.download()), (nchw(npicks), picks.download()),
            (nchw(ngx), from_input), (nchw(ngx_picks), from_input)])
        for t in (x, g, y, gx, picks, gx_picks, nx, ng, ny, ngx, npicks,
                  ngx_picks):
            t.free()
    rows = [copy_row,
            ("fluid max_pool2d", forward_bytes, forward_time),
            ("fluid max_pool2d_grad (whole call)", backward_bytes,
             backward_time),
            ("fluid max_pool2d + max_pool2d_grad (sum of medians)",
             forward_bytes + backward_bytes,
             (forward_time[0] + backward_time[0],
              forward_time[1] + backward_time[1],
              forward_time[2] + backward_time[2])),
            ("fluid max_pool2d_with_indices", forward_indices_bytes,
             forward_indices_time),
            ("fluid max_pool2d_grad_indices (whole call)",
             backward_indices_bytes, backward_indices_time),
            ("fluid max_pool2d_with_indices + max_pool2d_grad_indices (sum "
             "of medians)", forward_indices_bytes + backward_indices_bytes,
             tuple(a + b for a, b in zip(forward_indices_time,
                                         backward_indices_time)))]
    (nhwc_forward_time, nhwc_backward_time, nhwc_forward_indices_time,
     nhwc_backward_indices_time) = nhwc_times
    rows += [("fluid max_pool2d channels-last", forward_bytes,
              nhwc_forward_time),
             ("fluid max_pool2d_grad channels-last (whole call)",
              backward_bytes, nhwc_backward_time),
             ("fluid max_pool2d_with_indices channels-last",
              forward_indices_bytes, nhwc_forward_indices_time),
             ("fluid max_pool2d_grad_indices channels-last",
              backward_indices_bytes, nhwc_backward_indices_time),
             ("fluid max_pool2d_with_indices + max_pool2d_grad_indices "
              "channels-last (sum of medians)",
              forward_indices_bytes + backward_indices_bytes,
              tuple(a + b for a, b in zip(nhwc_forward_indices_time,
                                          nhwc_backward_indices_time)))]
    extra, why_not = torch_rows()
    rows += extra

    print(f"{group.device_name()}; max pooling 3x3 s2 p1 of f32 "
          f"{list(SHAPE)} -> {list(OUT_SHAPE)}; CUDA event times, median "
          f"(min-max) of {RUNS}; bytes: the least each call must move.\n")
    group.print_rows(rows, copy_rate)
    if why_not:
        print(f"\n{why_not}")
    target = backward_bytes / (0.7 * copy_rate)
    print(f"\n70% of the copy bandwidth on max_pool2d_grad: "
          f"{target * 1e3:.4f} ms or less; measured {backward_time[0]:.4f} "
          f"ms.")
    target = backward_indices_bytes / (0.7 * copy_rate)
    print(f"70% of the copy bandwidth on max_pool2d_grad_indices: "
          f"{target * 1e3:.4f} ms or less; measured "
          f"{backward_indices_time[0]:.4f} ms, channels-last "
          f"{nhwc_backward_indices_time[0]:.4f} ms.")
    target = forward_indices_bytes / (0.7 * copy_rate)
    print(f"70% of the copy bandwidth on max_pool2d_with_indices: "
          f"{target * 1e3:.4f} ms or less; measured "
          f"{forward_indices_time[0]:.4f} ms, channels-last "
          f"{nhwc_forward_indices_time[0]:.4f} ms.")
    print(f"Check: sum(grad_input) - sum(grad_output) = "
          f"{grad_sum - out_sum:.3e} (sum(grad_output) = {out_sum:.3e}); "
          f"grad_input from the picks "
          f"{'bitwise equal to' if same else 'DIFFERS from'} the one from "
          f"the input; channels-last outputs, picks and gradients "
          f"{'bitwise equal to' if nhwc_same else 'DIFFER from'} the NCHW "
          f"ones transposed.")


if __name__ == "__main__":
    main()
