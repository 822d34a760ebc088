# RUN: %python %s %fluid_runtime_lib
"""Bad calls to the optimizer and math kernels (CpuOptimizerKernels.h)
return a non-OK status with a message naming the entry point and the
problem, never crash, and leave every buffer untouched (outputs, and the
parameter of a would-be in-place update). found_inf, the skip flag, is
NULL except in the cases of a bad found_inf descriptor (of the dtype f64,
i64 or f16, of rank 1 or 2, without data), whose value 0.0 would let the
update write."""

import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
optimizer = importlib.import_module("cpu-optimizer")
errors = importlib.import_module("cpu-errors")

arr, nan, desc = errors.arr, errors.nan, errors.desc
INVALID_ARGUMENT = errors.INVALID_ARGUMENT
UNSUPPORTED = errors.UNSUPPORTED


def lr(value=0.1, dtype=np.float32):
    return np.array(value, dtype=dtype)


def step(value=1, dtype=np.int64):
    return np.array(value, dtype=dtype)


def sgd(param=None, grad=None, rate=None, out=None, weight_decay=0.0,
        found_inf=None):
    return (arr(2, 3) if param is None else param,
            arr(2, 3) if grad is None else grad,
            lr() if rate is None else rate,
            found_inf,
            nan(2, 3) if out is None else out,
            optimizer.SgdParams(weight_decay))


def momentum(velocity=None, new_velocity=None, momentum=0.9, nesterov=0,
             weight_decay=0.0, found_inf=None):
    return (arr(2, 3), arr(2, 3), arr(2, 3) if velocity is None else velocity,
            lr(), found_inf, nan(2, 3),
            nan(2, 3) if new_velocity is None else new_velocity,
            optimizer.MomentumParams(momentum, weight_decay, nesterov))


def adam(v=None, new_m=None, rate=None, count=None, beta1=0.9, beta2=0.999,
         epsilon=1e-8, weight_decay=0.0, decoupled=0, found_inf=None):
    return (arr(2, 3), arr(2, 3), arr(2, 3), arr(2, 3) if v is None else v,
            lr() if rate is None else rate,
            step() if count is None else count,
            found_inf,
            nan(2, 3), nan(2, 3) if new_m is None else new_m, nan(2, 3),
            optimizer.AdamParams(beta1, beta2, epsilon, weight_decay,
                                 decoupled))


def in_place_sgd_with_negative_lr():
    param = arr(2, 3)
    return (param, arr(2, 3), lr(-0.1), None, param,
            optimizer.SgdParams(0.0))


def in_place_adam_with_found_inf(found_inf):
    """An in-place adam update (which a valid flag of 0.0 would let run)
    with a bad found_inf descriptor."""
    param, m, v = arr(2, 3), arr(2, 3), np.abs(arr(2, 3))
    return (param, arr(2, 3), m, v, lr(), step(), found_inf, param, m, v,
            optimizer.AdamParams(0.9, 0.999, 1e-8, 0.0, 0))


def mixed(*values, dtype=np.float32):
    return np.array(values, dtype=dtype)


