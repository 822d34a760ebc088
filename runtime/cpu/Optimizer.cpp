//===- Optimizer.cpp - SGD, momentum and Adam(W) updates on the cpu -------===//
//
// Each update mirrors torch.optim's single-tensor path operation by
// operation, so that results agree with PyTorch's bit for bit on the cpus
// PyTorch vectorizes for (AVX2 and newer) and to an ulp elsewhere: scalar
// arithmetic on hyper-parameters is done in double (Python floats) and
// converted to the parameter's dtype where PyTorch passes it to a tensor
// op; every tensor op rounds to that dtype; and where PyTorch's vectorized
// kernel fuses a multiply and an add (add with alpha, addcmul), so does
// std::fma here. This file is compiled with -ffp-contract=off so that the
// compiler fuses nothing else. Each element of every output is written
// after the same element of every input was read, so the outputs may be the
// input buffers (an in-place update).
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"

#include "fluid/runtime/CpuOptimizerKernels.h"

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// a + alpha * b as PyTorch's add(a, b, alpha=alpha) computes it on AVX2
/// and newer cpus: one rounding.
template <typename T> T addScaled(T a, T b, T alpha) {
  return std::fma(b, alpha, a);
}

/// grad.add(param, alpha=weight_decay), torch.optim's (coupled) weight
/// decay, skipped for 0 as PyTorch does.
template <typename T> T decayedGrad(T grad, T param, double weightDecay) {
  return weightDecay != 0 ? addScaled(grad, param, T(weightDecay)) : grad;
}

std::string formatValue(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

/// Fails unless `value` is >= 0 (NaN fails).
void requireNonNegative(const char *name, double value) {
  if (!(value >= 0))
    fail(std::string(name) + " must be >= 0, got " + formatValue(value));
}

/// Fails unless `value` is in [0, 1) (NaN fails).
void requireUnitInterval(const char *name, double value) {
  if (!(value >= 0 && value < 1))
    fail(std::string(name) + " must be in [0, 1), got " + formatValue(value));
}

void requireFlag(const char *name, int32_t value) {
  if (value != 0 && value != 1)
    fail(std::string(name) + " must be 0 or 1, got " + std::to_string(value));
}

/// The learning rate held by the rank-0 float tensor `lr`, which must be
/// >= 0 (as torch.optim requires).
double readLearningRate(const CheckedTensor &lr) {
  requireRank(lr, 0);
  if (lr.dtype() != FLUID_F32 && lr.dtype() != FLUID_F64)
    fail(lr.name + " has dtype " + dtypeName(lr.dtype()) +
         "; expected f32 or f64");
  double value =
      lr.dtype() == FLUID_F32 ? *lr.data<float>() : *lr.data<double>();
  if (!(value >= 0))
    fail(lr.name + " is " + formatValue(value) + "; it must be >= 0");
  return value;
}

/// The 1-based update number held by the rank-0 i64 tensor `step`.
int64_t readStep(const CheckedTensor &step) {
  requireRank(step, 0);
  if (step.dtype() != FLUID_I64)
    fail(step.name + " has dtype " + dtypeName(step.dtype()) +
         "; expected i64");
  int64_t value = *step.data<int64_t>();
  if (value < 1)
    fail(step.name + " is " + std::to_string(value) +
         "; it must be >= 1 (the 1-based number of this update)");
  return value;
}

/// Whether the update is skipped: `found_inf` (null, or a rank-0 f32 flag)
/// holds a nonzero value; NaN counts as nonzero.
bool readSkip(const fluid_tensor *foundInfDesc) {
  if (!foundInfDesc)
    return false;
  CheckedTensor flag = checkTensor(foundInfDesc, "found_inf");
  requireRank(flag, 0);
  if (flag.dtype() != FLUID_F32)
    fail("found_inf has dtype " + dtypeName(flag.dtype()) + "; expected f32");
  return *flag.data<float>() != 0.0f;
}

/// A skipped update's output: `to` gets `from`'s value (nothing to do when
/// they are one buffer).
void keep(const CheckedTensor &from, const CheckedTensor &to) {
  if (from.desc->data != to.desc->data && from.numel > 0)
    std::memmove(to.desc->data, from.desc->data,
                 static_cast<size_t>(from.numel) *
                     static_cast<size_t>(fluid_dtype_size(from.dtype())));
}

/// Checks `param` (float; of `reference`'s dtype in a group's later
/// entries, where `reference` is entry 0's parameter) and that every other
/// tensor has its dtype and shape.
void requireLikeParam(const CheckedTensor &param,
                      std::initializer_list<const CheckedTensor *> others,
                      const CheckedTensor *reference) {
  if (reference)
    requireDtype(param, *reference);
  requireFloat(param);
  for (const CheckedTensor *t : others) {
    requireDtype(*t, param);
    requireShape(*t, param.shape);
  }
}

//===----------------------------------------------------------------------===//
// The updates, each as: its hyper-parameter checks, its operands' checks,
// and its loop over one parameter's elements, which the single-tensor
// kernels and the grouped ones share.
//===----------------------------------------------------------------------===//

void checkSgdParams(const fluid_sgd_params &params) {
  requireNonNegative("weight_decay", params.weight_decay);
}

struct SgdOperands {
  CheckedTensor param, grad, newParam;
};

void requireLikeParam(const SgdOperands &t, const CheckedTensor *reference) {
  requireLikeParam(t.param, {&t.grad, &t.newParam}, reference);
}

void sgdUpdate(const SgdOperands &t, double lr, const fluid_sgd_params &params,
               bool skip) {
  if (skip)
    return keep(t.param, t.newParam);
  dispatchFloat(t.param.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *p = t.param.data<T>();
    const T *g = t.grad.data<T>();
    T *out = t.newParam.data<T>();
    const T negRate = T(-lr);
    for (int64_t i = 0; i < t.param.numel; ++i) {
      // param.add_(d_p, alpha=-lr).
      const T d = decayedGrad(g[i], p[i], params.weight_decay);
      out[i] = addScaled(p[i], d, negRate);
    }
  });
}

