# RUN: %python %s %fluid_runtime_lib
"""The optimizer update kernels (CpuOptimizerKernels.h) against torch.optim:
five updates from the same parameters with the same gradients and learning
rates, the parameters and the optimizer state compared after every update.
Then the skip flag of dynamic loss scaling (found_inf, NULL above): 0.0
and -0.0 give the bits of NULL exactly; a nonzero flag (1.0, NaN, inf, a
subnormal) leaves every output bitwise equal to its input, in place and
into distinct (prefilled) outputs, with finite and non-finite gradients.

This file also holds the ctypes declarations of CpuOptimizerKernels.h,
shared with cpu-math.py and cpu-optimizer-errors.py, which load it with
importlib.import_module("cpu-optimizer"); run on its own, it checks them
against the header and the library as cpu-api.py does for CpuKernels.h.
"""

import ctypes
import importlib
import os
import re
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

HEADER = os.path.join(api.HERE, "..", "..", "runtime", "include", "fluid",
                      "runtime", "CpuOptimizerKernels.h")


class SgdParams(api.Params):
    _fields_ = [("weight_decay", api.F64)]


class MomentumParams(api.Params):
    _fields_ = [("momentum", api.F64), ("weight_decay", api.F64),
                ("nesterov", api.I32)]


class AdamParams(api.Params):
    _fields_ = [("beta1", api.F64), ("beta2", api.F64), ("epsilon", api.F64),
                ("weight_decay", api.F64), ("decoupled", api.I32)]


TENSOR = api.TENSOR
SIGNATURES = {
    # The tensors, found_inf (NULL: no skip flag) among them.
    "fluid_cpu_sgd": [TENSOR] * 5 + [ctypes.POINTER(SgdParams)],
    "fluid_cpu_momentum": [TENSOR] * 7 + [ctypes.POINTER(MomentumParams)],
    "fluid_cpu_adam": [TENSOR] * 10 + [ctypes.POINTER(AdamParams)],
    # Grouped updates: the count, then arrays of descriptors (and lr, step,
    # found_inf).
    "fluid_cpu_sgd_group": [api.I64] + [TENSOR] * 5 +
                           [ctypes.POINTER(SgdParams)],
    "fluid_cpu_momentum_group": [api.I64] + [TENSOR] * 7 +
                                [ctypes.POINTER(MomentumParams)],
    "fluid_cpu_adam_group": [api.I64] + [TENSOR] * 10 +
                            [ctypes.POINTER(AdamParams)],
    # count, grads, scale, new_grads, found_inf.
    "fluid_cpu_unscale_grads": [api.I64] + [TENSOR] * 4,
    "fluid_cpu_select": [TENSOR] * 4,
    "fluid_cpu_cast": api.UNARY,
}
for _name in ["neg", "exp", "log", "cos", "sqrt", "floor", "erf"]:
    SIGNATURES[f"fluid_cpu_{_name}"] = api.UNARY
for _name in ["pow", "minimum", "maximum", "greater_equal"]:
    SIGNATURES[f"fluid_cpu_{_name}"] = api.BINARY


def make_suite(argv):
    """An api.Suite whose kernels also know CpuOptimizerKernels.h."""
    suite = api.Suite(argv)
    for name, argtypes in SIGNATURES.items():
        fn = getattr(suite.kernels.lib, name)
        fn.argtypes = argtypes
        fn.restype = ctypes.c_int
    return suite


# PyTorch fp32 against the kernel in fp32, fp64 against fp64: (rtol, atol).
# atol only covers elements that cancel to (nearly) zero.
TOLERANCE = {torch.float32: (1e-6, 1e-7), torch.float64: (1e-12, 1e-13)}

STEPS = 5
SHAPE = (3, 4, 5)

