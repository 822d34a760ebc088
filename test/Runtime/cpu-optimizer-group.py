# RUN: %python %s %fluid_runtime_lib
"""The grouped optimizer updates (fluid_cpu_sgd_group, _momentum_group,
_adam_group in CpuOptimizerKernels.h) against the single-tensor kernels
called once per entry: five updates in a row over entries of mixed sizes
(rank 0, 1, 3, 7, 1000 elements and one without elements), f32 and f64
parameters with f32 and f64 learning rates, weight decay, nesterov, Adam
and AdamW, in place and into separate outputs, compared bit for bit after
every update.

Then bad calls: a count below 1, null arrays, an entry whose tensors
disagree (the message names the entry and the tensor), entries of
different dtypes, bad hyper-parameters, learning rates and steps. Each
must fail with its message and leave every buffer as it was, including
those of the entries before the bad one of an in-place update.
"""

import ctypes
import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
optimizer = importlib.import_module("cpu-optimizer")
fluidrt = optimizer.api.fluidrt

INVALID_ARGUMENT = fluidrt.INVALID_ARGUMENT
UNSUPPORTED = fluidrt.UNSUPPORTED
STEPS = 5
LRS = [0.1, 0.05, 0.0, 0.3, 0.01]

# The shapes of one group's entries: rank 0, small sizes around the
# vector widths of other backends, a larger one, and one without elements.
SHAPES = [(), (1,), (3,), (7,), (10, 100), (0, 3), (2, 3, 4)]

# The state each rule keeps (the arrays of the group call, in order).
STATE = {"sgd": [], "momentum": ["velocities"],
         "adam": ["exp_avgs", "exp_avg_sqs"]}

# name: (rule, parameter struct)
CONFIGS = {
    "sgd": ("sgd", optimizer.SgdParams(0.0)),
    "sgd weight_decay": ("sgd", optimizer.SgdParams(0.01)),
    "momentum": ("momentum", optimizer.MomentumParams(0.9, 0.0, 0)),
    "momentum weight_decay": ("momentum",
                              optimizer.MomentumParams(0.8, 1e-3, 0)),
    "momentum nesterov": ("momentum", optimizer.MomentumParams(0.9, 0.0, 1)),
    "momentum nesterov weight_decay": (
        "momentum", optimizer.MomentumParams(0.9, 5e-4, 1)),
    "adam": ("adam", optimizer.AdamParams(0.9, 0.999, 1e-8, 0.0, 0)),
    "adam weight_decay": ("adam",
                          optimizer.AdamParams(0.8, 0.95, 1e-6, 0.01, 0)),
    "adamw": ("adam", optimizer.AdamParams(0.9, 0.999, 1e-8, 0.01, 1)),
}


def descriptors(arrays):
    """A C array of descriptors viewing `arrays` (None: a null array)."""
    if arrays is None:
        return None
    return (fluidrt.FluidTensor * len(arrays))(
        *[a if isinstance(a, fluidrt.FluidTensor) else fluidrt.tensor(a)
          for a in arrays])


def ref(array):
    """A descriptor pointer for a single tensor argument (None: null)."""
    if array is None:
        return None
    if isinstance(array, fluidrt.FluidTensor):
        return ctypes.byref(array)
    return ctypes.byref(fluidrt.tensor(array))


def group_call(lib, rule, count, inputs, lr, step, outputs, params):
    """Calls fluid_cpu_<rule>_group: inputs = [params, grads, *state] and
    outputs = [new_params, *new_state], each a list of arrays (or None);
    returns (status, message)."""
    ins = [descriptors(a) for a in inputs]
    outs = [descriptors(a) for a in outputs]
    if rule == "sgd":
        args = [count, ins[0], ins[1], ref(lr), outs[0], params]
    elif rule == "momentum":
        args = [count, ins[0], ins[1], ins[2], ref(lr), outs[0], outs[1],
                params]
    else:
        args = [count, *ins, ref(lr), ref(step), *outs, params]
    status = getattr(lib, f"fluid_cpu_{rule}_group")(*args)
    return status, lib.fluid_last_error().decode()


