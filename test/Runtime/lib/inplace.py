"""The in-place cases of cpu-in-place.py and gpu-in-place.py.

Every purely elementwise kernel documents that its output may be the
buffer of an input of the output's shape and dtype (CpuKernels.h,
CpuGradKernels.h, CpuOptimizerKernels.h, CudaKernels.h); the compiler then
writes a dead input's buffer over. A case is one call: a kernel, a dtype,
the operands' shapes, and which operands (of the output's shape) share the
output's buffer. Both tests run each case twice, into a separate
NaN-filled output and over the shared buffer, and require the two results
to be bitwise equal.
"""

import itertools

import numpy as np

FLOATS = [np.float32, np.float64]
INTEGERS = [np.int32, np.int64]


def normal(rng, shape, dtype):
    return np.array(rng.standard_normal(shape) * 3, dtype=dtype)


def positive(rng, shape, dtype):
    return np.array(np.abs(rng.standard_normal(shape)) + 0.25, dtype=dtype)


def nonzero(rng, shape, dtype):
    values = rng.standard_normal(shape)
    return np.array(np.where(values < 0, values - 0.5, values + 0.5), dtype)


def unit(rng, shape, dtype):
    """In (0, 1): a sigmoid's output."""
    return np.array(rng.uniform(0.01, 0.99, shape), dtype=dtype)


def symmetric_unit(rng, shape, dtype):
    """In (-1, 1): a tanh's output."""
    return np.array(rng.uniform(-0.99, 0.99, shape), dtype=dtype)


def relu_output(rng, shape, dtype):
    """Zeros (a third) and positive values, as relu leaves them; a few
    negative ones too, which relu_grad treats as zeros."""
    values = rng.standard_normal(shape)
    values = np.where(values < -0.4, 0.0, values)
    return np.array(values, dtype=dtype)


def condition(rng, shape, dtype):
    """0 and 1, and a NaN (nonzero) where there is room for one."""
    values = (rng.uniform(size=shape) < 0.5).astype(np.float64)
    if values.size > 8:
        values.flat[3] = np.nan
    return np.array(values, dtype=dtype)


def integers(rng, shape, dtype):
    """The dtype's whole range, so that add, sub and mul wrap."""
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(info.min, info.max, size=shape,
                                   dtype=dtype, endpoint=True))


class Kernel:
    """An elementwise entry point fluid_<backend>_<name>: its operands'
    value generators (for float dtypes), its dtypes, and whether its
    operands broadcast."""

    def __init__(self, name, domains, dtypes=FLOATS, broadcasts=True):
        self.name = name
        self.domains = domains
        self.dtypes = dtypes
        self.broadcasts = broadcasts

    @property
    def arity(self):
        return len(self.domains)

    def values(self, rng, k, shape, dtype):
        if np.issubdtype(dtype, np.integer):
            return integers(rng, shape, dtype)
        return self.domains[k](rng, shape, dtype)


# Every purely elementwise kernel of the runtime. cast is elementwise
# (and aliasable) only between equal dtypes.
KERNELS = [
    Kernel("relu", [normal]),
    Kernel("sigmoid", [normal]),
    Kernel("tanh", [normal]),
    Kernel("neg", [normal]),
    Kernel("exp", [normal]),
    Kernel("log", [positive]),
    Kernel("cos", [normal]),
    Kernel("sqrt", [positive]),
    Kernel("floor", [normal]),
    Kernel("cast", [normal], FLOATS + INTEGERS),
    Kernel("add", [normal, normal], FLOATS + INTEGERS),
    Kernel("sub", [normal, normal], FLOATS + INTEGERS),
    Kernel("mul", [normal, normal], FLOATS + INTEGERS),
    Kernel("div", [normal, nonzero]),
    Kernel("pow", [positive, normal]),
    Kernel("minimum", [normal, normal]),
    Kernel("maximum", [normal, normal]),
    Kernel("greater_equal", [normal, normal]),
    Kernel("relu_grad", [normal, relu_output], broadcasts=False),
    Kernel("sigmoid_grad", [normal, unit], broadcasts=False),
    Kernel("tanh_grad", [normal, symmetric_unit], broadcasts=False),
    Kernel("select", [condition, normal, normal]),
]

