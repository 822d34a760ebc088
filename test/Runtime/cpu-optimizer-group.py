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
those of the entries before the bad one of an in-place update. found_inf
is NULL there, except in the cases of a bad found_inf (f64, i32, rank 1
or 2, of value 0.0, which would let the update write).

The skip flag found_inf of dynamic loss scaling, on groups of SHAPES:
0.0 and -0.0 give the bits of NULL; 1.0, NaN, inf, -2 and a subnormal
leave every output of every entry bitwise equal to its input (with finite
gradients and with inf and NaN in them), in place and into distinct
outputs prefilled with garbage; the inputs and the flag are not written;
a skipped (or 0.0) group equals the single kernel's call per entry.

fluid_cpu_unscale_grads against a NumPy oracle of PyTorch's
_amp_foreach_non_finite_check_and_unscale_ (inv = f32(1 / f64(scale)),
each gradient times inv in its own dtype), bit for bit: f32 and f64,
entries of rank 0 to 3 and without elements, scales 2^16, 3, 1000,
12345.678 and 0.1 (the oracle differs from a division by the scale),
into distinct outputs and in place; found_inf (prefilled with 7.0) is 0.0
for finite gradients (an f64 1e300 included) and 1.0 for +inf, -inf or
NaN in a later entry, and is rewritten by every call. Then bad calls
(count, null arrays, entry dtypes and shapes, f16 and i32 gradients,
scale and found_inf descriptors), each with its exact message, writing
nothing.
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


def group_call(lib, rule, count, inputs, lr, step, outputs, params,
               found_inf=None):
    """Calls fluid_cpu_<rule>_group: inputs = [params, grads, *state] and
    outputs = [new_params, *new_state], each a list of arrays (or None);
    found_inf the skip flag (None: NULL); returns (status, message)."""
    ins = [descriptors(a) for a in inputs]
    outs = [descriptors(a) for a in outputs]
    if rule == "sgd":
        args = [count, ins[0], ins[1], ref(lr), ref(found_inf), outs[0],
                params]
    elif rule == "momentum":
        args = [count, ins[0], ins[1], ins[2], ref(lr), ref(found_inf),
                outs[0], outs[1], params]
    else:
        args = [count, *ins, ref(lr), ref(step), ref(found_inf), *outs,
                params]
    status = getattr(lib, f"fluid_cpu_{rule}_group")(*args)
    return status, lib.fluid_last_error().decode()