def single_call(suite, rule, inputs, lr, step, outputs, params):
    """The single-tensor kernel on one entry: inputs = [param, grad,
    *state], outputs = [new_param, *new_state]."""
    if rule == "sgd":
        suite.kernels("fluid_cpu_sgd", inputs[0], inputs[1], lr, outputs[0],
                      params)
    elif rule == "momentum":
        suite.kernels("fluid_cpu_momentum", inputs[0], inputs[1], inputs[2],
                      lr, outputs[0], outputs[1], params)
    else:
        suite.kernels("fluid_cpu_adam", *inputs, lr, step, *outputs, params)


def randn(rng, shape, dtype):
    return np.asarray(rng.standard_normal(shape), dtype=dtype)


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and \
        a.tobytes() == b.tobytes()


def group_case(suite, config, dtype, lr_dtype, in_place, shapes=SHAPES):
    rule, params = CONFIGS[config]
    names = ["params"] + STATE[rule]

    def body():
        rng = np.random.default_rng(7)
        count = len(shapes)
        # values[j][k]: tensor j (param, then the state) of entry k.
        values = [[randn(rng, s, dtype) for s in shapes]]
        for _ in STATE[rule]:
            values.append([np.zeros(s, dtype) if rule == "adam"
                           else randn(rng, s, dtype) for s in shapes])
        singles = [[a.copy() for a in tensor] for tensor in values]
        for step, rate in enumerate(LRS, start=1):
            grads = [randn(rng, s, dtype) for s in shapes]
            lr = np.array(rate, lr_dtype)
            step_value = np.array(step, np.int64)

            if in_place:
                outputs = values
            else:
                outputs = [[np.full(s, np.nan, dtype) for s in shapes]
                           for _ in values]
            status, message = group_call(
                suite.kernels.lib, rule, count,
                [values[0], grads] + values[1:], lr, step_value, outputs,
                params)
            assert status == 0, message
            values = outputs

            for k in range(count):
                outs = [tensor[k] if in_place else
                        np.full(shapes[k], np.nan, dtype)
                        for tensor in singles]
                single_call(suite, rule,
                            [singles[0][k], grads[k]] +
                            [tensor[k] for tensor in singles[1:]],
                            lr, step_value, outs, params)
                for tensor, out in zip(singles, outs):
                    tensor[k] = out
            for name, got, want in zip(names, values, singles):
                for k in range(count):
                    assert same_bits(got[k], want[k]), (
                        f"{name}[{k}] after step {step} differs from the "
                        f"single kernel's: {got[k]} vs {want[k]}")
        return f"{count} entries, bitwise equal"
    return body


#===-----------------------------------------------------------------------===#
# Errors
#===-----------------------------------------------------------------------===#


class Call:
    """A valid in-place call of `rule`'s group over SHAPE-sized f32
    entries, to be spoiled by one change before it is made."""

    SHAPE = (4, 6)

    def __init__(self, rule, count=5, dtype=np.float32):
        rng = np.random.default_rng(3)
        self.rule = rule
        self.count = count
        self.params = CONFIGS[{"sgd": "sgd", "momentum": "momentum",
                               "adam": "adam"}[rule]][1]
        # tensors[j][k], j over params, grads, the state.
        self.inputs = [[randn(rng, self.SHAPE, dtype) for _ in range(count)]
                       for _ in range(2 + len(STATE[rule]))]
        # In place: the outputs are the parameter and state buffers.
        self.outputs = [self.inputs[0]] + self.inputs[2:]
        self.lr = np.array(0.1, np.float32)
        self.step = np.array(1, np.int64)

    def arrays(self):
        """Every buffer the call may write or read."""
        found = []
        for tensor in self.inputs + self.outputs:
            if tensor is not None:
                found += [a for a in tensor if isinstance(a, np.ndarray)]
        return found + [self.lr, self.step]

    def run(self, lib):
        return group_call(lib, self.rule, self.count, self.inputs, self.lr,
                          self.step, self.outputs, self.params)


def spoil_tensor(index, k, array):
    def spoil(call):
        call.inputs[index][k] = array
    return spoil


def spoil_output(index, k, array):
    def spoil(call):
        call.outputs[index] = list(call.outputs[index])
        call.outputs[index][k] = array
    return spoil


def null_array(index, output=False):
    def spoil(call):
        if output:
            call.outputs[index] = None
        else:
            call.inputs[index] = None
    return spoil


def set_attribute(name, value):
    def spoil(call):
        setattr(call, name, value)
    return spoil


def entry_of_dtype(k, dtype):
    """Every tensor of entry k in `dtype`."""
    def spoil(call):
        for tensor in call.inputs:
            tensor[k] = tensor[k].astype(dtype)
        call.outputs = [call.inputs[0]] + call.inputs[2:]
    return spoil