# Output shapes, each with shapes that broadcast to it: scalars, a last
# dimension, per-channel vectors (the cuda flat kernel's fast paths), and
# mixed ones (its strided kernel). Sizes that are not multiples of the
# cuda vector width (4 floats, 2 doubles) exercise the scalar tails.
SHAPES = [
    ((), [()]),
    ((1,), [(), (1,)]),
    ((2, 3, 4, 5), [(), (1,), (5,), (4, 1), (3, 1, 1), (2, 1, 1, 1),
                    (1, 3, 1, 5), (2, 1, 4, 1)]),
    ((3, 7, 11), [(), (11,), (7, 1), (3, 1, 1), (1, 7, 11)]),
    ((2, 16, 33, 17), [(), (16, 1, 1), (17,), (2, 1, 33, 1)]),
]

# A shape large enough that every cuda thread walks several vectors.
LARGE_SHAPES = [((64, 128, 33, 17), [(), (128, 1, 1)])]


class Case:
    """One call: operand shapes, the dtype, and the operands that share
    the output's buffer (all of the output's shape)."""

    def __init__(self, kernel, dtype, out_shape, shapes, aliased):
        self.kernel = kernel
        self.dtype = np.dtype(dtype)
        self.out_shape = tuple(out_shape)
        self.shapes = [tuple(s) for s in shapes]
        self.aliased = tuple(aliased)

    def __str__(self):
        shapes = ", ".join("x".join(map(str, s)) or "[]" for s in self.shapes)
        return (f"{self.kernel.name} {self.dtype.name} ({shapes}) "
                f"output over operand(s) {list(self.aliased)}")

    def inputs(self, rng):
        """The operands' values; aliased operands hold one array (the
        first aliased operand's values)."""
        values = [self.kernel.values(rng, k, s, self.dtype)
                  for k, s in enumerate(self.shapes)]
        for k in self.aliased[1:]:
            values[k] = values[self.aliased[0]]
        return values


def cases(kernel, shapes=SHAPES):
    """Every case of `kernel`: for each output shape, each way of giving
    the other operands broadcast shapes (every operand of the output's
    shape if the kernel does not broadcast), and each nonempty set of
    output-shaped operands as the aliased ones."""
    for dtype in kernel.dtypes:
        for out_shape, smaller in shapes:
            choices = [out_shape] + [s for s in smaller if s != out_shape]
            if not kernel.broadcasts:
                choices = [out_shape]
            # Keep the count manageable for three operands: two smaller
            # shapes per operand.
            if kernel.arity == 3:
                choices = choices[:3]
            seen = set()
            for shapes_ in itertools.product(choices, repeat=kernel.arity):
                full = [k for k, s in enumerate(shapes_) if s == out_shape]
                if not full:
                    continue
                for size in range(1, len(full) + 1):
                    for aliased in itertools.combinations(full, size):
                        key = (shapes_, aliased)
                        if key in seen:
                            continue
                        seen.add(key)
                        yield Case(kernel, dtype, out_shape, shapes_, aliased)


def bitwise_equal(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and \
        a.tobytes() == b.tobytes()


def describe_difference(want, got):
    """Where two results differ, for a failure message."""
    if want.shape != got.shape:
        return f"shape {got.shape} != {want.shape}"
    def elements(a):
        return np.frombuffer(a.tobytes(), np.uint8).reshape(-1, a.itemsize)
    differs = np.any(elements(want) != elements(got), axis=1)
    first = int(np.argmax(differs))
    return (f"{int(differs.sum())} of {want.size} elements differ, the first "
            f"at {first}: {got.flat[first]!r} in place, {want.flat[first]!r} "
            f"into a separate output")