def single_call(suite, rule, inputs, lr, step, outputs, params,
                found_inf=None):
    """The single-tensor kernel on one entry: inputs = [param, grad,
    *state], outputs = [new_param, *new_state]."""
    if rule == "sgd":
        suite.kernels("fluid_cpu_sgd", inputs[0], inputs[1], lr, found_inf,
                      outputs[0], params)
    elif rule == "momentum":
        suite.kernels("fluid_cpu_momentum", inputs[0], inputs[1], inputs[2],
                      lr, found_inf, outputs[0], outputs[1], params)
    else:
        suite.kernels("fluid_cpu_adam", *inputs, lr, step, found_inf,
                      *outputs, params)


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
        self.found_inf = None

    def arrays(self):
        """Every buffer the call may write or read."""
        found = []
        for tensor in self.inputs + self.outputs:
            if tensor is not None:
                found += [a for a in tensor if isinstance(a, np.ndarray)]
        return found + [self.lr, self.step, self.found_inf]

    def run(self, lib):
        return group_call(lib, self.rule, self.count, self.inputs, self.lr,
                          self.step, self.outputs, self.params,
                          self.found_inf)


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
    # Bad skip flags, of value 0.0: a valid one would let the update write.
    ("f64 found_inf", "sgd",
     set_attribute("found_inf", np.array(0.0, np.float64)),
     "fluid_cpu_sgd_group: found_inf has dtype f64; expected f32",
     INVALID_ARGUMENT),
    ("found_inf of rank 1", "momentum",
     set_attribute("found_inf", np.zeros(1, np.float32)),
     "fluid_cpu_momentum_group: found_inf must have rank 0, got shape [1]",
     INVALID_ARGUMENT),
    ("f64 found_inf", "adam",
     set_attribute("found_inf", np.array(0.0, np.float64)),
     "fluid_cpu_adam_group: found_inf has dtype f64; expected f32",
     INVALID_ARGUMENT),
    ("found_inf of rank 2", "adam",
     set_attribute("found_inf", np.zeros((1, 1), np.float32)),
     "fluid_cpu_adam_group: found_inf must have rank 0, got shape [1,1]",
     INVALID_ARGUMENT),
    ("i32 found_inf", "momentum",
     set_attribute("found_inf", np.array(0, np.int32)),
     "fluid_cpu_momentum_group: found_inf has dtype i32; expected f32",
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
    error cases' checks that nothing was written can fail), also with a
    valid found_inf of 0.0 (the value of the bad found_inf cases)."""
    def body():
        for rule in STATE:
            for found_inf in [None, np.array(0.0, np.float32)]:
                call = Call(rule)
                call.found_inf = found_inf
                before = [a.copy() for a in call.inputs[0]]
                status, message = call.run(suite.kernels.lib)
                assert status == 0, message
                changed = sum(not same_bits(a, b)
                              for a, b in zip(call.inputs[0], before))
                assert changed == call.count, (
                    f"{rule}: {changed} entries changed")
    return body


#===-----------------------------------------------------------------------===#
# The skip flag (found_inf) of dynamic loss scaling
#===-----------------------------------------------------------------------===#

# found_inf values that let the update run as NULL does (zeros of either
# sign), and values that skip it (anything nonzero, NaN included).
RUNNING_FLAGS = [("0.0", 0.0), ("-0.0", -0.0)]
SKIPPING_FLAGS = [("1.0", 1.0), ("NaN", np.nan), ("inf", np.inf),
                  ("-2", -2.0), ("subnormal 1e-45", 1e-45)]
# What distinct output buffers hold before a call, so that an output left
# unwritten shows.
GARBAGE = 12345.0


def flag(value):
    """A rank-0 f32 found_inf."""
    return np.array(value, np.float32)


def skip_group_case(suite, config, dtype, in_place):
    """The group with found_inf 0.0 or -0.0 gives the bits of found_inf
    NULL; with a nonzero found_inf every output of every entry is its
    input's value bit for bit (also where the gradients hold inf and NaN,
    as when the flag is set), the inputs and the flag are not written."""
    rule, params = CONFIGS[config]
    names = ["params"] + STATE[rule]

    def body():
        rng = np.random.default_rng(11)
        shapes = SHAPES
        count = len(shapes)
        originals = [[randn(rng, s, dtype) for s in shapes]]
        originals[0][4][0, 0] = -0.0  # a sign bit the copy must keep
        for _ in STATE[rule]:
            originals.append([np.array(np.abs(randn(rng, s, dtype)))
                              for s in shapes])
        grads = [randn(rng, s, dtype) for s in shapes]
        bad_grads = [g.copy() for g in grads]
        bad_grads[4][3, 17], bad_grads[6][1, 2, 3] = np.inf, np.nan
        bad_grads[1][0] = -np.inf
        lr, step = np.array(0.1, np.float32), np.array(3, np.int64)

        def run(found_inf, gradients):
            values = [[a.copy() for a in tensor] for tensor in originals]
            if in_place:
                outputs = values
            else:
                outputs = [[np.full(s, GARBAGE, dtype) for s in shapes]
                           for _ in values]
            status, message = group_call(
                suite.kernels.lib, rule, count,
                [values[0], [g.copy() for g in gradients]] + values[1:], lr,
                step, outputs, params, found_inf)
            assert status == 0, message
            if not in_place:
                for tensor, want in zip(values, originals):
                    for k in range(count):
                        assert same_bits(tensor[k], want[k]), (
                            f"input {k} was written")
            return outputs

        plain = run(None, grads)
        for name, tensor, before in zip(names, plain, originals):
            for k in range(count):
                if before[k].size:
                    assert not same_bits(tensor[k], before[k]), (
                        f"found_inf NULL left {name}[{k}] as it was")
        for flag_name, value in RUNNING_FLAGS:
            found_inf = flag(value)
            got = run(found_inf, grads)
            for name, tensor, want in zip(names, got, plain):
                for k in range(count):
                    assert same_bits(tensor[k], want[k]), (
                        f"found_inf {flag_name}: {name}[{k}] differs from "
                        f"the update with found_inf NULL")
            assert same_bits(found_inf, flag(value)), "found_inf written"
        for flag_name, value in SKIPPING_FLAGS:
            for gradients, what in [(grads, "finite"),
                                    (bad_grads, "non-finite")]:
                found_inf = flag(value)
                got = run(found_inf, gradients)
                for name, tensor, want in zip(names, got, originals):
                    for k in range(count):
                        assert same_bits(tensor[k], want[k]), (
                            f"found_inf {flag_name}, {what} gradients: "
                            f"{name}[{k}] is not its input's value: "
                            f"{tensor[k]} vs {want[k]}")
                assert same_bits(found_inf, flag(value)), "found_inf written"
        return f"{count} entries"
    return body


def skip_equals_single_case(suite, config, dtype):
    """A skipped group call gives each entry what the single-tensor
    kernel's skipped call gives it, and the same with found_inf 0.0."""
    rule, params = CONFIGS[config]

    def body():
        rng = np.random.default_rng(5)
        shapes = SHAPES
        values = [[randn(rng, s, dtype) for s in shapes]]
        for _ in STATE[rule]:
            values.append([np.array(np.abs(randn(rng, s, dtype)))
                           for s in shapes])
        grads = [randn(rng, s, dtype) for s in shapes]
        lr, step = np.array(0.05, dtype), np.array(2, np.int64)
        for value in [1.0, 0.0]:
            found_inf = flag(value)
            group = [[np.full(s, GARBAGE, dtype) for s in shapes]
                     for _ in values]
            status, message = group_call(
                suite.kernels.lib, rule, len(shapes),
                [values[0], grads] + values[1:], lr, step, group, params,
                found_inf)
            assert status == 0, message
            for k, s in enumerate(shapes):
                outs = [np.full(s, GARBAGE, dtype) for _ in values]
                single_call(suite, rule,
                            [values[0][k], grads[k]] +
                            [tensor[k] for tensor in values[1:]], lr, step,
                            outs, params, found_inf)
                for j, out in enumerate(outs):
                    assert same_bits(group[j][k], out), (
                        f"found_inf {value}: tensor {j} of entry {k} differs "
                        f"from the single kernel's")
    return body


