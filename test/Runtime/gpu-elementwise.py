# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's own elementwise kernels against their fluid_cpu_*
oracles: relu, sigmoid, tanh and their gradients, add/sub/mul/div (also
i32 and i64, wrapping), neg/exp/log/cos/sqrt/floor, pow/minimum/maximum/
greater_equal, select and cast. Shapes cover broadcasting along every
axis, rank 0, scalars, per-channel operands (the flat kernel's fast
paths), general strided broadcasts, sizes that are not a multiple of the
vector width, unaligned pointers (the scalar fallback), in-place outputs,
one tensor of more than 2^24 elements, and errors: every bad descriptor
gets the cpu backend's message, and a cast of NaN or of an out-of-range
value is reported by fluid_cuda_check_errors, with nothing written.

This file is also the harness of the other gpu-*.py tests of the own
kernels (imported as "gpu-elementwise"): signatures, a GPU check that
skips cleanly without one, and run_both(), which runs an op on the cpu
and on the device and returns both outputs.

Tolerances: f64 rtol 1e-12 (atol 1e-12 of the output's scale); f32 rtol
1e-5, atol 1e-6 of the scale. No kernel uses atomics.
"""

import ctypes
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402

I32, I64, F64 = ctypes.c_int32, ctypes.c_int64, ctypes.c_double
TENSOR = fluidcuda.TENSOR
Params = fluidcuda.Params
OK = fluidcuda.OK
INVALID_ARGUMENT = fluidcuda.INVALID_ARGUMENT
UNSUPPORTED = fluidcuda.UNSUPPORTED

#===-----------------------------------------------------------------------===#
# Harness
#===-----------------------------------------------------------------------===#


class MaxPool2dParams(Params):
    _fields_ = [("kernel", I64 * 2), ("strides", I64 * 2),
                ("padding", I64 * 4), ("dilation", I64 * 2),
                ("ceil_mode", I32)]


class AvgPool2dParams(Params):
    _fields_ = [("kernel", I64 * 2), ("strides", I64 * 2),
                ("padding", I64 * 4), ("ceil_mode", I32),
                ("count_include_pad", I32)]


ReduceParams = fluidcuda.ReduceParams


class TransposeParams(Params):
    _fields_ = [("perm", I64 * fluidrt.FLUID_MAX_RANK), ("rank", I32)]

    @classmethod
    def of(cls, perm):
        """The params of the permutation `perm` (a sequence)."""
        perm = list(perm)
        return cls(perm + [0] * (fluidrt.FLUID_MAX_RANK - len(perm)),
                   len(perm))


class SgdParams(Params):
    _fields_ = [("weight_decay", F64)]


class MomentumParams(Params):
    _fields_ = [("momentum", F64), ("weight_decay", F64), ("nesterov", I32)]


class AdamParams(Params):
    _fields_ = [("beta1", F64), ("beta2", F64), ("epsilon", F64),
                ("weight_decay", F64), ("decoupled", I32)]


UNARY = [TENSOR] * 2
BINARY = [TENSOR] * 3
# The oracle's argument types; fluid_cuda_<op> takes the context first.
SIGNATURES = {
    **{op: UNARY for op in ["relu", "sigmoid", "tanh", "neg", "exp", "log",
                            "cos", "sqrt", "floor", "cast", "reshape",
                            "broadcast_to", "sum_to", "global_avg_pool"]},
    **{op: BINARY for op in ["add", "sub", "mul", "div", "pow", "minimum",
                             "maximum", "greater_equal", "relu_grad",
                             "sigmoid_grad", "tanh_grad"]},
    "select": [TENSOR] * 4,
    "concat": [TENSOR, I64, TENSOR, I64],
    "slice": [TENSOR, TENSOR, I64, I64],
    "gather": [TENSOR] * 3 + [I64],
    "gather_grad": [TENSOR] * 3 + [I64],
    "mean": [TENSOR, TENSOR, ctypes.POINTER(ReduceParams)],
    "reduce_sum": [TENSOR, TENSOR, ctypes.POINTER(ReduceParams)],
    "transpose": [TENSOR, TENSOR, ctypes.POINTER(TransposeParams)],
    "max_pool2d": [TENSOR, TENSOR, ctypes.POINTER(MaxPool2dParams)],
    "avg_pool2d": [TENSOR, TENSOR, ctypes.POINTER(AvgPool2dParams)],
    "max_pool2d_grad": [TENSOR] * 3 + [ctypes.POINTER(MaxPool2dParams)],
    "max_pool2d_with_indices":
        [TENSOR] * 3 + [ctypes.POINTER(MaxPool2dParams)],
    "max_pool2d_grad_indices":
        [TENSOR] * 3 + [ctypes.POINTER(MaxPool2dParams)],
    "avg_pool2d_grad": [TENSOR] * 2 + [ctypes.POINTER(AvgPool2dParams)],
    "softmax": [TENSOR, TENSOR, I64],
    "log_softmax": [TENSOR, TENSOR, I64],
    "softmax_grad": [TENSOR] * 3 + [I64],
    "log_softmax_grad": [TENSOR] * 3 + [I64],
    "softmax_cross_entropy": [TENSOR] * 3 + [I32],
    "softmax_cross_entropy_grad": [TENSOR] * 4 + [I32],
    # The optimizer updates' tensors, found_inf (NULL: no flag) among them.
    "sgd": [TENSOR] * 5 + [ctypes.POINTER(SgdParams)],
    "momentum": [TENSOR] * 7 + [ctypes.POINTER(MomentumParams)],
    "adam": [TENSOR] * 10 + [ctypes.POINTER(AdamParams)],
}

# (rtol, atol relative to max(1, max |expected|)).
TOLERANCE = {np.dtype(np.float64): (1e-12, 1e-12),
             np.dtype(np.float32): (1e-5, 1e-6)}
FLOATS = [("f32", np.float32), ("f64", np.float64)]


def skip_without_gpu():
    """Exits 0 with a SKIP line where no GPU is visible (as lit's "gpu"
    feature decides it), so that the test can be run anywhere."""
    try:
        visible = subprocess.run(["nvidia-smi", "-L"],
                                 capture_output=True).returncode == 0
    except OSError:
        visible = False
    if not visible:
        print("SKIP: no GPU visible (nvidia-smi -L failed)")
        sys.exit(0)


def declare(lib):
    for op, argtypes in SIGNATURES.items():
        cpu = getattr(lib, "fluid_cpu_" + op)
        cpu.restype = I32
        cpu.argtypes = argtypes
        cuda = getattr(lib, "fluid_cuda_" + op)
        cuda.restype = I32
        cuda.argtypes = [fluidcuda.VOID_P] + argtypes
    lib.fluid_cuda_check_errors.restype = I32
    lib.fluid_cuda_check_errors.argtypes = [fluidcuda.VOID_P]


class Harness:
    """The suite, the library and one context for the whole test."""

    def __init__(self, argv):
        skip_without_gpu()
        self.suite = fluidcuda.Suite(argv)
        self.lib = self.suite.lib
        declare(self.lib)
        self.ctx = fluidcuda.Context(self.lib)
        self.rng = self.suite.rng
        self.check_errors()  # start from a clean device error record

    def case(self, name, body):
        self.suite.case(name, body)

    def finish(self):
        self.ctx.close()
        self.suite.finish()

    def randn(self, *shape, dtype=np.float64, scale=1.0, offset=0.0):
        """Normal values of `shape` (rank 0 included) and `dtype`."""
        values = self.rng.standard_normal(shape) * scale + offset
        return np.array(values, dtype=dtype)

    def upload(self, array):
        """`array` in device memory (fluidcuda's Context.upload turns a
        rank-0 array into rank 1)."""
        array = np.array(array)
        t = fluidcuda.DeviceTensor(self.ctx, array.shape, array.dtype)
        self.ctx.check(self.lib.fluid_cuda_copy_to_device(
            self.ctx.handle, t.pointer, array.ctypes.data, t.nbytes))
        return t

    def empty(self, shape, dtype):
        """A device tensor filled with NaN (7 for integers)."""
        return self.upload(Out(shape, dtype).host())

    def check_errors(self):
        """fluid_cuda_check_errors: (status, message)."""
        status = self.lib.fluid_cuda_check_errors(self.ctx.handle)
        return status, fluidcuda.last_error(self.lib)

    def expect_device_error(self, fragments):
        status, message = self.check_errors()
        if status != INVALID_ARGUMENT:
            raise AssertionError(f"check_errors gave status {status}: "
                                 f"{message!r}")
        for fragment in fragments:
            if fragment not in message:
                raise AssertionError(f"{fragment!r} not in {message!r}")
        status, message = self.check_errors()
        if status != OK:
            raise AssertionError(f"the error record was not cleared: "
                                 f"{message!r}")

    def expect_no_device_error(self):
        status, message = self.check_errors()
        if status != OK:
            raise AssertionError(f"unexpected device error: {message!r}")


class Out:
    """An output argument of run_both: a buffer of `shape` and `dtype`
    holding `initial` (NaN by default, so that unwritten elements show)."""

    def __init__(self, shape, dtype, initial=None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.initial = initial

    def host(self):
        if self.initial is not None:
            return np.array(self.initial, dtype=self.dtype).reshape(
                self.shape)
        if np.issubdtype(self.dtype, np.floating):
            return np.full(self.shape, np.nan, self.dtype)
        return np.full(self.shape, 7, self.dtype)


class Same:
    """An argument that is the buffer of argument `index` (in-place)."""

    def __init__(self, index):
        self.index = index


def run_both(h, op, *args):
    """Runs fluid_cpu_<op> and fluid_cuda_<op> on the same arguments:
    NumPy arrays are inputs (uploaded for the device), Out are outputs,
    Same(i) is argument i's buffer again, anything else (parameter
    structs, integers, None) passes as is. Returns [(cpu, cuda)] per
    output, Same arguments included, in argument order."""
    cpu_args, gpu_args, outputs, temporaries = [], [], [], []
    for arg in args:
        if isinstance(arg, (np.ndarray, np.generic, Out)):
            # np.array copies, C-contiguous, and keeps rank 0.
            host = arg.host() if isinstance(arg, Out) else np.array(arg)
            device = h.upload(host)
            temporaries.append(device)
            cpu_args.append(host)
            gpu_args.append(device)
            if isinstance(arg, Out):
                outputs.append((host, device))
        elif isinstance(arg, Same):
            cpu_args.append(cpu_args[arg.index])
            gpu_args.append(gpu_args[arg.index])
            outputs.append((cpu_args[arg.index], gpu_args[arg.index]))
        else:
            cpu_args.append(arg)
            gpu_args.append(arg)
    fluidcuda.cpu(h.lib, op, *cpu_args)
    h.ctx(op, *gpu_args)
    results = [(host, device.download()) for host, device in outputs]
    for device in temporaries:
        device.free()
    return results


def expect_close(got, want, what="output", rtol=None, atol=None):
    """Integers exactly, floats within TOLERANCE (NaN where NaN)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        raise AssertionError(f"{what}: {got.dtype}{got.shape} != "
                             f"{want.dtype}{want.shape}")
    if not np.issubdtype(want.dtype, np.floating):
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    default_rtol, default_atol = TOLERANCE[want.dtype]
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    finite = np.abs(want[np.isfinite(want)])
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale,
                               err_msg=what)


