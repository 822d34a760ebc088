# RUN: %python %s %fluid_runtime_lib
"""fluid_cpu_broadcast_to, fluid_cpu_sum_to, fluid_cpu_slice and
fluid_cpu_gather_grad against PyTorch (expand and its autograd, torch.cat's
and index_select's autograd) and NumPy, and as
gradient rules against central finite differences of our forward kernels:
sum_to is the gradient of a broadcasting add, mul, div with respect to the
smaller operand, broadcast_to the gradient of reduce_sum, slice the
gradient of concat, gather_grad the gradient of gather (repeated indices
add up).

fluid_cpu_transpose bit for bit against numpy.transpose: ranks 0 to 6 and
8, every permutation of ranks 2 to 4, NCHW <-> NHWC, size-1 and zero-size
dimensions, in f32, f64, i64, f16 and bf16 (random bit patterns, NaNs
among them: the kernel moves bytes); as its own gradient (by the inverse
permutation) against torch.permute's autograd.
"""

import ctypes
import importlib
import itertools
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
grad_api = importlib.import_module("cpu-grad-api")
api = grad_api.api

# (small shape, large shape): small broadcasts to large. Broadcast along
# every axis of a rank-4 shape, several at once, from lower ranks, from
# rank 0, an identity, a size-1 dimension of the large shape, an empty
# large shape and rank 8.
BROADCASTS = [([2, 3, 4, 5][:a] + [1] + [2, 3, 4, 5][a + 1:], [2, 3, 4, 5])
              for a in range(4)] + [
    ([1, 3, 1, 5], [2, 3, 4, 5]),
    ([1, 1, 1, 1], [2, 3, 4, 5]),
    ([1, 4, 1, 1], [2, 4, 3, 3]),
    ([4, 1, 1], [2, 4, 3, 3]),
    ([5], [2, 3, 4, 5]),
    ([4, 1], [2, 3, 4, 5]),
    ([], [2, 3]),
    ([], []),
    ([], [1]),
    ([3, 1, 5], [3, 1, 5]),
    ([2, 1, 1], [2, 1, 6]),
    ([1, 3], [0, 3]),
    ([2, 1, 3, 1, 2, 1, 1, 2], [2, 2, 3, 2, 2, 2, 2, 2]),
]

# Forward reductions whose gradient is broadcast_to: (input shape, axes,
# keep_dims).
REDUCTIONS = [
    ([2, 3, 4, 5], [0], True),
    ([2, 3, 4, 5], [1, 3], True),
    ([2, 3, 4, 5], [0, 1, 2, 3], True),
    ([2, 3, 4, 5], [0, 1], False),
    ([2, 3, 4, 5], [], False),
    ([6, 7], [1], True),
]

# concat cases: (piece shapes, axis); the gradient of piece k is a slice.
CONCATS = [
    ([[2, 3], [4, 3], [1, 3]], 0),
    ([[2, 3, 4, 5], [2, 1, 4, 5], [2, 2, 4, 5]], 1),
    ([[2, 3, 4, 1], [2, 3, 4, 5]], 3),
    ([[3], [4]], 0),
    ([[2, 0, 3], [2, 4, 3]], 1),
    ([[1, 2, 2], [1, 2, 3]], 2),
]

OTHER_DTYPES = [np.int32, np.int64, np.uint8, np.float16]

# gather cases whose gradient is gather_grad: (input shape, axis,
# indices), repeated and unused indices (their gradients add up, or are
# zero) along every axis.
GATHERS = [
    ([5, 3], 0, [4, 0, 4, 2, 4]),
    ([2, 6, 3], 1, [5, 5, 1]),
    ([2, 3, 4], 2, [3, 0, 1, 2, 0]),
    ([3, 4], 1, []),
]