#===-----------------------------------------------------------------------===#
# fluid_cpu_unscale_grads
#===-----------------------------------------------------------------------===#

# Entries of one unscale call: rank 0, small, a larger one, one without
# elements, rank 3.
UNSCALE_SHAPES = [(), (1,), (7,), (10, 100), (0, 3), (2, 3, 4), (33,)]
# Loss scales: GradScaler's initial 2^16, and some that are no power of
# two (so 1 / scale is inexact, and its f32 rounding matters).
SCALES = [65536.0, 3.0, 1000.0, 12345.678, 0.1]


def unscale_oracle(grads, scale):
    """PyTorch's _amp_foreach_non_finite_check_and_unscale_: inv_scale =
    scale.double().reciprocal().float(); each gradient times inv_scale in
    its own dtype; found_inf 1.0 if any element is inf or NaN."""
    inverse = np.float32(1.0 / np.float64(np.float32(scale)))
    unscaled = [np.array(np.multiply(g, g.dtype.type(inverse), dtype=g.dtype))
                for g in grads]
    found = any(not np.all(np.isfinite(g)) for g in grads)
    return unscaled, np.float32(1.0 if found else 0.0)


def unscale_call(lib, count, grads, scale, new_grads, found_inf):
    status = lib.fluid_cpu_unscale_grads(count, descriptors(grads),
                                         ref(scale), descriptors(new_grads),
                                         ref(found_inf))
    return status, lib.fluid_last_error().decode()


def scaled_grads(rng, shapes, dtype, scale):
    """Gradients of a loss multiplied by `scale`."""
    # np.array keeps rank 0 an array (a product would be a NumPy scalar).
    return [np.array(randn(rng, s, dtype) * dtype(scale), dtype)
            for s in shapes]