def null_data(index, k):
    def spoil(call):
        t = fluidrt.tensor(call.inputs[index][k])
        t.data = None
        call.inputs[index][k] = t
    return spoil


def all_dtype(dtype):
    def spoil(call):
        for tensor in call.inputs:
            for k in range(len(tensor)):
                tensor[k] = tensor[k].astype(dtype)
        call.outputs = [call.inputs[0]] + call.inputs[2:]
    return spoil


SHAPE = Call.SHAPE
F32 = np.float32

# (name, rule, spoil, message fragment, status)
ERRORS = [
    ("count 0", "momentum", set_attribute("count", 0),
     "fluid_cpu_momentum_group: count must be >= 1, got 0", INVALID_ARGUMENT),
    ("count -1", "sgd", set_attribute("count", -1),
     "fluid_cpu_sgd_group: count must be >= 1, got -1", INVALID_ARGUMENT),
    ("null params array", "sgd", null_array(0),
     "fluid_cpu_sgd_group: params array is null", INVALID_ARGUMENT),
    ("null grads array", "momentum", null_array(1),
     "fluid_cpu_momentum_group: grads array is null", INVALID_ARGUMENT),
    ("null velocities array", "momentum", null_array(2),
     "fluid_cpu_momentum_group: velocities array is null", INVALID_ARGUMENT),
    ("null new_velocities array", "momentum", null_array(1, output=True),
     "fluid_cpu_momentum_group: new_velocities array is null",
     INVALID_ARGUMENT),
    ("null exp_avg_sqs array", "adam", null_array(3),
     "fluid_cpu_adam_group: exp_avg_sqs array is null", INVALID_ARGUMENT),
    ("null new_exp_avgs array", "adam", null_array(1, output=True),
     "fluid_cpu_adam_group: new_exp_avgs array is null", INVALID_ARGUMENT),
    ("grads of the last entry of another shape", "momentum",
     spoil_tensor(1, 4, np.ones((4, 5), F32)),
     "fluid_cpu_momentum_group: entry 4: grads[4] shape [4,5] does not "
     "match expected [4,6]", INVALID_ARGUMENT),
    ("velocity of entry 3 of another dtype", "momentum",
     spoil_tensor(2, 3, np.ones(SHAPE, np.float64)),
     "fluid_cpu_momentum_group: entry 3: velocities[3] has dtype f64 but "
     "params[3] has f32", INVALID_ARGUMENT),
    ("new_exp_avg_sqs of entry 2 of another shape", "adam",
     spoil_output(2, 2, np.ones((6, 4), F32)),
     "fluid_cpu_adam_group: entry 2: new_exp_avg_sqs[2] shape [6,4] does "
     "not match expected [4,6]", INVALID_ARGUMENT),
    ("new_params of entry 1 of another shape", "sgd",
     spoil_output(0, 1, np.ones((24,), F32)),
     "fluid_cpu_sgd_group: entry 1: new_params[1] shape [24] does not match "
     "expected [4,6]", INVALID_ARGUMENT),
    ("entries of different dtypes", "momentum", entry_of_dtype(1, np.float64),
     "fluid_cpu_momentum_group: entry 1: params[1] has dtype f64 but "
     "params[0] has f32", INVALID_ARGUMENT),
    ("adam entries of different dtypes", "adam", entry_of_dtype(4, np.float64),
     "fluid_cpu_adam_group: entry 4: params[4] has dtype f64 but params[0] "
     "has f32", INVALID_ARGUMENT),
    ("f16 entries unsupported", "sgd", all_dtype(np.float16),
     "fluid_cpu_sgd_group: entry 0: params[0] has dtype f16; the cpu kernels "
     "support f32 and f64", UNSUPPORTED),
    ("null grad data of entry 2", "adam", null_data(1, 2),
     "fluid_cpu_adam_group: entry 2: grads[2] data is null",
     INVALID_ARGUMENT),
    ("null p", "momentum", set_attribute("params", None),
     "fluid_cpu_momentum_group: p is null", INVALID_ARGUMENT),
    ("negative momentum", "momentum",
     set_attribute("params", optimizer.MomentumParams(-0.5, 0.0, 0)),
     "fluid_cpu_momentum_group: momentum must be >= 0, got -0.5",
     INVALID_ARGUMENT),
    ("nesterov without momentum", "momentum",
     set_attribute("params", optimizer.MomentumParams(0.0, 0.0, 1)),
     "fluid_cpu_momentum_group: nesterov needs a momentum > 0",
     INVALID_ARGUMENT),
    ("negative weight_decay", "sgd",
     set_attribute("params", optimizer.SgdParams(-1.0)),
     "fluid_cpu_sgd_group: weight_decay must be >= 0, got -1",
     INVALID_ARGUMENT),
    ("adam beta1 1", "adam",
     set_attribute("params", optimizer.AdamParams(1.0, 0.999, 1e-8, 0.0, 0)),
     "fluid_cpu_adam_group: beta1 must be in [0, 1), got 1",
     INVALID_ARGUMENT),
    ("adam decoupled 2", "adam",
     set_attribute("params", optimizer.AdamParams(0.9, 0.999, 1e-8, 0.0, 2)),
     "fluid_cpu_adam_group: decoupled must be 0 or 1, got 2",
     INVALID_ARGUMENT),
    ("negative lr", "momentum", set_attribute("lr", np.array(-0.1)),
     "fluid_cpu_momentum_group: lr is -0.1; it must be >= 0",
     INVALID_ARGUMENT),
    ("NaN lr", "sgd", set_attribute("lr", np.array(np.nan, np.float32)),
     "fluid_cpu_sgd_group: lr is nan; it must be >= 0", INVALID_ARGUMENT),
    ("lr of rank 1", "adam", set_attribute("lr", np.ones(1)),
     "fluid_cpu_adam_group: lr must have rank 0, got shape [1]",
     INVALID_ARGUMENT),
    ("null lr", "sgd", set_attribute("lr", None),
     "fluid_cpu_sgd_group: lr descriptor is null", INVALID_ARGUMENT),
    ("adam step 0", "adam", set_attribute("step", np.array(0, np.int64)),
     "fluid_cpu_adam_group: step is 0; it must be >= 1", INVALID_ARGUMENT),
    ("adam i32 step", "adam", set_attribute("step", np.array(1, np.int32)),
     "fluid_cpu_adam_group: step has dtype i32; expected i64",
     INVALID_ARGUMENT),
]


