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
backend's message. Descriptor errors get the cpu's messages at once.

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


def call_arguments(op, param, grad, state, lr, step, outputs, params):
    """The argument list of fluid_*_<op> from its pieces."""
    if op == "sgd":
        return [param, grad, lr, outputs[0], params]
    if op == "momentum":
        return [param, grad, state[0], lr, outputs[0], outputs[1], params]
    return [param, grad, state[0], state[1], lr, step, *outputs, params]


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


def error_cases(h):
    f64 = np.float64
    p = np.ones(5)
    lr = np.array(0.1)
    step = np.array(1, np.int64)
    sgd = SgdParams(0.0)
    momentum = MomentumParams(0.9, 0.0, 0)
    adam = AdamParams(0.9, 0.999, 1e-8, 0.0, 0)
    cases = {
        "sgd lr rank": ("sgd", p, p, np.ones(1), Out((5,), f64), sgd),
        "sgd lr dtype": ("sgd", p, p, np.array(1, np.int32), Out((5,), f64),
                         sgd),
        "sgd grad shape": ("sgd", p, np.ones(4), lr, Out((5,), f64), sgd),
        "sgd output dtype": ("sgd", p, p, lr, Out((5,), np.float32), sgd),
        "sgd integer param": ("sgd", np.ones(5, np.int32),
                              np.ones(5, np.int32), lr, Out((5,), np.int32),
                              sgd),
        "sgd weight_decay": ("sgd", p, p, lr, Out((5,), f64),
                             SgdParams(-1.0)),
        "sgd null params": ("sgd", p, p, lr, Out((5,), f64), None),
        "momentum nesterov without momentum": (
            "momentum", p, p, p, lr, Out((5,), f64), Out((5,), f64),
            MomentumParams(0.0, 0.0, 1)),
        "momentum flag": ("momentum", p, p, p, lr, Out((5,), f64),
                          Out((5,), f64), MomentumParams(0.9, 0.0, 2)),
        "momentum velocity shape": ("momentum", p, p, np.ones(6), lr,
                                    Out((5,), f64), Out((5,), f64), momentum),
        "adam beta1": ("adam", p, p, p, p, lr, step, Out((5,), f64),
                       Out((5,), f64), Out((5,), f64),
                       AdamParams(1.0, 0.999, 1e-8, 0.0, 0)),
        "adam epsilon": ("adam", p, p, p, p, lr, step, Out((5,), f64),
                         Out((5,), f64), Out((5,), f64),
                         AdamParams(0.9, 0.999, -1.0, 0.0, 0)),
        "adam step dtype": ("adam", p, p, p, p, lr, np.array(1.0),
                            Out((5,), f64), Out((5,), f64), Out((5,), f64),
                            adam),
        "adam step rank": ("adam", p, p, p, p, lr, np.ones(1, np.int64),
                           Out((5,), f64), Out((5,), f64), Out((5,), f64),
                           adam),
        "adam v shape": ("adam", p, p, p, np.ones(4), lr, step,
                         Out((5,), f64), Out((5,), f64), Out((5,), f64),
                         adam),
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
    error_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