def unscale_case(suite, dtype, scale, in_place, non_finite=(),
                 shapes=UNSCALE_SHAPES, huge=False):
    """fluid_cpu_unscale_grads against unscale_oracle, bit for bit, and
    found_inf (prefilled with 7.0, so that it must be written).
    non_finite: (entry, flat index, value) elements planted in the
    gradients; huge: an f64 element of 1e300 (finite, beyond f32's range)."""
    def body():
        rng = np.random.default_rng(17)
        grads = scaled_grads(rng, shapes, dtype, scale)
        for k, index, value in non_finite:
            grads[k].flat[index] = value
        if huge:
            grads[3][4, 5] = 1e300
        want, want_flag = unscale_oracle(grads, scale)
        originals = [g.copy() for g in grads]
        outputs = grads if in_place else [np.full(s, GARBAGE, dtype)
                                          for s in shapes]
        scale_array = np.array(scale, np.float32)
        found_inf = flag(7.0)
        status, message = unscale_call(suite.kernels.lib, len(shapes), grads,
                                       scale_array, outputs, found_inf)
        assert status == 0, message
        for k, (got, expected) in enumerate(zip(outputs, want)):
            if not same_bits(got, expected):
                bad = np.flatnonzero(got.ravel() != expected.ravel())
                raise AssertionError(
                    f"entry {k} differs from the oracle at {bad[:5]}: "
                    f"{got.ravel()[bad[:5]]} vs {expected.ravel()[bad[:5]]}")
        if not in_place:
            for k, (g, original) in enumerate(zip(grads, originals)):
                assert same_bits(g, original), f"grads[{k}] was written"
        assert same_bits(scale_array, np.array(scale, np.float32)), \
            "scale was written"
        assert same_bits(found_inf, want_flag), (
            f"found_inf {found_inf} (expected {want_flag})")
        # The oracle is not plain division: for a scale whose reciprocal
        # is inexact, grads * f32(1 / scale) differs from grads / scale.
        divided = [np.array(np.divide(g, g.dtype.type(np.float32(scale)),
                                      dtype=g.dtype)) for g in originals]
        differ = sum(int(np.sum(a != b)) for a, b in zip(want, divided))
        power_of_two = np.frexp(np.float32(scale))[0] == 0.5
        if not power_of_two and sum(g.size for g in grads) >= 1000:
            assert differ > 0, "the oracle cannot tell a division"
        return f"found_inf {float(found_inf)}, {differ} elements differ " \
            "from division by the scale"
    return body


def unscale_exact_case(suite):
    """Values whose result is known without the oracle: scale 4 (inv
    0.25, exact), and scale 3, whose inv is the f32 0.3333333432674408,
    not 1/3: 3 * inv is 1.0000000298 in f64 (1.0 after rounding to f32)."""
    def body():
        lib = suite.kernels.lib
        four, three = np.array(4.0, np.float32), np.array(3.0, np.float32)
        g32 = np.array([4.0, -8.0, 1.0, 0.0, -0.0], np.float32)
        out = np.full(5, GARBAGE, np.float32)
        found_inf = flag(7.0)
        status, message = unscale_call(lib, 1, [g32], four, [out], found_inf)
        assert status == 0, message
        assert same_bits(out, np.array([1.0, -2.0, 0.25, 0.0, -0.0],
                                       np.float32)), out
        assert found_inf == 0.0, found_inf
        g64 = np.array([3.0], np.float64)
        status, message = unscale_call(lib, 1, [g64], three, [g64], found_inf)
        assert status == 0, message
        assert g64[0] == 3.0 * float(np.float32(1.0 / 3.0)) != 1.0, g64
        g32 = np.array([3.0], np.float32)
        status, message = unscale_call(lib, 1, [g32], three, [g32], found_inf)
        assert status == 0, message
        assert g32[0] == np.float32(1.0), g32
    return body


