#!/usr/bin/env python3
"""How close the grouped momentum update (fluid_cuda_momentum_group: one
multi-tensor kernel) comes to the device's copy bandwidth.

On the GPU machine, with the runtime built with CUDA:

  usage: python3 bench/optimizer-group.py build/lib/libfluid_runtime.so

Measures, with CUDA events on the context's stream:
- the copy bandwidth: a 1 GiB device-to-device cudaMemcpyAsync, bytes read
  plus bytes written over the time, median of 20 after 3 warm-ups;
- over the parameters of ResNet-50 (161 tensors, 25,557,032 f32 elements)
  and of SE-ResNeXt-50 32x4d (225 tensors, 27,559,896), updated in place
  (momentum 0.9, weight decay 1e-4; reads param, grad and velocity and
  writes param and velocity: 20 bytes per element):
  - the grouped call captured as a CUDA graph and replayed: the kernel's
    device time, each of 50 replays timed after 5 warm-ups;
  - the grouped call from the host, 20 calls back to back, 10 times: what
    a training step pays per call (host work included where it shows);
  - the same update as one fluid_cuda_momentum per tensor, captured as one
    graph (device time, 20 replays) and called from the host (10 times).
Prints a Markdown table: bytes moved, time (median, min-max), GB/s and the
fraction of the copy bandwidth.
"""

import ctypes
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Runtime", "lib"))
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402

VOID_P, I32, I64 = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64
TENSOR = ctypes.POINTER(fluidrt.FluidTensor)
CAPTURE_THREAD_LOCAL = 1
MEMCPY_DEVICE_TO_DEVICE = 3
ATTRIBUTE_MULTIPROCESSORS = 16
BYTES_PER_ELEMENT = 20  # momentum f32: read p, g, v; write p, v


class MomentumParams(ctypes.Structure):
    _fields_ = [("momentum", ctypes.c_double),
                ("weight_decay", ctypes.c_double), ("nesterov", I32)]


def resnet50_shapes(se_resnext=False):
    """The trainable parameters of torchvision's resnet50 or, with
    se_resnext, of timm's seresnext50_32x4d, in model order."""
    shapes = [(64, 3, 7, 7), (64,), (64,)]
    inplanes = 64
    for planes, blocks in [(64, 3), (128, 4), (256, 6), (512, 3)]:
        width = planes * 2 if se_resnext else planes
        out = planes * 4
        for block in range(blocks):
            shapes += [(width, inplanes, 1, 1), (width,), (width,),
                       (width, width // 32 if se_resnext else width, 3, 3),
                       (width,), (width,), (out, width, 1, 1), (out,),
                       (out,)]
            if se_resnext:
                reduced = out // 16
                shapes += [(reduced, out, 1, 1), (reduced,),
                           (out, reduced, 1, 1), (out,)]
            if block == 0:
                shapes += [(out, inplanes, 1, 1), (out,), (out,)]
            inplanes = out
    return shapes + [(1000, 2048), (1000,)]


def load_cudart():
    """The CUDA runtime the library loaded, with what is used here."""
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f
                        if "libcudart.so" in line})
    assert paths, "libcudart is not loaded"
    cudart = ctypes.CDLL(paths[0])
    for name, argtypes in {
            "cudaEventCreate": [ctypes.POINTER(VOID_P)],
            "cudaEventDestroy": [VOID_P],
            "cudaEventRecord": [VOID_P, VOID_P],
            "cudaEventSynchronize": [VOID_P],
            "cudaEventElapsedTime": [ctypes.POINTER(ctypes.c_float), VOID_P,
                                     VOID_P],
            "cudaMemcpyAsync": [VOID_P, VOID_P, ctypes.c_size_t,
                                ctypes.c_int, VOID_P],
            "cudaStreamBeginCapture": [VOID_P, ctypes.c_int],
            "cudaStreamEndCapture": [VOID_P, ctypes.POINTER(VOID_P)],
            "cudaGraphInstantiate": [ctypes.POINTER(VOID_P), VOID_P,
                                     ctypes.c_ulonglong],
            "cudaGraphLaunch": [VOID_P, VOID_P],
            "cudaGraphExecDestroy": [VOID_P],
            "cudaGraphDestroy": [VOID_P],
            "cudaDeviceGetAttribute": [ctypes.POINTER(ctypes.c_int),
                                       ctypes.c_int, ctypes.c_int],
            "cudaGetErrorName": [ctypes.c_int]}.items():
        fn = getattr(cudart, name)
        fn.argtypes = argtypes
        fn.restype = ctypes.c_int
    cudart.cudaGetErrorName.restype = ctypes.c_char_p
    return cudart


