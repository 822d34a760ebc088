# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""fluid_cuda_matmul and fluid_cuda_linear (cuBLAS) against the cpu
kernels, in f64 (tolerance 1e-10), f32 with TF32 off (rtol 1e-4, atol
1e-5 of the output's scale) and f32 with TF32 on (5e-3 of the output's
largest magnitude): every combination of transposes, rank 2 and batched
rank 3, odd sizes, an empty contraction and linear with and without bias.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "lib"))
import fluidcuda  # noqa: E402

# (name, batch or None for rank 2, M, K, N)
MATMUL_SHAPES = [
    ("odd sizes", None, 37, 53, 29),
    ("batched", 3, 17, 24, 9),
    ("row vector", None, 1, 64, 33),
    ("large", None, 256, 512, 128),
    ("batched large", 4, 128, 256, 64),
    ("empty contraction", None, 5, 0, 7),
    ("empty batch", 0, 4, 3, 2),
]

# (name, batch, in features, out features, with bias)
LINEAR_SHAPES = [
    ("mlp layer", 64, 300, 70, True),
    ("no bias", 8, 31, 19, False),
    ("batch1", 1, 512, 10, True),
    ("classifier", 128, 2048, 1000, True),
]

MODES = [("f64", np.float64), ("f32", np.float32), ("tf32", np.float32)]


def matmul_case(suite, contexts, mode, dtype, batch, m, k, n, tl, tr):
    lib = suite.lib

    def body():
        ctx = contexts[mode == "tf32"]
        lead = () if batch is None else (batch,)
        lhs = suite.randn(*lead, *((k, m) if tl else (m, k)), dtype=dtype,
                          scale=max(k, 1) ** -0.5)
        rhs = suite.randn(*lead, *((n, k) if tr else (k, n)), dtype=dtype)
        params = fluidcuda.MatmulParams(tl, tr)
        want = np.full(lead + (m, n), np.nan, dtype)
        fluidcuda.cpu(lib, "matmul", lhs, rhs, want, params)
        dl, dr = ctx.upload(lhs), ctx.upload(rhs)
        out = ctx.empty(want.shape, dtype)
        ctx("matmul", dl, dr, out, params)
        got = out.download()
        for t in (dl, dr, out):
            t.free()
        fluidcuda.expect_close(got, want, mode)
        if mode == "tf32":
            return (f"max error / max |value| "
                    f"{fluidcuda.max_relative_error(got, want):.1e}")
        return None
    return body


def linear_case(suite, contexts, mode, dtype, batch, inputs, outputs,
                with_bias):
    lib = suite.lib

    def body():
        ctx = contexts[mode == "tf32"]
        x = suite.randn(batch, inputs, dtype=dtype)
        w = suite.randn(outputs, inputs, dtype=dtype, scale=inputs ** -0.5)
        b = suite.randn(outputs, dtype=dtype) if with_bias else None
        want = np.full((batch, outputs), np.nan, dtype)
        fluidcuda.cpu(lib, "linear", x, w, b, want)
        dx, dw = ctx.upload(x), ctx.upload(w)
        db = ctx.upload(b) if with_bias else None
        out = ctx.empty(want.shape, dtype)
        ctx("linear", dx, dw, db, out)
        got = out.download()
        for t in (dx, dw, db, out):
            if t is not None:
                t.free()
        fluidcuda.expect_close(got, want, mode)
        return None
    return body


def main():
    suite = fluidcuda.Suite(sys.argv)
    with fluidcuda.Context(suite.lib) as strict, \
            fluidcuda.Context(suite.lib, allow_tf32=True) as tf32:
        contexts = (strict, tf32)
        for mode, dtype in MODES:
            for name, batch, m, k, n in MATMUL_SHAPES:
                for tl in (0, 1):
                    for tr in (0, 1):
                        shape = (f"[{m},{k}]x[{k},{n}]" if batch is None else
                                 f"{batch}x[{m},{k}]x[{k},{n}]")
                        suite.case(
                            f"matmul {mode} {name} {shape} transpose_lhs {tl}"
                            f" transpose_rhs {tr}",
                            matmul_case(suite, contexts, mode, dtype, batch, m,
                                        k, n, tl, tr))
            for name, batch, inputs, outputs, with_bias in LINEAR_SHAPES:
                suite.case(
                    f"linear {mode} {name} [{batch},{inputs}] -> {outputs}"
                    f"{' bias' if with_bias else ''}",
                    linear_case(suite, contexts, mode, dtype, batch, inputs,
                                outputs, with_bias))

        def shape_errors_are_reported():
            a = strict.upload(suite.randn(4, 5))
            b = strict.upload(suite.randn(6, 3))
            out = strict.empty((4, 3), np.float64)
            status, _ = strict.status("matmul", a, b, out,
                                      fluidcuda.MatmulParams(0, 0))
            fluidcuda.expect_status(suite.lib, status,
                                    fluidcuda.INVALID_ARGUMENT,
                                    ["fluid_cuda_matmul",
                                     "contraction sizes differ"])
            w = strict.upload(suite.randn(3, 4))
            status, _ = strict.status("linear", a, w, None, out)
            fluidcuda.expect_status(suite.lib, status,
                                    fluidcuda.INVALID_ARGUMENT,
                                    ["fluid_cuda_linear", "weight shape"])
            strict.synchronize()
        suite.case("matmul and linear report shape errors",
                   shape_errors_are_reported)
    suite.finish()


if __name__ == "__main__":
    main()