def bitwise_equal(got, want):
    return got.tobytes() == want.tobytes()


def compare(results, what="output", **tolerance):
    """expect_close on every (cpu, cuda) pair; a note saying whether all
    were bitwise equal."""
    exact = True
    for i, (want, got) in enumerate(results):
        expect_close(got, want, f"{what} {i}" if len(results) > 1 else what,
                     **tolerance)
        exact = exact and bitwise_equal(got, want)
    return "bitwise equal" if exact else "within tolerance"


def cuda_message(cpu_message):
    """The message the cuda entry point gives for the cpu one's error."""
    return cpu_message.replace("fluid_cpu_", "fluid_cuda_").replace(
        "the cpu kernels", "the cuda kernels")


def expect_same_error(h, op, *args):
    """Both backends refuse the call with the same status and message.
    Arguments as for run_both (Out buffers are outputs)."""
    cpu_args, gpu_args, temporaries = [], [], []
    for arg in args:
        if isinstance(arg, (np.ndarray, np.generic, Out)):
            # np.array copies, C-contiguous, and keeps rank 0.
            host = arg.host() if isinstance(arg, Out) else np.array(arg)
            device = h.upload(host)
            temporaries.append(device)
            cpu_args.append(host)
            gpu_args.append(device)
        else:
            cpu_args.append(arg)
            gpu_args.append(arg)
    converted = [ctypes.byref(fluidrt.tensor(a)) if isinstance(a, np.ndarray)
                 else a for a in cpu_args]
    cpu_status = getattr(h.lib, "fluid_cpu_" + op)(*converted)
    cpu_text = fluidcuda.last_error(h.lib)
    gpu_status, gpu_text = h.ctx.status(op, *gpu_args)
    for device in temporaries:
        device.free()
    if cpu_status == OK:
        raise AssertionError("the cpu kernel accepted the call")
    if gpu_status != cpu_status or gpu_text != cuda_message(cpu_text):
        raise AssertionError(f"cuda: {gpu_status} {gpu_text!r}; cpu: "
                             f"{cpu_status} {cpu_text!r}")
    return gpu_text


