# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""Generated kernels (fluid_cuda_load_generated, fluid_cuda_launch_generated,
CudaKernels.h) on a hand-written PTX module, as the compiler will emit one
(PTX for sm_90, one pointer parameter per tensor, a grid-stride loop over a
fixed N): results equal NumPy's bit for bit over many grid shapes; a
second load of the same address does not read the image again; a launch
loads its module when needed; a kernel of 17 pointers; a kernel's
.maxntid is honoured; launches inside a CUDA graph capture, replayed,
while a load there is refused without breaking the capture; two contexts
load the same image independently; and every bad call is an error with a
message, after which the context still works: NULL context, image, name,
tensors or descriptor, blocks or threads out of range, a negative count or
one that is not the kernel's, a non-pointer parameter, an unknown kernel
(the message lists the module's), host memory, a PTX the driver cannot
JIT-compile (the message holds ptxas's log) and an image that is no module.
"""

import ctypes
import importlib
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
harness = importlib.import_module("gpu-elementwise")
gpu_context = importlib.import_module("gpu-context")
fluidcuda = harness.fluidcuda
fluidrt = harness.fluidrt
I32, I64, VOID_P, TENSOR = harness.I32, harness.I64, fluidcuda.VOID_P, \
    harness.TENSOR
OK, INVALID_ARGUMENT, UNSUPPORTED, DEVICE = fluidcuda.OK, \
    fluidcuda.INVALID_ARGUMENT, fluidcuda.UNSUPPORTED, fluidcuda.DEVICE

# The elements every kernel of MODULE loops over.
N = 1000

# nvcc 13 -arch=sm_90 -ptx of (N = 1000; .version lowered to 8.0, the
# comments dropped):
#   extern "C" __global__ void scale_add(const float *x, const float *y,
#                                        float *out)        // 2 x + y
#   extern "C" __global__ void __launch_bounds__(128)
#       fill_index(float *out)                             // out[i] = i
#   extern "C" __global__ void first_minus_last(const float *a0, ...,
#       const float *a15, float *out)                      // a0 - a15
#   extern "C" __global__ void fill_value(float *out, int value)
# each a grid-stride loop
#   for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N;
#        i += gridDim.x * blockDim.x)
MODULE = r"""
.version 8.0
.target sm_90
.address_size 64

.visible .entry scale_add(
  .param .u64 scale_add_param_0,
  .param .u64 scale_add_param_1,
  .param .u64 scale_add_param_2
)
{
  .reg .pred %p<3>;
  .reg .f32 %f<4>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<11>;

  ld.param.u64 %rd4, [scale_add_param_0];
  ld.param.u64 %rd5, [scale_add_param_1];
  ld.param.u64 %rd6, [scale_add_param_2];
  mov.u32 %r1, %ntid.x;
  mov.u32 %r6, %ctaid.x;
  mov.u32 %r7, %tid.x;
  mad.lo.s32 %r9, %r6, %r1, %r7;
  setp.gt.s32 %p1, %r9, 999;
  @%p1 bra $L__BB0_3;

  mov.u32 %r8, %nctaid.x;
  mul.lo.s32 %r3, %r8, %r1;
  cvta.to.global.u64 %rd1, %rd4;
  cvta.to.global.u64 %rd2, %rd5;
  cvta.to.global.u64 %rd3, %rd6;

$L__BB0_2:
  mul.wide.s32 %rd7, %r9, 4;
  add.s64 %rd8, %rd1, %rd7;
  ld.global.f32 %f1, [%rd8];
  add.s64 %rd9, %rd2, %rd7;
  ld.global.f32 %f2, [%rd9];
  fma.rn.f32 %f3, %f1, 0f40000000, %f2;
  add.s64 %rd10, %rd3, %rd7;
  st.global.f32 [%rd10], %f3;
  add.s32 %r9, %r9, %r3;
  setp.lt.s32 %p2, %r9, 1000;
  @%p2 bra $L__BB0_2;

$L__BB0_3:
  ret;

}
.visible .entry fill_index(
  .param .u64 fill_index_param_0
)
.maxntid 128, 1, 1
{
  .reg .pred %p<3>;
  .reg .f32 %f<2>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<5>;

  ld.param.u64 %rd2, [fill_index_param_0];
  mov.u32 %r1, %ntid.x;
  mov.u32 %r6, %ctaid.x;
  mov.u32 %r7, %tid.x;
  mad.lo.s32 %r9, %r6, %r1, %r7;
  setp.gt.s32 %p1, %r9, 999;
  @%p1 bra $L__BB1_3;

  mov.u32 %r8, %nctaid.x;
  mul.lo.s32 %r3, %r8, %r1;
  cvta.to.global.u64 %rd1, %rd2;

$L__BB1_2:
  mul.wide.s32 %rd3, %r9, 4;
  add.s64 %rd4, %rd1, %rd3;
  cvt.rn.f32.s32 %f1, %r9;
  st.global.f32 [%rd4], %f1;
  add.s32 %r9, %r9, %r3;
  setp.lt.s32 %p2, %r9, 1000;
  @%p2 bra $L__BB1_2;

$L__BB1_3:
  ret;

}
.visible .entry first_minus_last(
  .param .u64 first_minus_last_param_0,
  .param .u64 first_minus_last_param_1,
  .param .u64 first_minus_last_param_2,
  .param .u64 first_minus_last_param_3,
  .param .u64 first_minus_last_param_4,
  .param .u64 first_minus_last_param_5,
  .param .u64 first_minus_last_param_6,
  .param .u64 first_minus_last_param_7,
  .param .u64 first_minus_last_param_8,
  .param .u64 first_minus_last_param_9,
  .param .u64 first_minus_last_param_10,
  .param .u64 first_minus_last_param_11,
  .param .u64 first_minus_last_param_12,
  .param .u64 first_minus_last_param_13,
  .param .u64 first_minus_last_param_14,
  .param .u64 first_minus_last_param_15,
  .param .u64 first_minus_last_param_16
)
{
  .reg .pred %p<3>;
  .reg .f32 %f<4>;
  .reg .b32 %r<10>;
  .reg .b64 %rd<11>;

  ld.param.u64 %rd4, [first_minus_last_param_0];
  ld.param.u64 %rd5, [first_minus_last_param_15];
  ld.param.u64 %rd6, [first_minus_last_param_16];
  mov.u32 %r1, %ntid.x;
  mov.u32 %r6, %ctaid.x;
  mov.u32 %r7, %tid.x;
  mad.lo.s32 %r9, %r6, %r1, %r7;
  setp.gt.s32 %p1, %r9, 999;
  @%p1 bra $L__BB2_3;

  mov.u32 %r8, %nctaid.x;
  mul.lo.s32 %r3, %r8, %r1;
  cvta.to.global.u64 %rd1, %rd4;
  cvta.to.global.u64 %rd2, %rd5;
  cvta.to.global.u64 %rd3, %rd6;

$L__BB2_2:
  mul.wide.s32 %rd7, %r9, 4;
  add.s64 %rd8, %rd1, %rd7;
  add.s64 %rd9, %rd2, %rd7;
  ld.global.f32 %f1, [%rd9];
  ld.global.f32 %f2, [%rd8];
  sub.f32 %f3, %f2, %f1;
  add.s64 %rd10, %rd3, %rd7;
  st.global.f32 [%rd10], %f3;
  add.s32 %r9, %r9, %r3;
  setp.lt.s32 %p2, %r9, 1000;
  @%p2 bra $L__BB2_2;

$L__BB2_3:
  ret;

}
.visible .entry fill_value(
  .param .u64 fill_value_param_0,
  .param .u32 fill_value_param_1
)
{
  .reg .pred %p<3>;
  .reg .f32 %f<2>;
  .reg .b32 %r<11>;
  .reg .b64 %rd<5>;

  ld.param.u64 %rd2, [fill_value_param_0];
  ld.param.u32 %r6, [fill_value_param_1];
  mov.u32 %r1, %ntid.x;
  mov.u32 %r7, %ctaid.x;
  mov.u32 %r8, %tid.x;
  mad.lo.s32 %r10, %r7, %r1, %r8;
  setp.gt.s32 %p1, %r10, 999;
  @%p1 bra $L__BB3_3;

  cvt.rn.f32.s32 %f1, %r6;
  mov.u32 %r9, %nctaid.x;
  mul.lo.s32 %r3, %r9, %r1;
  cvta.to.global.u64 %rd1, %rd2;

$L__BB3_2:
  mul.wide.s32 %rd3, %r10, 4;
  add.s64 %rd4, %rd1, %rd3;
  st.global.f32 [%rd4], %f1;
  add.s32 %r10, %r10, %r3;
  setp.lt.s32 %p2, %r10, 1000;
  @%p2 bra $L__BB3_2;

$L__BB3_3:
  ret;

}
"""

# ptxas rejects this one: %rd1 is not declared.
BROKEN = r"""
.version 8.0
.target sm_90
.address_size 64

.visible .entry broken(
  .param .u64 broken_param_0
)
{
  ld.param.u64 %rd1, [broken_param_0];
  ret;
}
"""


def declare(lib):
    lib.fluid_cuda_load_generated.restype = I32
    lib.fluid_cuda_load_generated.argtypes = [VOID_P, VOID_P]
    lib.fluid_cuda_launch_generated.restype = I32
    lib.fluid_cuda_launch_generated.argtypes = [
        VOID_P, VOID_P, ctypes.c_char_p, I64, I32, ctypes.POINTER(TENSOR),
        I64]


# Every Image made, kept alive: the runtime keys modules by address, so an
# image must outlive the contexts that loaded it (a freed buffer's address
# may come back for another image, which would then be taken as loaded).
IMAGES = []


class Image:
    """A module image in a buffer of its own, at one address until the
    process ends."""

    def __init__(self, text):
        self.data = text.encode() if isinstance(text, str) else text
        self.buffer = ctypes.create_string_buffer(self.data)
        self.address = ctypes.addressof(self.buffer)
        IMAGES.append(self)

    def overwrite(self, data):
        ctypes.memmove(self.address, data, len(data))


class Launcher:
    """Calls the two entry points on one context; each call returns
    (status, message)."""

    def __init__(self, lib, ctx):
        self.lib = lib
        self.ctx = ctx

    def load(self, image, handle=None):
        status = self.lib.fluid_cuda_load_generated(
            self.ctx.handle if handle is None else handle,
            image.address if isinstance(image, Image) else image)
        return status, fluidcuda.last_error(self.lib)

    def launch(self, image, name, blocks, threads, tensors, count=None,
               handle=None):
        """`tensors`: DeviceTensors, NumPy arrays (host memory!) and None
        (a NULL descriptor); or None for a NULL array."""
        keep = []
        array = None
        if tensors is not None:
            array = (TENSOR * max(len(tensors), 1))()
            for i, t in enumerate(tensors):
                if t is None:
                    continue
                desc = t.desc if isinstance(t, fluidcuda.DeviceTensor) \
                    else fluidrt.tensor(t)
                keep.append(desc)
                array[i] = ctypes.pointer(desc)
        if count is None:
            count = len(tensors) if tensors is not None else 0
        status = self.lib.fluid_cuda_launch_generated(
            self.ctx.handle if handle is None else handle,
            image.address if isinstance(image, Image) else image,
            name.encode() if isinstance(name, str) else name, blocks, threads,
            array, count)
        return status, fluidcuda.last_error(self.lib)

    def __call__(self, image, name, blocks, threads, tensors):
        status, message = self.launch(image, name, blocks, threads, tensors)
        if status != OK:
            raise fluidrt.RuntimeError_(status, message)


def expect(result, expected, fragments=()):
    status, message = result
    if status != expected:
        raise AssertionError(f"status {status} != {expected}: {message!r}")
    for fragment in fragments:
        if fragment not in message:
            raise AssertionError(f"{fragment!r} not in {message!r}")


def scale_add(x, y):
    return np.float32(2) * x + y


def main():
    harness.skip_without_gpu()
    suite = fluidcuda.Suite(sys.argv)
    lib = suite.lib
    declare(lib)
    module = Image(MODULE)

    def randn():
        return suite.randn(N, dtype=np.float32)

    with fluidcuda.Context(lib) as ctx:
        run = Launcher(lib, ctx)

        def load_once():
            started = time.monotonic()
            expect(run.load(module), OK)
            first = time.monotonic() - started
            started = time.monotonic()
            expect(run.load(module), OK)
            second = time.monotonic() - started
            # Keyed by the address: a second load reads nothing, so even an
            # image overwritten since (which the contract forbids) is not
            # looked at, and the kernels loaded first still run.
            module.overwrite(b"not PTX at all" + bytes(64))
            try:
                expect(run.load(module), OK)
                out = ctx.empty((N,), np.float32)
                run(module, "fill_index", 4, 128, [out])
                assert np.array_equal(out.download(),
                                      np.arange(N, dtype=np.float32))
            finally:
                module.overwrite(module.data + b"\0")
            return (f"first load {first * 1e3:.2f} ms, second "
                    f"{second * 1e6:.1f} us")
        suite.case("a module is loaded once per address", load_once)

        def scale_add_exact():
            x, y = randn(), randn()
            dx, dy = ctx.upload(x), ctx.upload(y)
            want = scale_add(x, y)
            grids = [(1, 1), (1, 32), (3, 128), (4, 256), (1, 1024),
                     (1000, 1), (8, 1000), (70000, 64)]
            for blocks, threads in grids:
                out = ctx.empty((N,), np.float32)
                run(module, "scale_add", blocks, threads, [dx, dy, out])
                got = out.download()
                assert np.array_equal(got, want), (blocks, threads)
                out.free()
            # In place: out is y.
            run(module, "scale_add", 2, 256, [dx, dy, dy])
            assert np.array_equal(dy.download(), want)
            ctx.synchronize()
            return f"{len(grids) + 1} grids"
        suite.case("scale_add equals 2 x + y bit for bit, any grid",
                   scale_add_exact)

        def launch_loads():
            fresh = Image(MODULE)  # another address: another module
            x, y = randn(), randn()
            dx, dy = ctx.upload(x), ctx.upload(y)
            out = ctx.empty((N,), np.float32)
            run(fresh, "scale_add", 2, 128, [dx, dy, out])
            assert np.array_equal(out.download(), scale_add(x, y))
            expect(run.load(fresh), OK)
        suite.case("a launch loads its module when needed", launch_loads)

        def seventeen_pointers():
            inputs = [randn() for _ in range(16)]
            device = [ctx.upload(a) for a in inputs]
            out = ctx.empty((N,), np.float32)
            run(module, "first_minus_last", 5, 64, device + [out])
            assert np.array_equal(out.download(), inputs[0] - inputs[15])
            expect(run.launch(module, "first_minus_last", 5, 64,
                              device[:15] + [out]), INVALID_ARGUMENT,
                   ["fluid_cuda_launch_generated: kernel 'first_minus_last' "
                    "of the generated module at ", "takes 17 parameters, got "
                    "16 tensors"])
        suite.case("a kernel of 17 pointers", seventeen_pointers)

        def max_threads():
            out = ctx.empty((N,), np.float32)
            run(module, "fill_index", 1, 128, [out])
            assert np.array_equal(out.download(),
                                  np.arange(N, dtype=np.float32))
            expect(run.launch(module, "fill_index", 1, 256, [out]),
                   INVALID_ARGUMENT,
                   ["kernel 'fill_index' of the generated module at ",
                    "can be launched with at most 128 threads per block, "
                    "got 256"])
        suite.case("a kernel's .maxntid bounds its blocks", max_threads)

        def errors():
            x, y = randn(), randn()
            dx, dy = ctx.upload(x), ctx.upload(y)
            out = ctx.empty((N,), np.float32)
            args = [dx, dy, out]
            entry = "fluid_cuda_launch_generated: "
            checks = [
                (run.launch(module, "scale_add", 1, 32, args, handle=0),
                 INVALID_ARGUMENT, [entry + "context is null"]),
                (run.load(module, handle=0), INVALID_ARGUMENT,
                 ["fluid_cuda_load_generated: context is null"]),
                (run.load(None), INVALID_ARGUMENT,
                 ["fluid_cuda_load_generated: image is null"]),
                (run.launch(None, "scale_add", 1, 32, args),
                 INVALID_ARGUMENT, [entry + "image is null"]),
                (run.launch(module, None, 1, 32, args), INVALID_ARGUMENT,
                 [entry + "name is null"]),
                (run.launch(module, "scale_add2", 1, 32, args),
                 INVALID_ARGUMENT,
                 [entry + "no kernel 'scale_add2' in the generated module "
                  "at 0x", "(its kernels: ", "scale_add", "fill_index",
                  "first_minus_last", "fill_value"]),
                (run.launch(module, "scale_add", 1, 32, [dx, y, out]),
                 INVALID_ARGUMENT,
                 [entry + "tensors[1] data", "is host memory, not device "
                  "memory"]),
                (run.launch(module, "scale_add", 1, 32, [dx, dy, None]),
                 INVALID_ARGUMENT, [entry + "tensors[2] descriptor is null"]),
                (run.launch(module, "scale_add", 1, 32, None, count=3),
                 INVALID_ARGUMENT, [entry + "tensors is null"]),
                (run.launch(module, "scale_add", 1, 32, args, count=-1),
                 INVALID_ARGUMENT, [entry + "count must be >= 0, got -1"]),
                (run.launch(module, "scale_add", 1, 32, args, count=2),
                 INVALID_ARGUMENT, ["takes 3 parameters, got 2 tensors"]),
                (run.launch(module, "fill_value", 1, 32, [out, dx]),
                 UNSUPPORTED,
                 [entry + "parameter 1 of kernel 'fill_value'",
                  "is not a pointer"]),
            ]
            for blocks in [0, -1, 2**31, 2**40]:
                checks.append((run.launch(module, "scale_add", blocks, 32,
                                          args), INVALID_ARGUMENT,
                               [entry + "blocks must be in [1, 2147483647], "
                                f"got {blocks}"]))
            for threads in [0, -32, 1025, 2**31 - 1]:
                checks.append((run.launch(module, "scale_add", 1, threads,
                                          args), INVALID_ARGUMENT,
                               [entry + "threads must be in [1, 1024], "
                                f"got {threads}"]))
            broken = Image(BROKEN)
            for attempt in range(2):  # a failed load is not remembered
                checks.append((run.load(broken), DEVICE,
                               ["fluid_cuda_load_generated: cannot load the "
                                "generated module at 0x",
                                "cuModuleLoadDataEx failed: "
                                "CUDA_ERROR_INVALID_PTX",
                                "the driver's JIT log: ", "error",
                                "Unknown symbol '%rd1'"]))
            checks.append((run.launch(broken, "broken", 1, 32, [out]), DEVICE,
                           [entry + "cannot load the generated module",
                            "Unknown symbol '%rd1'"]))
            garbage = Image(b"\x7fELF\x02\x01\x01" + bytes(57))
            checks.append((run.load(garbage), DEVICE,
                           ["cannot load the generated module at 0x",
                            "cuModuleLoadDataEx failed: CUDA_ERROR_"]))
            for result, expected, fragments in checks:
                expect(result, expected, fragments)
            # The context still works, and nothing was written.
            ctx.synchronize()
            assert np.isnan(out.download()).all()
            run(module, "scale_add", 2, 64, args)
            assert np.array_equal(out.download(), scale_add(x, y))
            ctx.synchronize()
            return f"{len(checks)} calls; JIT failure: {checks[-4][0][1]!r}"
        suite.case("bad calls are errors with messages, the context still "
                   "works", errors)

        def inside_capture():
            cudart = gpu_context.load_cudart()
            stream = ctx.stream()
            x, y = randn(), randn()
            dx, dy = ctx.upload(x), ctx.upload(y)
            index, out = ctx.empty((N,), np.float32), \
                ctx.empty((N,), np.float32)
            unloaded = Image(MODULE)
            graph = VOID_P()
            cuda = gpu_context.cuda_check
            cuda(cudart, cudart.cudaStreamBeginCapture(
                stream, gpu_context.CAPTURE_THREAD_LOCAL),
                "cudaStreamBeginCapture")
            try:
                run(module, "fill_index", 2, 128, [index])
                run(module, "scale_add", 4, 256, [dx, dy, out])
                expect(run.load(unloaded), INVALID_ARGUMENT,
                       ["fluid_cuda_load_generated: the generated module at ",
                        "is not loaded, and cannot be loaded during CUDA "
                        "graph capture"])
                expect(run.launch(unloaded, "scale_add", 4, 256,
                                  [dx, dy, out]), INVALID_ARGUMENT,
                       ["cannot be loaded during CUDA graph capture"])
                expect(run.load(module), OK)  # loaded: returns at once
            finally:
                ended = cudart.cudaStreamEndCapture(stream,
                                                    ctypes.byref(graph))
            cuda(cudart, ended, "cudaStreamEndCapture")
            executable = VOID_P()
            cuda(cudart, cudart.cudaGraphInstantiate(
                ctypes.byref(executable), graph, 0), "cudaGraphInstantiate")
            try:
                ctx.synchronize()
                # Nothing ran while capturing.
                assert np.isnan(out.download()).all()
                for replay in range(2):
                    x, y = randn(), randn()
                    ctx.check(lib.fluid_cuda_copy_to_device(
                        ctx.handle, dx.pointer, x.ctypes.data, x.nbytes))
                    ctx.check(lib.fluid_cuda_copy_to_device(
                        ctx.handle, dy.pointer, y.ctypes.data, y.nbytes))
                    cuda(cudart, cudart.cudaGraphLaunch(executable, stream),
                         "cudaGraphLaunch")
                    ctx.synchronize()
                    assert np.array_equal(out.download(), scale_add(x, y)), \
                        replay
                    assert np.array_equal(index.download(),
                                          np.arange(N, dtype=np.float32))
            finally:
                cudart.cudaGraphExecDestroy(executable)
                cudart.cudaGraphDestroy(graph)
            # Outside capture the other image loads.
            expect(run.load(unloaded), OK)
            return "2 kernels captured, replayed twice"
        suite.case("launches inside a CUDA graph capture", inside_capture)

    def two_contexts():
        first = fluidcuda.Context(lib)
        second = fluidcuda.Context(lib)
        try:
            x, y = randn(), randn()
            for ctx in (first, second):
                expect(Launcher(lib, ctx).load(module), OK)
            dx, dy = second.upload(x), second.upload(y)
            out = second.empty((N,), np.float32)
            # The first context's module is unloaded; the second's stays.
            first.close()
            Launcher(lib, second)(module, "scale_add", 3, 96, [dx, dy, out])
            assert np.array_equal(out.download(), scale_add(x, y))
        finally:
            first.close()
            second.close()
    suite.case("two contexts load the same image independently",
               two_contexts)

    suite.finish()


if __name__ == "__main__":
    main()