void checkMomentumParams(const fluid_momentum_params &params) {
  requireNonNegative("momentum", params.momentum);
  requireNonNegative("weight_decay", params.weight_decay);
  requireFlag("nesterov", params.nesterov);
  if (params.nesterov && params.momentum == 0)
    fail("nesterov needs a momentum > 0");
}

struct MomentumOperands {
  CheckedTensor param, grad, velocity, newParam, newVelocity;
};

void requireLikeParam(const MomentumOperands &t,
                      const CheckedTensor *reference) {
  requireLikeParam(t.param, {&t.grad, &t.velocity, &t.newParam, &t.newVelocity},
                   reference);
}

void momentumUpdate(const MomentumOperands &t, double lr,
                    const fluid_momentum_params &params, bool skip) {
  if (skip) {
    keep(t.param, t.newParam);
    return keep(t.velocity, t.newVelocity);
  }
  dispatchFloat(t.param.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *p = t.param.data<T>();
    const T *g = t.grad.data<T>();
    const T *buf = t.velocity.data<T>();
    T *outParam = t.newParam.data<T>();
    T *outBuf = t.newVelocity.data<T>();
    const T momentum = T(params.momentum);
    const T negRate = T(-lr);
    for (int64_t i = 0; i < t.param.numel; ++i) {
      T d = decayedGrad(g[i], p[i], params.weight_decay);
      // buf.mul_(momentum).add_(d_p): alpha 1 makes the fused and the
      // plain add equal.
      const T b = momentum * buf[i] + d;
      if (params.nesterov)
        d = addScaled(d, b, momentum);
      else
        d = b;
      const T updated = addScaled(p[i], d, negRate);
      outBuf[i] = b;
      outParam[i] = updated;
    }
  });
}

void checkAdamParams(const fluid_adam_params &params) {
  requireUnitInterval("beta1", params.beta1);
  requireUnitInterval("beta2", params.beta2);
  requireNonNegative("epsilon", params.epsilon);
  requireNonNegative("weight_decay", params.weight_decay);
  requireFlag("decoupled", params.decoupled);
}

struct AdamOperands {
  CheckedTensor param, grad, m, v, newParam, newM, newV;
};

void requireLikeParam(const AdamOperands &t, const CheckedTensor *reference) {
  requireLikeParam(
      t.param, {&t.grad, &t.m, &t.v, &t.newParam, &t.newM, &t.newV}, reference);
}