class DeviceView(fluidcuda.DeviceTensor):
    """A descriptor of `shape` and `dtype` at `offset_bytes` into a device
    tensor (not owned): unaligned data for the scalar fallbacks."""

    def __init__(self, base, offset_bytes, shape, dtype):
        self.context = base.context
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * \
            self.dtype.itemsize
        self.pointer = base.pointer + offset_bytes
        self.desc = fluidrt.FluidTensor()
        self.desc.data = self.pointer
        self.desc.dtype = fluidrt.DTYPES[self.dtype]
        self.desc.rank = len(self.shape)
        for i, d in enumerate(self.shape):
            self.desc.shape[i] = d

    def free(self):
        pass


def unaligned_upload(h, array):
    """`array` on the device at an address that is not 16-byte aligned;
    returns (view, base) (free the base)."""
    array = np.array(array)
    item = array.dtype.itemsize
    base = h.upload(np.zeros(array.size + 1, array.dtype))
    view = DeviceView(base, item, array.shape, array.dtype)
    h.ctx.check(h.lib.fluid_cuda_copy_to_device(
        h.ctx.handle, view.pointer, array.ctypes.data, array.nbytes))
    return view, base


#===-----------------------------------------------------------------------===#
# Cases
#===-----------------------------------------------------------------------===#

