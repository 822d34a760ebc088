# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's data movement against the cpu kernels, bit for bit:
reshape (also in place), concat along every axis (the copy's 16-, 8-, 4-,
2- and 1-byte units, sizes that are not a multiple of any), slice (the
gradient of concat), and broadcast_to for every dtype (the elementwise
engine on raw bytes: same shape, scalars, per-channel, strided, rank 0).
transpose in f32, bf16 (every bit pattern, NaNs included), f16, f64 and
i64 (u8 and i32 for a few): NCHW -> NHWC and back at ResNet-like shapes
whose sizes are not multiples of the 32-wide tiles (the tiled batched 2-D
transpose), general permutations of ranks 2 to 6 and 8 (the gather, with
wide units where the innermost dimension stays), the identity and
permutations that are one after dropping size-1 dimensions (a copy),
size-1 dimensions elsewhere, rank 0, zero-size tensors and an unaligned
input; the cpu's result is checked against numpy.transpose too.
gather for every dtype with i64 and i32 indices (repeated, unused, along
every axis; swin's [169, 3] table at 2401 indices) and gather_grad in f32
and f64, both bit for bit (gather_grad sums in the cpu's order, in
double); an index outside the range is reported by
fluid_cuda_check_errors with the cpu's message.
Errors get the cpu backend's messages.
"""

import ctypes
import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
harness = importlib.import_module("gpu-elementwise")
Out, Same, run_both = harness.Out, harness.Same, harness.run_both
expect_same_error = harness.expect_same_error

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.float16, np.uint8]


def name_of(dtype):
    return np.dtype(dtype).name


def values(h, shape, dtype):
    """Distinct-ish values of any dtype (bit patterns are compared)."""
    if np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        return np.array(h.rng.integers(info.min, info.max, size=shape,
                                       endpoint=True), dtype=dtype)
    return np.array(h.rng.standard_normal(shape), dtype=dtype)


def exact(results):
    for want, got in results:
        if got.shape != want.shape or not harness.bitwise_equal(got, want):
            raise AssertionError(f"{got} != {want}")
    return "bitwise equal"


def reshape_case(h, shape, new_shape, dtype, in_place):
    def body():
        x = values(h, shape, dtype)
        if not in_place:
            return exact(run_both(h, "reshape", x, Out(new_shape, dtype)))
        dx = h.upload(x)
        view = harness.DeviceView(dx, 0, new_shape, dtype)
        h.ctx("reshape", dx, view)
        got = view.download()
        dx.free()
        return exact([(x.reshape(new_shape), got)])
    return body


def concat_case(h, shapes, axis, dtype):
    def body():
        inputs = [values(h, s, dtype) for s in shapes]
        out_shape = list(shapes[0])
        out_shape[axis] = sum(s[axis] for s in shapes)
        want = np.full(out_shape, 7, dtype)
        descs = (harness.fluidrt.FluidTensor * len(inputs))(
            *[harness.fluidrt.tensor(a) for a in inputs])
        harness.fluidcuda.cpu(h.lib, "concat", descs, len(inputs), want, axis)
        device = [h.upload(a) for a in inputs]
        gpu_descs = (harness.fluidrt.FluidTensor * len(device))(
            *[d.desc for d in device])
        out = h.upload(np.full(out_shape, 7, dtype))
        h.ctx("concat", gpu_descs, len(device), out, axis)
        got = out.download()
        for d in device + [out]:
            d.free()
        return exact([(want, got)])
    return body


def slice_case(h, shape, axis, offset, length, dtype):
    def body():
        x = values(h, shape, dtype)
        out_shape = list(shape)
        out_shape[axis] = length
        return exact(run_both(h, "slice", x, Out(out_shape, dtype), axis,
                              offset))
    return body


# (input shape, axis, indices).
GATHERS = [
    ([5, 3], 0, [4, 0, 4, 2]),
    ([2, 6, 3], 1, [5, 5, 1]),
    ([2, 3, 4], 2, [3, 0, 1, 2, 0]),
    ([7], 0, [6]),
    ([169, 3], 0, [(i * 37) % 169 for i in range(2401)]),
]


def gather_case(h, shape, axis, picks, dtype, index_dtype):
    def body():
        x = values(h, shape, dtype)
        out_shape = list(shape)
        out_shape[axis] = len(picks)
        results = run_both(h, "gather", x, np.array(picks, index_dtype),
                           Out(out_shape, dtype), axis)
        h.expect_no_device_error()
        return exact(results)
    return body


def gather_grad_case(h, shape, axis, picks, dtype):
    def body():
        dy_shape = list(shape)
        dy_shape[axis] = len(picks)
        dy = h.randn(*dy_shape, dtype=dtype)
        results = run_both(h, "gather_grad", dy, np.array(picks, np.int64),
                           Out(shape, dtype), axis)
        h.expect_no_device_error()
        return exact(results)
    return body


def gather_bad_index_case(h, op, index_dtype):
    """An index outside [0, extent): the call succeeds, check_errors names
    the index as the cpu does."""
    def body():
        picks = np.array([0, 7, 1], index_dtype)
        if op == "gather":
            source, out = np.ones((5, 3), np.float32), Out((3, 3), np.float32)
        else:
            source, out = np.ones((3, 3), np.float32), Out((5, 3), np.float32)
        host_out = out.host()
        tensor = harness.fluidrt.tensor
        byref = harness.ctypes.byref
        status = getattr(h.lib, "fluid_cpu_" + op)(
            byref(tensor(source)), byref(tensor(picks)),
            byref(tensor(host_out)), 0)
        if status == harness.OK:
            raise AssertionError("the cpu accepted the index")
        cpu_text = harness.fluidcuda.last_error(h.lib)
        device = [h.upload(source), h.upload(picks), h.upload(host_out)]
        h.ctx(op, *device, 0)
        for d in device:
            d.free()
        h.expect_device_error([f"fluid_cuda_check_errors: fluid_cuda_{op}: "
                               + cpu_text.split(": ", 1)[1]])
    return body


def broadcast_case(h, shape, out_shape, dtype):
    def body():
        x = values(h, shape, dtype)
        return exact(run_both(h, "broadcast_to", x, Out(out_shape, dtype)))
    return body


BROADCASTS = [
    ([2, 3, 4], [2, 3, 4]),
    ([], [5, 3]),
    ([], []),
    ([1], [1001]),
    ([16, 1, 1], [8, 16, 7, 7]),
    ([1, 16, 1, 1], [4, 16, 8, 8]),
    ([32], [64, 32]),
    ([10], [6, 10]),
    ([5, 1], [5, 6]),
    ([3, 1, 5], [2, 3, 4, 5]),
    ([1, 4, 1], [3, 4, 5]),
    ([0, 1], [0, 4]),
    ([2, 1, 3, 1, 1, 2, 1, 3], [2, 2, 3, 2, 2, 2, 2, 3]),
]

CONCATS = [
    ([[2, 3, 4], [2, 5, 4]], 1),
    ([[2, 3, 4], [2, 3, 4], [2, 3, 1]], 2),
    ([[1, 3], [4, 3]], 0),
    ([[3, 0, 2], [3, 4, 2]], 1),
    ([[7], [9], [1]], 0),
    ([[8, 16, 7, 7], [8, 32, 7, 7]], 1),  # the channel concat of a network
    ([[4, 8, 2], [4, 8, 6]], 2),
    ([[5, 3, 1], [5, 3, 2]], 2),
]


# (name, NumPy dtype of the data, fluid dtype code or None for NumPy's).
TRANSPOSE_DTYPES = [("f32", np.float32, None),
                    ("bf16", np.uint16, harness.fluidrt.BF16),
                    ("f16", np.float16, None), ("f64", np.float64, None),
                    ("i64", np.int64, None)]
NARROW_DTYPES = [("u8", np.uint8, None), ("i32", np.int32, None)]

# NCHW shapes: each is transposed to NHWC, and its NHWC form back.
LAYOUT_SHAPES = [
    [8, 64, 56, 56],
    [4, 64, 112, 112],
    [4, 256, 14, 14],
    [2, 2048, 7, 7],
    [2, 3, 224, 224],  # the stem's input: 3 channels
    [3, 96, 7, 7],
    [2, 100, 13, 17],
    [5, 17, 33, 31],
    [1, 1000, 1, 1],
]
TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]

# (input shape, perm): what each becomes after simplification in comments.
TRANSPOSES = [
    ([33, 65], [1, 0]),  # one matrix
    ([37, 45, 3], [2, 0, 1]),  # gather
    ([37, 45, 3], [1, 0, 2]),  # innermost stays: 12-byte rows
    ([6, 10, 64], [1, 0, 2]),  # innermost stays: 16-byte units
    ([7, 9, 11], [2, 1, 0]),
    ([3, 5, 7, 9], [3, 1, 0, 2]),
    ([3, 5, 7, 9], [1, 0, 3, 2]),
    ([3, 5, 7, 9], [2, 3, 0, 1]),  # [15, 63] -> [63, 15]
    ([4, 3, 5, 2, 6], [4, 2, 0, 3, 1]),
    ([2, 3, 4, 5, 6, 7], [5, 4, 3, 2, 1, 0]),
    ([2, 3, 4, 5, 6, 7], [0, 1, 4, 5, 2, 3]),  # [6, 20, 42] -> [6, 42, 20]
    ([2, 3, 4, 5, 6, 7], [1, 0, 3, 2, 5, 4]),
    ([2, 1, 3, 1, 2, 1, 3, 2], [7, 6, 5, 4, 3, 2, 1, 0]),
    ([4, 5, 6], [0, 1, 2]),  # the identity: a copy
    ([4, 1, 6], [1, 0, 2]),  # the identity without the size-1 dimension
    ([1, 64, 1, 49], [0, 3, 2, 1]),  # [64, 49] -> [49, 64]
    ([8, 1, 32, 1, 7], [4, 2, 1, 0, 3]),  # [8, 32, 7] -> [7, 32, 8]
    ([1, 1, 1], [2, 0, 1]),
    ([], []),
    ([7], [0]),
    ([2, 0, 3], [2, 0, 1]),
    ([0, 5], [1, 0]),
]


def upload_as(h, array, code=None):
    """`array` in device memory, described as fluid dtype `code` (BF16 for
    uint16 bits) or as its NumPy dtype; keeps rank 0."""
    array = np.array(array)
    t = harness.fluidcuda.DeviceTensor(h.ctx, array.shape, array.dtype, code)
    h.ctx.check(h.lib.fluid_cuda_copy_to_device(
        h.ctx.handle, t.pointer, array.ctypes.data, t.nbytes))
    return t


def transpose_values(h, shape, dtype):
    if np.dtype(dtype) == np.uint16:  # bf16: every bit pattern
        return h.rng.integers(0, 1 << 16, size=shape, dtype=np.uint16)
    return values(h, shape, dtype)


def filled(shape, dtype):
    """A buffer of `shape` holding a byte pattern no transpose keeps
    everywhere (0x7E bytes)."""
    size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return np.frombuffer(b"\x7e" * size, dtype).reshape(shape).copy()


def transpose_case(h, shape, perm, dtype, code, unaligned=False):
    """fluid_cuda_transpose against fluid_cpu_transpose (itself checked
    against numpy.transpose), bit for bit; with `unaligned` the input is
    one element past an aligned address."""
    def body():
        x = transpose_values(h, shape, dtype)
        out_shape = tuple(shape[p] for p in perm)
        params = harness.TransposeParams.of(perm)
        want = filled(out_shape, dtype)
        harness.fluidrt.check(h.lib, h.lib.fluid_cpu_transpose(
            ctypes.byref(harness.fluidrt.tensor(x, code)),
            ctypes.byref(harness.fluidrt.tensor(want, code)),
            ctypes.byref(params)))
        if want.tobytes() != np.array(np.transpose(x, perm),
                                      order="C").tobytes():
            raise AssertionError("the cpu's transpose is not numpy's")
        if unaligned:
            dx, base = harness.unaligned_upload(h, x)
        else:
            dx = base = upload_as(h, x, code)
        out = upload_as(h, filled(out_shape, dtype), code)
        h.ctx("transpose", dx, out, params)
        got = out.download()
        for t in (base, out):
            t.free()
        return exact([(want, got)])
    return body


def transpose_cases(h):
    for shape in LAYOUT_SHAPES:
        n, c, height, width = shape
        for name, dtype, code in TRANSPOSE_DTYPES:
            h.case(f"transpose {name} NCHW {shape} -> NHWC",
                   transpose_case(h, shape, TO_NHWC, dtype, code))
            h.case(f"transpose {name} NHWC {[n, height, width, c]} -> NCHW",
                   transpose_case(h, [n, height, width, c], TO_NCHW, dtype,
                                  code))
    for name, dtype, code in NARROW_DTYPES:
        h.case(f"transpose {name} NCHW [4, 64, 28, 28] -> NHWC",
               transpose_case(h, [4, 64, 28, 28], TO_NHWC, dtype, code))
        h.case(f"transpose {name} NHWC [4, 28, 28, 64] -> NCHW",
               transpose_case(h, [4, 28, 28, 64], TO_NCHW, dtype, code))
    for shape, perm in TRANSPOSES:
        for name, dtype, code in TRANSPOSE_DTYPES + NARROW_DTYPES:
            h.case(f"transpose {name} {shape} perm {perm}",
                   transpose_case(h, shape, perm, dtype, code))
    for shape, perm in [([6, 5, 8], [1, 0, 2]), ([50, 70], [1, 0]),
                        ([3, 4, 5, 6], [2, 0, 3, 1])]:
        h.case(f"transpose f32 {shape} perm {perm} unaligned input",
               transpose_case(h, shape, perm, np.float32, None,
                              unaligned=True))


def error_cases(h):
    f64 = np.float64
    a = np.ones((2, 3), f64)
    cases = {
        "reshape element count": ("reshape", a, Out((4,), f64)),
        "reshape dtype": ("reshape", a, Out((6,), np.float32)),
        "slice past the end": ("slice", a, Out((2, 2), f64), 1, 2),
        "slice negative offset": ("slice", a, Out((2, 2), f64), 1, -1),
        "slice axis": ("slice", a, Out((2, 2), f64), 2, 0),
        "slice off-axis shape": ("slice", a, Out((1, 2), f64), 1, 0),
        "slice rank": ("slice", a, Out((2,), f64), 0, 0),
        "broadcast more dimensions": ("broadcast_to", np.ones((2, 1, 3)),
                                      Out((2, 3), f64)),
        "broadcast conflict": ("broadcast_to", np.ones((2, 3)),
                               Out((4, 3), f64)),
        "broadcast dtype": ("broadcast_to", np.ones(3, np.int32),
                            Out((2, 3), np.int64)),
        "transpose null params": ("transpose", a, Out((3, 2), f64), None),
        "transpose params rank": ("transpose", a, Out((3, 2), f64),
                                  harness.TransposeParams([0] * 8, 9)),
        "transpose params rank not the input's": (
            "transpose", a, Out((3, 2), f64),
            harness.TransposeParams.of([1, 0, 2])),
        "transpose output rank": ("transpose", a, Out((3, 2, 1), f64),
                                  harness.TransposeParams.of([1, 0])),
        "transpose perm entry out of range": (
            "transpose", a, Out((3, 2), f64),
            harness.TransposeParams.of([0, 2])),
        "transpose perm repeats an entry": (
            "transpose", a, Out((3, 2), f64),
            harness.TransposeParams.of([1, 1])),
        "transpose output shape": ("transpose", np.ones((2, 3, 4)),
                                   Out((4, 3, 2), f64),
                                   harness.TransposeParams.of([0, 2, 1])),
        "transpose dtype": ("transpose", a, Out((3, 2), np.float32),
                            harness.TransposeParams.of([1, 0])),
        "gather float indices": ("gather", a, np.ones(2), Out((2, 3), f64),
                                 0),
        "gather indices rank": ("gather", a, np.zeros((1, 2), np.int64),
                                Out((2, 3), f64), 0),
        "gather axis": ("gather", a, np.zeros(2, np.int64), Out((2, 2), f64),
                        2),
        "gather output shape": ("gather", a, np.zeros(2, np.int64),
                                Out((3, 3), f64), 0),
        "gather_grad integer": ("gather_grad", np.ones((2, 3), np.int64),
                                np.zeros(2, np.int64), Out((2, 3), np.int64),
                                0),
        "gather_grad grad_output shape": ("gather_grad", a,
                                          np.zeros(3, np.int64),
                                          Out((4, 3), f64), 0),
    }
    for name, (op, *args) in cases.items():
        h.case(f"error {op}: {name}",
               lambda op=op, args=args: expect_same_error(h, op, *args))

    def concat_error(shapes, axis, out_shape, count=None):
        def body():
            inputs = [np.ones(s) for s in shapes]
            descs = (harness.fluidrt.FluidTensor * len(inputs))(
                *[harness.fluidrt.tensor(x) for x in inputs])
            n = len(inputs) if count is None else count
            out = np.full(out_shape, np.nan)
            cpu_status = h.lib.fluid_cpu_concat(
                descs, n, harness.ctypes.byref(harness.fluidrt.tensor(out)),
                axis)
            cpu_text = harness.fluidcuda.last_error(h.lib)
            device = [h.upload(x) for x in inputs]
            gpu_descs = (harness.fluidrt.FluidTensor * len(device))(
                *[d.desc for d in device])
            dout = h.upload(out)
            status, text = h.ctx.status("concat", gpu_descs, n, dout, axis)
            if cpu_status == harness.OK or status != cpu_status or \
                    text != harness.cuda_message(cpu_text):
                raise AssertionError(f"{status} {text!r} vs {cpu_status} "
                                     f"{cpu_text!r}")
        return body
    h.case("error concat: no inputs", concat_error([[2]], 0, [2], count=0))
    h.case("error concat: axis", concat_error([[2], [3]], 1, [5]))
    h.case("error concat: off-axis shape",
           concat_error([[2, 3], [2, 4]], 0, [4, 3]))
    h.case("error concat: output shape",
           concat_error([[2, 3], [2, 4]], 1, [2, 8]))


def main():
    h = harness.Harness(sys.argv)
    for dtype in DTYPES:
        name = name_of(dtype)
        h.case(f"reshape {name}", reshape_case(h, [2, 3, 5], [6, 5], dtype,
                                               in_place=False))
        h.case(f"reshape {name} rank 0", reshape_case(h, [], [1, 1], dtype,
                                                      in_place=False))
        h.case(f"reshape {name} in place",
               reshape_case(h, [4, 3, 7], [12, 7], dtype, in_place=True))
        for shapes, axis in CONCATS:
            h.case(f"concat {name} {shapes} axis {axis}",
                   concat_case(h, shapes, axis, dtype))
        for shape, axis, offset, length in [([2, 7, 4], 1, 2, 3),
                                            ([9, 3], 0, 4, 5),
                                            ([3, 5, 6], 2, 1, 4),
                                            ([3, 5, 6], 2, 0, 6),
                                            ([8, 48, 7, 7], 1, 16, 32),
                                            ([4, 4], 1, 4, 0)]:
            h.case(f"slice {name} {shape} axis {axis} [{offset}, "
                   f"{offset + length})",
                   slice_case(h, shape, axis, offset, length, dtype))
        for shape, out_shape in BROADCASTS:
            h.case(f"broadcast_to {name} {shape} -> {out_shape}",
                   broadcast_case(h, shape, out_shape, dtype))
    h.case("broadcast_to f32 [3, 1] -> [3, 2^23 + 3]",
           broadcast_case(h, [3, 1], [3, (1 << 23) + 3], np.float32))
    for shape, axis, picks in GATHERS:
        for dtype in DTYPES:
            h.case(f"gather {name_of(dtype)} {shape} axis {axis} "
                   f"{len(picks)} i64 indices",
                   gather_case(h, shape, axis, picks, dtype, np.int64))
        h.case(f"gather float32 {shape} axis {axis} i32 indices",
               gather_case(h, shape, axis, picks, np.float32, np.int32))
        for dtype in (np.float32, np.float64):
            h.case(f"gather_grad {name_of(dtype)} {shape} axis {axis} "
                   f"{len(picks)} indices",
                   gather_grad_case(h, shape, axis, picks, dtype))
    for op in ("gather", "gather_grad"):
        for index_dtype in (np.int64, np.int32):
            h.case(f"{op} {name_of(index_dtype)} index out of range",
                   gather_bad_index_case(h, op, index_dtype))
    transpose_cases(h)
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