class Cuda:
    """cudart calls on the context's stream, checked."""

    def __init__(self, cudart, stream):
        self.cudart = cudart
        self.stream = stream
        self.start, self.stop = VOID_P(), VOID_P()
        self.check(cudart.cudaEventCreate(ctypes.byref(self.start)),
                   "cudaEventCreate")
        self.check(cudart.cudaEventCreate(ctypes.byref(self.stop)),
                   "cudaEventCreate")

    def check(self, status, what):
        if status != 0:
            sys.exit(f"{what}: {self.cudart.cudaGetErrorName(status).decode()}")

    def time_ms(self, work):
        """Milliseconds of the stream between events around work()."""
        self.check(self.cudart.cudaEventRecord(self.start, self.stream),
                   "cudaEventRecord")
        work()
        self.check(self.cudart.cudaEventRecord(self.stop, self.stream),
                   "cudaEventRecord")
        self.check(self.cudart.cudaEventSynchronize(self.stop),
                   "cudaEventSynchronize")
        elapsed = ctypes.c_float()
        self.check(self.cudart.cudaEventElapsedTime(
            ctypes.byref(elapsed), self.start, self.stop),
            "cudaEventElapsedTime")
        return elapsed.value

    def capture(self, work):
        """work() captured as a CUDA graph; returns (graph, executable)."""
        self.check(self.cudart.cudaStreamBeginCapture(
            self.stream, CAPTURE_THREAD_LOCAL), "cudaStreamBeginCapture")
        try:
            work()
        finally:
            graph = VOID_P()
            ended = self.cudart.cudaStreamEndCapture(self.stream,
                                                     ctypes.byref(graph))
        self.check(ended, "cudaStreamEndCapture")
        executable = VOID_P()
        self.check(self.cudart.cudaGraphInstantiate(
            ctypes.byref(executable), graph, 0), "cudaGraphInstantiate")
        return graph, executable

    def launch(self, executable):
        self.check(self.cudart.cudaGraphLaunch(executable, self.stream),
                   "cudaGraphLaunch")

    def release(self, graph, executable):
        self.cudart.cudaGraphExecDestroy(executable)
        self.cudart.cudaGraphDestroy(graph)


def summary(times_ms, per=1):
    """(median, min, max) of times_ms / per."""
    values = [t / per for t in times_ms]
    return statistics.median(values), min(values), max(values)


def copy_bandwidth(ctx, cuda):
    nbytes = 1 << 30
    source, destination = ctx.malloc(nbytes), ctx.malloc(nbytes)
    ctx.check(ctx.lib.fluid_cuda_memset_zero(ctx.handle, source, nbytes))

    def copy():
        cuda.check(cuda.cudart.cudaMemcpyAsync(
            destination, source, nbytes, MEMCPY_DEVICE_TO_DEVICE,
            cuda.stream), "cudaMemcpyAsync")
    for _ in range(3):
        copy()
    times = [cuda.time_ms(copy) for _ in range(20)]
    for pointer in (source, destination):
        ctx.lib.fluid_cuda_free(ctx.handle, pointer)
    return 2 * nbytes, summary(times)


class ModelUpdate:
    """Parameters, gradients and velocities of one model on the device,
    with the descriptor arrays of the grouped call."""

    def __init__(self, ctx, shapes, rng):
        self.ctx = ctx
        self.shapes = shapes
        self.elements = sum(int(np.prod(s)) for s in shapes)
        self.pointers = []
        tensors = []
        for kind in ("param", "grad", "velocity"):
            values = (np.zeros(self.elements, np.float32)
                      if kind == "velocity" else
                      rng.standard_normal(self.elements, np.float32))
            descs, offset = [], 0
            for shape in shapes:
                n = int(np.prod(shape))
                pointer = ctx.malloc(4 * n)
                self.pointers.append(pointer)
                piece = np.ascontiguousarray(values[offset:offset + n])
                ctx.check(ctx.lib.fluid_cuda_copy_to_device(
                    ctx.handle, pointer, piece.ctypes.data, 4 * n))
                offset += n
                t = fluidrt.FluidTensor()
                t.data, t.dtype, t.rank = pointer, 0, len(shape)
                for i, d in enumerate(shape):
                    t.shape[i] = d
                descs.append(t)
            tensors.append((fluidrt.FluidTensor * len(descs))(*descs))
        self.params, self.grads, self.velocities = tensors
        lr = np.array(0.01, np.float32)
        self.lr = ctx.upload(lr)
        self.hyper = MomentumParams(0.9, 1e-4, 0)
        self.site = ctypes.c_char(0)

    @property
    def bytes_moved(self):
        return BYTES_PER_ELEMENT * self.elements

    def group(self):
        self.ctx.check(self.ctx.lib.fluid_cuda_momentum_group(
            self.ctx.handle, ctypes.addressof(self.site), len(self.shapes),
            self.params, self.grads, self.velocities,
            ctypes.byref(self.lr.desc), None, self.params, self.velocities,
            ctypes.byref(self.hyper)))

    def singles(self):
        lib, handle = self.ctx.lib, self.ctx.handle
        lr = ctypes.byref(self.lr.desc)
        hyper = ctypes.byref(self.hyper)
        for k in range(len(self.shapes)):
            p = ctypes.byref(self.params[k])
            v = ctypes.byref(self.velocities[k])
            self.ctx.check(lib.fluid_cuda_momentum(
                handle, p, ctypes.byref(self.grads[k]), v, lr, None, p, v,
                hyper))

    def free(self):
        for pointer in self.pointers:
            self.ctx.lib.fluid_cuda_free(self.ctx.handle, pointer)
        self.lr.free()


