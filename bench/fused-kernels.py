#!/usr/bin/env python3
"""Achieved bandwidth of a compiled program's generated kernels, alone.

Reads the C++ that `fluid-compile --emit=cpp` wrote for a cuda program
(scripts/gpu-prepare.sh writes build/bench/NAME-{fused,bf16,nhwc,
nhwc-bf16}.cpp.gz, compressed): its PTX module (kGpuKernels), and per
fused launch of the training step the kernel,
its grids, its tensors' shapes and which outputs are zeroed first. On the
GPU, each distinct launch (kernel and shapes) runs on fresh device buffers
(inputs filled with 1.0, so nothing overflows): 20 launches of it (with the
zeroing of its outputs that the step does first) are captured into one CUDA
graph, as the step runs them, each on its own buffers where that keeps the
twenty's buffers together at least twice the L2 cache (up to 20 sets: a
small kernel replayed on one set reads its inputs from the L2, at up to 2.4
times the copy bandwidth), and the graph is replayed 3 times untimed then
20 times between CUDA events; its time is the median replay over 20.
Its bandwidth is the bytes of all its tensors, each counted once (a
broadcast input at its own size; an input the kernel reads only in part,
as batch norm's shift reads one row of the statistics' input, at the
elements the program's "elements read" comment gives), over that time.
--host-timing times one launch at a time from the host instead (fluid_cuda_synchronize around it,
as before session 26): that adds the host's launch and synchronization,
about 10-15 us, which is most of a small kernel's time. The
device-to-device copy bandwidth of a 1 GiB buffer (the runtime's copy,
fluid_cuda_reshape) is timed from the host either way, for the ratio.

Prints the largest launches by bytes (--top, 12) with their time, GB/s and
share of the copy bandwidth, and the total over all fused launches. Beside
each, the time of a copy kernel moving the same bytes (fluid_cuda_neg on
f32, timed the same way) and its share of the launch's time: a small
launch's fixed costs (starting, the last wave, the gap to the next launch)
are paid by a copy of its size too, not by the 1 GiB copy; the launches
below 70% of their same-size copy are listed. --scalar-too also times
the element-at-a-time kernel (its own grid) of each launch the step runs
as a vector kernel, for choosing between them.

With --bytes (no GPU, no library): only the bytes the step's fused
launches move, each tensor counted once (as above), in total and split
into activation-sized tensors (over 1M elements) of 4-byte and of narrower
element types: what a precision or storage change saves, before a GPU
measures the time.

With --casts (no GPU, no library): the step's fluid_cuda_cast launches
(what a 16-bit program widens or narrows outside the generated kernels),
counted and summed in bytes (read plus written) by direction, split into
activation-sized (over 1M elements) and smaller tensors, and for the
activation-sized widening casts the runtime call that reads each result
first: where a kernel that took the 16-bit tensor itself would save them.

  usage: fused-kernels.py LIBFLUID_RUNTIME.so PROGRAM.cpp[.gz] [--top N]
                          [--host-timing] [--scalar-too]
         fused-kernels.py --bytes PROGRAM.cpp[.gz]
         fused-kernels.py --casts PROGRAM.cpp[.gz]
"""

import argparse
import ast
import ctypes
import functools
import gzip
import os
import re
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Runtime", "lib"))
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402

# bf16 has no NumPy dtype: uint16 arrays hold its bits (fluidrt.BF16).
DTYPES = {"FLUID_F32": np.float32, "FLUID_F64": np.float64,
          "FLUID_F16": np.float16, "FLUID_BF16": np.uint16}


