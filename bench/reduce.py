#!/usr/bin/env python3
"""How close the cuda backend's reductions come to the device's copy
bandwidth on SE-ResNeXt-50's squeezes at batch 128, channels-last f32:
fluid_cuda_mean over H and W of [128, 56, 56, 256], [128, 28, 28, 512],
[128, 14, 14, 1024] and [128, 7, 7, 2048] (to [128, C]; what an SE
block's global pooling runs in an NHWC program, also ResNet-50's last
one), and fluid_cuda_sum_to of the same tensors to [128, 1, 1, C] (the
gradient of the SE scale's broadcast).

On the GPU machine, with the runtime built with CUDA:

  usage: python3 bench/reduce.py build/lib/libfluid_runtime.so

Times each call with CUDA events on the context's stream, alone after a
1 GiB memset that keeps the stream busy while the host queues it, median
(min-max) of 30 after 5 warm-ups (pool-grad.py's Timer), against a 1 GiB
device-to-device cudaMemcpyAsync (bytes read plus bytes written over the
time). A reduction moves its input's bytes plus its output's. Each mean
runs twice: on a 16-byte aligned input (the column kernel that loads a
vector of channels per thread) and on a copy 4 bytes past alignment (the
scalar column kernel, one element per thread, as before the vector one),
so the two kernels compare in one run. Prints a
Markdown table with the fraction of the copy bandwidth, and checks each
mean against numpy's float64 mean of the same input (relative 1e-6 of the
largest |mean|) and each sum_to against the mean times H * W.
"""

import ctypes
import importlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "Runtime", "lib"))
group = importlib.import_module("optimizer-group")
pool = importlib.import_module("pool-grad")
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402

VOID_P, I32, I64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64
TENSOR = fluidcuda.TENSOR
SHAPES = [(128, 56, 56, 256), (128, 28, 28, 512), (128, 14, 14, 1024),
          (128, 7, 7, 2048)]


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libfluid_runtime.so")
    lib = fluidcuda.load(sys.argv[1])
    lib.fluid_cuda_mean.restype = I32
    lib.fluid_cuda_mean.argtypes = [VOID_P, TENSOR, TENSOR,
                                    ctypes.POINTER(fluidcuda.ReduceParams)]
    lib.fluid_cuda_sum_to.restype = I32
    lib.fluid_cuda_sum_to.argtypes = [VOID_P, TENSOR, TENSOR]
    over_hw = fluidcuda.ReduceParams([1, 2], 2, 0)
    rng = np.random.default_rng(0)
    rows, checks = [], []
    with fluidcuda.Context(lib) as ctx:
        timer, copy_rate, copy_row = pool.start_timing(ctx)
        rows.append(copy_row)
        for shape in SHAPES:
            n, h, w, c = shape
            host = rng.standard_normal(shape, dtype=np.float32) + 0.5
            x = ctx.upload(host)
            # The same values 4 bytes past a 16-byte boundary.
            padded = fluidcuda.DeviceTensor(ctx, (host.size + 1,), np.float32)
            ctx.check(lib.fluid_cuda_copy_to_device(
                ctx.handle, padded.pointer + 4, host.ctypes.data,
                host.nbytes))
            unaligned = fluidrt.FluidTensor()
            unaligned.data = padded.pointer + 4
            unaligned.dtype = x.desc.dtype
            unaligned.rank = 4
            for i, d in enumerate(shape):
                unaligned.shape[i] = d
            scalar_mean = fluidcuda.DeviceTensor(ctx, (n, c), np.float32)
            mean = fluidcuda.DeviceTensor(ctx, (n, c), np.float32)
            summed = fluidcuda.DeviceTensor(ctx, (n, 1, 1, c), np.float32)

            def run_mean():
                ctx.check(lib.fluid_cuda_mean(
                    ctx.handle, ctypes.byref(x.desc), ctypes.byref(mean.desc),
                    ctypes.byref(over_hw)))

            def run_scalar_mean():
                ctx.check(lib.fluid_cuda_mean(
                    ctx.handle, ctypes.byref(unaligned),
                    ctypes.byref(scalar_mean.desc), ctypes.byref(over_hw)))

            def run_sum_to():
                ctx.check(lib.fluid_cuda_sum_to(
                    ctx.handle, ctypes.byref(x.desc),
                    ctypes.byref(summed.desc)))
            moved = host.nbytes + n * c * 4
            rows.append((f"mean {list(shape)} over H, W", moved,
                         timer.measure(run_mean)))
            rows.append((f"mean {list(shape)} over H, W, unaligned input "
                         "(scalar columns)", moved,
                         timer.measure(run_scalar_mean)))
            rows.append((f"sum_to {list(shape)} -> [{n}, 1, 1, {c}]", moved,
                         timer.measure(run_sum_to)))
            ctx.synchronize()
            want = host.astype(np.float64).mean(axis=(1, 2))
            scale = np.abs(want).max()
            got_mean = mean.download().astype(np.float64)
            got_sum = summed.download().reshape(n, c).astype(np.float64)
            checks.append((f"{list(shape)} mean",
                           np.abs(got_mean - want).max() <= 1e-6 * scale))
            checks.append((f"{list(shape)} mean, unaligned",
                           np.abs(scalar_mean.download() - want).max()
                           <= 1e-6 * scale))
            checks.append((f"{list(shape)} sum_to",
                           np.abs(got_sum - want * h * w).max()
                           <= 1e-6 * scale * h * w))
            for t in (x, mean, summed, padded, scalar_mean):
                t.free()

    print(f"{group.device_name()}; fluid_cuda_mean and fluid_cuda_sum_to, "
          f"channels-last f32; CUDA event times, median (min-max) of "
          f"{pool.RUNS}; bytes: read plus written.\n")
    group.print_rows(rows, copy_rate)
    print("\nAgainst numpy (float64): " + ", ".join(
        f"{what} {'ok' if ok else 'WRONG'}" for what, ok in checks))
    if not all(ok for _, ok in checks):
        sys.exit(1)


if __name__ == "__main__":
    main()