ACTIVATIONS = ["relu", "sigmoid", "tanh"]
MATH = ["neg", "exp", "log", "cos", "sqrt", "floor"]
ARITHMETIC = ["add", "sub", "mul", "div"]
BINARY_MATH = ["pow", "minimum", "maximum", "greater_equal"]
GRADS = ["relu_grad", "sigmoid_grad", "tanh_grad"]

# Sizes around the vector widths (4 floats, 2 doubles) and a large one.
UNARY_SHAPES = [[], [1], [3], [7], [8], [2, 3, 5, 4], [1000003], [0, 3]]

BROADCAST_SHAPES = [
    ([2, 3, 4, 5], [2, 3, 4, 5]),        # same shape: vectorized
    ([3, 4, 5], []),                     # scalar rhs
    ([], [6, 2]),                        # scalar lhs
    ([], []),
    ([1], [3, 1, 1]),
    ([8, 16, 7, 7], [16, 1, 1]),         # per-channel bias, inner 49
    ([8, 16, 8, 8], [1, 16, 1, 1]),      # per-channel, inner 64 (vectors)
    ([16, 1, 1], [4, 16, 3, 3]),         # per-channel lhs
    ([64, 32], [32]),                    # [N,C] + [C]: periodic vectors
    ([6, 10], [10]),                     # periodic, C not a multiple of 4
    ([5, 6], [5, 1]),                    # per-row
    ([2, 3, 4, 5], [5]),
    ([2, 3, 4, 5], [4, 1]),              # general strided
    ([2, 3, 4, 5], [2, 1, 1, 1]),
    ([1, 3, 1, 5], [2, 1, 4, 1]),
    ([4, 1], [2, 3, 4, 5]),
    ([3, 1], [1, 4]),                    # outer product
    ([2, 1, 6], [2, 5, 1]),
    ([0, 3], [1, 3]),
    ([2, 1, 3, 1, 2, 1, 2, 1], [1, 2, 1, 3, 1, 2, 1, 2]),  # rank 8
]
# Broadcasting along every single axis of a rank-4 shape, either side.
for axis in range(4):
    small = [2, 3, 4, 5]
    small[axis] = 1
    BROADCAST_SHAPES.append(([2, 3, 4, 5], small))
    BROADCAST_SHAPES.append((small, [2, 3, 4, 5]))