def read_step(path):
    """The program's text, the body of its training step (f0Run), and its
    tensors: {name: (NumPy dtype, shape)}."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        text = f.read()
    run = text[text.index("fluid_status f0Run("):]
    run = run[: run.index("\n}\n")]
    specs = re.search(r"const TensorSpec f0Tensors\[\] = \{\n(.*?)\n\};",
                      text, re.S).group(1)
    shapes = {}
    for line in specs.splitlines():
        s = re.match(r"\s*\{'\w', \d+, \d+, (FLUID_\w+), \d+, \{([0-9, ]*)\}\},"
                     r"\s*// (\w+)", line)
        if s:
            dims = tuple(int(d) for d in s.group(2).split(",") if d.strip())
            shapes[s.group(3)] = (DTYPES.get(s.group(1), np.float32), dims)
    return text, run, shapes


def parse(path):
    text, run, shapes = read_step(path)
    # The PTX: one quoted C literal per line.
    m = re.search(r"const char kGpuKernels\[\] =\n(.*?)\n    ;\n", text, re.S)
    if not m:
        raise SystemExit(path + ": no kGpuKernels (not a cuda program with "
                         "fused regions)")
    ptx = "".join(ast.literal_eval(line.strip().replace("\\?", "?"))
                  for line in m.group(1).splitlines())
    args = {}
    for name, listed, partial in re.findall(
            r"const fluid_tensor \*const (fusedArgs\d+)\[\] = "
            r"\{([^}]*)\};(?:  // elements read:([ 0-9:]*))?", run):
        # The emitter names the inputs a kernel reads only in part (batch
        # norm's shift: one row of its input), index:elements.
        args[name] = (listed, {int(i): int(n) for i, n in
                               (p.split(":") for p in partial.split())})
    launches = []
    zeroed = []
    counters = []
    for line in run.splitlines():
        z = re.search(r"fluid_cuda_memset_zero\(context, (\w+)\.data", line)
        if z:
            zeroed.append(z.group(1))
        # The counters (zero before and after each launch) and partial sums
        # through which a reduction's blocks combine their sums.
        c = re.search(r"fluid_cuda_sum_scratch\(context, (\d+), (\d+), "
                      r"(FLUID_\w+), &(\w+), &(\w+)\)", line)
        if c:
            shapes[c.group(4)] = (np.int32, (int(c.group(1)),))
            shapes[c.group(5)] = (DTYPES.get(c.group(3), np.float32),
                                  (int(c.group(2)),))
            counters.append(c.group(4))
        g = re.search(r'launchGenerated\(context, "(\w+)", (?:"(\w+)"|nullptr), '
                      r"(\d+), (\d+), (fusedArgs\d+), (\d+), \"([01]*)\"\)", line)
        if not g:
            continue
        listed, partial = args[g.group(5)]
        names = [a.strip().lstrip("&") for a in listed.split(",")]
        launches.append({"kernel": g.group(1), "vector": g.group(2),
                         "read": partial,
                         "blocks": int(g.group(3)),
                         "vector_blocks": int(g.group(4)),
                         "tensors": [shapes[n] for n in names],
                         "zero": [names.index(n) for n in zeroed if n in names],
                         "counters": [names.index(n) for n in counters
                                      if n in names],
                         "mask": g.group(7)})
        zeroed = []
        counters = []
    return ptx, launches


def operand_counts(launch, whole=False):
    """Per operand of `launch`: (elements moved, bytes per element); the
    elements it reads where the emitter says it reads fewer, unless
    `whole` (what a buffer for it holds)."""
    return [((int(np.prod(shape, dtype=np.int64)) if whole else
              launch["read"].get(k, int(np.prod(shape, dtype=np.int64)))),
             np.dtype(dtype).itemsize)
            for k, (dtype, shape) in enumerate(launch["tensors"])]


def launch_bytes(launch, whole=False):
    """What a launch reads and writes (or, `whole`, allocates), in bytes."""
    return sum(n * size for n, size in operand_counts(launch, whole))


def print_casts(path):
    """The step's casts by direction and size, and the first reader of
    each activation-sized widening cast's result."""
    _, run, shapes = read_step(path)
    lines = run.splitlines()
    names = {code: name[len("FLUID_"):].lower()
             for name, code in DTYPES.items()}
    tensors = {n: (names[np.dtype(dtype).type], int(np.prod(dims)),
                   np.dtype(dtype).itemsize)
               for n, (dtype, dims) in shapes.items()}
    groups, readers = {}, {}
    for i, line in enumerate(lines):
        c = re.search(r"fluid_cuda_cast\(context, &(\w+), &(\w+)\)", line)
        if not c:
            continue
        (src, count, a), (dst, _, b) = tensors[c.group(1)], tensors[c.group(2)]
        big = count > (1 << 20)
        key = (src, dst, big)
        n, moved = groups.get(key, (0, 0))
        groups[key] = (n + 1, moved + count * (a + b))
        if not big or b <= a:
            continue
        # The first later line that passes the result: a runtime call, or
        # the argument array of a generated kernel's launch.
        use = re.compile(r"&%s\b" % re.escape(c.group(2)))
        reader = "(no later reader by that name)"
        for later in lines[i + 1:]:
            if use.search(later):
                call = re.search(r"FLUID_LAUNCH\(\d+, (\w+)\(", later)
                reader = call.group(1) if call else "a generated kernel"
                break
        readers[reader] = readers.get(reader, 0) + 1
    total = sum(m for _, m in groups.values())
    print("%d casts in the step, %.2f GB moved (read plus written):"
          % (sum(n for n, _ in groups.values()), total / 1e9))
    print("| from | to | tensors | casts | GB |")
    print("| --- | --- | --- | ---: | ---: |")
    for (src, dst, big), (n, moved) in sorted(groups.items(),
                                               key=lambda g: -g[1][1]):
        print("| %s | %s | %s | %d | %.3f |"
              % (src, dst,
                 "over 1M elements" if big else "smaller", n, moved / 1e9))
    if readers:
        print("\nFirst reader of each activation-sized widening cast: "
              + ", ".join("%s %d" % r for r in sorted(
                  readers.items(), key=lambda r: -r[1])))


