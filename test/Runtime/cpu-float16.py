# RUN: %python %s %fluid_runtime_lib
"""f16 and bf16 tensors in the cpu kernels (runtime/cpu/Widen.h).

Each kernel called with 16-bit tensors must give, bit for bit, its f32
result on the widened inputs rounded once to the 16-bit type (the
definition: computed in f32, stored in 16 bits, as on the GPU); and that
result must be within a 16-bit rounding of PyTorch's in f64 on the same
(16-bit) inputs (the independent oracle). Mixed operands too: batch norm of
a bf16 input with f32 scale, shift and statistics; cross-entropy of 16-bit
logits into an f32 loss. A bad 16-bit descriptor is still an error.
"""

import ctypes
import importlib
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")
fluidrt = api.fluidrt
grad_api = importlib.import_module("cpu-grad-api")

HALVES = {torch.float16: ("f16", 10), torch.bfloat16: ("bf16", 7)}


def run(suite, name, args, outputs):
    """Calls `name` with `args`, where each index in `outputs` is an output
    tensor to allocate as (shape, dtype); returns the outputs."""
    made = {}
    call = []
    for i, arg in enumerate(args):
        if i in outputs:
            shape, dtype = outputs[i]
            made[i] = torch.zeros(shape, dtype=dtype)
            call.append(made[i])
        else:
            call.append(arg)
    suite.kernels(name, *call)
    return [made[i] for i in sorted(made)]


def widened(args):
    return [a.to(torch.float32) if isinstance(a, torch.Tensor) and
            a.dtype in HALVES else a for a in args]


def check(suite, name, args, outputs, oracle):
    """The two checks of the module docstring for one call."""
    got = run(suite, name, args, outputs)
    f32_outputs = {i: (shape, torch.float32 if dtype in HALVES else dtype)
                   for i, (shape, dtype) in outputs.items()}
    reference = run(suite, name, widened(args), f32_outputs)
    for g, r in zip(got, reference):
        want = r.to(g.dtype)
        assert torch.equal(g.view(torch.int16) if g.dtype in HALVES else g,
                           want.view(torch.int16) if g.dtype in HALVES
                           else want), \
            f"{name}: not the f32 result rounded once"
    wants = oracle([a.to(torch.float64) if isinstance(a, torch.Tensor) and
                    a.is_floating_point() else a for a in args])
    for g, w in zip(got, wants):
        if w is None:
            continue
        if g.dtype in HALVES:
            ulp = 2.0 ** -HALVES[g.dtype][1]
            scale = max(float(w.abs().max()), 1e-30)
            np.testing.assert_allclose(g.to(torch.float64).numpy(),
                                       w.numpy(), rtol=ulp, atol=ulp * scale)
        else:
            np.testing.assert_allclose(g.to(torch.float64).numpy(),
                                       w.numpy(), rtol=1e-4, atol=1e-5)