void adamUpdate(const AdamOperands &t, double lr, int64_t stepCount,
                const fluid_adam_params &params, bool skip) {
  if (skip) {
    keep(t.param, t.newParam);
    keep(t.m, t.newM);
    return keep(t.v, t.newV);
  }
  const double step = double(stepCount);
  const double beta1 = params.beta1, beta2 = params.beta2;
  const double stepSize = lr / (1 - std::pow(beta1, step));
  const double biasCorrection2Sqrt = std::sqrt(1 - std::pow(beta2, step));
  dispatchFloat(t.param.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T *p = t.param.data<T>();
    const T *g = t.grad.data<T>();
    const T *mIn = t.m.data<T>();
    const T *vIn = t.v.data<T>();
    T *outParam = t.newParam.data<T>();
    T *outM = t.newM.data<T>();
    T *outV = t.newV.data<T>();
    const T decay = T(1 - lr * params.weight_decay);
    const T b1 = T(beta1), oneMinusB1 = T(1 - beta1);
    const T b2 = T(beta2), oneMinusB2 = T(1 - beta2);
    const T bc2Sqrt = T(biasCorrection2Sqrt);
    const T epsilon = T(params.epsilon);
    const T negStepSize = T(-stepSize);
    for (int64_t i = 0; i < t.param.numel; ++i) {
      T x = p[i];
      T d = g[i];
      if (params.decoupled)
        x = x * decay;
      else
        d = decayedGrad(d, x, params.weight_decay);
      // exp_avg.mul_(beta1).add_(grad, alpha=1-beta1);
      // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1-beta2), whose
      // vectorized form PyTorch's compiler fuses as (value*grad)*grad + v.
      const T mNew = addScaled(b1 * mIn[i], d, oneMinusB1);
      const T vNew = std::fma(oneMinusB2 * d, d, b2 * vIn[i]);
      // denom = (exp_avg_sq.sqrt() / sqrt(bias_correction2)).add_(eps);
      // param.addcdiv_(exp_avg, denom, value=-step_size).
      const T denom = std::sqrt(vNew) / bc2Sqrt + epsilon;
      outM[i] = mNew;
      outV[i] = vNew;
      outParam[i] = x + negStepSize * mNew / denom;
    }
  });
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

/// Fails unless a group has at least one entry and every array of its
/// descriptors is non-null.
void requireGroup(
    int64_t count,
    std::initializer_list<std::pair<const char *, const void *>> arrays) {
  if (count < 1)
    fail("count must be >= 1, got " + std::to_string(count));
  for (const auto &[name, array] : arrays)
    if (!array)
      fail(std::string(name) + " array is null");
}

/// "grads[3]": the name of entry k's tensor of the array `array`.
std::string entryName(const char *array, int64_t k) {
  return std::string(array) + "[" + std::to_string(k) + "]";
}

/// The checked operands of every entry of a group: check(k) checks the
/// descriptors of entry k; each entry must then be as a single-tensor
/// update requires, with the float dtype of entry 0's parameter. A
/// failure's message is prefixed with "entry k: ".
template <typename Operands, typename Check>
std::vector<Operands> checkEntries(int64_t count, Check &&check) {
  std::vector<Operands> entries;
  entries.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    try {
      Operands operands = check(k);
      requireLikeParam(operands, k == 0 ? nullptr : &entries[0].param);
      entries.push_back(std::move(operands));
    } catch (const Error &e) {
      throw Error(e.status(), "entry " + std::to_string(k) + ": " + e.what());
    }
  }
  return entries;
}

} // namespace

extern "C" fluid_status
fluid_cpu_sgd(const fluid_tensor *paramDesc, const fluid_tensor *gradDesc,
              const fluid_tensor *lrDesc, const fluid_tensor *foundInfDesc,
              fluid_tensor *newParamDesc, const fluid_sgd_params *params) {
  return guard("fluid_cpu_sgd", [&] {
    CheckedTensor param = checkTensor(paramDesc, "param");
    CheckedTensor grad = checkTensor(gradDesc, "grad");
    CheckedTensor lrTensor = checkTensor(lrDesc, "lr");
    CheckedTensor newParam = checkTensor(newParamDesc, "new_param");
    requireParams(params);
    const SgdOperands t{param, grad, newParam};
    requireLikeParam(t, nullptr);
    checkSgdParams(*params);
    const double lr = readLearningRate(lrTensor);
    sgdUpdate(t, lr, *params, readSkip(foundInfDesc));
  });
}

extern "C" fluid_status
fluid_cpu_momentum(const fluid_tensor *paramDesc, const fluid_tensor *gradDesc,
                   const fluid_tensor *velocityDesc, const fluid_tensor *lrDesc,
                   const fluid_tensor *foundInfDesc, fluid_tensor *newParamDesc,
                   fluid_tensor *newVelocityDesc,
                   const fluid_momentum_params *params) {
  return guard("fluid_cpu_momentum", [&] {
    CheckedTensor param = checkTensor(paramDesc, "param");
    CheckedTensor grad = checkTensor(gradDesc, "grad");
    CheckedTensor velocity = checkTensor(velocityDesc, "velocity");
    CheckedTensor lrTensor = checkTensor(lrDesc, "lr");
    CheckedTensor newParam = checkTensor(newParamDesc, "new_param");
    CheckedTensor newVelocity = checkTensor(newVelocityDesc, "new_velocity");
    requireParams(params);
    const MomentumOperands t{param, grad, velocity, newParam, newVelocity};
    requireLikeParam(t, nullptr);
    checkMomentumParams(*params);
    const double lr = readLearningRate(lrTensor);
    momentumUpdate(t, lr, *params, readSkip(foundInfDesc));
  });
}

