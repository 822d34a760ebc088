# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's softmax, log_softmax, their gradients and softmax
cross-entropy (and its gradient) against the cpu kernels: every axis of
ranks 1 to 4 (rows and strided slices), row lengths around the warp and
block limits (a warp per row up to 1024, a block beyond), large and
infinite logits, NaN, in-place gradients, i32 and i64 labels, the three
reductions, and an empty batch. A label outside [0, C) cannot fail the
call on the device: its row's loss (and gradient row) is NaN and
fluid_cuda_check_errors reports it with the cpu backend's message.

Sums are in double by fixed trees; exponentials in the element type:
f64 rtol 1e-12 (atol 1e-12 of the output's scale), f32 rtol 1e-5
(atol 1e-6).
"""

import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
harness = importlib.import_module("gpu-elementwise")
Out, Same, run_both = harness.Out, harness.Same, harness.run_both

MEAN, SUM, NONE = 0, 1, 2
REDUCTIONS = [("mean", MEAN), ("sum", SUM), ("none", NONE)]

AXIS_SHAPES = [[7], [4, 10], [3, 5, 7], [2, 3, 4, 5], [8, 1000, 3]]
ROW_LENGTHS = [1, 2, 31, 32, 33, 1000, 1024, 1025, 5000]


def softmax_case(h, op, shape, axis, dtype, scale=3.0, offset=0.0,
                 specials=False):
    def body():
        x = h.randn(*shape, dtype=dtype, scale=scale, offset=offset)
        if specials and x.size > 8:
            flat = x.reshape(-1)
            flat[1] = np.inf
            flat[3] = -np.inf
            flat[5] = np.nan
        return harness.compare(run_both(h, op, x, Out(shape, dtype), axis))
    return body


def softmax_output(h, shape, axis, dtype, log):
    """A valid forward output: softmax (or log_softmax) of random logits."""
    x = h.randn(*shape, dtype=dtype, scale=2.0)
    y = np.full(shape, np.nan, dtype)
    harness.fluidcuda.cpu(h.lib, "log_softmax" if log else "softmax", x, y,
                          axis)
    return y


def grad_case(h, op, shape, axis, dtype, in_place=None):
    """in_place: None, or 0 (grad_input is grad_output) or 1 (output)."""
    def body():
        y = softmax_output(h, shape, axis, dtype, op == "log_softmax_grad")
        g = h.randn(*shape, dtype=dtype)
        target = Out(shape, dtype) if in_place is None else Same(in_place)
        return harness.compare(run_both(h, op, g, y, target, axis))
    return body


def labels_for(h, rows, classes, label_dtype):
    return np.array(h.rng.integers(0, classes, size=rows), dtype=label_dtype)


def loss_shape(rows, reduction):
    return [rows] if reduction == NONE else []


def cross_entropy_case(h, rows, classes, reduction, dtype, label_dtype,
                       offset=0.0):
    def body():
        logits = h.randn(rows, classes, dtype=dtype, scale=3.0, offset=offset)
        labels = labels_for(h, rows, classes, label_dtype)
        results = run_both(h, "softmax_cross_entropy", logits, labels,
                           Out(loss_shape(rows, reduction), dtype), reduction)
        grad_loss = h.randn(*loss_shape(rows, reduction), dtype=dtype)
        results += run_both(h, "softmax_cross_entropy_grad", grad_loss,
                            logits, labels, Out([rows, classes], dtype),
                            reduction)
        note = harness.compare(results)
        h.expect_no_device_error()
        return note
    return body


def bad_label_case(h, reduction, bad, label_dtype):
    """A label outside [0, C): the call succeeds, the row's loss and
    gradient are NaN, the other rows are right, and check_errors names the
    label as the cpu does."""
    def body():
        rows, classes, bad_row = 6, 10, 3
        dtype = np.float64
        logits = h.randn(rows, classes, dtype=dtype)
        labels = labels_for(h, rows, classes, label_dtype)
        cpu_labels = labels.copy()
        labels[bad_row] = bad
        # The cpu's message for the bad label, and its results for the good
        # rows (with a valid label in the bad row).
        cpu_loss = np.full(loss_shape(rows, reduction), np.nan, dtype)
        tensor = harness.fluidrt.tensor
        byref = harness.ctypes.byref
        status = h.lib.fluid_cpu_softmax_cross_entropy(
            byref(tensor(logits)), byref(tensor(labels)),
            byref(tensor(cpu_loss)), reduction)
        if status == harness.OK:
            raise AssertionError("the cpu accepted the label")
        cpu_text = harness.fluidcuda.last_error(h.lib)
        harness.fluidcuda.cpu(h.lib, "softmax_cross_entropy", logits,
                              cpu_labels, cpu_loss, reduction)
        grad_loss = h.randn(*loss_shape(rows, reduction), dtype=dtype)
        cpu_grad = np.full((rows, classes), np.nan, dtype)
        harness.fluidcuda.cpu(h.lib, "softmax_cross_entropy_grad", grad_loss,
                              logits, cpu_labels, cpu_grad, reduction)

        dlogits, dlabels = h.upload(logits), h.upload(labels)
        dloss = h.empty(loss_shape(rows, reduction), dtype)
        h.ctx("softmax_cross_entropy", dlogits, dlabels, dloss, reduction)
        loss = dloss.download()
        h.expect_device_error(
            ["fluid_cuda_check_errors: fluid_cuda_softmax_cross_entropy: " +
             cpu_text.split(": ", 1)[1]])
        dgrad_loss = h.upload(grad_loss)
        dgrad = h.empty((rows, classes), dtype)
        h.ctx("softmax_cross_entropy_grad", dgrad_loss, dlogits, dlabels,
              dgrad, reduction)
        grad = dgrad.download()
        h.expect_device_error(
            ["fluid_cuda_check_errors: fluid_cuda_softmax_cross_entropy_grad: "
             + cpu_text.split(": ", 1)[1]])
        good = [r for r in range(rows) if r != bad_row]
        if reduction == NONE:
            if not np.isnan(loss[bad_row]):
                raise AssertionError(f"loss of the bad row: {loss[bad_row]}")
            harness.expect_close(loss[good], cpu_loss[good], "good losses")
        elif not np.isnan(loss):
            raise AssertionError(f"reduced loss {loss} is not NaN")
        if not np.isnan(grad[bad_row]).all():
            raise AssertionError("gradient row of the bad label is not NaN")
        harness.expect_close(grad[good], cpu_grad[good], "good gradient rows")
        for t in (dlogits, dlabels, dloss, dgrad_loss, dgrad):
            t.free()
    return body


def error_cases(h):
    f64 = np.float64
    x = np.ones((4, 10), f64)
    labels = np.zeros(4, np.int64)
    cases = {
        "softmax axis": ("softmax", x, Out((4, 10), f64), 2),
        "softmax negative axis": ("log_softmax", x, Out((4, 10), f64), -1),
        "softmax shape": ("softmax", x, Out((10, 4), f64), 1),
        "softmax integer": ("softmax", np.ones(3, np.int32),
                            Out((3,), np.int32), 0),
        "softmax_grad shape": ("softmax_grad", np.ones((4, 9)), x,
                               Out((4, 10), f64), 1),
        "log_softmax_grad dtype": ("log_softmax_grad", x, x,
                                   Out((4, 10), np.float32), 1),
        "cross-entropy rank": ("softmax_cross_entropy", np.ones(10), labels,
                               Out((), f64), MEAN),
        "cross-entropy label dtype": ("softmax_cross_entropy", x,
                                      np.zeros(4, f64), Out((), f64), MEAN),
        "cross-entropy labels shape": ("softmax_cross_entropy", x,
                                       np.zeros(5, np.int32), Out((), f64),
                                       SUM),
        "cross-entropy reduction": ("softmax_cross_entropy", x, labels,
                                    Out((), f64), 3),
        "cross-entropy none shape": ("softmax_cross_entropy", x, labels,
                                     Out((), f64), NONE),
        "cross-entropy mean shape": ("softmax_cross_entropy", x, labels,
                                     Out((4,), f64), MEAN),
        "grad grad_loss shape": ("softmax_cross_entropy_grad", np.ones(4), x,
                                 labels, Out((4, 10), f64), SUM),
        "grad labels dtype": ("softmax_cross_entropy_grad", np.ones(()), x,
                              np.zeros(4, np.float32), Out((4, 10), f64),
                              MEAN),
        "grad output shape": ("softmax_cross_entropy_grad", np.ones(4), x,
                              labels, Out((4, 9), f64), NONE),
    }
    for name, (op, *args) in cases.items():
        h.case(f"error {op}: {name}",
               lambda op=op, args=args: harness.expect_same_error(h, op,
                                                                  *args))


def main():
    h = harness.Harness(sys.argv)
    for mode, dtype in harness.FLOATS:
        for op in ["softmax", "log_softmax"]:
            for shape in AXIS_SHAPES:
                for axis in range(len(shape)):
                    h.case(f"{op} {mode} {shape} axis {axis}",
                           softmax_case(h, op, shape, axis, dtype))
            for length in ROW_LENGTHS:
                h.case(f"{op} {mode} rows of {length}",
                       softmax_case(h, op, [17, length], 1, dtype))
            h.case(f"{op} {mode} large logits",
                   softmax_case(h, op, [5, 300], 1, dtype, offset=1000.0))
            h.case(f"{op} {mode} inf and NaN",
                   softmax_case(h, op, [4, 50], 1, dtype, specials=True))
            h.case(f"{op} {mode} inf and NaN, axis 0",
                   softmax_case(h, op, [50, 4], 0, dtype, specials=True))
            h.case(f"{op} {mode} empty", softmax_case(h, op, [0, 5], 1,
                                                      dtype))
        for op in ["softmax_grad", "log_softmax_grad"]:
            for shape in AXIS_SHAPES:
                for axis in range(len(shape)):
                    h.case(f"{op} {mode} {shape} axis {axis}",
                           grad_case(h, op, shape, axis, dtype))
            for length in ROW_LENGTHS:
                h.case(f"{op} {mode} rows of {length}",
                       grad_case(h, op, [9, length], 1, dtype))
            for target, name in [(0, "grad_output"), (1, "output")]:
                h.case(f"{op} {mode} in place of {name} (rows)",
                       grad_case(h, op, [6, 2000], 1, dtype, in_place=target))
                h.case(f"{op} {mode} in place of {name} (strided)",
                       grad_case(h, op, [6, 20, 5], 1, dtype,
                                 in_place=target))
        for label_dtype in [np.int64, np.int32]:
            label_name = np.dtype(label_dtype).name
            for rows, classes in [(1, 1), (7, 10), (64, 1000), (5, 1024),
                                  (3, 1025), (4, 3000), (300, 37)]:
                for name, reduction in REDUCTIONS:
                    h.case(f"cross-entropy {mode} {label_name} [{rows}, "
                           f"{classes}] {name}",
                           cross_entropy_case(h, rows, classes, reduction,
                                              dtype, label_dtype))
        h.case(f"cross-entropy {mode} large logits",
               cross_entropy_case(h, 16, 100, MEAN, dtype, np.int64,
                                  offset=500.0))
        for name, reduction in REDUCTIONS:
            h.case(f"cross-entropy {mode} empty batch {name}",
                   cross_entropy_case(h, 0, 10, reduction, dtype, np.int64))
    for name, reduction in REDUCTIONS:
        for bad, label_dtype in [(10, np.int64), (-1, np.int32)]:
            h.case(f"cross-entropy label {bad} ({np.dtype(label_dtype).name}) "
                   f"{name} is reported",
                   bad_label_case(h, reduction, bad, label_dtype))
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