# transpose cases: (input shape, permutations). Every permutation of ranks
# 2 to 4 (sizes all different, so that a swapped pair shows), a few of
# ranks 5, 6 and 8, the layout changes, size-1 dimensions (dropped or
# kept), zero-size tensors and rank 0 and 1.
TRANSPOSES = [
    ([], [[]]),
    ([7], [[0]]),
    ([5, 7], list(itertools.permutations(range(2)))),
    ([2, 3, 4], list(itertools.permutations(range(3)))),
    ([2, 3, 4, 5], list(itertools.permutations(range(4)))),
    ([2, 3, 1, 4, 5], [[4, 3, 2, 1, 0], [0, 2, 3, 1, 4], [1, 0, 2, 4, 3],
                       [3, 0, 4, 1, 2], [2, 4, 0, 3, 1]]),
    ([2, 3, 2, 1, 3, 2], [[5, 4, 3, 2, 1, 0], [0, 3, 4, 1, 5, 2],
                          [1, 0, 5, 2, 3, 4], [4, 5, 0, 1, 2, 3]]),
    ([2, 1, 3, 2, 1, 2, 3, 2], [[7, 6, 5, 4, 3, 2, 1, 0],
                                [0, 2, 4, 6, 1, 3, 5, 7]]),
    ([3, 5, 6, 7], [[0, 2, 3, 1]]),  # NCHW -> NHWC
    ([3, 6, 7, 5], [[0, 3, 1, 2]]),  # NHWC -> NCHW
    ([4, 6, 8, 16], [[1, 0, 2, 3], [0, 1, 3, 2]]),  # long contiguous runs
    ([1, 4, 1, 3], [[2, 0, 3, 1], [3, 1, 0, 2]]),
    ([1, 1, 1], [[2, 1, 0]]),
    ([2, 0, 3], [[2, 0, 1], [0, 1, 2]]),
    ([0], [[0]]),
    ([3, 0], [[1, 0]]),
]

# (name, NumPy dtype of the data, fluid dtype code or None for NumPy's).
TRANSPOSE_DTYPES = [("f32", np.float32, None), ("f64", np.float64, None),
                    ("i64", np.int64, None), ("f16", np.uint16, 4),
                    ("bf16", np.uint16, api.fluidrt.BF16)]

RNG = np.random.default_rng(4321)


def broadcast_to(suite, x, shape):
    out = api.empty(shape, x.dtype)
    suite.kernels("fluid_cpu_broadcast_to", x, out)
    return out


def sum_to(suite, x, shape):
    out = api.empty(shape, x.dtype)
    suite.kernels("fluid_cpu_sum_to", x, out)
    return out


def broadcast_torch_case(suite, dtype, small, large):
    def body():
        x = suite.randn(*small, dtype=dtype)
        api.expect_close(broadcast_to(suite, x, large), x.expand(large))
    return body


def broadcast_numpy_case(suite, dtype, small, large):
    def body():
        x = (suite.randint(100, *small).numpy() + 1).astype(dtype)
        out = np.zeros(large, dtype=dtype)
        suite.kernels("fluid_cpu_broadcast_to", x, out)
        np.testing.assert_array_equal(out, np.broadcast_to(x, large))
    return body


def sum_to_torch_case(suite, dtype, small, large):
    def body():
        w = suite.randn(*large, dtype=dtype)
        (want,) = grad_api.torch_grads(lambda b: b.expand(large),
                                       [suite.randn(*small, dtype=dtype)], w)
        api.expect_close(sum_to(suite, w, small), want)
    return body


def sum_to_adjoint_case(suite, small, large):
    def body():
        u = suite.randn(*small)
        w = suite.randn(*large)
        lhs = float((broadcast_to(suite, u, large) * w).sum())
        rhs = float((u * sum_to(suite, w, small)).sum())
        assert abs(lhs - rhs) <= 1e-12 * max(1.0, abs(lhs)), (lhs, rhs)
    return body


def binary(suite, op, lhs, rhs, shape):
    out = api.empty(shape, torch.float64)
    suite.kernels(f"fluid_cpu_{op}", lhs, rhs, out)
    return out