extern "C" fluid_status
fluid_cpu_adam(const fluid_tensor *paramDesc, const fluid_tensor *gradDesc,
               const fluid_tensor *mDesc, const fluid_tensor *vDesc,
               const fluid_tensor *lrDesc, const fluid_tensor *stepDesc,
               const fluid_tensor *foundInfDesc, fluid_tensor *newParamDesc,
               fluid_tensor *newMDesc, fluid_tensor *newVDesc,
               const fluid_adam_params *params) {
  return guard("fluid_cpu_adam", [&] {
    CheckedTensor param = checkTensor(paramDesc, "param");
    CheckedTensor grad = checkTensor(gradDesc, "grad");
    CheckedTensor m = checkTensor(mDesc, "m");
    CheckedTensor v = checkTensor(vDesc, "v");
    CheckedTensor lrTensor = checkTensor(lrDesc, "lr");
    CheckedTensor stepTensor = checkTensor(stepDesc, "step");
    CheckedTensor newParam = checkTensor(newParamDesc, "new_param");
    CheckedTensor newM = checkTensor(newMDesc, "new_m");
    CheckedTensor newV = checkTensor(newVDesc, "new_v");
    requireParams(params);
    const AdamOperands t{param, grad, m, v, newParam, newM, newV};
    requireLikeParam(t, nullptr);
    checkAdamParams(*params);
    const double lr = readLearningRate(lrTensor);
    const int64_t step = readStep(stepTensor);
    adamUpdate(t, lr, step, *params, readSkip(foundInfDesc));
  });
}

//===----------------------------------------------------------------------===//
// Grouped updates: every entry is checked, then updated by the loop of its
// single-tensor kernel.
//===----------------------------------------------------------------------===//

extern "C" fluid_status
fluid_cpu_sgd_group(int64_t count, const fluid_tensor *params,
                    const fluid_tensor *grads, const fluid_tensor *lrDesc,
                    const fluid_tensor *foundInfDesc, fluid_tensor *newParams,
                    const fluid_sgd_params *p) {
  return guard("fluid_cpu_sgd_group", [&] {
    requireGroup(
        count,
        {{"params", params}, {"grads", grads}, {"new_params", newParams}});
    const std::vector<SgdOperands> entries =
        checkEntries<SgdOperands>(count, [&](int64_t k) {
          return SgdOperands{
              checkTensor(&params[k], entryName("params", k)),
              checkTensor(&grads[k], entryName("grads", k)),
              checkTensor(&newParams[k], entryName("new_params", k))};
        });
    CheckedTensor lrTensor = checkTensor(lrDesc, "lr");
    if (!p)
      fail("p is null");
    checkSgdParams(*p);
    const double lr = readLearningRate(lrTensor);
    const bool skip = readSkip(foundInfDesc);
    for (const SgdOperands &t : entries)
      sgdUpdate(t, lr, *p, skip);
  });
}

extern "C" fluid_status fluid_cpu_momentum_group(
    int64_t count, const fluid_tensor *params, const fluid_tensor *grads,
    const fluid_tensor *velocities, const fluid_tensor *lrDesc,
    const fluid_tensor *foundInfDesc, fluid_tensor *newParams,
    fluid_tensor *newVelocities, const fluid_momentum_params *p) {
  return guard("fluid_cpu_momentum_group", [&] {
    requireGroup(count, {{"params", params},
                         {"grads", grads},
                         {"velocities", velocities},
                         {"new_params", newParams},
                         {"new_velocities", newVelocities}});
    const std::vector<MomentumOperands> entries =
        checkEntries<MomentumOperands>(count, [&](int64_t k) {
          return MomentumOperands{
              checkTensor(&params[k], entryName("params", k)),
              checkTensor(&grads[k], entryName("grads", k)),
              checkTensor(&velocities[k], entryName("velocities", k)),
              checkTensor(&newParams[k], entryName("new_params", k)),
              checkTensor(&newVelocities[k], entryName("new_velocities", k))};
        });
    CheckedTensor lrTensor = checkTensor(lrDesc, "lr");
    if (!p)
      fail("p is null");
    checkMomentumParams(*p);
    const double lr = readLearningRate(lrTensor);
    const bool skip = readSkip(foundInfDesc);
    for (const MomentumOperands &t : entries)
      momentumUpdate(t, lr, *p, skip);
  });
}