def error_case(suite, rule, spoil, fragment, expected):
    def body():
        call = Call(rule)
        spoil(call)
        arrays = [a for a in call.arrays() if a is not None]
        before = [a.copy() for a in arrays]
        status, message = call.run(suite.kernels.lib)
        assert status == expected, f"status {status}: {message!r}"
        assert fragment in message, f"{fragment!r} not in {message!r}"
        for array, copy in zip(arrays, before):
            assert same_bits(array, copy), "a buffer was written"
        return message
    return body


def control_case(suite):
    """The unspoiled calls of the error cases succeed and write (so the
    error cases' checks that nothing was written can fail)."""
    def body():
        for rule in STATE:
            call = Call(rule)
            before = [a.copy() for a in call.inputs[0]]
            status, message = call.run(suite.kernels.lib)
            assert status == 0, message
            changed = sum(not same_bits(a, b)
                          for a, b in zip(call.inputs[0], before))
            assert changed == call.count, f"{rule}: {changed} entries changed"
    return body


def main():
    suite = optimizer.make_suite(sys.argv)
    for dtype, name in [(np.float32, "f32"), (np.float64, "f64")]:
        other = np.float64 if dtype == np.float32 else np.float32
        for config in CONFIGS:
            suite.case(f"{config} {name}",
                       group_case(suite, config, dtype, dtype, False))
            suite.case(f"{config} {name} in place",
                       group_case(suite, config, dtype, dtype, True))
            suite.case(f"{config} {name} lr {np.dtype(other).name} in place",
                       group_case(suite, config, dtype, other, True))
    suite.case("momentum f32 one entry",
               group_case(suite, "momentum nesterov", np.float32, np.float32,
                          True, shapes=[(1000,)]))
    suite.case("adamw f64 only entries without elements",
               group_case(suite, "adamw", np.float64, np.float64, False,
                          shapes=[(0,), (3, 0)]))
    suite.case("valid calls of the error cases write every entry",
               control_case(suite))
    for name, rule, spoil, fragment, status in ERRORS:
        suite.case(f"error {rule}: {name}",
                   error_case(suite, rule, spoil, fragment, status))
    suite.finish()


if __name__ == "__main__":
    main()