def cases(suite, dtype):
    def t(*shape, scale=1.0):
        return (suite.randn(*shape) * scale).to(dtype)

    def conv():
        x, w, b = t(2, 3, 9, 9), t(4, 3, 3, 3, scale=0.3), t(4)
        check(suite, "fluid_cpu_conv2d",
              [x, w, b, None, api.Conv2dParams([2, 2], [1, 1, 1, 1],
                                                [1, 1], 1)],
              {3: ([2, 4, 5, 5], dtype)},
              lambda a: [F.conv2d(a[0], a[1], a[2], stride=2, padding=1)])

    def matmul():
        lhs, rhs = t(7, 33), t(33, 5)
        check(suite, "fluid_cpu_matmul",
              [lhs, rhs, None, api.MatmulParams(0, 0)], {2: ([7, 5], dtype)},
              lambda a: [a[0] @ a[1]])

    def relu_add():
        x, y = t(3, 8), t(8)
        check(suite, "fluid_cpu_relu", [x, None], {1: ([3, 8], dtype)},
              lambda a: [F.relu(a[0])])
        check(suite, "fluid_cpu_add", [x, y, None], {2: ([3, 8], dtype)},
              lambda a: [a[0] + a[1]])

    def max_pool():
        x = t(2, 3, 8, 8)
        check(suite, "fluid_cpu_max_pool2d",
              [x, None, api.MaxPool2dParams([3, 3], [2, 2], [1, 1, 1, 1],
                                             [1, 1], 0)],
              {1: ([2, 3, 4, 4], dtype)},
              lambda a: [F.max_pool2d(a[0], 3, 2, 1)])

    def batch_norm():
        x = t(4, 3, 5, 5, scale=2.0) + 1
        f32 = [suite.randn(3).to(torch.float32) for _ in range(2)]
        mean = torch.zeros(3, dtype=torch.float32)
        var = torch.ones(3, dtype=torch.float32)
        stats = {i: ([3], torch.float32) for i in (6, 7, 8, 9)}

        def oracle(a):
            y = F.batch_norm(a[0], None, None, a[1], a[2], training=True,
                             eps=1e-5)
            return [y]
        got = run(suite, "fluid_cpu_batch_norm",
                  [x, f32[0], f32[1], mean, var, None, None, None, None, None,
                   api.BatchNormParams(1e-5, 0.1)],
                  {5: ([4, 3, 5, 5], dtype), **stats})
        assert got[0].dtype == dtype and got[1].dtype == torch.float32
        check(suite, "fluid_cpu_batch_norm",
              [x, f32[0], f32[1], mean, var, None, None, None, None, None,
               api.BatchNormParams(1e-5, 0.1)],
              {5: ([4, 3, 5, 5], dtype)} | {i: ([3], torch.float32)
                                              for i in (6, 7, 8, 9)},
              lambda a: oracle(a) + [None] * 4)

    def cross_entropy():
        logits = t(6, 10, scale=3.0)
        labels = torch.tensor([0, 9, 3, 3, 5, 1], dtype=torch.int64)
        check(suite, "fluid_cpu_softmax_cross_entropy",
              [logits, labels, None, 0], {2: ([], torch.float32)},
              lambda a: [F.cross_entropy(a[0], a[1])])

    def conv_grads():
        x, w, dy = t(2, 3, 9, 9), t(4, 3, 3, 3, scale=0.3), t(2, 4, 5, 5)
        params = api.Conv2dParams([2, 2], [1, 1, 1, 1], [1, 1], 1)

        def grads(dy64, x64, w64):
            xx = x64.clone().requires_grad_(True)
            ww = w64.clone().requires_grad_(True)
            F.conv2d(xx, ww, stride=2, padding=1).backward(dy64)
            return xx.grad, ww.grad
        x64, w64 = x.to(torch.float64), w.to(torch.float64)
        check(suite, "fluid_cpu_conv2d_grad_input", [dy, w, None, params],
              {2: ([2, 3, 9, 9], dtype)},
              lambda a: [grads(a[0], x64, a[1])[0]])
        check(suite, "fluid_cpu_conv2d_grad_filter", [dy, x, None, params],
              {2: ([4, 3, 3, 3], dtype)},
              lambda a: [grads(a[0], a[1], w64)[1]])

    def relu_grad():
        dy, y = t(3, 8), F.relu(t(3, 8).to(torch.float32)).to(dtype)
        check(suite, "fluid_cpu_relu_grad", [dy, y, None],
              {2: ([3, 8], dtype)}, lambda a: [a[0] * (a[1] > 0)])

    def concat():
        # An array of 16-bit descriptors: a copy, bitwise.
        parts = [t(2, 3, 4), t(2, 5, 4), t(2, 1, 4)]
        code = fluidrt.BF16 if dtype == torch.bfloat16 else None
        arrays = [p.view(torch.int16).numpy() if code else p.numpy()
                  for p in parts]
        descs = (fluidrt.FluidTensor * 3)(*[fluidrt.tensor(a, code)
                                            for a in arrays])
        out = torch.zeros(2, 9, 4, dtype=dtype)
        out_array = out.view(torch.int16).numpy() if code else out.numpy()
        lib = suite.kernels.lib
        lib.fluid_cpu_concat.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                         ctypes.c_void_p, ctypes.c_int64]
        status = lib.fluid_cpu_concat(
            descs, 3, ctypes.byref(fluidrt.tensor(out_array, code)), 1)
        assert status == 0, lib.fluid_last_error().decode()
        want = torch.cat(parts, dim=1)
        assert torch.equal(out.view(torch.int16), want.view(torch.int16)), \
            "concat of 16-bit tensors is not a bitwise copy"

    def gather_grad():
        # Sums of repeated indices: computed in f32 (in double, rounded to
        # f32), rounded once to 16 bits.
        dy = t(5, 3)
        indices = torch.tensor([2, 0, 2, 2, 1], dtype=torch.int64)

        def oracle(a):
            return [torch.zeros(4, 3, dtype=torch.float64)
                    .index_add(0, indices, a[0])]
        check(suite, "fluid_cpu_gather_grad", [dy, indices, None, 0],
              {2: ([4, 3], dtype)}, oracle)

    def bad_descriptor():
        x = t(4)
        bad = torch.zeros(5, dtype=dtype)
        status, message = suite.kernels.status("fluid_cpu_relu", x, bad)
        assert status != 0 and "fluid_cpu_relu:" in message and \
            "shape" in message, message
        assert message.count("fluid_cpu_relu") == 1, message

    return [("conv2d", conv), ("matmul", matmul), ("relu and add", relu_add),
            ("max_pool2d", max_pool), ("conv2d gradients", conv_grads),
            ("relu_grad", relu_grad), ("concat", concat),
            ("gather_grad", gather_grad),
            ("batch_norm, f32 statistics",
                                       batch_norm),
            ("softmax_cross_entropy into an f32 loss", cross_entropy),
            ("a bad output descriptor", bad_descriptor)]


def main():
    suite = grad_api.Suite(sys.argv)
    for dtype, (name, _) in HALVES.items():
        for case, body in cases(suite, dtype):
            suite.case(f"{name} {case}", body)
    suite.finish()


if __name__ == "__main__":
    main()
