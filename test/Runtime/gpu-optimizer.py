# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's optimizer updates (sgd, momentum with and without
nesterov, adam and adamw) against the cpu kernels: five updates in a row
from the same parameters, gradients and learning rates, the parameters
and the optimizer state compared after each; f32 and f64 parameters, f32
and f64 learning rates, weight decay, sizes around the vector width and
a large one, unaligned buffers (the scalar path), and updates in place
(every output the buffer of its input), the way compiled programs run
them.

lr and step live in device memory and are read by the kernel; a negative
or NaN learning rate or a step below 1 cannot fail the call: the update
writes nothing and fluid_cuda_check_errors reports the value with the cpu
backend's message. Descriptor errors get the cpu's messages at once
(found_inf's among them).

The skip flag found_inf (NULL in the updates above) lives in device
memory: 0.0 and -0.0 give the bits of NULL (and the cpu's); 1.0, NaN, inf,
-2 and a subnormal leave every output bitwise equal to its input, as on
the cpu, with finite gradients and with inf and NaN in them, in place and
into distinct outputs (prefilled with garbage), aligned and unaligned.

The kernels round operation by operation as the cpu does (explicit fused
multiply-adds only where it has them), so sgd and momentum are expected
bitwise equal (the note of each case says); adam's bias corrections use
the device's pow. Checked at f64 rtol 1e-12 and f32 rtol 1e-5.
"""

import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
harness = importlib.import_module("gpu-elementwise")
Out = harness.Out
SgdParams = harness.SgdParams
MomentumParams = harness.MomentumParams
AdamParams = harness.AdamParams

# name: (op, parameter struct, state names).
CONFIGS = {
    "sgd": ("sgd", SgdParams(0.0), []),
    "sgd weight_decay": ("sgd", SgdParams(0.01), []),
    "momentum": ("momentum", MomentumParams(0.9, 0.0, 0), ["velocity"]),
    "momentum nesterov": ("momentum", MomentumParams(0.9, 0.0, 1),
                          ["velocity"]),
    "momentum weight_decay": ("momentum", MomentumParams(0.8, 1e-3, 0),
                              ["velocity"]),
    "momentum nesterov weight_decay": (
        "momentum", MomentumParams(0.9, 5e-4, 1), ["velocity"]),
    "adam": ("adam", AdamParams(0.9, 0.999, 1e-8, 0.0, 0), ["m", "v"]),
    "adam weight_decay": ("adam", AdamParams(0.9, 0.99, 1e-6, 0.01, 0),
                          ["m", "v"]),
    "adamw": ("adam", AdamParams(0.9, 0.999, 1e-8, 0.01, 1), ["m", "v"]),
}
LRS = [0.1, 0.05, 0.0, 0.3, 0.01]


def call_arguments(op, param, grad, state, lr, step, outputs, params,
                   found_inf=None):
    """The argument list of fluid_*_<op> from its pieces (found_inf: the
    skip flag, None for NULL)."""
    if op == "sgd":
        return [param, grad, lr, found_inf, outputs[0], params]
    if op == "momentum":
        return [param, grad, state[0], lr, found_inf, outputs[0], outputs[1],
                params]
    return [param, grad, state[0], state[1], lr, step, found_inf, *outputs,
            params]


def update_case(h, config, dtype, lr_dtype, shape, in_place, unaligned=False):
    op, params, state_names = CONFIGS[config]

    def body():
        param = h.randn(*shape, dtype=dtype)
        state = [h.randn(*shape, dtype=dtype) for _ in state_names]
        if op == "adam":
            state = [np.zeros(shape, dtype) for _ in state_names]
        cpu_param, cpu_state = param.copy(), [s.copy() for s in state]

        def upload(array):
            if unaligned:
                return harness.unaligned_upload(h, array)
            t = h.upload(array)
            return t, t
        device = [upload(a) for a in [param] + state]
        bases = [base for _, base in device]
        d_param, d_state = device[0][0], [v for v, _ in device[1:]]
        if in_place:
            d_outputs = [d_param] + d_state
        else:
            out = [upload(np.full(shape, np.nan, dtype))
                   for _ in range(1 + len(state))]
            bases += [base for _, base in out]
            d_outputs = [v for v, _ in out]
        exact = True
        for step, rate in enumerate(LRS, start=1):
            grad = h.randn(*shape, dtype=dtype)
            lr = np.array(rate, lr_dtype)
            step_value = np.array(step, np.int64)
            outputs = [np.full(shape, np.nan, dtype)
                       for _ in range(1 + len(state))]
            harness.fluidcuda.cpu(h.lib, op, *call_arguments(
                op, cpu_param, grad, cpu_state, lr, step_value, outputs,
                params))
            cpu_param, cpu_state = outputs[0], outputs[1:]

            d_grad, d_lr = h.upload(grad), h.upload(lr)
            d_step = h.upload(step_value)
            h.ctx(op, *call_arguments(op, d_param, d_grad, d_state, d_lr,
                                      d_step, d_outputs, params))
            for t in (d_grad, d_lr, d_step):
                t.free()
            d_param, d_state = d_outputs[0], d_outputs[1:]
            names = ["param"] + state_names
            for name, want, got in zip(names, [cpu_param] + cpu_state,
                                       [d_param] + d_state):
                got = got.download()
                harness.expect_close(got, want, f"{name} after step {step}")
                exact = exact and harness.bitwise_equal(got, want)
        h.expect_no_device_error()
        for t in bases:
            t.free()
        return "bitwise equal" if exact else "within tolerance"
    return body


def bad_value_case(h, op, lr_value, step_value, fragment):
    """A learning rate or step the kernel refuses: nothing written (in
    place, the parameter and state stay), the error reported later."""
    _, params, state_names = CONFIGS[{"sgd": "sgd", "momentum": "momentum",
                                      "adam": "adam"}[op]]

    def body():
        shape = (1001,)
        param = h.randn(*shape)
        grad = h.randn(*shape)
        state = [h.randn(*shape) for _ in state_names]
        lr, step = np.array(lr_value), np.array(step_value, np.int64)
        outputs = [np.full(shape, np.nan) for _ in range(1 + len(state))]
        converted = [harness.ctypes.byref(harness.fluidrt.tensor(a))
                     if isinstance(a, np.ndarray) else a
                     for a in call_arguments(op, param, grad, state, lr, step,
                                             outputs, params)]
        if getattr(h.lib, "fluid_cpu_" + op)(*converted) == harness.OK:
            raise AssertionError("the cpu accepted the value")
        cpu_text = harness.fluidcuda.last_error(h.lib)
        if fragment not in cpu_text:
            raise AssertionError(f"{fragment!r} not in {cpu_text!r}")

        d_param, d_grad = h.upload(param), h.upload(grad)
        d_state = [h.upload(s) for s in state]
        d_lr, d_step = h.upload(lr), h.upload(step)
        h.ctx(op, *call_arguments(op, d_param, d_grad, d_state, d_lr, d_step,
                                  [d_param] + d_state, params))
        h.expect_device_error([f"fluid_cuda_check_errors: fluid_cuda_{op}: "
                               + cpu_text.split(": ", 1)[1]])
        for name, want, got in zip(["param"] + state_names, [param] + state,
                                   [d_param] + d_state):
            if not harness.bitwise_equal(got.download(), want):
                raise AssertionError(f"{name} was written")
        for t in [d_param, d_grad, d_lr, d_step] + d_state:
            t.free()
    return body


# found_inf values: (name, value, whether the update is skipped). None is
# NULL (no flag); zeros of either sign let the update run; anything
# nonzero, NaN included, skips it.
FLAGS = [("NULL", None, False), ("0.0", 0.0, False), ("-0.0", -0.0, False),
         ("1.0", 1.0, True), ("NaN", np.nan, True), ("inf", np.inf, True),
         ("-2", -2.0, True), ("subnormal 1e-45", 1e-45, True)]
# What distinct outputs hold before a call, so that an unwritten one shows.
GARBAGE = 12345.0


def skip_case(h, config, dtype, shape, unaligned):
    """fluid_cuda_<op> with found_inf in device memory against
    fluid_cpu_<op> with the same flag on the host: a nonzero flag (with
    finite gradients, and with inf and NaN in them) leaves every output
    its input's bits on both; 0.0 and -0.0 give the bits of NULL on the
    device, and the cpu's (bitwise for sgd and momentum, within tolerance
    for adam); in place and into distinct outputs prefilled with garbage;
    the flag is not written."""
    op, params, state_names = CONFIGS[config]

    def body():
        param = h.randn(*shape, dtype=dtype)
        param.flat[0] = -0.0  # a sign bit the copy must keep
        # np.array keeps rank 0 an array; Adam's v is >= 0.
        state = [np.array(np.abs(h.randn(*shape, dtype=dtype)))
                 for _ in state_names]
        grad = h.randn(*shape, dtype=dtype)
        bad_grad = grad.copy()
        bad_grad.flat[0] = np.inf
        bad_grad.flat[-1] = np.nan if grad.size > 1 else np.inf
        lr, step = np.array(0.1, dtype), np.array(3, np.int64)
        names = ["param"] + state_names
        originals = [param] + state
        plain = {}
        exact = True

        def upload(array):
            if unaligned:
                return harness.unaligned_upload(h, array)
            t = h.upload(array)
            return t, t

        for flag_name, value, skips in FLAGS:
            host_flag = None if value is None else np.array(value, np.float32)
            for gradient in (grad, bad_grad) if skips else (grad,):
                for in_place in (False, True):
                    what = (f"found_inf {flag_name}, "
                            f"{'non-' if gradient is bad_grad else ''}finite "
                            f"gradient{', in place' if in_place else ''}")
                    values = [a.copy() for a in originals]
                    outputs = values if in_place else [
                        np.full(shape, GARBAGE, dtype) for _ in values]
                    harness.fluidcuda.cpu(h.lib, op, *call_arguments(
                        op, values[0], gradient, values[1:], lr, step,
                        outputs, params, host_flag))
                    device = [upload(a) for a in originals]
                    if not in_place:
                        device += [upload(np.full(shape, GARBAGE, dtype))
                                   for _ in originals]
                    views = [v for v, _ in device]
                    d_values = views[:len(originals)]
                    d_outputs = d_values if in_place else \
                        views[len(originals):]
                    d_grad, d_lr, d_step = (h.upload(a)
                                            for a in (gradient, lr, step))
                    d_flag = None if host_flag is None else h.upload(host_flag)
                    h.ctx(op, *call_arguments(op, d_values[0], d_grad,
                                              d_values[1:], d_lr, d_step,
                                              d_outputs, params, d_flag))
                    got = [t.download() for t in d_outputs]
                    if d_flag is not None:
                        assert harness.bitwise_equal(d_flag.download(),
                                                     host_flag), \
                            f"{what}: found_inf was written"
                    if not in_place:
                        for name, t, want in zip(names, d_values, originals):
                            assert harness.bitwise_equal(t.download(), want), \
                                f"{what}: input {name} was written"
                    for name, g, c, original in zip(names, got, outputs,
                                                    originals):
                        if skips:
                            assert harness.bitwise_equal(g, original), (
                                f"{what}: {name} is not its input's value")
                            assert harness.bitwise_equal(c, original), (
                                f"{what}: the cpu's {name} is not its "
                                f"input's value")
                        elif op == "adam":
                            harness.expect_close(g, c, f"{what}: {name}")
                            exact = exact and harness.bitwise_equal(g, c)
                        else:
                            assert harness.bitwise_equal(g, c), (
                                f"{what}: {name} differs from the cpu's")
                    if not skips:
                        key = in_place
                        if key in plain:
                            for name, g, p in zip(names, got, plain[key]):
                                assert harness.bitwise_equal(g, p), (
                                    f"{what}: {name} differs from the "
                                    f"update with found_inf NULL")
                        else:
                            plain[key] = got
                    for t in [d_grad, d_lr, d_step] + \
                            ([] if d_flag is None else [d_flag]):
                        t.free()
                    for _, base in device:
                        base.free()
        h.expect_no_device_error()
        return "skips bitwise; updates " + (
            "bitwise equal" if exact else "within tolerance")
    return body


def error_cases(h):
    f64 = np.float64
    p = np.ones(5)
    lr = np.array(0.1)
    step = np.array(1, np.int64)
    sgd = SgdParams(0.0)
    momentum = MomentumParams(0.9, 0.0, 0)
    adam = AdamParams(0.9, 0.999, 1e-8, 0.0, 0)
    cases = {
        "sgd lr rank": ("sgd", p, p, np.ones(1), None, Out((5,), f64), sgd),
        "sgd lr dtype": ("sgd", p, p, np.array(1, np.int32), None,
                         Out((5,), f64), sgd),
        "sgd grad shape": ("sgd", p, np.ones(4), lr, None, Out((5,), f64),
                           sgd),
        "sgd output dtype": ("sgd", p, p, lr, None, Out((5,), np.float32),
                             sgd),
        "sgd integer param": ("sgd", np.ones(5, np.int32),
                              np.ones(5, np.int32), lr, None,
                              Out((5,), np.int32), sgd),
        "sgd weight_decay": ("sgd", p, p, lr, None, Out((5,), f64),
                             SgdParams(-1.0)),
        "sgd null params": ("sgd", p, p, lr, None, Out((5,), f64), None),
        "momentum nesterov without momentum": (
            "momentum", p, p, p, lr, None, Out((5,), f64), Out((5,), f64),
            MomentumParams(0.0, 0.0, 1)),
        "momentum flag": ("momentum", p, p, p, lr, None, Out((5,), f64),
                          Out((5,), f64), MomentumParams(0.9, 0.0, 2)),
        "momentum velocity shape": ("momentum", p, p, np.ones(6), lr, None,
                                    Out((5,), f64), Out((5,), f64), momentum),
        "adam beta1": ("adam", p, p, p, p, lr, step, None, Out((5,), f64),
                       Out((5,), f64), Out((5,), f64),
                       AdamParams(1.0, 0.999, 1e-8, 0.0, 0)),
        "adam epsilon": ("adam", p, p, p, p, lr, step, None, Out((5,), f64),
                         Out((5,), f64), Out((5,), f64),
                         AdamParams(0.9, 0.999, -1.0, 0.0, 0)),
        "adam step dtype": ("adam", p, p, p, p, lr, np.array(1.0), None,
                            Out((5,), f64), Out((5,), f64), Out((5,), f64),
                            adam),
        "adam step rank": ("adam", p, p, p, p, lr, np.ones(1, np.int64),
                           None, Out((5,), f64), Out((5,), f64),
                           Out((5,), f64),
                           adam),
        "adam v shape": ("adam", p, p, p, np.ones(4), lr, step, None,
                         Out((5,), f64), Out((5,), f64), Out((5,), f64),
                         adam),
        # Bad skip flags (of value 0.0, which would let the update run).
        "sgd found_inf dtype": ("sgd", p, p, lr, np.array(0.0),
                                Out((5,), f64), sgd),
        "momentum found_inf rank": ("momentum", p, p, p, lr,
                                    np.zeros(1, np.float32), Out((5,), f64),
                                    Out((5,), f64), momentum),
        "adam found_inf dtype": ("adam", p, p, p, p, lr, step,
                                 np.array(0, np.int32), Out((5,), f64),
                                 Out((5,), f64), Out((5,), f64), adam),
        "adam found_inf rank": ("adam", p, p, p, p, lr, step,
                                np.zeros((1, 1), np.float32), Out((5,), f64),
                                Out((5,), f64), Out((5,), f64), adam),
    }
    for name, (op, *args) in cases.items():
        h.case(f"error {op}: {name}",
               lambda op=op, args=args: harness.expect_same_error(h, op,
                                                                  *args))


def main():
    h = harness.Harness(sys.argv)
    for mode, dtype in harness.FLOATS:
        for config in CONFIGS:
            for shape in [[1], [7], [8], [4, 33]]:
                h.case(f"{config} {mode} {shape}",
                       update_case(h, config, dtype, dtype, shape,
                                   in_place=False))
            other = np.float64 if dtype == np.float32 else np.float32
            h.case(f"{config} {mode} lr {np.dtype(other).name}",
                   update_case(h, config, dtype, other, [100], False))
            h.case(f"{config} {mode} in place",
                   update_case(h, config, dtype, dtype, [1001], True))
            h.case(f"{config} {mode} unaligned in place",
                   update_case(h, config, dtype, dtype, [1001], True,
                               unaligned=True))
            h.case(f"{config} {mode} [1000003] in place",
                   update_case(h, config, dtype, dtype, [1000003], True))
    for op in ["sgd", "momentum", "adam"]:
        h.case(f"{op} lr -0.1 is reported",
               bad_value_case(h, op, -0.1, 1, "lr is -0.1"))
        h.case(f"{op} lr NaN is reported",
               bad_value_case(h, op, np.nan, 1, "lr is nan"))
    h.case("adam step 0 is reported",
           bad_value_case(h, "adam", 0.1, 0, "step is 0"))
    h.case("adam step -5 is reported",
           bad_value_case(h, "adam", 0.1, -5, "step is -5"))
    for mode, dtype in harness.FLOATS:
        for config in ["sgd weight_decay", "momentum nesterov weight_decay",
                       "adam weight_decay", "adamw"]:
            h.case(f"{config} {mode} found_inf",
                   skip_case(h, config, dtype, (1001,), False))
            h.case(f"{config} {mode} found_inf unaligned",
                   skip_case(h, config, dtype, (37,), True))
    h.case("momentum f32 found_inf rank 0",
           skip_case(h, "momentum", np.float32, (), False))
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
