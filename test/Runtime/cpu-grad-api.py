# RUN: %python %s %fluid_runtime_lib
"""ctypes declarations of the gradient kernels (CpuGradKernels.h) and the
harness shared by the cpu-grad-*.py tests, which load this file with
importlib.import_module("cpu-grad-api").

Every gradient kernel is checked twice: against PyTorch autograd, and
against central finite differences of our own forward kernels
(`finite_difference_check`), so that a gradient and the forward it belongs
to agree independently of PyTorch.

Run on its own, it checks that the header, these declarations and the
library agree, as cpu-api.py does for CpuKernels.h.
"""

import ctypes
import importlib
import os
import re
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
api = importlib.import_module("cpu-api")

HEADER = os.path.join(HERE, "..", "..", "runtime", "include", "fluid",
                      "runtime", "CpuGradKernels.h")

TENSOR = api.TENSOR
UNARY_GRAD = [TENSOR, TENSOR, TENSOR]
GRAD_SIGNATURES = {
    "fluid_cpu_conv2d_grad_input":
        [TENSOR] * 3 + [ctypes.POINTER(api.Conv2dParams)],
    "fluid_cpu_conv2d_grad_filter":
        [TENSOR] * 3 + [ctypes.POINTER(api.Conv2dParams)],
    "fluid_cpu_batch_norm_grad": [TENSOR] * 8,
    "fluid_cpu_relu_grad": UNARY_GRAD,
    "fluid_cpu_sigmoid_grad": UNARY_GRAD,
    "fluid_cpu_tanh_grad": UNARY_GRAD,
    "fluid_cpu_max_pool2d_grad":
        [TENSOR] * 3 + [ctypes.POINTER(api.MaxPool2dParams)],
    "fluid_cpu_max_pool2d_grad_indices":
        [TENSOR] * 3 + [ctypes.POINTER(api.MaxPool2dParams)],
    "fluid_cpu_avg_pool2d_grad":
        [TENSOR] * 2 + [ctypes.POINTER(api.AvgPool2dParams)],
    "fluid_cpu_softmax_grad": UNARY_GRAD + [api.I64],
    "fluid_cpu_log_softmax_grad": UNARY_GRAD + [api.I64],
    "fluid_cpu_softmax_cross_entropy_grad": [TENSOR] * 4 + [api.I32],
    "fluid_cpu_broadcast_to": [TENSOR, TENSOR],
    "fluid_cpu_sum_to": [TENSOR, TENSOR],
    "fluid_cpu_slice": [TENSOR, TENSOR, api.I64, api.I64],
    "fluid_cpu_gather_grad": [TENSOR, TENSOR, TENSOR, api.I64],
    "fluid_cpu_transpose":
        [TENSOR, TENSOR, ctypes.POINTER(api.TransposeParams)],
}

# Central differences: step and tolerance relative to the derivative's
# scale (see finite_difference_check).
FD_STEP = 1e-6
FD_RTOL = 1e-6


class GradKernels(api.Kernels):
    """api.Kernels plus the gradient entry points."""

    def __init__(self, path):
        super().__init__(path)
        for name, argtypes in GRAD_SIGNATURES.items():
            fn = getattr(self.lib, name)
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int


class Suite(api.Suite):
    """api.Suite whose kernels include the gradient entry points."""

    def __init__(self, argv):
        super().__init__(argv)
        self.kernels = GradKernels(argv[1])


def torch_grads(fn, inputs, grad_output):
    """PyTorch's gradients of fn(*inputs) with respect to every input, for
    the incoming gradient grad_output."""
    leaves = [x.detach().clone().requires_grad_(True) for x in inputs]
    fn(*leaves).backward(grad_output)
    return [x.grad if x.grad is not None else torch.zeros_like(x)
            for x in leaves]


def directions(suite, x):
    """Random directions to probe x along: two Gaussian ones and the unit
    vector of x's last element (a border cell where stride or padding make
    gradients special)."""
    result = [suite.randn(*x.shape), suite.randn(*x.shape)]
    last = torch.zeros_like(x)
    last.view(-1)[-1] = 1
    result.append(last)
    return result


def finite_difference_check(suite, f, x, grad, what="gradient"):
    """Checks the f64 gradient `grad` of the scalar function f at x:
    <grad, v> against (f(x + h v) - f(x - h v)) / 2h for a few directions v.
    The tolerance is FD_RTOL relative to max(|<grad, v>|, 1e-2 |grad| |v|):
    along a direction in which the derivative is tiny or zero, the
    difference quotient's rounding error (about 1e-16 |f| / h) is larger
    than FD_RTOL |<grad, v>|, so there the check is to 1e-8 of the
    gradient's norm."""
    assert x.dtype == torch.float64 and grad.dtype == torch.float64
    if x.numel() == 0:
        return
    for k, v in enumerate(directions(suite, x)):
        numeric = (f(x + FD_STEP * v) - f(x - FD_STEP * v)) / (2 * FD_STEP)
        analytic = float((grad * v).sum())
        scale = max(abs(analytic),
                    1e-2 * float(grad.norm()) * float(v.norm()), 1e-12)
        error = abs(numeric - analytic)
        if error > FD_RTOL * scale:
            raise AssertionError(
                f"{what}: direction {k}: finite difference {numeric!r} vs "
                f"analytic {analytic!r} (relative error {error / scale:.3g})")


def projection(output, r):
    """<r, output> in double."""
    return float((output.double() * r.double()).sum())


def main():
    suite = Suite(sys.argv)
    with open(HEADER) as header:
        declared = set(re.findall(r"\b(fluid_cpu_\w+)\s*\(", header.read()))

    def header_matches_declarations():
        missing = sorted(declared - set(GRAD_SIGNATURES))
        extra = sorted(set(GRAD_SIGNATURES) - declared)
        assert not missing and not extra, (
            f"not declared here: {missing}; not in the header: {extra}")

    def library_exports_entry_points():
        for name in sorted(declared):
            assert hasattr(suite.kernels.lib, name), f"{name} not exported"

    def no_overlap_with_forward_declarations():
        both = sorted(declared & set(api.SIGNATURES))
        assert not both, f"declared in both headers: {both}"

    suite.case("grad api header matches ctypes declarations",
               header_matches_declarations)
    suite.case("grad api library exports every entry point",
               library_exports_entry_points)
    suite.case("grad api entry points are not forward entry points",
               no_overlap_with_forward_declarations)
    suite.finish()


if __name__ == "__main__":
    main()
