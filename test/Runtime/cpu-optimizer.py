# RUN: %python %s %fluid_runtime_lib
"""The optimizer update kernels (CpuOptimizerKernels.h) against torch.optim:
five updates from the same parameters with the same gradients and learning
rates, the parameters and the optimizer state compared after every update.

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
    "fluid_cpu_sgd": [TENSOR] * 4 + [ctypes.POINTER(SgdParams)],
    "fluid_cpu_momentum": [TENSOR] * 6 + [ctypes.POINTER(MomentumParams)],
    "fluid_cpu_adam": [TENSOR] * 9 + [ctypes.POINTER(AdamParams)],
    # Grouped updates: the count, then arrays of descriptors (and lr, step).
    "fluid_cpu_sgd_group": [api.I64] + [TENSOR] * 4 +
                           [ctypes.POINTER(SgdParams)],
    "fluid_cpu_momentum_group": [api.I64] + [TENSOR] * 6 +
                                [ctypes.POINTER(MomentumParams)],
    "fluid_cpu_adam_group": [api.I64] + [TENSOR] * 9 +
                            [ctypes.POINTER(AdamParams)],
    "fluid_cpu_select": [TENSOR] * 4,
    "fluid_cpu_cast": api.UNARY,
}
for _name in ["neg", "exp", "log", "cos", "sqrt", "floor"]:
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


def fluid_update(suite, rule, kwargs, values, grad, lr, step, outputs):
    """One update by the kernel of `rule`, from values = [param, *state] into
    outputs (which may be the same tensors)."""
    if rule == "sgd":
        suite.kernels("fluid_cpu_sgd", values[0], grad, lr, outputs[0],
                      SgdParams(kwargs.get("weight_decay", 0.0)))
    elif rule == "momentum":
        suite.kernels("fluid_cpu_momentum", values[0], grad, values[1], lr,
                      outputs[0], outputs[1],
                      MomentumParams(kwargs["momentum"],
                                     kwargs.get("weight_decay", 0.0),
                                     int(kwargs.get("nesterov", False))))
    else:
        beta1, beta2 = kwargs.get("betas", (0.9, 0.999))
        step_tensor = torch.tensor(step, dtype=torch.int64)
        suite.kernels("fluid_cpu_adam", values[0], grad, values[1], values[2],
                      lr, step_tensor, outputs[0], outputs[1], outputs[2],
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
    suite.finish()


if __name__ == "__main__":
    main()