def unscale_repeated_case(suite):
    """found_inf is written on every call: 1.0 after a call that meets an
    inf, back to 0.0 after the next call on finite gradients (the same
    buffers, in place)."""
    def body():
        rng = np.random.default_rng(23)
        shapes = UNSCALE_SHAPES
        found_inf = flag(0.0)
        scale = np.array(3.0, np.float32)
        grads = scaled_grads(rng, shapes, np.float32, 3.0)
        for number, poisoned in enumerate([True, False, False, True, False]):
            fresh = scaled_grads(rng, shapes, np.float32, 3.0)
            if poisoned:
                fresh[5][1, 2, 0] = np.inf
            for g, f in zip(grads, fresh):
                g[...] = f
            want, want_flag = unscale_oracle(fresh, 3.0)
            status, message = unscale_call(suite.kernels.lib, len(shapes),
                                           grads, scale, grads, found_inf)
            assert status == 0, message
            assert same_bits(found_inf, want_flag), (
                f"call {number}: found_inf {found_inf}, expected {want_flag}")
            for k, (g, w) in enumerate(zip(grads, want)):
                assert same_bits(g, w), f"call {number}: entry {k} differs"
    return body


class UnscaleCall:
    """A valid unscale call over f32 entries (into distinct outputs, or in
    place), to be spoiled by one change before it is made."""

    SHAPES = [(4, 6), (5,), (), (3, 2, 2)]

    def __init__(self, in_place):
        rng = np.random.default_rng(29)
        self.count = len(self.SHAPES)
        self.grads = scaled_grads(rng, self.SHAPES, np.float32, 3000.0)
        self.new_grads = self.grads if in_place else \
            [np.full(s, GARBAGE, np.float32) for s in self.SHAPES]
        self.scale = np.array(3000.0, np.float32)
        self.found_inf = flag(7.0)

    def arrays(self):
        found = []
        for tensor in [self.grads, self.new_grads]:
            if tensor is not None:
                found += [a for a in tensor if isinstance(a, np.ndarray)]
        return found + [a for a in (self.scale, self.found_inf)
                        if isinstance(a, np.ndarray)]

    def run(self, lib):
        return unscale_call(lib, self.count, self.grads, self.scale,
                            self.new_grads, self.found_inf)


def unscale_entry(name, k, make):
    """grads[k] or new_grads[k] (name) replaced by make() (that entry alone,
    also in place)."""
    def spoil(call):
        tensor = list(getattr(call, name))
        tensor[k] = make(tensor[k])
        setattr(call, name, tensor)
    return spoil


def unscale_all_dtype(dtype):
    def spoil(call):
        call.grads = [g.astype(dtype) for g in call.grads]
        call.new_grads = call.grads
    return spoil


def without_data(array):
    t = fluidrt.tensor(array)
    t.data = None
    return t


# (name, spoil, message)
UNSCALE_ERRORS = [
    ("count 0", set_attribute("count", 0), "count must be >= 1, got 0"),
    ("count -1", set_attribute("count", -1), "count must be >= 1, got -1"),
    ("null grads array", set_attribute("grads", None), "grads array is null"),
    ("null new_grads array", set_attribute("new_grads", None),
     "new_grads array is null"),
    ("grads of entry 2 of dtype f64",
     unscale_entry("grads", 2, lambda a: a.astype(np.float64)),
     "entry 2: grads[2] has dtype f64 but grads[0] has f32"),
    ("new_grads of entry 1 of dtype f64",
     unscale_entry("new_grads", 1, lambda a: a.astype(np.float64)),
     "entry 1: new_grads[1] has dtype f64 but grads[1] has f32"),
    ("new_grads of entry 3 of another shape",
     unscale_entry("new_grads", 3, lambda a: np.ones((3, 4), np.float32)),
     "entry 3: new_grads[3] shape [3,4] does not match expected [3,2,2]"),
    ("new_grads of entry 2 of rank 1",
     unscale_entry("new_grads", 2, lambda a: np.ones(1, np.float32)),
     "entry 2: new_grads[2] shape [1] does not match expected []"),
    ("f16 gradients", unscale_all_dtype(np.float16),
     "entry 0: grads[0] has dtype f16; expected f32 or f64"),
    ("i32 gradients", unscale_all_dtype(np.int32),
     "entry 0: grads[0] has dtype i32; expected f32 or f64"),
    ("grads of entry 1 without data",
     unscale_entry("grads", 1, without_data),
     "entry 1: grads[1] data is null"),
    ("f64 scale", set_attribute("scale", np.array(3000.0)),
     "scale has dtype f64; expected f32"),
    ("scale of rank 1", set_attribute("scale", np.ones(1, np.float32)),
     "scale must have rank 0, got shape [1]"),
    ("null scale", set_attribute("scale", None), "scale descriptor is null"),
    ("f64 found_inf", set_attribute("found_inf", np.array(7.0)),
     "found_inf has dtype f64; expected f32"),
    ("found_inf of rank 1", set_attribute("found_inf",
                                          np.full(1, 7.0, np.float32)),
     "found_inf must have rank 0, got shape [1]"),
    ("i32 found_inf", set_attribute("found_inf", np.array(7, np.int32)),
     "found_inf has dtype i32; expected f32"),
    ("null found_inf", set_attribute("found_inf", None),
     "found_inf descriptor is null"),
]