def broadcast_shape(a, b):
    return list(np.broadcast_shapes(tuple(a), tuple(b)))


def float_input(h, op, shape, dtype):
    x = h.randn(*shape, dtype=dtype, scale=3.0)
    if op in ("log", "sqrt"):
        x = np.abs(x) + dtype(0.01)
    return x.astype(dtype)


def unary_case(h, op, shape, dtype):
    def body():
        x = float_input(h, op, shape, dtype)
        return compare(run_both(h, op, x, Out(shape, dtype)))
    return body


def special_case(h, op, dtype):
    def body():
        x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5,
                      -2.5, 1e-30, 88.0, 1e6, 3.0], dtype)
        return compare(run_both(h, op, x, Out(x.shape, dtype)))
    return body


def binary_inputs(h, op, lhs_shape, rhs_shape, dtype):
    lhs = h.randn(*lhs_shape, dtype=dtype)
    rhs = h.randn(*rhs_shape, dtype=dtype)
    if op == "pow":  # positive bases: real powers
        lhs = (np.abs(lhs) + 0.1).astype(dtype)
        rhs = (rhs * 2).astype(dtype)
    if op == "div":
        rhs = np.where(np.abs(rhs) < 1e-3, 1.0, rhs).astype(dtype)
    if op == "greater_equal" and lhs.shape == rhs.shape and lhs.size:
        lhs.reshape(-1)[::3] = rhs.reshape(-1)[::3]  # ties
    return lhs, rhs


def binary_case(h, op, lhs_shape, rhs_shape, dtype):
    def body():
        lhs, rhs = binary_inputs(h, op, lhs_shape, rhs_shape, dtype)
        out = broadcast_shape(lhs_shape, rhs_shape)
        return compare(run_both(h, op, lhs, rhs, Out(out, dtype)))
    return body


def binary_special_case(h, op, dtype):
    """Every pair of special values (NaN on either side, infinities,
    negative bases of pow)."""
    def body():
        values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0,
                           0.5, -2.5, 2.0, 3.0, -3.0], dtype)
        lhs, rhs = values.reshape(-1, 1), values.reshape(1, -1)
        return compare(run_both(h, op, lhs, rhs, Out((12, 12), dtype)))
    return body


def integer_case(h, op, lhs_shape, rhs_shape, dtype):
    """i32/i64 over the whole range: overflow wraps, as on the cpu."""
    def body():
        lhs = fluidrt.random_array(h.rng, lhs_shape, dtype)
        rhs = fluidrt.random_array(h.rng, rhs_shape, dtype)
        out = broadcast_shape(lhs_shape, rhs_shape)
        return compare(run_both(h, op, lhs, rhs, Out(out, dtype)))
    return body


def grad_case(h, op, shape, dtype, in_place):
    def body():
        g = h.randn(*shape, dtype=dtype)
        y = h.randn(*shape, dtype=dtype)
        if op == "sigmoid_grad":
            y = (1 / (1 + np.exp(-y))).astype(dtype)
        elif op == "tanh_grad":
            y = np.tanh(y).astype(dtype)
        elif y.size > 2:
            y.reshape(-1)[0] = np.nan  # relu_grad passes g where y is NaN
            y.reshape(-1)[1] = 0.0
        target = Same(0) if in_place else Out(shape, dtype)
        return compare(run_both(h, op, g, y, target))
    return body


def in_place_case(h, dtype):
    """Outputs sharing the buffer of an input of their shape, on the
    vectorized, per-channel and strided paths."""
    def body():
        results = []
        x = h.randn(4, 5, 6, dtype=dtype)
        results += run_both(h, "exp", x, Same(0))
        lhs = h.randn(8, 16, 4, 4, dtype=dtype)
        rhs = h.randn(16, 1, 1, dtype=dtype)
        results += run_both(h, "add", lhs, rhs, Same(0))
        results += run_both(h, "mul", rhs, lhs, Same(1))
        lhs = h.randn(3, 4, 5, dtype=dtype)
        rhs = h.randn(4, 1, dtype=dtype)
        results += run_both(h, "sub", lhs, rhs, Same(0))
        cond = np.sign(h.randn(3, 1, dtype=dtype)).astype(dtype)
        on_true = h.randn(3, 4, dtype=dtype)
        on_false = h.randn(4, dtype=dtype)
        results += run_both(h, "select", cond, on_true, on_false, Same(1))
        return compare(results)
    return body


