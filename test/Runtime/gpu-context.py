# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's context: memory and its statistics, copies, errors
that must not crash (bad descriptors, host pointers, bad arguments), and
the convolution algorithm cache: two contexts with the same cache file
(the second searches nothing and gets the same results), a corrupt file
(ignored with a warning, then rewritten), and the file's format. Also
that every entry point the cuda headers declare is exported.

Stream-ordered memory (fluid_cuda_allocate, fluid_cuda_release): aligned,
counted in the statistics, usable by kernels, errors for bad sizes and
for pointers it did not hand out, poisoning under FLUID_POISON_MEMORY=1
(in a child process), and use inside a CUDA graph capture (through the
CUDA runtime loaded by the library): allocate, kernels on the graph
allocation, release, replayed twice; releasing across a capture boundary
is refused. The workspace limit (fluid_cuda_set_workspace_limit): the
workspace never grows past it, convolutions still match, a padded input
over it is a clean error, and cached choices are honest about the limit
they were searched under.
"""

import ctypes
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402

HEADERS = [os.path.join(HERE, "..", "..", "runtime", "include", "fluid",
                        "runtime", name)
           for name in ("CudaRuntime.h", "CudaKernels.h")]
CACHE_HEADER = "fluid-conv-algorithm-cache-v3 "

# Convolutions whose algorithms the cache tests store: (input shape, out
# channels, kernel, strides, padding, dilation, groups).
CONVS = [
    ([2, 8, 12, 12], 16, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ([2, 8, 12, 12], 8, [3, 3], [2, 2], [0, 0, 1, 1], [1, 1], 2),
]
# Convolutions (f32) for the workspace-limit tests, large enough that
# cuDNN's fastest algorithms (FFT, Winograd, GEMM with a workspace) need
# workspace; symmetric padding, so that the calls themselves need none.
LIMIT_CONVS = [
    ([16, 64, 28, 28], 64, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ([8, 32, 32, 32], 64, [5, 5], [1, 1], [2, 2, 2, 2], [1, 1], 1),
]
MIB = 1 << 20


def descriptor(pointer, shape, dtype):
    """A fluid_tensor of device memory at `pointer` (not owned)."""
    t = fluidrt.FluidTensor()
    t.data = pointer
    t.dtype = fluidrt.DTYPES[np.dtype(dtype)]
    t.rank = len(shape)
    for i, d in enumerate(shape):
        t.shape[i] = d
    return t


def load_cudart():
    """The CUDA runtime the library itself loaded (found in the process's
    mappings), with the graph-capture calls declared."""
    with open("/proc/self/maps") as f:
        paths = sorted({line.split()[-1] for line in f
                        if "libcudart.so" in line})
    assert paths, "libcudart is not loaded"
    cudart = ctypes.CDLL(paths[0])
    void_p = ctypes.c_void_p
    for name, argtypes in {
            "cudaStreamBeginCapture": [void_p, ctypes.c_int],
            "cudaStreamEndCapture": [void_p, ctypes.POINTER(void_p)],
            "cudaGraphInstantiate": [ctypes.POINTER(void_p), void_p,
                                     ctypes.c_ulonglong],
            "cudaGraphLaunch": [void_p, void_p],
            "cudaGraphExecDestroy": [void_p],
            "cudaGraphDestroy": [void_p],
            "cudaGetErrorName": [ctypes.c_int]}.items():
        fn = getattr(cudart, name)
        fn.argtypes = argtypes
        fn.restype = ctypes.c_int
    cudart.cudaGetErrorName.restype = ctypes.c_char_p
    return cudart


def cuda_check(cudart, status, what):
    if status != 0:
        raise AssertionError(f"{what}: {cudart.cudaGetErrorName(status)}")


# cudaStreamCaptureModeThreadLocal, as the driver captures.
CAPTURE_THREAD_LOCAL = 1


def poison_child(path):
    """Run by poisoning() with FLUID_POISON_MEMORY=1: prints the distinct
    byte values of fresh stream-ordered memory."""
    lib = fluidcuda.load(path)
    with fluidcuda.Context(lib) as ctx:
        pointer = ctx.allocate(4096)
        data = (ctypes.c_uint8 * 4096)()
        ctx.check(lib.fluid_cuda_copy_to_host(ctx.handle, data, pointer,
                                              4096))
        ctx.release(pointer)
        ctx.synchronize()
    print(sorted(set(bytes(data))))


def run_convs(suite, ctx, inputs, convs=CONVS):
    """Runs the forward and both gradients of every CONVS entry twice (the
    second time from the context's memory) on `inputs`; returns the
    results of the first round."""
    results = []
    for (shape, out_channels, kernel, strides, padding, dilation,
         groups), (x, f, gy) in zip(convs, inputs):
        params = fluidcuda.Conv2dParams(strides, padding, dilation, groups)
        dx, df, dgy = ctx.upload(x), ctx.upload(f), ctx.upload(gy)
        y, gx = ctx.empty(gy.shape, x.dtype), ctx.empty(x.shape, x.dtype)
        gf = ctx.empty(f.shape, x.dtype)
        for repeat in range(2):
            ctx("conv2d", dx, df, None, y, params)
            ctx("conv2d_grad_input", dgy, df, gx, params)
            ctx("conv2d_grad_filter", dgy, dx, gf, params)
            if repeat == 0:
                results.append([t.download() for t in (y, gx, gf)])
        for t in (dx, df, dgy, y, gx, gf):
            t.free()
    return results


def conv_inputs(suite, convs=CONVS, dtype=np.float64):
    inputs = []
    for shape, out_channels, kernel, strides, padding, dilation, groups in \
            convs:
        n, c, h, w = shape
        oh = (h + padding[0] + padding[2] - dilation[0] * (kernel[0] - 1) -
              1) // strides[0] + 1
        ow = (w + padding[1] + padding[3] - dilation[1] * (kernel[1] - 1) -
              1) // strides[1] + 1
        inputs.append((suite.randn(*shape, dtype=dtype),
                       suite.randn(out_channels, c // groups, *kernel,
                                   dtype=dtype),
                       suite.randn(n, out_channels, oh, ow, dtype=dtype)))
    return inputs


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--poison-child":
        poison_child(sys.argv[2])
        return
    suite = fluidcuda.Suite(sys.argv)
    lib = suite.lib
    scratch = tempfile.mkdtemp(prefix="fluid-gpu-context-")
    cache_path = os.path.join(scratch, "conv-algorithms.txt")

    def headers_match_exports():
        declared = set()
        for header in HEADERS:
            with open(header) as f:
                declared |= set(re.findall(r"\b(fluid_cuda_\w+)\s*\(",
                                           f.read()))
        missing = sorted(n for n in declared if not hasattr(lib, n))
        assert not missing, f"declared but not exported: {missing}"
        return f"{len(declared)} entry points"
    suite.case("every declared fluid_cuda_* entry point is exported",
               headers_match_exports)

    def null_options_and_bad_device():
        handle = ctypes.c_void_p()
        fluidcuda.expect_status(
            lib, lib.fluid_cuda_context_create(None, ctypes.byref(handle)),
            fluidcuda.OK)
        lib.fluid_cuda_context_destroy(handle)
        lib.fluid_cuda_context_destroy(None)
        options = fluidcuda.Options(999, 0, None)
        status = lib.fluid_cuda_context_create(ctypes.byref(options),
                                               ctypes.byref(handle))
        fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                ["device 999 does not exist"])
        status = lib.fluid_cuda_synchronize(None)
        fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                ["context is null"])
    suite.case("context with NULL options, a missing device, a NULL context",
               null_options_and_bad_device)

    with fluidcuda.Context(lib) as ctx:
        def memory_statistics():
            before = ctx.stats()
            a, b, c = (ctx.malloc(n * MIB) for n in (1, 2, 4))
            stats = ctx.stats()
            assert stats["allocated_bytes"] == before["allocated_bytes"] + \
                7 * MIB, stats
            assert stats["peak_allocated_bytes"] >= 7 * MIB, stats
            lib.fluid_cuda_free(ctx.handle, b)
            lib.fluid_cuda_free(ctx.handle, c)
            after = ctx.stats()
            assert after["allocated_bytes"] == before["allocated_bytes"] + \
                MIB, after
            assert after["peak_allocated_bytes"] == \
                stats["peak_allocated_bytes"], after
            lib.fluid_cuda_free(ctx.handle, a)
            lib.fluid_cuda_free(ctx.handle, None)
            assert fluidcuda.last_error(lib) == "", fluidcuda.last_error(lib)
            lib.fluid_cuda_free(ctx.handle, a)
            assert "not allocated by this context" in \
                fluidcuda.last_error(lib), fluidcuda.last_error(lib)
            assert ctx.malloc(0) is None
            status = lib.fluid_cuda_malloc(ctx.handle, -1,
                                           ctypes.byref(ctypes.c_void_p()))
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["bytes must be >= 0"])
            status = lib.fluid_cuda_malloc(ctx.handle, 1 << 48,
                                           ctypes.byref(ctypes.c_void_p()))
            fluidcuda.expect_status(lib, status, fluidcuda.OUT_OF_MEMORY,
                                    ["out of device memory"])
            return (f"peak {stats['peak_allocated_bytes']} bytes, "
                    f"{ctx.stats()['allocated_bytes']} held")
        suite.case("malloc, free and peak memory statistics",
                   memory_statistics)

        def copies_round_trip():
            data = suite.randn(1000)
            t = ctx.upload(data)
            assert np.array_equal(t.download(), data)
            fluidcuda.expect_status(
                lib, lib.fluid_cuda_memset_zero(ctx.handle, t.pointer,
                                                t.nbytes), fluidcuda.OK)
            assert not t.download().any()
            status = lib.fluid_cuda_copy_to_device(ctx.handle, t.pointer,
                                                   data.ctypes.data, -8)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["bytes must be >= 0"])
            status = lib.fluid_cuda_copy_to_host(ctx.handle, None, t.pointer,
                                                 8)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["destination is null"])
            t.free()
        suite.case("copies to and from the device, memset", copies_round_trip)

        def sum_scratch():
            fn = lib.fluid_cuda_sum_scratch
            fn.restype = ctypes.c_int32
            fn.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
                           ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p]
            counters, partials = fluidrt.FluidTensor(), fluidrt.FluidTensor()

            def get(n, m, dtype):
                return fn(ctx.handle, n, m, dtype, ctypes.byref(counters),
                          ctypes.byref(partials))
            f32 = fluidrt.DTYPES[np.dtype(np.float32)]
            f64 = fluidrt.DTYPES[np.dtype(np.float64)]
            fluidcuda.expect_status(lib, get(100, 300, f32), fluidcuda.OK)
            first = counters.data
            assert (counters.dtype, counters.rank, counters.shape[0]) == \
                (fluidrt.DTYPES[np.dtype(np.int32)], 1, 100)
            assert (partials.dtype, partials.shape[0]) == (f32, 300)
            held = np.empty(100, np.int32)
            fluidcuda.expect_status(lib, lib.fluid_cuda_copy_to_host(
                ctx.handle, held.ctypes.data, counters.data, 400),
                fluidcuda.OK)
            assert not held.any(), held
            # Smaller requests get the same memory; a larger one new,
            # zeroed counters.
            fluidcuda.expect_status(lib, get(10, 20, f64), fluidcuda.OK)
            assert counters.data == first and partials.dtype == f64
            fluidcuda.expect_status(lib, get(5000, 10, f32), fluidcuda.OK)
            big = np.empty(5000, np.int32)
            fluidcuda.expect_status(lib, lib.fluid_cuda_copy_to_host(
                ctx.handle, big.ctypes.data, counters.data, 20000),
                fluidcuda.OK)
            assert not big.any()
            for args, fragment in (((0, 1, f32), "counter_count"),
                                   ((1, -1, f32), "partial_count"),
                                   ((1, 1, fluidrt.DTYPES[np.dtype(np.int32)]),
                                    "must be f32 or f64")):
                fluidcuda.expect_status(lib, get(*args),
                                        fluidcuda.INVALID_ARGUMENT, [fragment])
            status = fn(ctx.handle, 1, 1, f32, None, ctypes.byref(partials))
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["must not be null"])
        suite.case("sum scratch: zeroed counters, reused, grown, bad "
                   "arguments are errors", sum_scratch)

        def bad_descriptors_are_errors():
            x = ctx.upload(suite.randn(2, 4, 8, 8))
            f = ctx.upload(suite.randn(6, 4, 3, 3))
            y = ctx.empty((2, 6, 8, 8), np.float64)
            params = fluidcuda.Conv2dParams([1, 1], [1, 1, 1, 1], [1, 1], 1)
            expectations = [
                (("conv2d", x, f, None, y, params), fluidcuda.OK, []),
                (("conv2d", suite.randn(2, 4, 8, 8), f, None, y, params),
                 fluidcuda.INVALID_ARGUMENT,
                 ["input data", "is host memory, not device memory"]),
                (("conv2d", x, ctx.upload(suite.randn(6, 3, 3, 3)), None, y,
                  params), fluidcuda.INVALID_ARGUMENT,
                 ["needs dimension 1 = input channels / groups = 4"]),
                (("conv2d", x, f, None, ctx.empty((2, 6, 7, 8), np.float64),
                  params), fluidcuda.INVALID_ARGUMENT,
                 ["output shape [2,6,7,8] does not match expected "
                  "[2,6,8,8]"]),
                (("conv2d", x, ctx.upload(suite.randn(6, 4, 3, 3,
                                                      dtype=np.float32)),
                  None, y, params), fluidcuda.INVALID_ARGUMENT, ["dtype"]),
                (("conv2d", x, f, None, y, None), fluidcuda.INVALID_ARGUMENT,
                 []),
                (("conv2d", x, f, None, y,
                  fluidcuda.Conv2dParams([1, 1], [1, 1, 1, 1], [1, 1], 3)),
                 fluidcuda.INVALID_ARGUMENT, ["not divisible by groups 3"]),
                (("conv2d", x, f, None, y,
                  fluidcuda.Conv2dParams([0, 1], [1, 1, 1, 1], [1, 1], 1)),
                 fluidcuda.INVALID_ARGUMENT, ["stride along height"]),
                (("conv2d", ctx.upload(np.zeros((2, 4, 8, 8), np.int32)), f,
                  None, y, params), fluidcuda.UNSUPPORTED, []),
                (("conv2d_grad_input", y, f, x, None),
                 fluidcuda.INVALID_ARGUMENT, []),
                (("conv2d_grad_filter", ctx.empty((2, 6, 4, 4), np.float64), x,
                  f, params), fluidcuda.INVALID_ARGUMENT,
                 ["grad_output shape"]),
                (("matmul", x, f, y, fluidcuda.MatmulParams(0, 0)),
                 fluidcuda.INVALID_ARGUMENT, ["lhs must have rank 2 or 3"]),
            ]
            for args, expected, fragments in expectations:
                status, _ = ctx.status(*args)
                if expected != fluidcuda.OK:
                    fragments = [f"fluid_cuda_{args[0]}: "] + fragments
                fluidcuda.expect_status(lib, status, expected, fragments)
            status = lib.fluid_cuda_conv2d(None, ctypes.byref(x.desc),
                                           ctypes.byref(f.desc), None,
                                           ctypes.byref(y.desc),
                                           ctypes.byref(params))
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["context is null"])
            # The context still works, and reports no error.
            ctx("conv2d", x, f, None, y, params)
            ctx.synchronize()
            assert not np.isnan(y.download()).any()
            return f"{len(expectations) + 1} calls"
        suite.case("bad descriptors are errors, the context still works",
                   bad_descriptors_are_errors)

        def stream_ordered_memory():
            before = ctx.stats()
            sizes = [1, 255, 4096, 3 * MIB]
            pointers = [ctx.allocate(n) for n in sizes]
            for n, pointer in zip(sizes, pointers):
                assert pointer and pointer % 256 == 0, (n, hex(pointer))
            stats = ctx.stats()
            assert stats["allocated_bytes"] == \
                before["allocated_bytes"] + sum(sizes), stats
            assert stats["peak_allocated_bytes"] >= \
                stats["allocated_bytes"], stats
            # Kernels take it: relu from one allocation into another.
            x = suite.randn(1000)
            ctx.check(lib.fluid_cuda_copy_to_device(
                ctx.handle, pointers[3], x.ctypes.data, x.nbytes))
            source = descriptor(pointers[3], [1000], np.float64)
            target = descriptor(pointers[3] + 8000, [1000], np.float64)
            ctx.check(lib.fluid_cuda_relu(ctx.handle, ctypes.byref(source),
                                          ctypes.byref(target)))
            got = np.empty(1000)
            ctx.check(lib.fluid_cuda_copy_to_host(
                ctx.handle, got.ctypes.data, pointers[3] + 8000, 8000))
            assert np.array_equal(got, np.maximum(x, 0)), got
            # An operand running past the end of its allocation.
            past = descriptor(pointers[2], [513], np.float64)
            status = lib.fluid_cuda_relu(ctx.handle, ctypes.byref(past),
                                         ctypes.byref(target))
            fluidcuda.expect_status(
                lib, status, fluidcuda.INVALID_ARGUMENT,
                ["input data", "(4104 bytes) runs past the end of its "
                 "4096-byte allocation from fluid_cuda_allocate"])
            for pointer in pointers:
                ctx.release(pointer)
            after = ctx.stats()
            assert after["allocated_bytes"] == before["allocated_bytes"], \
                after
            assert after["peak_allocated_bytes"] == \
                stats["peak_allocated_bytes"], after
            ctx.synchronize()
            return f"peak {after['peak_allocated_bytes']} bytes"
        suite.case("allocate and release: aligned, counted, used by kernels",
                   stream_ordered_memory)

        def stream_ordered_errors():
            out = ctypes.c_void_p(1)
            status = lib.fluid_cuda_allocate(ctx.handle, 0, ctypes.byref(out))
            fluidcuda.expect_status(lib, status, fluidcuda.OK)
            assert out.value is None, out
            for nbytes, expected, fragments in [
                    (-1, fluidcuda.INVALID_ARGUMENT, ["bytes must be >= 0"]),
                    (1 << 48, fluidcuda.OUT_OF_MEMORY,
                     ["out of device memory"])]:
                out = ctypes.c_void_p(1)
                status = lib.fluid_cuda_allocate(ctx.handle, nbytes,
                                                 ctypes.byref(out))
                fluidcuda.expect_status(lib, status, expected,
                                        ["fluid_cuda_allocate: "] + fragments)
                assert out.value is None, out
            status = lib.fluid_cuda_allocate(ctx.handle, 16, None)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["out is null"])
            status = lib.fluid_cuda_allocate(None, 16,
                                             ctypes.byref(ctypes.c_void_p()))
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["context is null"])
            fluidcuda.expect_status(
                lib, lib.fluid_cuda_release(ctx.handle, None), fluidcuda.OK)
            before = ctx.stats()
            malloced = ctx.malloc(1024)
            fluidcuda.expect_status(
                lib, lib.fluid_cuda_release(ctx.handle, malloced),
                fluidcuda.INVALID_ARGUMENT,
                ["allocated by fluid_cuda_malloc; free it with "
                 "fluid_cuda_free"])
            fluidcuda.expect_status(
                lib, lib.fluid_cuda_release(ctx.handle, malloced + 256),
                fluidcuda.INVALID_ARGUMENT,
                ["was not allocated by fluid_cuda_allocate of this context"])
            lib.fluid_cuda_free(ctx.handle, malloced)
            pointer = ctx.allocate(1024)
            lib.fluid_cuda_free(ctx.handle, pointer)
            assert "release it with fluid_cuda_release" in \
                fluidcuda.last_error(lib), fluidcuda.last_error(lib)
            ctx.release(pointer)
            fluidcuda.expect_status(
                lib, lib.fluid_cuda_release(ctx.handle, pointer),
                fluidcuda.INVALID_ARGUMENT, ["or is already released"])
            assert ctx.stats()["allocated_bytes"] == \
                before["allocated_bytes"], ctx.stats()
            ctx.synchronize()
        suite.case("allocate and release: bad sizes and foreign pointers are "
                   "errors", stream_ordered_errors)

        def poisoning():
            env = dict(os.environ, FLUID_POISON_MEMORY="1")
            result = subprocess.run(
                [os.environ.get("FLUID_TEST_PYTHON", sys.executable),
                 __file__, "--poison-child", sys.argv[1]],
                env=env, capture_output=True, text=True)
            assert result.returncode == 0, result.stderr
            assert result.stdout.strip() == "[255]", result.stdout
        suite.case("FLUID_POISON_MEMORY=1 fills fluid_cuda_allocate memory "
                   "with 0xFF", poisoning)

        def inside_stream_capture():
            cudart = load_cudart()
            stream = ctx.stream()
            n = 4096
            source = ctx.upload(suite.randn(n))
            result = ctx.empty((n,), np.float64)
            outside = ctx.allocate(64)
            before = ctx.stats()
            cuda_check(cudart, cudart.cudaStreamBeginCapture(
                stream, CAPTURE_THREAD_LOCAL), "cudaStreamBeginCapture")
            graph = ctypes.c_void_p()
            try:
                temporary = ctx.allocate(n * 8)
                during = ctx.stats()
                t = descriptor(temporary, [n], np.float64)
                ctx.check(lib.fluid_cuda_reshape(
                    ctx.handle, ctypes.byref(source.desc), ctypes.byref(t)))
                ctx.check(lib.fluid_cuda_neg(ctx.handle, ctypes.byref(t),
                                             ctypes.byref(t)))
                ctx.check(lib.fluid_cuda_exp(ctx.handle, ctypes.byref(t),
                                             ctypes.byref(result.desc)))
                # Memory from outside the capture cannot be freed in it.
                fluidcuda.expect_status(
                    lib, lib.fluid_cuda_release(ctx.handle, outside),
                    fluidcuda.INVALID_ARGUMENT,
                    ["allocated outside any CUDA graph capture but is "
                     "released inside CUDA graph capture"])
                ctx.release(temporary)
            finally:
                ended = cudart.cudaStreamEndCapture(stream,
                                                    ctypes.byref(graph))
            cuda_check(cudart, ended, "cudaStreamEndCapture")
            after = ctx.stats()
            assert during["allocated_bytes"] == \
                before["allocated_bytes"] + n * 8, during
            assert after["allocated_bytes"] == before["allocated_bytes"], \
                after
            executable = ctypes.c_void_p()
            cuda_check(cudart, cudart.cudaGraphInstantiate(
                ctypes.byref(executable), graph, 0), "cudaGraphInstantiate")
            try:
                for replay in range(2):
                    x = suite.randn(n)
                    ctx.check(lib.fluid_cuda_copy_to_device(
                        ctx.handle, source.pointer, x.ctypes.data, x.nbytes))
                    cuda_check(cudart, cudart.cudaGraphLaunch(executable,
                                                              stream),
                               "cudaGraphLaunch")
                    ctx.synchronize()
                    got = result.download()
                    assert np.array_equal(got, np.exp(-x)) or \
                        np.allclose(got, np.exp(-x), rtol=1e-14), replay
            finally:
                cudart.cudaGraphExecDestroy(executable)
                cudart.cudaGraphDestroy(graph)
            ctx.release(outside)
            for t in (source, result):
                t.free()
            ctx.synchronize()
            return "a graph with its own allocation, replayed twice"
        suite.case("allocate and release inside a CUDA graph capture",
                   inside_stream_capture)

        def synchronize_after_work():
            ctx.synchronize()
            stats = ctx.stats()
            return (f"workspace {stats['workspace_bytes']} bytes, "
                    f"{stats['algorithm_searches']} searches")
        suite.case("synchronize reports no error after valid work",
                   synchronize_after_work)

    inputs = conv_inputs(suite)
    first = {}

    def first_run_searches_and_saves():
        with fluidcuda.Context(lib, cache_path=cache_path) as ctx:
            first["results"] = run_convs(suite, ctx, inputs)
            stats = ctx.stats()
        keys = 3 * len(CONVS)
        assert stats["algorithm_searches"] == keys, stats
        assert stats["algorithm_cache_hits"] == keys, stats
        with open(cache_path) as f:
            lines = f.read().splitlines()
        assert lines[0].startswith(CACHE_HEADER), lines[0]
        assert len(lines) == 1 + keys, lines
        for line in lines[1:]:
            assert re.fullmatch(
                r"(fwd|bwd-data|bwd-filter) n=\d+ c=\d+ h=\d+ w=\d+ k=\d+ "
                r"c/g=\d+ r=\d+ s=\d+ stride=\d+,\d+ pad=\d+,\d+ "
                r"dilation=\d+,\d+ groups=\d+ dtype=f64 layout=nchw "
                r"math=\w+ -> algo=\d+ algo_math=\w+ "
                r"workspace_limit=none", line), line
        leftovers = [n for n in os.listdir(scratch) if ".tmp." in n]
        assert not leftovers, leftovers
        return f"{stats['algorithm_searches']} searches; {lines[1]}"
    suite.case("first context searches each convolution once and saves",
               first_run_searches_and_saves)

    def second_run_searches_nothing():
        with fluidcuda.Context(lib, cache_path=cache_path) as ctx:
            results = run_convs(suite, ctx, inputs)
            stats = ctx.stats()
        assert stats["algorithm_searches"] == 0, stats
        assert stats["algorithm_cache_hits"] >= 1, stats
        for got, want in zip(results, first["results"]):
            for g, w, what in zip(got, want,
                                  ["output", "grad_input", "grad_filter"]):
                # The same algorithms; those summing with atomics may round
                # differently from run to run.
                fluidcuda.expect_close(g, w, "f64", what)
        return f"{stats['algorithm_cache_hits']} cache hits"
    suite.case("second context with the same cache file searches nothing",
               second_run_searches_nothing)

    def corrupt_cache_is_ignored():
        for damage, expected in [
                (b"\x00\x01 not a cache\n", "ignoring the convolution"),
                (None, "line 2")]:
            if damage is None:
                with open(cache_path) as f:
                    lines = f.read().splitlines()
                lines[1] = lines[1].replace("algo=", "algo=x")
                damage = ("\n".join(lines) + "\n").encode()
            with open(cache_path, "wb") as f:
                f.write(damage)
            with fluidcuda.CapturedStderr() as captured:
                ctx = fluidcuda.Context(lib, cache_path=cache_path)
            try:
                assert "warning" in captured.text and \
                    expected in captured.text and \
                    cache_path in captured.text, captured.text
                run_convs(suite, ctx, inputs)
                stats = ctx.stats()
                assert stats["algorithm_searches"] == 3 * len(CONVS), stats
            finally:
                ctx.close()
        # The file was rewritten: a third context searches nothing.
        with fluidcuda.CapturedStderr() as captured:
            with fluidcuda.Context(lib, cache_path=cache_path) as ctx:
                run_convs(suite, ctx, inputs)
                stats = ctx.stats()
        assert stats["algorithm_searches"] == 0, stats
        assert "warning" not in captured.text, captured.text
        return captured.text.strip() or None
    suite.case("a corrupt cache file is ignored with a warning, then "
               "rewritten", corrupt_cache_is_ignored)

    def unwritable_cache_path_is_a_warning():
        path = os.path.join(scratch, "missing-folder", "cache.txt")
        with fluidcuda.CapturedStderr() as captured:
            with fluidcuda.Context(lib, cache_path=path) as ctx:
                run_convs(suite, ctx, inputs[:1])
        assert "not saved" in captured.text, captured.text
    suite.case("an unwritable cache path is a warning at destroy",
               unwritable_cache_path_is_a_warning)

    limit_inputs = conv_inputs(suite, LIMIT_CONVS, np.float32)

    def workspace_stays_within_the_limit():
        with fluidcuda.Context(lib) as ctx:
            free = run_convs(suite, ctx, limit_inputs, LIMIT_CONVS)
            grown = ctx.stats()["workspace_bytes"]
            ctx.check(lib.fluid_cuda_set_workspace_limit(ctx.handle, 0))
            assert ctx.stats()["workspace_bytes"] == 0, ctx.stats()
            limited = run_convs(suite, ctx, limit_inputs, LIMIT_CONVS)
            stats = ctx.stats()
            assert stats["workspace_bytes"] == 0, stats
            for got, want in zip(limited, free):
                for g, w, what in zip(got, want, ["output", "grad_input",
                                                  "grad_filter"]):
                    fluidcuda.expect_close(g, w, "f32", what)
            # Asymmetric padding copies the input into the workspace.
            x, f, gy = inputs[1]
            params = fluidcuda.Conv2dParams(*CONVS[1][3:])
            dx, df = ctx.upload(x), ctx.upload(f)
            y = ctx.empty(gy.shape, x.dtype)
            status, _ = ctx.status("conv2d", dx, df, None, y, params)
            fluidcuda.expect_status(
                lib, status, fluidcuda.OUT_OF_MEMORY,
                ["fluid_cuda_conv2d: the forward convolution's explicitly "
                 "padded input needs", "more than the context's workspace "
                 "limit of 0 bytes (fluid_cuda_set_workspace_limit)"])
            ctx.check(lib.fluid_cuda_set_workspace_limit(ctx.handle, -1))
            ctx("conv2d", dx, df, None, y, params)
            ctx.synchronize()
            assert not np.isnan(y.download()).any()
            for t in (dx, df, y):
                t.free()
            status = lib.fluid_cuda_set_workspace_limit(None, 0)
            fluidcuda.expect_status(lib, status, fluidcuda.INVALID_ARGUMENT,
                                    ["context is null"])
        return f"workspace {grown} bytes without a limit, 0 under limit 0"
    suite.case("the workspace never grows past fluid_cuda_set_workspace_limit",
               workspace_stays_within_the_limit)

    def cached_choices_are_honest_about_the_limit():
        path = os.path.join(scratch, "limited.txt")

        def read_choices():
            with open(path) as f:
                return f.read().splitlines()[1:]

        def run(limit):
            with fluidcuda.Context(lib, cache_path=path) as ctx:
                if limit is not None:
                    ctx.check(lib.fluid_cuda_set_workspace_limit(ctx.handle,
                                                                 limit))
                run_convs(suite, ctx, limit_inputs, LIMIT_CONVS)
                return ctx.stats()

        keys = 3 * len(LIMIT_CONVS)
        unlimited = run(None)
        assert unlimited["algorithm_searches"] == keys, unlimited
        first = read_choices()
        assert all(line.endswith(" workspace_limit=none") for line in first), \
            first
        # Limit 0: a choice that needs workspace is searched again, and the
        # new one records the limit that left algorithms out.
        zero = run(0)
        assert zero["workspace_bytes"] == 0, zero
        second = read_choices()
        limited = [line for line in second
                   if not line.endswith(" workspace_limit=none")]
        assert all(line.endswith(" workspace_limit=0") for line in limited), \
            second
        assert zero["algorithm_searches"] == len(limited), (zero, second)
        # Those are not trusted without the limit: searched again.
        again = run(None)
        assert again["algorithm_searches"] == len(limited), (again, second)
        third = read_choices()
        assert all(line.endswith(" workspace_limit=none") for line in third), \
            third
        return (f"{len(limited)} of {keys} choices searched again under "
                f"limit 0 and again without it")
    suite.case("cached choices are honest about their workspace limit",
               cached_choices_are_honest_about_the_limit)

    for name in os.listdir(scratch):
        os.remove(os.path.join(scratch, name))
    os.rmdir(scratch)
    suite.finish()


if __name__ == "__main__":
    main()
