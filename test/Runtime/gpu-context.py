# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's context: memory and its statistics, copies, errors
that must not crash (bad descriptors, host pointers, bad arguments), and
the convolution algorithm cache: two contexts with the same cache file
(the second searches nothing and gets the same results), a corrupt file
(ignored with a warning, then rewritten), and the file's format. Also
that every entry point the cuda headers declare is exported.
"""

import ctypes
import os
import re
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import fluidcuda  # noqa: E402

HEADERS = [os.path.join(HERE, "..", "..", "runtime", "include", "fluid",
                        "runtime", name)
           for name in ("CudaRuntime.h", "CudaKernels.h")]
CACHE_HEADER = "fluid-conv-algorithm-cache-v1 "

# Convolutions whose algorithms the cache tests store: (input shape, out
# channels, kernel, strides, padding, dilation, groups).
CONVS = [
    ([2, 8, 12, 12], 16, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1], 1),
    ([2, 8, 12, 12], 8, [3, 3], [2, 2], [0, 0, 1, 1], [1, 1], 2),
]
MIB = 1 << 20


def run_convs(suite, ctx, inputs):
    """Runs the forward and both gradients of every CONVS entry twice (the
    second time from the context's memory) on `inputs`; returns the
    results of the first round."""
    results = []
    for (shape, out_channels, kernel, strides, padding, dilation,
         groups), (x, f, gy) in zip(CONVS, inputs):
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


def conv_inputs(suite):
    inputs = []
    for shape, out_channels, kernel, strides, padding, dilation, groups in \
            CONVS:
        n, c, h, w = shape
        oh = (h + padding[0] + padding[2] - dilation[0] * (kernel[0] - 1) -
              1) // strides[0] + 1
        ow = (w + padding[1] + padding[3] - dilation[1] * (kernel[1] - 1) -
              1) // strides[1] + 1
        inputs.append((suite.randn(*shape),
                       suite.randn(out_channels, c // groups, *kernel),
                       suite.randn(n, out_channels, oh, ow)))
    return inputs


def main():
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
                r"math=\w+ -> algo=\d+ algo_math=\w+", line), line
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

    for name in os.listdir(scratch):
        os.remove(os.path.join(scratch, name))
    os.rmdir(scratch)
    suite.finish()


if __name__ == "__main__":
    main()