def unaligned_case(h, dtype):
    """Operands and outputs off the 16-byte alignment: the scalar path."""
    def body():
        n = 1001
        x, y = h.randn(n, dtype=dtype), h.randn(n, dtype=dtype)
        bias = h.randn(n, dtype=dtype)[:1]
        want_add = np.full(n, np.nan, dtype)
        fluidcuda.cpu(h.lib, "add", x, y, want_add)
        want_relu = np.full(n, np.nan, dtype)
        fluidcuda.cpu(h.lib, "relu", x, want_relu)
        want_bias = np.full(n, np.nan, dtype)
        fluidcuda.cpu(h.lib, "mul", x, bias, want_bias)
        views = [unaligned_upload(h, a) for a in
                 (x, y, np.zeros(n, dtype), np.zeros(n, dtype),
                  np.zeros(n, dtype))]
        (dx, _), (dy, _), (out_add, _), (out_relu, _), (out_bias, _) = views
        dbias = h.upload(bias)
        h.ctx("add", dx, dy, out_add)
        h.ctx("relu", dx, out_relu)
        h.ctx("mul", dx, dbias, out_bias)
        results = [(want_add, out_add.download()),
                   (want_relu, out_relu.download()),
                   (want_bias, out_bias.download())]
        for _, base in views:
            base.free()
        dbias.free()
        # An aligned [6,8] plus an unaligned per-channel [8].
        lhs, rhs = h.randn(6, 8, dtype=dtype), h.randn(8, dtype=dtype)
        want = np.full((6, 8), np.nan, dtype)
        fluidcuda.cpu(h.lib, "add", lhs, rhs, want)
        dlhs, out = h.upload(lhs), h.empty((6, 8), dtype)
        drhs, base = unaligned_upload(h, rhs)
        h.ctx("add", dlhs, drhs, out)
        results.append((want, out.download()))
        for t in (dlhs, out, base):
            t.free()
        return compare(results)
    return body


def select_case(h, dtype, cond_shape, true_shape, false_shape):
    def body():
        cond = h.randn(*cond_shape, dtype=dtype)
        if cond.size > 2:
            cond.reshape(-1)[::2] = 0.0
            cond.reshape(-1)[1] = np.nan  # NaN is nonzero: true
        on_true = h.randn(*true_shape, dtype=dtype)
        on_false = h.randn(*false_shape, dtype=dtype)
        out = list(np.broadcast_shapes(tuple(cond_shape), tuple(true_shape),
                                       tuple(false_shape)))
        return compare(run_both(h, "select", cond, on_true, on_false,
                                Out(out, dtype)))
    return body


SELECT_SHAPES = [
    ([2, 3, 4], [2, 3, 4], [2, 3, 4]),
    ([2, 3, 4], [4], [3, 1]),
    ([], [2, 3], [2, 1]),
    ([2, 1, 4], [1, 3, 1], []),
    ([3, 1], [], [1, 5]),
    ([], [], []),
    ([0, 3], [3], [1]),
    ([5, 8, 3, 3], [8, 1, 1], [5, 8, 3, 3]),
]

CAST_DTYPES = [np.float32, np.float64, np.int32, np.int64]
DTYPE_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
               np.dtype(np.int32): "i32", np.dtype(np.int64): "i64"}


def cast_input(h, source, target, n):
    """n values of `source` that `target` represents: fractions of both
    signs (truncated toward zero), large magnitudes, the range's ends (the
    first n of those for a small n)."""
    return special_cast_input(h, source, target, max(n, 16))[:n].copy()


def special_cast_input(h, source, target, n):
    source, target = np.dtype(source), np.dtype(target)
    if np.issubdtype(source, np.floating):
        values = [0.5, -0.5, 0.999, -0.999, -0.0, 2.5]
        if target == np.int32:
            values += [2147483520.0, -2147483648.0]
            if source == np.float64:
                values += [2147483647.9, -2147483648.9]
        elif target == np.int64:
            values += [2.0**62, -2.0**63]
        elif target == np.float32:
            values += [np.nan, np.inf, 1e300]  # 1e300 overflows to inf
        x = h.randn(n) * 1000
        x[:len(values)] = values
        with np.errstate(over="ignore"):
            return x.astype(source)
    bound = 2**31 if source == np.int32 or target == np.int32 else 2**63
    x = h.rng.integers(-1000, 1000, size=n).astype(source)
    x[:2] = [bound - 1, -bound]
    if source == np.int64 and np.issubdtype(target, np.floating):
        x[2] = 2**53 + 1  # rounds to nearest
    return x