extern "C" fluid_status
fluid_cpu_adam_group(int64_t count, const fluid_tensor *params,
                     const fluid_tensor *grads, const fluid_tensor *expAvgs,
                     const fluid_tensor *expAvgSqs, const fluid_tensor *lrDesc,
                     const fluid_tensor *stepDesc,
                     const fluid_tensor *foundInfDesc, fluid_tensor *newParams,
                     fluid_tensor *newExpAvgs, fluid_tensor *newExpAvgSqs,
                     const fluid_adam_params *p) {
  return guard("fluid_cpu_adam_group", [&] {
    requireGroup(count, {{"params", params},
                         {"grads", grads},
                         {"exp_avgs", expAvgs},
                         {"exp_avg_sqs", expAvgSqs},
                         {"new_params", newParams},
                         {"new_exp_avgs", newExpAvgs},
                         {"new_exp_avg_sqs", newExpAvgSqs}});
    const std::vector<AdamOperands> entries =
        checkEntries<AdamOperands>(count, [&](int64_t k) {
          return AdamOperands{
              checkTensor(&params[k], entryName("params", k)),
              checkTensor(&grads[k], entryName("grads", k)),
              checkTensor(&expAvgs[k], entryName("exp_avgs", k)),
              checkTensor(&expAvgSqs[k], entryName("exp_avg_sqs", k)),
              checkTensor(&newParams[k], entryName("new_params", k)),
              checkTensor(&newExpAvgs[k], entryName("new_exp_avgs", k)),
              checkTensor(&newExpAvgSqs[k], entryName("new_exp_avg_sqs", k))};
        });
    CheckedTensor lrTensor = checkTensor(lrDesc, "lr");
    CheckedTensor stepTensor = checkTensor(stepDesc, "step");
    if (!p)
      fail("p is null");
    checkAdamParams(*p);
    const double lr = readLearningRate(lrTensor);
    const int64_t step = readStep(stepTensor);
    const bool skip = readSkip(foundInfDesc);
    for (const AdamOperands &t : entries)
      adamUpdate(t, lr, step, *p, skip);
  });
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling
//===----------------------------------------------------------------------===//

extern "C" fluid_status fluid_cpu_unscale_grads(int64_t count,
                                                const fluid_tensor *grads,
                                                const fluid_tensor *scaleDesc,
                                                fluid_tensor *newGrads,
                                                fluid_tensor *foundInfDesc) {
  return guard("fluid_cpu_unscale_grads", [&] {
    requireGroup(count, {{"grads", grads}, {"new_grads", newGrads}});
    std::vector<std::pair<CheckedTensor, CheckedTensor>> entries;
    for (int64_t k = 0; k < count; ++k) {
      try {
        CheckedTensor grad = checkTensor(&grads[k], entryName("grads", k));
        CheckedTensor out =
            checkTensor(&newGrads[k], entryName("new_grads", k));
        if (k > 0)
          requireDtype(grad, entries[0].first);
        if (grad.dtype() != FLUID_F32 && grad.dtype() != FLUID_F64)
          fail(grad.name + " has dtype " + dtypeName(grad.dtype()) +
               "; expected f32 or f64");
        requireDtype(out, grad);
        requireShape(out, grad.shape);
        entries.emplace_back(std::move(grad), std::move(out));
      } catch (const Error &e) {
        throw Error(e.status(), "entry " + std::to_string(k) + ": " + e.what());
      }
    }
    CheckedTensor scale = checkTensor(scaleDesc, "scale");
    CheckedTensor found = checkTensor(foundInfDesc, "found_inf");
    for (const CheckedTensor *t : {&scale, &found}) {
      requireRank(*t, 0);
      if (t->dtype() != FLUID_F32)
        fail(t->name + " has dtype " + dtypeName(t->dtype()) +
             "; expected f32");
    }
    // PyTorch: inv_scale = scale.double().reciprocal().float().
    const float inverse = float(1.0 / double(*scale.data<float>()));
    bool nonFinite = false;
    for (const auto &entry : entries) {
      const CheckedTensor &grad = entry.first, &out = entry.second;
      dispatchFloat(grad.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T *g = grad.data<T>();
        T *u = out.data<T>();
        const T factor = T(inverse);
        for (int64_t i = 0; i < grad.numel; ++i) {
          const T value = g[i];
          nonFinite = nonFinite || !std::isfinite(value);
          u[i] = value * factor;
        }
      });
    }
    *found.data<float>() = nonFinite ? 1.0f : 0.0f;
  });
}