def measure(ctx, cuda, name, shapes, rng):
    """[(row name, bytes, (median, min, max) ms)] for one model."""
    model = ModelUpdate(ctx, shapes, rng)
    rows = []
    label = f"{name} ({len(shapes)} tensors, {model.elements:,} elements)"
    for _ in range(5):
        model.group()
    ctx.synchronize()

    graph, executable = cuda.capture(model.group)
    for _ in range(5):
        cuda.launch(executable)
    times = [cuda.time_ms(lambda: cuda.launch(executable))
             for _ in range(50)]
    cuda.release(graph, executable)
    rows.append((f"{label}: grouped, graph replay", model.bytes_moved,
                 summary(times)))

    calls = 20

    def host_calls():
        for _ in range(calls):
            model.group()
    times = [cuda.time_ms(host_calls) for _ in range(10)]
    rows.append((f"{label}: grouped, {calls} host calls", model.bytes_moved,
                 summary(times, calls)))

    model.singles()
    graph, executable = cuda.capture(model.singles)
    for _ in range(3):
        cuda.launch(executable)
    times = [cuda.time_ms(lambda: cuda.launch(executable))
             for _ in range(20)]
    cuda.release(graph, executable)
    rows.append((f"{label}: {len(shapes)} single calls, graph replay",
                 model.bytes_moved, summary(times)))

    times = [cuda.time_ms(model.singles) for _ in range(10)]
    rows.append((f"{label}: {len(shapes)} single calls from the host",
                 model.bytes_moved, summary(times)))

    status = ctx.lib.fluid_cuda_check_errors(ctx.handle)
    if status != 0:
        sys.exit(fluidcuda.last_error(ctx.lib))
    model.free()
    return rows


def device_name():
    try:
        result = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version",
             "--format=csv,noheader"], capture_output=True, text=True)
        return result.stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown device"


def print_rows(rows, copy_rate):
    """A Markdown table of (name, bytes moved, (median, min, max) ms)."""
    print("| measurement | bytes moved | time (ms) | GB/s | of copy "
          "bandwidth |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, moved, (median, low, high) in rows:
        rate = moved / (median * 1e-3)
        print(f"| {name} | {moved / 1e6:,.1f} MB | {median:.4f} "
              f"({low:.4f}-{high:.4f}) | {rate / 1e9:,.0f} | "
              f"{rate / copy_rate:.1%} |")


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libfluid_runtime.so")
    lib = fluidcuda.load(sys.argv[1])
    lib.fluid_cuda_momentum_group.restype = I32
    # (found_inf, the skip flag of loss scaling, is null here.)
    lib.fluid_cuda_momentum_group.argtypes = [VOID_P, VOID_P, I64] + \
        [TENSOR] * 7 + [ctypes.POINTER(MomentumParams)]
    lib.fluid_cuda_momentum.restype = I32
    lib.fluid_cuda_momentum.argtypes = [VOID_P] + [TENSOR] * 7 + \
        [ctypes.POINTER(MomentumParams)]
    lib.fluid_cuda_check_errors.restype = I32
    lib.fluid_cuda_check_errors.argtypes = [VOID_P]

    for shapes, total in [(resnet50_shapes(), 25557032),
                          (resnet50_shapes(se_resnext=True), 27559896)]:
        assert sum(int(np.prod(s)) for s in shapes) == total

    with fluidcuda.Context(lib) as ctx:
        cuda = Cuda(load_cudart(), ctx.stream())
        sms = ctypes.c_int()
        cuda.check(cuda.cudart.cudaDeviceGetAttribute(
            ctypes.byref(sms), ATTRIBUTE_MULTIPROCESSORS, 0),
            "cudaDeviceGetAttribute")
        copy_bytes, copy_time = copy_bandwidth(ctx, cuda)
        copy_rate = copy_bytes / (copy_time[0] * 1e-3)
        rng = np.random.default_rng(0)
        rows = [("device-to-device copy of 1 GiB", copy_bytes, copy_time)]
        rows += measure(ctx, cuda, "ResNet-50", resnet50_shapes(), rng)
        rows += measure(ctx, cuda, "SE-ResNeXt-50", resnet50_shapes(True),
                        rng)

    print(f"{device_name()}, {sms.value} multiprocessors; times are CUDA "
          f"event times on the context's stream, median (min-max).\n")
    print_rows(rows, copy_rate)
    resnet = resnet50_shapes()
    target = BYTES_PER_ELEMENT * sum(int(np.prod(s)) for s in resnet) / \
        (0.8 * copy_rate)
    print(f"\n80% of the copy bandwidth on ResNet-50's update: "
          f"{target * 1e3:.4f} ms or less.")


if __name__ == "__main__":
    main()