def sum_to_fd_case(suite, op, small, large):
    """f(b) = <r, op(a, b)> (op(b, a) for div), b of the small shape; the
    rule is sum_to of the elementwise gradient, computed with our own
    kernels."""
    def body():
        a = suite.randn(*large)
        b = suite.randn(*small) + 3  # away from 0 for div
        r = suite.randn(*large)
        if op == "add":
            grad = sum_to(suite, r, small)
        elif op == "mul":
            grad = sum_to(suite, binary(suite, "mul", r, a, large), small)
        else:  # d(b / a) / db = 1 / a
            grad = sum_to(suite, binary(suite, "div", r, a, large), small)

        def f(b):
            if op == "div":
                return grad_api.projection(binary(suite, op, b, a, large), r)
            return grad_api.projection(binary(suite, op, a, b, large), r)

        grad_api.finite_difference_check(suite, f, b, grad,
                                         f"sum_to as the gradient of {op}")
    return body


def reduce_forward(suite, x, axes, keep_dims, out_shape):
    out = api.empty(out_shape, x.dtype)
    params = api.ReduceParams(list(axes) + [0] * (8 - len(axes)), len(axes),
                              int(keep_dims))
    suite.kernels("fluid_cpu_reduce_sum", x, out, params)
    return out


def broadcast_fd_case(suite, shape, axes, keep_dims):
    def body():
        x = suite.randn(*shape)
        out_shape = list(torch.sum(x, dim=axes or None,
                                   keepdim=keep_dims).shape)
        r = suite.randn(*out_shape)
        grad_api.finite_difference_check(
            suite, lambda x: grad_api.projection(
                reduce_forward(suite, x, axes, keep_dims, out_shape), r),
            x, broadcast_to(suite, r, shape), "broadcast_to as the gradient "
            "of reduce_sum")
    return body


def offsets(pieces, axis):
    result, offset = [], 0
    for piece in pieces:
        result.append(offset)
        offset += piece[axis]
    return result


def slice_(suite, x, shape, axis, offset):
    out = api.empty(shape, x.dtype)
    suite.kernels("fluid_cpu_slice", x, out, axis, offset)
    return out


def slice_torch_case(suite, dtype, pieces, axis):
    def body():
        xs = [suite.randn(*p, dtype=dtype) for p in pieces]
        r = suite.randn(*torch.cat(xs, axis).shape, dtype=dtype)
        wants = grad_api.torch_grads(lambda *xs: torch.cat(xs, axis), xs, r)
        for k, (piece, offset, want) in enumerate(
                zip(pieces, offsets(pieces, axis), wants)):
            api.expect_close(slice_(suite, r, piece, axis, offset), want,
                             f"piece {k}")
    return body


def slice_numpy_case(suite, dtype, pieces, axis):
    def body():
        total = list(pieces[0])
        total[axis] = sum(p[axis] for p in pieces)
        x = suite.randint(100, *total).numpy().astype(dtype)
        for piece, offset in zip(pieces, offsets(pieces, axis)):
            out = np.zeros(piece, dtype=dtype)
            suite.kernels("fluid_cpu_slice", x, out, axis, offset)
            window = [slice(None)] * len(total)
            window[axis] = slice(offset, offset + piece[axis])
            np.testing.assert_array_equal(out, x[tuple(window)])
    return body


def concat_forward(suite, xs, axis, shape):
    out = api.empty(shape, torch.float64)
    array = (api.fluidrt.FluidTensor * len(xs))(
        *[api.fluidrt.tensor(x.numpy()) for x in xs])
    suite.kernels("fluid_cpu_concat", array, len(xs), out, axis)
    return out


def slice_fd_case(suite, pieces, axis):
    def body():
        xs = [suite.randn(*p) for p in pieces]
        shape = list(torch.cat(xs, axis).shape)
        r = suite.randn(*shape)
        for k, (piece, offset) in enumerate(zip(pieces,
                                                offsets(pieces, axis))):
            def f(x):
                moved = list(xs)
                moved[k] = x
                return grad_api.projection(
                    concat_forward(suite, moved, axis, shape), r)

            grad_api.finite_difference_check(
                suite, f, xs[k], slice_(suite, r, piece, axis, offset),
                f"piece {k}")
    return body