def print_bytes(launches):
    total = wide = narrow = 0
    for launch in launches:
        for count, itemsize in operand_counts(launch):
            nbytes = count * itemsize
            total += nbytes
            if count > (1 << 20):
                if itemsize >= 4:
                    wide += nbytes
                else:
                    narrow += nbytes
    print("%d fused launches: %.2f GB (%d bytes), of which activation-sized "
          "tensors %.2f GB of 4 or 8-byte elements and %.2f GB of narrower "
          "ones" % (len(launches), total / 1e9, total, wide / 1e9,
                    narrow / 1e9))


@functools.lru_cache(maxsize=8)
def host_fill(shape, dtype, zero):
    """A host array of `shape` holding 0 (zero) or 1.0 in `dtype` (bf16's
    bits as uint16), made once per shape for every set of buffers."""
    if zero:
        return np.zeros(shape, dtype)
    if dtype == np.uint16:  # bf16 1.0: the f32's top half
        return np.full(shape, 0x3F80, np.uint16)
    return np.ones(shape, dtype)


def device_tensors(context, launch):
    """Device buffers for `launch`'s tensors, each filled with 1.0 (its
    counters with 0), and the array of their descriptors."""
    tensors = [fluidcuda.DeviceTensor(
        context, shape, dtype, fluidrt.BF16 if dtype == np.uint16 else None)
        for dtype, shape in launch["tensors"]]
    for k, t_ in enumerate(tensors):
        ones = host_fill(tuple(t_.shape), np.dtype(t_.dtype),
                         k in launch["counters"])
        context.check(context.lib.fluid_cuda_copy_to_device(
            context.handle, t_.pointer, ones.ctypes.data, t_.nbytes))
    descs = (ctypes.c_void_p * len(tensors))(
        *[ctypes.addressof(t_.desc) for t_ in tensors])
    return tensors, descs