def cast_case(h, source, target, n):
    def body():
        x = cast_input(h, source, target, n)
        return compare(run_both(h, "cast", x, Out(x.shape, target)))
    return body


def cast_error_case(h, source, target, bad, fragments):
    """A value cast refuses: nothing written, the error reported by
    fluid_cuda_check_errors with the cpu's message."""
    def body():
        x = cast_input(h, source, target, 1000)
        x[517] = bad
        x[900] = bad  # only the first is named
        cpu_out = np.full(x.shape, 7, target)
        converted = [ctypes.byref(fluidrt.tensor(a)) for a in (x, cpu_out)]
        if h.lib.fluid_cpu_cast(*converted) == OK:
            raise AssertionError("the cpu accepted the cast")
        cpu_text = fluidcuda.last_error(h.lib)
        dx = h.upload(x)
        out = h.upload(np.full(x.shape, 7, target))
        h.ctx("cast", dx, out)  # the call itself cannot know
        h.expect_device_error(
            ["fluid_cuda_check_errors: fluid_cuda_cast: " +
             cpu_text.split(": ", 1)[1]] + fragments)
        if not (out.download() == 7).all():
            raise AssertionError("cast wrote its output")
        dx.free()
        out.free()
    return body


def large_case(h):
    """More than 2^24 elements, f32: the vectorized path and its tail."""
    def body():
        n = (1 << 24) + 5
        lhs = h.randn(n, dtype=np.float32)
        rhs = h.randn(n, dtype=np.float32)
        results = run_both(h, "add", lhs, rhs, Out((n,), np.float32))
        results += run_both(h, "sigmoid", lhs, Out((n,), np.float32))
        return compare(results)
    return body


def error_cases(h):
    """Each bad call gets the cpu backend's status and message."""
    f32, f64 = np.float32, np.float64
    a = np.ones((2, 3), f64)
    cases = {
        "null input": ("exp", None, Out((2, 3), f64)),
        "null output": ("relu", a, None),
        "dtype mismatch": ("add", a, np.ones((2, 3), f32), Out((2, 3), f64)),
        "integer operand of div": ("div", np.ones(3, np.int32),
                                   np.ones(3, np.int32), Out((3,), np.int32)),
        "mixed integer dtypes": ("add", np.ones(3, np.int32),
                                 np.ones(3, np.int64), Out((3,), np.int32)),
        "u8 activation": ("sigmoid", np.ones(3, np.uint8),
                          Out((3,), np.uint8)),
        "no broadcast": ("mul", a, np.ones((4,), f64), Out((2, 3), f64)),
        "wrong output shape": ("sub", a, np.ones((3,), f64),
                               Out((3, 3), f64)),
        "wrong unary output shape": ("tanh", a, Out((3, 2), f64)),
        "grad shape": ("relu_grad", a, np.ones((3, 2), f64),
                       Out((2, 3), f64)),
        "select dtypes": ("select", np.ones(3, f32), np.ones(3, f64),
                          np.ones(3, f64), Out((3,), f64)),
        "cast shape": ("cast", a, Out((6,), np.int32)),
        "cast of u8": ("cast", np.ones(3, np.uint8), Out((3,), f32)),
    }
    for name, (op, *args) in cases.items():
        h.case(f"error {op}: {name}",
               lambda op=op, args=args: expect_same_error(h, op, *args))

    def bad_rank():
        x = h.upload(np.ones(3))
        x.desc.rank = 9
        out = h.empty((3,), f64)
        status, text = h.ctx.status("exp", x, out)
        fluidcuda.expect_status(h.lib, status, INVALID_ARGUMENT,
                                ["fluid_cuda_exp", "input has rank 9"])
    h.case("error exp: rank 9", bad_rank)

    def null_data():
        x = h.upload(np.ones(3))
        out = h.empty((3,), f64)
        out.desc.data = None
        status, _ = h.ctx.status("neg", x, out)
        fluidcuda.expect_status(h.lib, status, INVALID_ARGUMENT,
                                ["fluid_cuda_neg", "output data is null"])
    h.case("error neg: null data", null_data)

    def host_memory():
        x = np.ones(3)
        out = h.empty((3,), f64)
        status, _ = h.ctx.status("exp", x, out)
        fluidcuda.expect_status(h.lib, status, INVALID_ARGUMENT,
                                ["fluid_cuda_exp", "input data",
                                 "not device memory"])
    h.case("error exp: host memory", host_memory)

    def null_context():
        x, out = h.upload(np.ones(3)), h.empty((3,), f64)
        status = h.lib.fluid_cuda_add(None, ctypes.byref(x.desc),
                                      ctypes.byref(x.desc),
                                      ctypes.byref(out.desc))
        fluidcuda.expect_status(h.lib, status, INVALID_ARGUMENT,
                                ["fluid_cuda_add", "context is null"])
        status = h.lib.fluid_cuda_check_errors(None)
        fluidcuda.expect_status(h.lib, status, INVALID_ARGUMENT,
                                ["fluid_cuda_check_errors",
                                 "context is null"])
    h.case("error: null context", null_context)