def gather_forward(suite, x, indices, axis):
    shape = list(x.shape)
    shape[axis] = len(indices)
    out = api.empty(shape, x.dtype)
    suite.kernels("fluid_cpu_gather", x, indices, out, axis)
    return out


def gather_grad(suite, dy, indices, axis, shape):
    out = api.empty(shape, dy.dtype)
    suite.kernels("fluid_cpu_gather_grad", dy, indices, out, axis)
    return out


def gather_torch_case(suite, dtype, shape, axis, picks):
    def body():
        x = suite.randn(*shape, dtype=dtype)
        indices = torch.tensor(picks, dtype=torch.int64)
        r = suite.randn(*gather_forward(suite, x, indices, axis).shape,
                        dtype=dtype)
        want, = grad_api.torch_grads(lambda x: x.index_select(axis, indices),
                                     [x], r)
        api.expect_close(gather_grad(suite, r, indices, axis, shape), want)
    return body


def gather_fd_case(suite, shape, axis, picks):
    def body():
        x = suite.randn(*shape)
        indices = torch.tensor(picks, dtype=torch.int32)
        r = suite.randn(*gather_forward(suite, x, indices, axis).shape)
        grad_api.finite_difference_check(
            suite, lambda x: grad_api.projection(
                gather_forward(suite, x, indices, axis), r),
            x, gather_grad(suite, r, indices, axis, shape))
    return body


def gather_sum_order_case(suite):
    """Repeated indices add up in double, rounded once: 1 + 2^-24 + 2^-24
    is 1 + 2^-23 in f32 (adding in f32 would round each 2^-24 away)."""
    def body():
        dy = torch.tensor([[1.0], [2.0**-24], [2.0**-24]], dtype=torch.float32)
        indices = torch.tensor([1, 1, 1], dtype=torch.int64)
        got = gather_grad(suite, dy, indices, 0, [2, 1])
        assert got[0, 0] == 0 and got[1, 0] == 1 + 2.0**-23, got
    return body


def transpose_values(shape, dtype):
    """Random values; for the 16-bit dtypes random bit patterns (NaNs,
    infinities and subnormals among them)."""
    if dtype == np.uint16:
        return RNG.integers(0, 1 << 16, size=shape, dtype=np.uint16)
    if dtype == np.int64:
        return RNG.integers(-2**63, 2**63 - 1, size=shape, dtype=np.int64,
                            endpoint=True)
    return np.asarray(RNG.standard_normal(shape), dtype=dtype)


def transpose_call(suite, x, perm, code=None, out_shape=None):
    """fluid_cpu_transpose of x into a fresh output (filled with a pattern
    that no correct result keeps everywhere) and the output."""
    out_shape = [x.shape[p] for p in perm] if out_shape is None else out_shape
    size = int(np.prod(out_shape, dtype=np.int64)) * x.dtype.itemsize
    out = np.frombuffer(b"\x5a" * size, x.dtype).reshape(out_shape).copy()
    params = api.TransposeParams.of(perm)
    suite.kernels("fluid_cpu_transpose",
                  ctypes.byref(api.fluidrt.tensor(x, code)),
                  ctypes.byref(api.fluidrt.tensor(out, code)), params)
    return out


def transpose_numpy_case(suite, shape, perm, dtype, code):
    def body():
        x = transpose_values(shape, dtype)
        got = transpose_call(suite, x, perm, code)
        want = np.array(np.transpose(x, perm), order="C")  # keeps rank 0
        assert got.shape == want.shape, (got.shape, want.shape)
        assert got.tobytes() == want.tobytes(), "bits differ from numpy's"
    return body


