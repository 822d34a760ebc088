//===- CpuOptimizerKernels.h - Optimizer updates and math on the cpu ------===//
//
// The parameter updates of torch.optim (SGD, SGD with momentum, Adam, AdamW)
// and the elementwise math that learning-rate schedules are computed with,
// on the cpu reference backend. The conventions are those of CpuKernels.h:
// the caller allocates every output, each kernel checks every descriptor and
// returns a non-OK status with a message naming the entry point and the
// problem (see fluid_last_error()), and writes its outputs only when every
// check has passed. Floating-point tensors are FLUID_F32 or FLUID_F64.
//
// The updates are functional, as the fluid dialect's update ops: they write
// the new parameter (and optimizer state) to outputs, which may be the same
// buffers as the inputs, so that a compiled program updates in place. They
// follow the single-tensor code path of torch.optim (PyTorch 1.13 and 2.x)
// operation by operation: scalar hyper-parameter arithmetic is done in
// double, as Python does, each tensor operation is rounded to the
// parameter's dtype, and multiply-adds are fused where PyTorch's vectorized
// cpu kernels fuse them, so results equal PyTorch's bit for bit on cpus
// with AVX2 and differ by an ulp of an operation elsewhere.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPUOPTIMIZERKERNELS_H
#define FLUID_RUNTIME_CPUOPTIMIZERKERNELS_H

#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Parameters (shared by every backend)
//===----------------------------------------------------------------------===//

/// Attributes of sgd.
typedef struct fluid_sgd_params {
  double weight_decay; /* >= 0, L2 penalty added to the gradient */
} fluid_sgd_params;

/// Attributes of momentum (torch.optim.SGD with momentum, dampening 0).
typedef struct fluid_momentum_params {
  double momentum;     /* >= 0; > 0 with nesterov */
  double weight_decay; /* >= 0, L2 penalty added to the gradient */
  int32_t nesterov;    /* 0 or 1 */
} fluid_momentum_params;

/// Attributes of adam (torch.optim.Adam, or torch.optim.AdamW with
/// decoupled).
typedef struct fluid_adam_params {
  double beta1;        /* in [0, 1) */
  double beta2;        /* in [0, 1) */
  double epsilon;      /* >= 0 */
  double weight_decay; /* >= 0 */
  int32_t decoupled;   /* 0: L2 penalty (Adam); 1: decoupled decay (AdamW) */
} fluid_adam_params;

//===----------------------------------------------------------------------===//
// Optimizer updates
//
// param, grad, the optimizer state and every output have one shape and one
// float dtype. lr is a rank-0 FLUID_F32 or FLUID_F64 tensor (of either dtype,
// whatever the parameter's) holding a learning rate >= 0. Each output may be
// the same buffer as any input (element i of every output is written after
// element i of every input was read); outputs must not otherwise overlap
// inputs or each other.
//
// found_inf is NULL or a rank-0 FLUID_F32 tensor, the flag of
// fluid_cpu_unscale_grads under dynamic loss scaling: where it holds a
// nonzero value (NaN counts as nonzero), the update is skipped: every output
// gets its input's value (new_param the param, the new state the state),
// as when torch.cuda.amp.GradScaler skips optimizer.step().
//===----------------------------------------------------------------------===//

/// g = grad + weight_decay * param; new_param = param - lr * g.
fluid_status fluid_cpu_sgd(const fluid_tensor *param, const fluid_tensor *grad,
                           const fluid_tensor *lr,
                           const fluid_tensor *found_inf,
                           fluid_tensor *new_param,
                           const fluid_sgd_params *params);

/// g = grad + weight_decay * param;
/// new_velocity = momentum * velocity + g;
/// new_param = param - lr * (nesterov ? g + momentum * new_velocity
///                                    : new_velocity).
/// A zero velocity on the first step gives PyTorch's first update, which
/// starts the buffer at g.
fluid_status
fluid_cpu_momentum(const fluid_tensor *param, const fluid_tensor *grad,
                   const fluid_tensor *velocity, const fluid_tensor *lr,
                   const fluid_tensor *found_inf, fluid_tensor *new_param,
                   fluid_tensor *new_velocity,
                   const fluid_momentum_params *params);

/// step is a rank-0 FLUID_I64 tensor holding t >= 1, the 1-based number of
/// this update; m and v start at zero.
/// Adam: g = grad + weight_decay * param. AdamW (decoupled): param is first
/// scaled by 1 - lr * weight_decay, and g = grad. Then
/// new_m = beta1 * m + (1 - beta1) * g;
/// new_v = beta2 * v + (1 - beta2) * g * g;
/// denom = sqrt(new_v) / sqrt(1 - beta2^t) + epsilon;
/// new_param = param - (lr / (1 - beta1^t)) * new_m / denom.
fluid_status fluid_cpu_adam(const fluid_tensor *param, const fluid_tensor *grad,
                            const fluid_tensor *m, const fluid_tensor *v,
                            const fluid_tensor *lr, const fluid_tensor *step,
                            const fluid_tensor *found_inf,
                            fluid_tensor *new_param, fluid_tensor *new_m,
                            fluid_tensor *new_v,
                            const fluid_adam_params *params);