def main():
    h = Harness(sys.argv)
    for mode, dtype in FLOATS:
        for op in ACTIVATIONS + MATH:
            for shape in UNARY_SHAPES:
                h.case(f"{op} {mode} {shape}", unary_case(h, op, shape, dtype))
            h.case(f"{op} {mode} special values", special_case(h, op, dtype))
        for op in ARITHMETIC + BINARY_MATH:
            for lhs_shape, rhs_shape in BROADCAST_SHAPES:
                h.case(f"{op} {mode} {lhs_shape} {rhs_shape}",
                       binary_case(h, op, lhs_shape, rhs_shape, dtype))
        for op in ["div"] + BINARY_MATH:
            h.case(f"{op} {mode} special values",
                   binary_special_case(h, op, dtype))
        for op in GRADS:
            for shape in [[], [7], [4, 9, 5], [100003]]:
                h.case(f"{op} {mode} {shape}",
                       grad_case(h, op, shape, dtype, in_place=False))
            h.case(f"{op} {mode} in place",
                   grad_case(h, op, [6, 7], dtype, in_place=True))
        for shapes in SELECT_SHAPES:
            h.case(f"select {mode} {list(shapes)}",
                   select_case(h, dtype, *shapes))
        h.case(f"in place {mode}", in_place_case(h, dtype))
        h.case(f"unaligned {mode}", unaligned_case(h, dtype))
    for dtype in [np.int32, np.int64]:
        for op in ["add", "sub", "mul"]:
            for lhs_shape, rhs_shape in [([1001], [1001]), ([], [5]),
                                         ([4, 6], [6]), ([3, 1], [1, 4]),
                                         ([8, 4, 3, 3], [4, 1, 1])]:
                h.case(f"{op} {DTYPE_NAMES[np.dtype(dtype)]} {lhs_shape} "
                       f"{rhs_shape}",
                       integer_case(h, op, lhs_shape, rhs_shape, dtype))
    for source in CAST_DTYPES:
        for target in CAST_DTYPES:
            for n in [1, 40, 1001]:
                h.case(f"cast {DTYPE_NAMES[np.dtype(source)]} -> "
                       f"{DTYPE_NAMES[np.dtype(target)]} [{n}]",
                       cast_case(h, source, target, n))
    h.case("cast f32 NaN -> i32 is reported",
           cast_error_case(h, np.float32, np.int32, np.nan, ["is NaN"]))
    h.case("cast f64 1e10 -> i32 is reported",
           cast_error_case(h, np.float64, np.int32, 1e10,
                           ["outside the range of i32"]))
    h.case("cast f64 -inf -> i64 is reported",
           cast_error_case(h, np.float64, np.int64, -np.inf,
                           ["(-inf) is outside the range of i64"]))
    h.case("cast i64 2^40 -> i32 is reported",
           cast_error_case(h, np.int64, np.int32, 2**40,
                           ["(1099511627776) is outside the range of i32"]))
    h.case("add and sigmoid f32 [2^24 + 5]", large_case(h))
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