# (case name, entry point, arguments, expected message part, status)
CASES = [
    # Shapes and dtypes of the parameter, gradient and state.
    ("sgd gradient of another shape", "sgd", sgd(grad=arr(3)),
     "grad shape [3] does not match expected [2,3]", INVALID_ARGUMENT),
    ("sgd gradient of another dtype", "sgd",
     sgd(grad=arr(2, 3, dtype=np.float64)),
     "grad has dtype f64 but param has f32", INVALID_ARGUMENT),
    ("sgd new_param of another shape", "sgd", sgd(out=nan(3, 2)),
     "new_param shape [3,2] does not match expected [2,3]", INVALID_ARGUMENT),
    ("sgd f16 parameter unsupported", "sgd",
     sgd(param=arr(2, 3, dtype=np.float16), grad=arr(2, 3, dtype=np.float16),
         out=nan(2, 3, dtype=np.float16)),
     "param has dtype f16; the cpu kernels support f32 and f64", UNSUPPORTED),
    ("sgd null params", "sgd", sgd()[:5] + (None,), "params is null",
     INVALID_ARGUMENT),
    ("sgd null gradient descriptor", "sgd",
     (arr(2, 3), None, lr(), None, nan(2, 3), optimizer.SgdParams(0.0)),
     "grad descriptor is null", INVALID_ARGUMENT),
    ("sgd null new_param data", "sgd",
     sgd(out=desc(nan(2, 3), null_data=True)), "new_param data is null",
     INVALID_ARGUMENT),
    ("momentum velocity of another shape", "momentum",
     momentum(velocity=arr(2, 2)),
     "velocity shape [2,2] does not match expected [2,3]", INVALID_ARGUMENT),
    ("momentum new_velocity of another dtype", "momentum",
     momentum(new_velocity=nan(2, 3, dtype=np.float64)),
     "new_velocity has dtype f64 but param has f32", INVALID_ARGUMENT),
    ("adam v of another shape", "adam", adam(v=arr(6)),
     "v shape [6] does not match expected [2,3]", INVALID_ARGUMENT),
    ("adam new_m of another dtype", "adam",
     adam(new_m=nan(2, 3, dtype=np.float64)),
     "new_m has dtype f64 but param has f32", INVALID_ARGUMENT),
    # The learning rate.
    ("sgd lr of rank 1", "sgd", sgd(rate=arr(1)),
     "lr must have rank 0, got shape [1]", INVALID_ARGUMENT),
    ("adam lr of rank 2", "adam", adam(rate=arr(1, 1)),
     "lr must have rank 0, got shape [1,1]", INVALID_ARGUMENT),
    ("sgd i64 lr", "sgd", sgd(rate=lr(1, dtype=np.int64)),
     "lr has dtype i64; expected f32 or f64", INVALID_ARGUMENT),
    ("sgd negative lr", "sgd", sgd(rate=lr(-0.5)),
     "lr is -0.5; it must be >= 0", INVALID_ARGUMENT),
    ("sgd NaN lr", "sgd", sgd(rate=lr(np.nan, dtype=np.float64)),
     "lr is nan; it must be >= 0", INVALID_ARGUMENT),
    ("sgd in place with a negative lr", "sgd",
     in_place_sgd_with_negative_lr(), "lr is -0.1", INVALID_ARGUMENT),
    # The step counter.
    ("adam i32 step", "adam", adam(count=step(1, dtype=np.int32)),
     "step has dtype i32; expected i64", INVALID_ARGUMENT),
    ("adam f32 step", "adam", adam(count=lr(1.0)),
     "step has dtype f32; expected i64", INVALID_ARGUMENT),
    ("adam step 0", "adam", adam(count=step(0)),
     "step is 0; it must be >= 1 (the 1-based number of this update)",
     INVALID_ARGUMENT),
    ("adam negative step", "adam", adam(count=step(-3)), "step is -3",
     INVALID_ARGUMENT),
    ("adam step of rank 1", "adam", adam(count=np.ones(1, dtype=np.int64)),
     "step must have rank 0, got shape [1]", INVALID_ARGUMENT),
    # The skip flag found_inf (NULL, or a rank-0 f32 tensor). Its value is
    # 0.0, which would let the update run and write the outputs.
    ("sgd f64 found_inf", "sgd", sgd(found_inf=lr(0.0, dtype=np.float64)),
     "found_inf has dtype f64; expected f32", INVALID_ARGUMENT),
    ("sgd found_inf of rank 1", "sgd",
     sgd(found_inf=np.zeros(1, dtype=np.float32)),
     "found_inf must have rank 0, got shape [1]", INVALID_ARGUMENT),
    ("momentum i64 found_inf", "momentum",
     momentum(found_inf=step(0)),
     "found_inf has dtype i64; expected f32", INVALID_ARGUMENT),
    ("momentum found_inf of rank 2", "momentum",
     momentum(found_inf=np.zeros((1, 1), dtype=np.float32)),
     "found_inf must have rank 0, got shape [1,1]", INVALID_ARGUMENT),
    ("adam f64 found_inf", "adam", adam(found_inf=lr(0.0, dtype=np.float64)),
     "found_inf has dtype f64; expected f32", INVALID_ARGUMENT),
    ("adam f16 found_inf", "adam",
     adam(found_inf=lr(0.0, dtype=np.float16)),
     "found_inf has dtype f16; expected f32", INVALID_ARGUMENT),
    ("adam null found_inf data", "adam",
     adam(found_inf=desc(lr(0.0), null_data=True)),
     "found_inf data is null", INVALID_ARGUMENT),
    ("adam in place with an f64 found_inf", "adam",
     in_place_adam_with_found_inf(lr(0.0, dtype=np.float64)),
     "found_inf has dtype f64; expected f32", INVALID_ARGUMENT),
    ("adam in place with a found_inf of rank 1", "adam",
     in_place_adam_with_found_inf(np.zeros(1, dtype=np.float32)),
     "found_inf must have rank 0, got shape [1]", INVALID_ARGUMENT),
    # Hyper-parameters.
    ("sgd negative weight_decay", "sgd", sgd(weight_decay=-0.01),
     "weight_decay must be >= 0, got -0.01", INVALID_ARGUMENT),
    ("momentum negative momentum", "momentum", momentum(momentum=-0.9),
     "momentum must be >= 0, got -0.9", INVALID_ARGUMENT),
    ("momentum nesterov without momentum", "momentum",
     momentum(momentum=0.0, nesterov=1), "nesterov needs a momentum > 0",
     INVALID_ARGUMENT),
    ("momentum nesterov flag 2", "momentum", momentum(nesterov=2),
     "nesterov must be 0 or 1, got 2", INVALID_ARGUMENT),
    ("momentum NaN weight_decay", "momentum",
     momentum(weight_decay=float("nan")),
     "weight_decay must be >= 0, got nan", INVALID_ARGUMENT),
    ("adam beta1 of 1", "adam", adam(beta1=1.0),
     "beta1 must be in [0, 1), got 1", INVALID_ARGUMENT),
    ("adam negative beta2", "adam", adam(beta2=-0.1),
     "beta2 must be in [0, 1), got -0.1", INVALID_ARGUMENT),
    ("adam negative epsilon", "adam", adam(epsilon=-1e-8),
     "epsilon must be >= 0, got -1e-08", INVALID_ARGUMENT),
    ("adam negative weight_decay", "adam", adam(weight_decay=-1.0),
     "weight_decay must be >= 0, got -1", INVALID_ARGUMENT),
    ("adam decoupled flag -1", "adam", adam(decoupled=-1),
     "decoupled must be 0 or 1, got -1", INVALID_ARGUMENT),
    # Math.
    ("pow shapes that do not broadcast", "pow",
     (arr(2, 3), arr(4), nan(2, 3)),
     "lhs shape [2,3] and rhs shape [4] do not broadcast (3 vs 4 in "
     "dimension 1 of the result)", INVALID_ARGUMENT),
    ("greater_equal output shape is not the broadcast shape",
     "greater_equal", (arr(2, 1), arr(3), nan(2, 1)),
     "output shape [2,1] does not match expected [2,3]", INVALID_ARGUMENT),
    ("minimum mismatched dtypes", "minimum",
     (arr(2), arr(2, dtype=np.float64), nan(2)),
     "rhs has dtype f64 but lhs has f32", INVALID_ARGUMENT),
    ("exp wrong output shape", "exp", (arr(2, 3), nan(6)),
     "output shape [6] does not match expected [2,3]", INVALID_ARGUMENT),
    ("floor i32 unsupported", "floor",
     (arr(2, dtype=np.int32), arr(2, dtype=np.int32)),
     "input has dtype i32; the cpu kernels support f32 and f64", UNSUPPORTED),
    ("select shapes that do not broadcast", "select",
     (arr(2, 3), arr(4), arr(), nan(2, 3)),
     "condition shape [2,3], on_true shape [4] and on_false shape [] do not "
     "broadcast (3 vs 4 in dimension 1 of the result)", INVALID_ARGUMENT),
    ("select on_false against the broadcast of the others", "select",
     (arr(2, 1), arr(1, 3), arr(2, 2), nan(2, 3)),
     "do not broadcast (3 vs 2 in dimension 1 of the result)",
     INVALID_ARGUMENT),
    ("select condition of another dtype", "select",
     (arr(3, dtype=np.float64), arr(3), arr(3), nan(3)),
     "on_true has dtype f32 but condition has f64", INVALID_ARGUMENT),
    ("select null on_false descriptor", "select",
     (arr(3), arr(3), None, nan(3)), "on_false descriptor is null",
     INVALID_ARGUMENT),
    ("cast NaN to i32", "cast",
     (mixed(1.0, np.nan, 3.0), np.full(3, 7, dtype=np.int32)),
     "input element 1 is NaN, which has no i32 value", INVALID_ARGUMENT),
    ("cast infinity to i64", "cast",
     (mixed(1.0, 2.0, -np.inf), np.full(3, 7, dtype=np.int64)),
     "input element 2 (-inf) is outside the range of i64", INVALID_ARGUMENT),
    ("cast f64 just above the i32 range", "cast",
     (mixed(2147483648.0, 0.0, dtype=np.float64),
      np.full(2, 7, dtype=np.int32)),
     "input element 0 (2147483648) is outside the range of i32",
     INVALID_ARGUMENT),
    ("cast f64 just below the i32 range", "cast",
     (mixed(0.0, -2147483649.0, dtype=np.float64),
      np.full(2, 7, dtype=np.int32)),
     "input element 1 (-2147483649) is outside the range of i32",
     INVALID_ARGUMENT),
    ("cast f32 2^63 to i64", "cast",
     (mixed(0.0, 2.0**63), np.full(2, 7, dtype=np.int64)),
     "input element 1 (9.22337204e+18) is outside the range of i64",
     INVALID_ARGUMENT),
    ("cast i64 outside the i32 range", "cast",
     (mixed(5, 2**32, dtype=np.int64), np.full(2, 7, dtype=np.int32)),
     "input element 1 (4294967296) is outside the range of i32",
     INVALID_ARGUMENT),
    ("cast wrong output shape", "cast",
     (arr(2, 3), np.full((3, 2), 7, dtype=np.int32)),
     "output shape [3,2] does not match expected [2,3]", INVALID_ARGUMENT),
    ("cast from u8 unsupported", "cast",
     (np.ones(2, dtype=np.uint8), nan(2)),
     "input has dtype u8; cast supports f16, bf16, f32, f64, i32 and i64",
     UNSUPPORTED),
    ("cast to u8 unsupported", "cast",
     (arr(2), np.zeros(2, dtype=np.uint8)),
     "output has dtype u8; cast supports f16, bf16, f32, f64, i32 and i64",
     UNSUPPORTED),
    ("cast f16 wrong output shape", "cast",
     (np.ones(4, dtype=np.float16), nan(3)),
     "output shape [3] does not match expected [4]", INVALID_ARGUMENT),
]


def error_case(suite, entry_point, args, message, status):
    def body():
        arrays = [arg for arg in args if isinstance(arg, np.ndarray)]
        before = [array.copy() for array in arrays]
        got_status, got_message = suite.kernels.status(
            f"fluid_cpu_{entry_point}", *args)
        assert got_status == status, (
            f"status {got_status} (expected {status}), message "
            f"{got_message!r}")
        assert message in got_message, (
            f"message {got_message!r} does not contain {message!r}")
        assert got_message.startswith(f"fluid_cpu_{entry_point}: "), (
            f"message {got_message!r} does not name the entry point")
        for array, copy in zip(arrays, before):
            assert np.array_equal(array, copy, equal_nan=True), (
                "a buffer was written")
    return body


def main():
    suite = optimizer.make_suite(sys.argv)
    for name, entry_point, args, message, status in CASES:
        suite.case(f"error {name}",
                   error_case(suite, entry_point, args, message, status))
    suite.finish()


if __name__ == "__main__":
    main()