def timed(context, fn, repeats=20, warmup=3):
    """fn's median time, one call at a time from the host (--host-timing)."""
    for _ in range(warmup):
        fn()
    context.check(context.lib.fluid_cuda_synchronize(context.handle))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        context.check(context.lib.fluid_cuda_synchronize(context.handle))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class GraphTimer:
    """Times fn on the device: `per_graph` calls captured into one CUDA
    graph on the context's stream (thread-local capture, as the
    executables capture their steps), replayed `warmup` times, then
    `repeats` times between two CUDA events each; the median replay over
    per_graph. Uses the libcudart the runtime loaded."""

    def __init__(self, context):
        self.context = context
        try:
            self.cudart = ctypes.CDLL("libcudart.so.13")
        except OSError as e:
            raise SystemExit("fused-kernels.py: cannot load libcudart.so.13 "
                             "(%s); put the CUDA runtime's directory on "
                             "LD_LIBRARY_PATH, or use --host-timing" % e)
        stream = ctypes.c_void_p()
        context.lib.fluid_cuda_context_stream.argtypes = [
            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        context.check(context.lib.fluid_cuda_context_stream(
            context.handle, ctypes.byref(stream)))
        self.stream = stream
        self.events = [ctypes.c_void_p(), ctypes.c_void_p()]
        for e in self.events:
            self.cuda("cudaEventCreate", ctypes.byref(e))

    def l2_bytes(self):
        """The device's L2 cache size (cudaDevAttrL2CacheSize, 38 in
        CUDA's driver_types.h)."""
        device, size = ctypes.c_int(), ctypes.c_int()
        self.cuda("cudaGetDevice", ctypes.byref(device))
        self.cuda("cudaDeviceGetAttribute", ctypes.byref(size), 38, device)
        if size.value <= 0:
            raise SystemExit("fused-kernels.py: the device reports an L2 "
                             "cache of %d bytes; cannot size the rotated "
                             "buffers (use --host-timing)" % size.value)
        return size.value

    def cuda(self, name, *args):
        status = getattr(self.cudart, name)(*args)
        if status != 0:
            self.cudart.cudaGetErrorString.restype = ctypes.c_char_p
            raise RuntimeError("%s failed: %s" % (
                name, self.cudart.cudaGetErrorString(status).decode()))

    def __call__(self, fn, per_graph=20, repeats=20, warmup=3):
        graph, exe = ctypes.c_void_p(), ctypes.c_void_p()
        self.cuda("cudaStreamBeginCapture", self.stream, 1)  # thread-local
        try:
            for i in range(per_graph):
                fn(i)
        finally:
            self.cuda("cudaStreamEndCapture", self.stream, ctypes.byref(graph))
        try:
            self.cuda("cudaGraphInstantiate", ctypes.byref(exe), graph,
                      ctypes.c_ulonglong(0))
            for _ in range(warmup):
                self.cuda("cudaGraphLaunch", exe, self.stream)
            times = []
            ms = ctypes.c_float()
            for _ in range(repeats):
                self.cuda("cudaEventRecord", self.events[0], self.stream)
                self.cuda("cudaGraphLaunch", exe, self.stream)
                self.cuda("cudaEventRecord", self.events[1], self.stream)
                self.cuda("cudaEventSynchronize", self.events[1])
                self.cuda("cudaEventElapsedTime", ctypes.byref(ms),
                          self.events[0], self.events[1])
                times.append(ms.value / 1e3 / per_graph)
            return statistics.median(times)
        finally:
            if exe:
                self.cuda("cudaGraphExecDestroy", exe)
            self.cuda("cudaGraphDestroy", graph)


def buffer_sets(rotate_bytes, nbytes):
    """How many sets of buffers of `nbytes` together hold at least
    `rotate_bytes` (twice the L2 cache; 0 when timing from the host), from
    1 to 20."""
    return max(1, min(20, -(-rotate_bytes // max(nbytes, 1))))


class SameSizeCopy:
    """The time of a plain copy moving a given number of bytes (read plus
    written): fluid_cuda_neg on f32 vectors of bytes / 8 elements, timed
    as the launches are (over as many sets of buffers as a launch of that
    size gets). The reference for a small launch, whose fixed costs (its
    start, its last wave, the gaps between launches) a 1 GiB copy does not
    pay. Cached by size."""

    def __init__(self, context, measure, rotate_bytes):
        self.context, self.measure = context, measure
        self.rotate_bytes = rotate_bytes
        self.lib = context.lib
        self.lib.fluid_cuda_neg.restype = ctypes.c_int32
        self.lib.fluid_cuda_neg.argtypes = [ctypes.c_void_p] * 3
        self.cache = {}

    def __call__(self, nbytes):
        n = max(1, int(nbytes) // 8)
        if n not in self.cache:
            sets = [(fluidcuda.DeviceTensor(self.context, (n,), np.float32),
                     fluidcuda.DeviceTensor(self.context, (n,), np.float32))
                    for _ in range(buffer_sets(self.rotate_bytes, 8 * n))]
            for x, _ in sets:
                self.lib.fluid_cuda_memset_zero(self.context.handle,
                                                x.pointer, x.nbytes)

            def go(i=0):
                x, y = sets[i % len(sets)]
                self.context.check(self.lib.fluid_cuda_neg(
                    self.context.handle, ctypes.byref(x.desc),
                    ctypes.byref(y.desc)))
            self.cache[n] = self.measure(go)
            for pair in sets:
                for t_ in pair:
                    t_.free()
        return self.cache[n]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+", metavar="LIB PROGRAM")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--bytes", action="store_true")
    parser.add_argument("--casts", action="store_true")
    parser.add_argument("--host-timing", action="store_true",
                        help="time one launch at a time from the host "
                        "instead of CUDA graphs of 20 (adds the host's "
                        "launch and synchronization)")
    parser.add_argument("--scalar-too", action="store_true",
                        help="also time the element-at-a-time kernel of "
                        "each launch that runs a vector one, and print "
                        "the two side by side")
    a = parser.parse_args()
    offline = a.bytes or a.casts
    if len(a.paths) != (1 if offline else 2):
        parser.error("give LIBFLUID_RUNTIME.so PROGRAM, or --bytes PROGRAM, "
                     "or --casts PROGRAM")
    if a.casts:
        return print_casts(a.paths[0])
    if a.bytes:
        return print_bytes(parse(a.paths[0])[1])
    a.lib, a.program = a.paths
    ptx, launches = parse(a.program)
    lib = fluidcuda.load(a.lib)
    lib.fluid_cuda_load_generated.restype = ctypes.c_int32
    lib.fluid_cuda_load_generated.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.fluid_cuda_launch_generated.restype = ctypes.c_int32
    lib.fluid_cuda_launch_generated.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64,
        ctypes.c_int32, ctypes.c_void_p, ctypes.c_int64]
    image = ctypes.create_string_buffer(ptx.encode())
    with fluidcuda.Context(lib) as context:
        context.check(lib.fluid_cuda_load_generated(context.handle, image))
        rotate_bytes = 0
        if a.host_timing:
            def measure(fn):
                return timed(context, fn)
            how = "one launch at a time, timed from the host"
        else:
            measure = GraphTimer(context)
            rotate_bytes = 2 * measure.l2_bytes()
            how = ("CUDA graphs of 20 launches over buffers of at least "
                   "%d MB together (twice the L2 cache), timed by CUDA "
                   "events" % (rotate_bytes // 1000000))
        print("timing: " + how)
        # The copy bandwidth: 1 GiB, device to device.
        n = 1 << 30
        src, dst = context.malloc(n), context.malloc(n)
        lib.fluid_cuda_memset_zero(context.handle, src, n)
        reshape = lib.fluid_cuda_reshape
        a_desc = fluidrt.FluidTensor()
        a_desc.data, a_desc.dtype, a_desc.rank = src, fluidrt.DTYPES[np.dtype(np.float32)], 1
        a_desc.shape[0] = n // 4
        b_desc = fluidrt.FluidTensor()
        b_desc.data, b_desc.dtype, b_desc.rank = dst, a_desc.dtype, 1
        b_desc.shape[0] = n // 4
        reshape.restype = ctypes.c_int32
        reshape.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        # From the host either way: in a CUDA graph the copy is a memcpy
        # node, which ran at 2,449 GB/s against 2,949 (an H100, session
        # 26); at 1 GiB the host's share is about 2%.
        t = timed(context, lambda: context.check(reshape(
            context.handle, ctypes.byref(a_desc), ctypes.byref(b_desc))))
        copy_gbs = 2 * n / t / 1e9
        lib.fluid_cuda_free(context.handle, src)
        lib.fluid_cuda_free(context.handle, dst)
        print("device copy (fluid_cuda_reshape, 1 GiB): %.0f GB/s" % copy_gbs)

        same_size = SameSizeCopy(context, measure, rotate_bytes)
        seen = {}
        for launch in launches:
            key = (launch["kernel"], tuple(s for _, s in launch["tensors"]))
            seen.setdefault(key, [launch, 0])[1] += 1
        rows, scalar_rows = [], []
        total_s = total_copy_s = total_bytes = 0.0
        for (kernel, _), (launch, count) in seen.items():
            nbytes = launch_bytes(launch)
            # Graph timing replays the launch back to back: over several
            # sets of buffers, together at least twice the L2 cache, so
            # that each launch reads from device memory as in the step.
            # Sets are counted by the bytes allocated: a launch that reads
            # one row of a large input (batch norm's shift) runs on one set,
            # its few bytes in the L2 as in the step, where the kernel
            # before it read the same row.
            sets = [device_tensors(context, launch)
                    for _ in range(buffer_sets(
                        rotate_bytes, launch_bytes(launch, whole=True)))]
            vector = launch["vector"] is not None
            name = (launch["vector"] if vector else kernel).encode()
            blocks = launch["vector_blocks"] if vector else launch["blocks"]

            def launcher(name, blocks):
                def go(i=0):
                    tensors, descs = sets[i % len(sets)]
                    for k in launch["zero"]:
                        lib.fluid_cuda_memset_zero(context.handle,
                                                   tensors[k].pointer,
                                                   tensors[k].nbytes)
                    context.check(lib.fluid_cuda_launch_generated(
                        context.handle, image, name, blocks, 256, descs,
                        len(tensors)))
                return go
            seconds = measure(launcher(name, blocks))
            if a.scalar_too and vector:
                scalar_s = measure(launcher(kernel.encode(),
                                            launch["blocks"]))
                scalar_rows.append((scalar_s / seconds, kernel, count,
                                    launch["vector_blocks"], seconds,
                                    launch["blocks"], scalar_s))
            for tensors, _ in sets:
                for t_ in tensors:
                    t_.free()
            copy_s = same_size(nbytes)
            rows.append((nbytes, seconds, copy_s, kernel, count,
                         [s for _, s in launch["tensors"]]))
            total_s += seconds * count
            total_copy_s += copy_s * count
            total_bytes += nbytes * count
    rows.sort(reverse=True)
    print("\n% of copy: against the 1 GiB copy's bandwidth; % of same-size "
          "copy: the time of a copy kernel (fluid_cuda_neg, f32) reading and "
          "writing the launch's bytes, timed the same way, over the "
          "launch's time")
    print("\n| kernel | launches/step | tensors | MB | us | GB/s | % of copy "
          "| same-size copy us | % of same-size copy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for nbytes, seconds, copy_s, kernel, count, shapes in rows[: a.top]:
        gbs = nbytes / seconds / 1e9
        dims = " ".join("x".join(map(str, s)) or "scalar" for s in shapes)
        print("| %s | %d | %s | %.1f | %.1f | %.0f | %.0f%% | %.1f | %.0f%% |"
              % (kernel, count, dims, nbytes / 1e6, seconds * 1e6, gbs,
                 100 * gbs / copy_gbs, copy_s * 1e6, 100 * copy_s / seconds))
    if scalar_rows:
        print("\nThe element-at-a-time kernel against the vector one the "
              "step runs (--scalar-too), fastest scalar first:")
        print("| kernel | launches/step | vector blocks | vector us "
              "| scalar blocks | scalar us | scalar / vector |")
        print("|---|---|---|---|---|---|---|")
        for ratio, kernel, count, vblocks, vs, sblocks, ss in sorted(
                scalar_rows):
            print("| %s | %d | %d | %.1f | %d | %.1f | %.2f |"
                  % (kernel, count, vblocks, vs * 1e6, sblocks, ss * 1e6,
                     ratio))
    below = [r for r in rows if r[2] < 0.7 * r[1]]
    print("\n%d of %d distinct launches below 70%% of their same-size copy%s"
          % (len(below), len(rows), ": " + ", ".join(
              "%s (%.0f%%)" % (r[3], 100 * r[2] / r[1])
              for r in sorted(below, key=lambda r: r[2] / r[1]))
             if below else ""))
    print("\nall %d fused launches of the step: %.2f ms, %.2f GB moved, %.0f GB/s "
          "(%.0f%% of copy; same-size copies %.2f ms, %.0f%%)"
          % (sum(c for _, c in seen.values()), total_s * 1e3,
             total_bytes / 1e9, total_bytes / total_s / 1e9,
             100 * total_bytes / total_s / 1e9 / copy_gbs,
             total_copy_s * 1e3, 100 * total_copy_s / total_s))


if __name__ == "__main__":
    main()