//===----------------------------------------------------------------------===//
// Grouped optimizer updates
//
// One call updates `count` >= 1 parameters with one learning rate (and step)
// and one parameter struct `p`: each array holds `count` descriptors, and
// entry k is exactly the single update above on params[k], grads[k] and the
// state's [k], writing new_params[k] and the new state's [k], bit for bit
// (the same per-element code runs). Within an entry the single update's
// shape, dtype and in-place rules hold (each output may be the buffer of
// its own entry's input); every entry has the float dtype of params[0].
// Every descriptor of every entry, lr, step and p are checked before
// anything is written; a message names the entry, e.g.
// "fluid_cpu_momentum_group: entry 3: grads[3] shape [4,5] does not match
// expected [4,6]". A null array is an error.
//===----------------------------------------------------------------------===//

fluid_status fluid_cpu_sgd_group(int64_t count, const fluid_tensor *params,
                                 const fluid_tensor *grads,
                                 const fluid_tensor *lr,
                                 const fluid_tensor *found_inf,
                                 fluid_tensor *new_params,
                                 const fluid_sgd_params *p);

fluid_status fluid_cpu_momentum_group(
    int64_t count, const fluid_tensor *params, const fluid_tensor *grads,
    const fluid_tensor *velocities, const fluid_tensor *lr,
    const fluid_tensor *found_inf, fluid_tensor *new_params,
    fluid_tensor *new_velocities, const fluid_momentum_params *p);

/// exp_avgs and exp_avg_sqs are fluid_cpu_adam's m and v.
fluid_status
fluid_cpu_adam_group(int64_t count, const fluid_tensor *params,
                     const fluid_tensor *grads, const fluid_tensor *exp_avgs,
                     const fluid_tensor *exp_avg_sqs, const fluid_tensor *lr,
                     const fluid_tensor *step, const fluid_tensor *found_inf,
                     fluid_tensor *new_params, fluid_tensor *new_exp_avgs,
                     fluid_tensor *new_exp_avg_sqs, const fluid_adam_params *p);

//===----------------------------------------------------------------------===//
// Dynamic loss scaling
//===----------------------------------------------------------------------===//

/// The gradients of a loss multiplied by `scale` (a rank-0 FLUID_F32 tensor)
/// divided by it again, as torch.amp's
/// _amp_foreach_non_finite_check_and_unscale_ computes it: inv = the f32
/// nearest 1 / scale (computed in double), and new_grads[k][i] =
/// grads[k][i] * inv rounded to the gradient's dtype; found_inf (a rank-0
/// FLUID_F32 tensor) is set to 1.0 if any element of any gradient is
/// infinite or NaN, else 0.0. Every entry has one float dtype (FLUID_F32 or
/// FLUID_F64) and new_grads[k] grads[k]'s shape; new_grads[k] may be
/// grads[k]'s buffer. Checked as the grouped updates are (count >= 1, no
/// null array, messages naming the entry) before anything is written.
fluid_status fluid_cpu_unscale_grads(int64_t count, const fluid_tensor *grads,
                                     const fluid_tensor *scale,
                                     fluid_tensor *new_grads,
                                     fluid_tensor *found_inf);

//===----------------------------------------------------------------------===//
// Elementwise math
//
// Float operands and the output have one dtype. Binary ops and select
// broadcast as fluid_cpu_add does: shapes aligned from the right, each
// dimension equal or 1 (a rank-0 operand broadcasts everywhere); the output
// has the broadcast shape. NaN propagates as in PyTorch. In place (the rule
// of CpuKernels.h's elementwise section): output over any operand of the
// output's shape (input; lhs, rhs; condition, on_true, on_false), or over
// several of them at once.
//===----------------------------------------------------------------------===//

fluid_status fluid_cpu_neg(const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cpu_exp(const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cpu_log(const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cpu_cos(const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cpu_sqrt(const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cpu_floor(const fluid_tensor *input, fluid_tensor *output);
/// The Gauss error function (GELU is x * (1 + erf(x / sqrt(2))) / 2).
fluid_status fluid_cpu_erf(const fluid_tensor *input, fluid_tensor *output);

/// lhs raised to the power rhs.
fluid_status fluid_cpu_pow(const fluid_tensor *lhs, const fluid_tensor *rhs,
                           fluid_tensor *output);
/// The smaller and the larger of lhs and rhs (NaN if either is NaN).
fluid_status fluid_cpu_minimum(const fluid_tensor *lhs, const fluid_tensor *rhs,
                               fluid_tensor *output);
fluid_status fluid_cpu_maximum(const fluid_tensor *lhs, const fluid_tensor *rhs,
                               fluid_tensor *output);
/// 1.0 where lhs >= rhs, else 0.0 (also where either is NaN).
fluid_status fluid_cpu_greater_equal(const fluid_tensor *lhs,
                                     const fluid_tensor *rhs,
                                     fluid_tensor *output);

/// on_true where condition is nonzero (NaN counts as nonzero), else
/// on_false; all three broadcast together.
fluid_status fluid_cpu_select(const fluid_tensor *condition,
                              const fluid_tensor *on_true,
                              const fluid_tensor *on_false,
                              fluid_tensor *output);

/// Converts each element of input to output's dtype, between FLUID_F16,
/// FLUID_BF16, FLUID_F32, FLUID_F64, FLUID_I32 and FLUID_I64; output has
/// input's shape. Float to integer truncates toward zero; a NaN, an
/// infinity or a value outside the integer type's range (also from i64 to
/// i32) is an error naming the element, and nothing is written. Integer to
/// float and float to a narrower float round to nearest, ties to even, once
/// (f64 to f16 or bf16 too; an integer to f16 or bf16 through f64),
/// overflowing to infinity; NaN stays NaN. output may be the same buffer
/// as input only when the dtypes are equal.
fluid_status fluid_cpu_cast(const fluid_tensor *input, fluid_tensor *output);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_CPUOPTIMIZERKERNELS_H