# name -> (rule, torch.optim class, its keyword arguments)
CONFIGS = {
    "sgd": ("sgd", torch.optim.SGD, {}),
    "sgd weight_decay": ("sgd", torch.optim.SGD, {"weight_decay": 0.01}),
    "momentum": ("momentum", torch.optim.SGD, {"momentum": 0.9}),
    "momentum nesterov": ("momentum", torch.optim.SGD,
                          {"momentum": 0.9, "nesterov": True}),
    "momentum weight_decay": ("momentum", torch.optim.SGD,
                              {"momentum": 0.9, "weight_decay": 0.01}),
    "momentum nesterov weight_decay": (
        "momentum", torch.optim.SGD,
        {"momentum": 0.8, "nesterov": True, "weight_decay": 0.01}),
    "adam": ("adam", torch.optim.Adam, {}),
    "adam weight_decay": ("adam", torch.optim.Adam, {"weight_decay": 0.01}),
    "adam betas eps": ("adam", torch.optim.Adam,
                       {"betas": (0.8, 0.95), "eps": 1e-6}),
    "adam betas eps weight_decay": (
        "adam", torch.optim.Adam,
        {"betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.01}),
    "adamw": ("adamw", torch.optim.AdamW, {"weight_decay": 0}),
    "adamw weight_decay": ("adamw", torch.optim.AdamW,
                           {"weight_decay": 0.01}),
    "adamw betas eps": ("adamw", torch.optim.AdamW,
                        {"betas": (0.8, 0.95), "eps": 1e-6,
                         "weight_decay": 0}),
    "adamw betas eps weight_decay": (
        "adamw", torch.optim.AdamW,
        {"betas": (0.8, 0.95), "eps": 1e-6, "weight_decay": 0.01}),
}

# The learning rate of each step, fixed or as a schedule would vary it.
FIXED_LR = {"sgd": [0.1] * STEPS, "momentum": [0.1] * STEPS,
            "adam": [0.05] * STEPS, "adamw": [0.05] * STEPS}
VARYING_LR = [0.1, 0.05, 0.02, 0.2, 0.0]

# The optimizer state each rule keeps, by its torch.optim state name.
STATE = {"sgd": [], "momentum": ["momentum_buffer"],
         "adam": ["exp_avg", "exp_avg_sq"], "adamw": ["exp_avg", "exp_avg_sq"]}


def expect_close(got, want, what):
    rtol, atol = TOLERANCE[want.dtype]
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=rtol,
                               atol=atol, err_msg=what)


def torch_updates(optimizer_class, kwargs, param, grads, lrs, state_names):
    """The parameter and state after each of torch.optim's updates."""
    p = torch.nn.Parameter(param.clone())
    optimizer = optimizer_class([p], lr=lrs[0], foreach=False, **kwargs)
    history = []
    for grad, lr in zip(grads, lrs):
        optimizer.param_groups[0]["lr"] = lr
        p.grad = grad.clone()
        optimizer.step()
        state = optimizer.state[p]
        history.append([p.detach().clone()] +
                       [state[name].clone() for name in state_names])
    return history


def fluid_update(suite, rule, kwargs, values, grad, lr, step, outputs,
                 found_inf=None):
    """One update by the kernel of `rule`, from values = [param, *state] into
    outputs (which may be the same tensors); found_inf is the skip flag
    (None: NULL, no flag)."""
    if rule == "sgd":
        suite.kernels("fluid_cpu_sgd", values[0], grad, lr, found_inf,
                      outputs[0], SgdParams(kwargs.get("weight_decay", 0.0)))
    elif rule == "momentum":
        suite.kernels("fluid_cpu_momentum", values[0], grad, values[1], lr,
                      found_inf, outputs[0], outputs[1],
                      MomentumParams(kwargs["momentum"],
                                     kwargs.get("weight_decay", 0.0),
                                     int(kwargs.get("nesterov", False))))
    else:
        beta1, beta2 = kwargs.get("betas", (0.9, 0.999))
        step_tensor = torch.tensor(step, dtype=torch.int64)
        suite.kernels("fluid_cpu_adam", values[0], grad, values[1], values[2],
                      lr, step_tensor, found_inf, outputs[0], outputs[1],
                      outputs[2],
                      AdamParams(beta1, beta2, kwargs.get("eps", 1e-8),
                                 kwargs.get("weight_decay", 0.0),
                                 int(rule == "adamw")))


def update_case(suite, config, dtype, lrs=None, lr_dtype=None, in_place=False,
                shape=SHAPE):
    """Five updates by the kernel against torch.optim. lr_dtype is the
    learning-rate tensor's dtype (the parameter's by default); with
    in_place, every output is the buffer of its input."""
    rule, optimizer_class, kwargs = CONFIGS[config]

    def body():
        lr_type = lr_dtype or dtype
        # PyTorch gets exactly the learning rate the kernel reads.
        rates = [torch.tensor(lr, dtype=lr_type)
                 for lr in (lrs or FIXED_LR[rule])]
        param = suite.randn(*shape, dtype=dtype)
        grads = [suite.randn(*shape, dtype=dtype) for _ in range(STEPS)]
        state_names = STATE[rule]
        want = torch_updates(optimizer_class, kwargs, param, grads,
                             [rate.item() for rate in rates], state_names)

        values = [param.clone()] + [torch.zeros(shape, dtype=dtype)
                                    for _ in state_names]
        for step, (grad, rate) in enumerate(zip(grads, rates), start=1):
            if in_place:
                outputs = values
            else:
                outputs = [api.empty(shape, dtype) for _ in values]
            fluid_update(suite, rule, kwargs, values, grad, rate, step,
                         outputs)
            for got, expected, name in zip(outputs, want[step - 1],
                                           ["param"] + state_names):
                expect_close(got, expected, f"{name} after step {step}")
            values = outputs
    return body


#===-----------------------------------------------------------------------===#
# The skip flag (found_inf) of dynamic loss scaling
#===-----------------------------------------------------------------------===#

# found_inf values that let the update run (as NULL does): zeros of either
# sign; and values that skip it: anything nonzero, NaN included (also the
# smallest f32 subnormal, which is not zero either).
RUNNING_FLAGS = [("0.0", 0.0), ("-0.0", -0.0)]
SKIPPING_FLAGS = [("1.0", 1.0), ("NaN", float("nan")), ("inf", float("inf")),
                  ("-2", -2.0), ("subnormal 1e-45", 1e-45)]
# What distinct output buffers hold before a call, so that an output the
# skipped update failed to write shows.
GARBAGE = 12345.0


def bits(t):
    return t.numpy().tobytes()


def flag(value):
    """A rank-0 f32 found_inf tensor."""
    return torch.tensor(value, dtype=torch.float32)


def skip_case(suite, config, dtype, in_place):
    """found_inf 0.0 (or -0.0) gives exactly the bits of found_inf NULL;
    a nonzero found_inf leaves every output its input's bits (the
    parameter and the state kept), also where the gradient holds inf and
    NaN, the case found_inf exists for; the inputs and the flag are not
    written. With distinct outputs, they start as GARBAGE."""
    rule, _, kwargs = CONFIGS[config]

    def body():
        shape = (4, 7)
        param = suite.randn(*shape, dtype=dtype)
        param[0, 0] = -0.0  # the sign bit must survive a skipped update
        # Adam's v is a running mean of squares: >= 0.
        state = [suite.randn(*shape, dtype=dtype).abs() for _ in STATE[rule]]
        grad = suite.randn(*shape, dtype=dtype)
        bad_grad = grad.clone()
        bad_grad[1, 2], bad_grad[3, 6] = float("inf"), float("nan")
        lr = torch.tensor(0.1, dtype=dtype)
        originals = [param] + state

        def run(found_inf, gradient):
            values = [t.clone() for t in originals]
            if in_place:
                outputs = values
            else:
                outputs = [torch.full(shape, GARBAGE, dtype=dtype)
                           for _ in values]
            fluid_update(suite, rule, kwargs, values, gradient.clone(), lr, 3,
                         outputs, found_inf)
            if not in_place:
                for got, want in zip(values, originals):
                    assert bits(got) == bits(want), "an input was written"
            return outputs

        names = ["param"] + STATE[rule]
        plain = run(None, grad)
        for name, got, before in zip(names, plain, originals):
            assert bits(got) != bits(before), (
                f"the update with found_inf NULL left {name} as it was")
        for flag_name, value in RUNNING_FLAGS:
            found_inf = flag(value)
            got = run(found_inf, grad)
            for name, a, b in zip(names, got, plain):
                assert bits(a) == bits(b), (
                    f"found_inf {flag_name}: {name} differs from the update "
                    f"with found_inf NULL")
            assert bits(found_inf) == bits(flag(value)), "found_inf written"
        for flag_name, value in SKIPPING_FLAGS:
            for gradient, what in [(grad, "finite"), (bad_grad, "non-finite")]:
                found_inf = flag(value)
                got = run(found_inf, gradient)
                for name, a, b in zip(names, got, originals):
                    assert bits(a) == bits(b), (
                        f"found_inf {flag_name}, {what} gradient: {name} is "
                        f"not its input's value: {a} vs {b}")
                assert bits(found_inf) == bits(flag(value)), (
                    "found_inf written")
        return None
    return body


def main():
    suite = make_suite(sys.argv)
    with open(HEADER) as header:
        declared = set(re.findall(r"\b(fluid_cpu_\w+)\s*\(", header.read()))

    def header_matches_declarations():
        missing = sorted(declared - set(SIGNATURES))
        extra = sorted(set(SIGNATURES) - declared)
        assert not missing and not extra, (
            f"not declared here: {missing}; not in the header: {extra}")

    def library_exports_entry_points():
        for name in sorted(declared):
            assert hasattr(suite.kernels.lib, name), f"{name} not exported"

    suite.case("api header matches ctypes declarations",
               header_matches_declarations)
    suite.case("api library exports every entry point",
               library_exports_entry_points)

    for dtype, dtype_name in api.FLOAT_DTYPES:
        for config in CONFIGS:
            suite.case(f"{config} {dtype_name}",
                       update_case(suite, config, dtype))
        for config in ["sgd weight_decay", "momentum nesterov weight_decay",
                       "adam betas eps weight_decay",
                       "adamw betas eps weight_decay"]:
            suite.case(f"{config} {dtype_name} in place",
                       update_case(suite, config, dtype, in_place=True))
            suite.case(f"{config} {dtype_name} learning rate varying by step",
                       update_case(suite, config, dtype, lrs=VARYING_LR))
    for config in ["sgd weight_decay", "momentum weight_decay",
                   "adamw weight_decay"]:
        suite.case(f"{config} f32 with an f64 learning rate",
                   update_case(suite, config, torch.float32,
                               lr_dtype=torch.float64))
        suite.case(f"{config} f64 with an f32 learning rate",
                   update_case(suite, config, torch.float64,
                               lr_dtype=torch.float32))
    suite.case("momentum f32 rank-0 parameter in place",
               update_case(suite, "momentum nesterov", torch.float32,
                           in_place=True, shape=()))
    suite.case("adam f64 parameter without elements",
               update_case(suite, "adam", torch.float64, shape=(0, 3)))
    for dtype, dtype_name in api.FLOAT_DTYPES:
        for config in ["sgd weight_decay", "momentum nesterov weight_decay",
                       "adam weight_decay", "adamw weight_decay"]:
            for in_place in [False, True]:
                where = " in place" if in_place else ""
                suite.case(f"{config} {dtype_name} found_inf{where}",
                           skip_case(suite, config, dtype, in_place))
    suite.finish()


if __name__ == "__main__":
    main()
