# RUN: %python %s %fluid_runtime_lib
"""In-place elementwise kernels on the cpu backend: for every purely
elementwise fluid_cpu_* kernel (lib/inplace.py lists them), every dtype,
output shapes with the other operands broadcast in every supported way,
and every set of operands of the output's shape sharing the output's
buffer, the result over the shared buffer is bitwise the result into a
separate output. A negative control shows that the comparison catches a
kernel that is not safe in place: matmul with its output over rhs.
"""

import ctypes
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import cases  # noqa: E402
import fluidrt  # noqa: E402
import inplace  # noqa: E402

TENSOR = ctypes.POINTER(fluidrt.FluidTensor)


class MatmulParams(ctypes.Structure):
    _fields_ = [("transpose_lhs", ctypes.c_int32),
                ("transpose_rhs", ctypes.c_int32)]


def call(lib, name, arrays, output):
    """fluid_cpu_<name>(arrays..., output), raising on an error status."""
    descriptors = [fluidrt.tensor(a) for a in arrays] + \
        [fluidrt.tensor(output)]
    fluidrt.check(lib, getattr(lib, "fluid_cpu_" + name)(
        *[ctypes.byref(d) for d in descriptors]))


def run_case(lib, rng, case):
    """Raises AssertionError unless the in-place result equals the
    separate one bitwise."""
    values = case.inputs(rng)
    separate = np.full(case.out_shape, np.nan if np.issubdtype(
        case.dtype, np.floating) else 7, case.dtype)
    call(lib, case.kernel.name, [np.array(v) for v in values], separate)
    shared = np.array(values[case.aliased[0]])
    operands = [shared if k in case.aliased else np.array(v)
                for k, v in enumerate(values)]
    call(lib, case.kernel.name, operands, shared)
    if not inplace.bitwise_equal(separate, shared):
        difference = inplace.describe_difference(separate, shared)
        raise AssertionError(f"{case}: {difference}")


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libfluid_runtime.so")
    lib = fluidrt.load(sys.argv[1])
    for kernel in inplace.KERNELS:
        fn = getattr(lib, "fluid_cpu_" + kernel.name)
        fn.argtypes = [TENSOR] * (kernel.arity + 1)
        fn.restype = ctypes.c_int
    lib.fluid_cpu_matmul.argtypes = [TENSOR] * 3 + [
        ctypes.POINTER(MatmulParams)]
    lib.fluid_cpu_matmul.restype = ctypes.c_int
    rng = np.random.default_rng(20240611)
    for kernel in inplace.KERNELS:
        def body(kernel=kernel):
            count = 0
            for case in inplace.cases(kernel):
                run_case(lib, rng, case)
                count += 1
            assert count > 0, "no cases"
            return f"{count} aliased calls bitwise equal to separate ones"
        cases.named(f"{kernel.name} in place", body)

    def negative_control():
        # Row i of the product reads every row of rhs, so writing it over
        # rhs changes the rows read later: the comparison must see that.
        lhs = rng.standard_normal((16, 16))
        rhs = rng.standard_normal((16, 16))
        params = MatmulParams(0, 0)
        separate = np.full((16, 16), np.nan)
        shared = rhs.copy()
        for output, right in ((separate, rhs), (shared, shared)):
            status = lib.fluid_cpu_matmul(
                ctypes.byref(fluidrt.tensor(lhs)),
                ctypes.byref(fluidrt.tensor(right)),
                ctypes.byref(fluidrt.tensor(output)), ctypes.byref(params))
            fluidrt.check(lib, status)
        assert not inplace.bitwise_equal(separate, shared), (
            "matmul over its rhs gave the separate result: the comparison "
            "cannot tell an unsafe kernel")
        return inplace.describe_difference(separate, shared)
    cases.named("negative control: matmul over rhs differs", negative_control)

    sys.exit(cases.main())


if __name__ == "__main__":
    main()
