# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""In-place elementwise kernels on the cuda backend: the cases of
cpu-in-place.py (lib/inplace.py: every purely elementwise kernel, every
dtype, the other operands broadcast in every supported way, every set of
operands of the output's shape sharing the output's buffer), each run on
the device into a separate NaN-filled output and over the shared buffer,
the two results bitwise equal. Also: shared buffers at an address that is
not 16-byte aligned (the flat kernel's scalar path), a shape large enough
that each thread walks several vectors (grid-stride loops, f32 only, one
shared operand), and the cpu negative control (matmul over its rhs must
differ), which shows that the comparison can fail.
"""

import importlib
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "lib"))
harness = importlib.import_module("gpu-elementwise")
import fluidcuda  # noqa: E402
import fluidrt  # noqa: E402
import inplace  # noqa: E402

# Output shapes whose shared buffer is also tried unaligned.
UNALIGNED_SHAPES = [(2, 3, 4, 5), (3, 7, 11)]
# Large cases per kernel (the first ones cases() gives: one shared
# operand, the others of the output's shape, scalars or per-channel).
LARGE_CASES_PER_KERNEL = 6


def run_case(h, case, rng, unaligned=False):
    """Raises AssertionError unless the result over the shared device
    buffer equals the one into a separate output bitwise."""
    values = case.inputs(rng)
    separate_inputs = [h.upload(v) for v in values]
    fill = np.nan if np.issubdtype(case.dtype, np.floating) else 7
    separate = h.upload(np.full(case.out_shape, fill, case.dtype))
    h.ctx(case.kernel.name, *separate_inputs, separate)
    want = separate.download()
    for t in separate_inputs + [separate]:
        t.free()

    shared_values = np.array(values[case.aliased[0]])
    base = None
    if unaligned:
        shared, base = harness.unaligned_upload(h, shared_values)
    else:
        shared = h.upload(shared_values)
    others = {k: h.upload(v) for k, v in enumerate(values)
              if k not in case.aliased}
    operands = [shared if k in case.aliased else others[k]
                for k in range(len(values))]
    h.ctx(case.kernel.name, *operands, shared)
    got = shared.download()
    for t in list(others.values()) + [shared] + ([base] if base else []):
        t.free()
    if not inplace.bitwise_equal(want, got):
        where = " (unaligned)" if unaligned else ""
        raise AssertionError(f"{case}{where}: "
                             f"{inplace.describe_difference(want, got)}")


def main():
    h = harness.Harness(sys.argv)
    rng = np.random.default_rng(20240611)

    for kernel in inplace.KERNELS:
        def body(kernel=kernel):
            count = 0
            for case in inplace.cases(kernel):
                run_case(h, case, rng)
                count += 1
                if case.out_shape in UNALIGNED_SHAPES and \
                        len(case.aliased) == 1:
                    run_case(h, case, rng, unaligned=True)
                    count += 1
            large = [c for c in inplace.cases(kernel, inplace.LARGE_SHAPES)
                     if c.dtype in (np.float32, np.int32) and
                     len(c.aliased) == 1]
            for case in large[:LARGE_CASES_PER_KERNEL]:
                run_case(h, case, rng)
                count += 1
            h.expect_no_device_error()
            return f"{count} aliased calls bitwise equal to separate ones"
        h.case(f"{kernel.name} in place", body)

    def negative_control():
        lhs = h.randn(16, 16)
        rhs = h.randn(16, 16)
        separate = np.full((16, 16), np.nan)
        shared = rhs.copy()
        params = fluidcuda.MatmulParams(0, 0)
        fluidcuda.cpu(h.lib, "matmul", lhs, rhs, separate, params)
        fluidcuda.cpu(h.lib, "matmul", lhs, shared, shared, params)
        assert not inplace.bitwise_equal(separate, shared), (
            "matmul over its rhs gave the separate result: the comparison "
            "cannot tell an unsafe kernel")
        return inplace.describe_difference(separate, shared)
    h.case("negative control: cpu matmul over rhs differs", negative_control)

    h.finish()


if __name__ == "__main__":
    main()