def transpose_torch_case(suite, shape, perm):
    """The gradient of transpose is the transpose by the inverse
    permutation."""
    def body():
        x = suite.randn(*shape)
        r = suite.randn(*[shape[p] for p in perm])
        (want,) = grad_api.torch_grads(lambda x: x.permute(perm), [x], r)
        inverse = list(np.argsort(perm))
        got = transpose_call(suite, r.numpy(), inverse)
        assert got.tobytes() == want.numpy().tobytes(), \
            "not the gradient of torch.permute"
    return body


def main():
    suite = grad_api.Suite(sys.argv)
    for small, large in BROADCASTS:
        label = f"{small} to {large}"
        for dtype, dtype_name in api.FLOAT_DTYPES:
            suite.case(f"broadcast_to {dtype_name} {label} vs torch",
                       broadcast_torch_case(suite, dtype, small, large))
            suite.case(f"sum_to {dtype_name} {large} to {small} vs torch",
                       sum_to_torch_case(suite, dtype, small, large))
        suite.case(f"broadcast_to and sum_to f64 {label} are adjoint",
                   sum_to_adjoint_case(suite, small, large))
        for op in ("add", "mul", "div"):
            suite.case(f"sum_to f64 {large} to {small} as the gradient of "
                       f"{op} vs finite differences",
                       sum_to_fd_case(suite, op, small, large))
    for dtype in OTHER_DTYPES:
        small, large = [1, 3, 1], [2, 3, 4]
        suite.case(f"broadcast_to {np.dtype(dtype).name} {small} to {large} "
                   f"vs numpy",
                   broadcast_numpy_case(suite, dtype, small, large))
    for shape, axes, keep_dims in REDUCTIONS:
        suite.case(f"broadcast_to f64 as the gradient of reduce_sum {shape} "
                   f"axes {axes} keep_dims={int(keep_dims)} vs finite "
                   f"differences",
                   broadcast_fd_case(suite, shape, axes, keep_dims))
    for pieces, axis in CONCATS:
        label = f"concat of {pieces} along axis {axis}"
        for dtype, dtype_name in api.FLOAT_DTYPES:
            suite.case(f"slice {dtype_name} {label} vs torch",
                       slice_torch_case(suite, dtype, pieces, axis))
        suite.case(f"slice f64 {label} vs finite differences",
                   slice_fd_case(suite, pieces, axis))
    for dtype in OTHER_DTYPES:
        pieces, axis = [[2, 3, 2], [2, 1, 2], [2, 2, 2]], 1
        suite.case(f"slice {np.dtype(dtype).name} concat of {pieces} along "
                   f"axis {axis} vs numpy",
                   slice_numpy_case(suite, dtype, pieces, axis))
    for shape, axis, picks in GATHERS:
        for dtype, dtype_name in api.FLOAT_DTYPES:
            suite.case(f"gather_grad {dtype_name} {shape} axis {axis} "
                       f"indices {picks} vs torch",
                       gather_torch_case(suite, dtype, shape, axis, picks))
        suite.case(f"gather_grad f64 {shape} axis {axis} indices {picks} vs "
                   "finite differences",
                   gather_fd_case(suite, shape, axis, picks))
    suite.case("gather_grad sums repeated indices in double",
               gather_sum_order_case(suite))
    for shape, perms in TRANSPOSES:
        for perm in perms:
            perm = list(perm)
            for name, dtype, code in TRANSPOSE_DTYPES:
                suite.case(f"transpose {name} {shape} perm {perm} vs numpy",
                           transpose_numpy_case(suite, shape, perm, dtype,
                                                code))
    for shape, perm in [([2, 3, 4], [2, 0, 1]), ([2, 3, 4, 5], [0, 2, 3, 1]),
                        ([2, 3, 4, 5], [3, 1, 0, 2]), ([4], [0]), ([], [])]:
        suite.case(f"transpose f64 {shape} perm {perm} by the inverse "
                   f"permutation as the gradient of torch.permute",
                   transpose_torch_case(suite, shape, perm))
    suite.finish()


if __name__ == "__main__":
    main()