def unscale_error_case(suite, in_place, spoil, fragment):
    def body():
        call = UnscaleCall(in_place)
        spoil(call)
        arrays = call.arrays()
        before = [a.copy() for a in arrays]
        status, message = call.run(suite.kernels.lib)
        assert status == INVALID_ARGUMENT, f"status {status}: {message!r}"
        expected = f"fluid_cpu_unscale_grads: {fragment}"
        assert message == expected, f"{message!r} is not {expected!r}"
        for array, copy in zip(arrays, before):
            assert same_bits(array, copy), "a buffer was written"
        return message
    return body


def unscale_control_case(suite):
    """The unspoiled calls of the unscale error cases write every output
    and found_inf."""
    def body():
        for in_place in [False, True]:
            call = UnscaleCall(in_place)
            before = [a.copy() for a in call.new_grads]
            status, message = call.run(suite.kernels.lib)
            assert status == 0, message
            changed = sum(not same_bits(a, b)
                          for a, b in zip(call.new_grads, before))
            assert changed == call.count, f"{changed} entries changed"
            assert same_bits(call.found_inf, flag(0.0)), call.found_inf
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

    for dtype, name in [(np.float32, "f32"), (np.float64, "f64")]:
        for config in ["sgd weight_decay", "momentum nesterov weight_decay",
                       "adam weight_decay", "adamw"]:
            for in_place in [False, True]:
                where = " in place" if in_place else ""
                suite.case(f"{config} {name} found_inf{where}",
                           skip_group_case(suite, config, dtype, in_place))
            suite.case(f"{config} {name} found_inf equals the single kernel",
                       skip_equals_single_case(suite, config, dtype))

    for dtype, name in [(np.float32, "f32"), (np.float64, "f64")]:
        for scale in SCALES:
            for in_place in [False, True]:
                where = " in place" if in_place else ""
                suite.case(f"unscale {name} scale {scale}{where}",
                           unscale_case(suite, dtype, scale, in_place))
        for what, planted in [("+inf", [(5, 17, np.inf)]),
                              ("-inf", [(3, 999, -np.inf)]),
                              ("NaN", [(6, 0, np.nan)]),
                              ("inf and NaN", [(1, 0, np.nan),
                                               (3, 500, np.inf)]),
                              ("inf in rank 0", [(0, 0, np.inf)])]:
            for in_place in [False, True]:
                where = " in place" if in_place else ""
                suite.case(f"unscale {name} {what} sets found_inf{where}",
                           unscale_case(suite, dtype, 3.0, in_place,
                                        non_finite=planted))
    suite.case("unscale f64 1e300 is finite (found_inf 0)",
               unscale_case(suite, np.float64, 3.0, False, huge=True))
    suite.case("unscale f32 one entry",
               unscale_case(suite, np.float32, 1000.0, True,
                            shapes=[(4099,)]))
    suite.case("unscale f32 only entries without elements",
               unscale_case(suite, np.float32, 1000.0, False,
                            shapes=[(0,), (3, 0)]))
    suite.case("unscale known values", unscale_exact_case(suite))
    suite.case("unscale repeated calls rewrite found_inf",
               unscale_repeated_case(suite))
    suite.case("unscale: valid calls of the error cases write",
               unscale_control_case(suite))
    for name, spoil, fragment in UNSCALE_ERRORS:
        for in_place in [False, True]:
            where = " in place" if in_place else ""
            suite.case(f"error unscale: {name}{where}",
                       unscale_error_case(suite, in_place, spoil, fragment))
    suite.finish()


if __name__ == "__main__":
    main()
