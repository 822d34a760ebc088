# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's data movement against the cpu kernels, bit for bit:
reshape (also in place), concat along every axis (the copy's 16-, 8-, 4-,
2- and 1-byte units, sizes that are not a multiple of any), slice (the
gradient of concat), and broadcast_to for every dtype (the elementwise
engine on raw bytes: same shape, scalars, per-channel, strided, rank 0).
Errors get the cpu backend's messages.
"""

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
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
