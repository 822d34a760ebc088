#!/usr/bin/env python3
"""How close fluid_cuda_transpose comes to the device's copy bandwidth on
the layout changes of ResNet-50 at batch 128: NCHW -> NHWC and NHWC ->
NCHW of [128, 64, 112, 112] (the stem's output) and [128, 256, 56, 56]
(the first stage's), in f32 and bf16.

On the GPU machine, with the runtime built with CUDA:

  usage: python3 bench/transpose.py build/lib/libfluid_runtime.so

Times each call with CUDA events on the context's stream, alone after a
1 GiB memset that keeps the stream busy while the host queues it, median
(min-max) of 30 after 5 warm-ups (pool-grad.py's Timer), against a 1 GiB
device-to-device cudaMemcpyAsync (bytes read plus bytes written over the
time). A transpose moves twice the tensor's bytes. Prints a Markdown
table with the fraction of the copy bandwidth, and checks that NHWC ->
NCHW of the NCHW -> NHWC result gives back the input bit for bit.
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
SHAPES = [(128, 64, 112, 112), (128, 256, 56, 56)]
DTYPES = [("f32", np.float32, None), ("bf16", np.uint16, fluidrt.BF16)]
TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


class TransposeParams(ctypes.Structure):
    _fields_ = [("perm", I64 * fluidrt.FLUID_MAX_RANK), ("rank", I32)]


def params_of(perm):
    return TransposeParams(
        (I64 * fluidrt.FLUID_MAX_RANK)(*perm), len(perm))


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libfluid_runtime.so")
    lib = fluidcuda.load(sys.argv[1])
    lib.fluid_cuda_transpose.restype = I32
    lib.fluid_cuda_transpose.argtypes = [VOID_P, TENSOR, TENSOR,
                                         ctypes.POINTER(TransposeParams)]
    rng = np.random.default_rng(0)
    rows, checks = [], []
    with fluidcuda.Context(lib) as ctx:
        timer, copy_rate, copy_row = pool.start_timing(ctx)
        rows.append(copy_row)
        for shape in SHAPES:
            n, c, h, w = shape
            nhwc_shape = (n, h, w, c)
            for name, dtype, code in DTYPES:
                count = int(np.prod(shape)) * np.dtype(dtype).itemsize
                host = rng.integers(0, 256, size=count, dtype=np.uint8).view(
                    dtype).reshape(shape)
                x = ctx.upload(host, code)
                y = fluidcuda.DeviceTensor(ctx, nhwc_shape, dtype, code)
                z = fluidcuda.DeviceTensor(ctx, shape, dtype, code)
                to_nhwc, to_nchw = params_of(TO_NHWC), params_of(TO_NCHW)

                def forward():
                    ctx.check(lib.fluid_cuda_transpose(
                        ctx.handle, ctypes.byref(x.desc),
                        ctypes.byref(y.desc), ctypes.byref(to_nhwc)))

                def backward():
                    ctx.check(lib.fluid_cuda_transpose(
                        ctx.handle, ctypes.byref(y.desc),
                        ctypes.byref(z.desc), ctypes.byref(to_nchw)))
                moved = 2 * host.nbytes
                rows.append((f"{name} NCHW {list(shape)} -> NHWC", moved,
                             timer.measure(forward)))
                rows.append((f"{name} NHWC {list(nhwc_shape)} -> NCHW",
                             moved, timer.measure(backward)))
                ctx.synchronize()
                checks.append((f"{name} {list(shape)}",
                               z.download().tobytes() == host.tobytes()))
                for t in (x, y, z):
                    t.free()

    print(f"{group.device_name()}; fluid_cuda_transpose; CUDA event times, "
          f"median (min-max) of {pool.RUNS}; bytes: read plus written.\n")
    group.print_rows(rows, copy_rate)
    print("\nRound trip NCHW -> NHWC -> NCHW: " + ", ".join(
        f"{what} {'bitwise equal' if same else 'DIFFERS'}"
        for what, same in checks))


if __name__ == "__main__":
    main()
