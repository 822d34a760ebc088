//===- OptimizerUpdates.cuh - The per-element optimizer updates -----------===//
//
// What the single-tensor updates (KernelsOptimizer.cu) and the grouped ones
// (KernelsOptimizerGroup.cu) share, so that both compute the same bits: the
// update of one element for SGD, momentum and Adam(W), with the scalars
// each reads from device memory first, and the host-side checks of the
// hyper-parameters, the learning rate and the step counter.
//
// An Update has a Scalars type, a device `prepare(Scalars &, errors,
// report)` that reads the device-resident learning rate (and step) and
// returns false, flagging the value from `report` threads, when the
// kernel must write nothing; and a device
// `apply(const Scalars &, const T (&in)[NIn], T (&out)[NOut])`. An update
// with a `foundInf` flag (dynamic loss scaling) that holds a nonzero value
// is skipped: apply writes every output its input's value.
//
// The arithmetic follows the cpu backend (Optimizer.cpp) operation by
// operation, with explicitly rounded intrinsics (DeviceMath.cuh) so that
// nothing is fused that the cpu does not fuse: SGD and momentum give the
// cpu's results bit for bit; Adam's bias corrections use CUDA's pow, which
// may differ from the host's by an ulp in double.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDA_OPTIMIZERUPDATES_CUH
#define FLUID_RUNTIME_CUDA_OPTIMIZERUPDATES_CUH

#include "DeviceMath.cuh"
#include "KernelUtils.cuh"

#include "fluid/runtime/CpuOptimizerKernels.h"

#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>

namespace fluid::rt::cuda::optimizer {

/// A rank-0 learning rate in device memory, f32 or f64.
struct LearningRate {
  const void *data;
  bool isF32;

  /// The value; flags it (from `report` threads) unless it is >= 0.
  __device__ bool read(double &value, DeviceErrorRecord *errors,
                       uint32_t source, bool report) const {
    value = isF32 ? double(*static_cast<const float *>(data))
                  : *static_cast<const double *>(data);
    if (value >= 0)
      return true;
    if (report) {
      DeviceErrorRecord error{};
      error.kind = kBadLearningRate;
      error.source = source;
      error.real = value;
      raiseDeviceError(errors, error);
    }
    return false;
  }
};

/// Whether a skip flag (null: none) is set; NaN counts as set.
__device__ inline bool readSkip(const float *foundInf) {
  return foundInf && *foundInf != 0.0f;
}

template <typename T> struct SgdUpdate {
  static constexpr int kInputs = 2, kOutputs = 1;
  LearningRate lr;
  T weightDecay;
  uint32_t source;       // a DeviceErrorSource
  const float *foundInf; // null, or the skip flag

  struct Scalars {
    T negRate;
    bool skip;
  };

  __device__ bool prepare(Scalars &s, DeviceErrorRecord *errors,
                          bool report) const {
    double rate;
    if (!lr.read(rate, errors, source, report))
      return false;
    s.negRate = T(-rate);
    s.skip = readSkip(foundInf);
    return true;
  }

  // in: param, grad; out: new_param.
  // d_p = grad.add(param, alpha=weight_decay), skipped for 0 as PyTorch
  // does; param.add_(d_p, alpha=-lr).
  __device__ void apply(const Scalars &s, const T (&in)[2], T (&out)[1]) const {
    if (s.skip) {
      out[0] = in[0];
      return;
    }
    const T p = in[0];
    T d = in[1];
    if (weightDecay != 0)
      d = math::fmaRn(p, weightDecay, d);
    out[0] = math::fmaRn(d, s.negRate, p);
  }
};

template <typename T> struct MomentumUpdate {
  static constexpr int kInputs = 3, kOutputs = 2;
  LearningRate lr;
  T momentum, weightDecay;
  bool nesterov;
  uint32_t source;
  const float *foundInf;

  struct Scalars {
    T negRate;
    bool skip;
  };

  __device__ bool prepare(Scalars &s, DeviceErrorRecord *errors,
                          bool report) const {
    double rate;
    if (!lr.read(rate, errors, source, report))
      return false;
    s.negRate = T(-rate);
    s.skip = readSkip(foundInf);
    return true;
  }

  // in: param, grad, velocity; out: new_param, new_velocity.
  __device__ void apply(const Scalars &s, const T (&in)[3], T (&out)[2]) const {
    if (s.skip) {
      out[0] = in[0];
      out[1] = in[2];
      return;
    }
    const T p = in[0];
    T d = in[1];
    if (weightDecay != 0)
      d = math::fmaRn(p, weightDecay, d);
    // buf.mul_(momentum).add_(d_p): two roundings.
    const T b = math::addRn(math::mulRn(momentum, in[2]), d);
    d = nesterov ? math::fmaRn(b, momentum, d) : b;
    out[0] = math::fmaRn(d, s.negRate, p);
    out[1] = b;
  }
};

template <typename T> struct AdamUpdate {
  static constexpr int kInputs = 4, kOutputs = 3;
  LearningRate lr;
  const int64_t *step;
  double beta1Value, beta2Value, weightDecayValue;
  T weightDecay, b1, oneMinusB1, b2, oneMinusB2, epsilon;
  bool decoupled;
  uint32_t source;
  const float *foundInf;

  struct Scalars {
    T decay, bc2Sqrt, negStepSize;
    bool skip;
  };

  __device__ bool prepare(Scalars &s, DeviceErrorRecord *errors,
                          bool report) const {
    double rate;
    if (!lr.read(rate, errors, source, report))
      return false;
    const int64_t t = *step;
    if (t < 1) {
      if (report) {
        DeviceErrorRecord error{};
        error.kind = kBadStep;
        error.source = source;
        error.value = t;
        raiseDeviceError(errors, error);
      }
      return false;
    }
    // Scalar arithmetic in double, as Python does it in torch.optim.
    const double stepSize =
        __ddiv_rn(rate, __dsub_rn(1.0, ::pow(beta1Value, double(t))));
    s.bc2Sqrt = T(__dsqrt_rn(__dsub_rn(1.0, ::pow(beta2Value, double(t)))));
    s.decay = T(__dsub_rn(1.0, __dmul_rn(rate, weightDecayValue)));
    s.negStepSize = T(-stepSize);
    s.skip = readSkip(foundInf);
    return true;
  }

  // in: param, grad, m, v; out: new_param, new_m, new_v.
  __device__ void apply(const Scalars &s, const T (&in)[4], T (&out)[3]) const {
    if (s.skip) {
      out[0] = in[0];
      out[1] = in[2];
      out[2] = in[3];
      return;
    }
    T x = in[0];
    T d = in[1];
    if (decoupled)
      x = math::mulRn(x, s.decay);
    else if (weightDecay != 0)
      d = math::fmaRn(x, weightDecay, d);
    // exp_avg.mul_(beta1).add_(grad, alpha=1-beta1);
    // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1-beta2), fused as
    // PyTorch's vectorized kernel does: (value*grad)*grad + v.
    const T mNew = math::fmaRn(d, oneMinusB1, math::mulRn(b1, in[2]));
    const T vNew =
        math::fmaRn(math::mulRn(oneMinusB2, d), d, math::mulRn(b2, in[3]));
    // denom = (exp_avg_sq.sqrt() / sqrt(bias_correction2)).add_(eps);
    // param.addcdiv_(exp_avg, denom, value=-step_size).
    const T denom =
        math::addRn(math::divRn(math::sqrtRn(vNew), s.bc2Sqrt), epsilon);
    out[0] =
        math::addRn(x, math::divRn(math::mulRn(s.negStepSize, mNew), denom));
    out[1] = mNew;
    out[2] = vNew;
  }
};

/// The updates of checked hyper-parameters, flagging bad device values as
/// coming from `source`.
template <typename T>
SgdUpdate<T> makeSgdUpdate(LearningRate lr, const fluid_sgd_params &params,
                           uint32_t source, const float *foundInf) {
  return SgdUpdate<T>{lr, T(params.weight_decay), source, foundInf};
}

template <typename T>
MomentumUpdate<T> makeMomentumUpdate(LearningRate lr,
                                     const fluid_momentum_params &params,
                                     uint32_t source, const float *foundInf) {
  return MomentumUpdate<T>{lr,
                           T(params.momentum),
                           T(params.weight_decay),
                           params.nesterov != 0,
                           source,
                           foundInf};
}

template <typename T>
AdamUpdate<T> makeAdamUpdate(LearningRate lr, const int64_t *step,
                             const fluid_adam_params &params, uint32_t source,
                             const float *foundInf) {
  const double beta1 = params.beta1, beta2 = params.beta2;
  return AdamUpdate<T>{lr,
                       step,
                       beta1,
                       beta2,
                       params.weight_decay,
                       T(params.weight_decay),
                       T(beta1),
                       T(1 - beta1),
                       T(beta2),
                       T(1 - beta2),
                       T(params.epsilon),
                       params.decoupled != 0,
                       source,
                       foundInf};
}

//===----------------------------------------------------------------------===//
// Host-side checks (as Optimizer.cpp's, with the same messages)
//===----------------------------------------------------------------------===//

inline std::string formatValue(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

inline void requireNonNegative(const char *name, double value) {
  if (!(value >= 0))
    fail(std::string(name) + " must be >= 0, got " + formatValue(value));
}

inline void requireUnitInterval(const char *name, double value) {
  if (!(value >= 0 && value < 1))
    fail(std::string(name) + " must be in [0, 1), got " + formatValue(value));
}

inline void requireFlag(const char *name, int32_t value) {
  if (value != 0 && value != 1)
    fail(std::string(name) + " must be 0 or 1, got " + std::to_string(value));
}

inline void checkSgdParams(const fluid_sgd_params &params) {
  requireNonNegative("weight_decay", params.weight_decay);
}

inline void checkMomentumParams(const fluid_momentum_params &params) {
  requireNonNegative("momentum", params.momentum);
  requireNonNegative("weight_decay", params.weight_decay);
  requireFlag("nesterov", params.nesterov);
  if (params.nesterov && params.momentum == 0)
    fail("nesterov needs a momentum > 0");
}

inline void checkAdamParams(const fluid_adam_params &params) {
  requireUnitInterval("beta1", params.beta1);
  requireUnitInterval("beta2", params.beta2);
  requireNonNegative("epsilon", params.epsilon);
  requireNonNegative("weight_decay", params.weight_decay);
  requireFlag("decoupled", params.decoupled);
}

/// Checks `param` (float; of `reference`'s dtype in a group's later
/// entries, where `reference` is entry 0's parameter) and that every other
/// tensor has its dtype and shape.
inline void
requireLikeParam(const CheckedTensor &param,
                 std::initializer_list<const CheckedTensor *> others,
                 const CheckedTensor *reference = nullptr) {
  if (reference)
    cpu::requireDtype(param, *reference);
  requireFloatDtype(param);
  for (const CheckedTensor *t : others) {
    cpu::requireDtype(*t, param);
    cpu::requireShape(*t, param.shape);
  }
}

/// The learning-rate tensor's descriptor checks; its value is checked on
/// the device.
inline LearningRate checkLearningRate(const CheckedTensor &lr) {
  cpu::requireRank(lr, 0);
  if (lr.dtype() != FLUID_F32 && lr.dtype() != FLUID_F64)
    fail(lr.name + " has dtype " + cpu::dtypeName(lr.dtype()) +
         "; expected f32 or f64");
  return LearningRate{lr.desc->data, lr.dtype() == FLUID_F32};
}

/// The step tensor's descriptor checks; its value is checked on the
/// device.
inline const int64_t *checkStep(const CheckedTensor &step) {
  cpu::requireRank(step, 0);
  if (step.dtype() != FLUID_I64)
    fail(step.name + " has dtype " + cpu::dtypeName(step.dtype()) +
         "; expected i64");
  return step.data<int64_t>();
}

/// The skip flag's descriptor checks (null: no flag); its value is read on
/// the device.
inline const float *checkFoundInf(fluid_cuda_context *context,
                                  const fluid_tensor *desc) {
  if (!desc)
    return nullptr;
  CheckedTensor flag = checkTensor(context, desc, "found_inf");
  cpu::requireRank(flag, 0);
  if (flag.dtype() != FLUID_F32)
    fail("found_inf has dtype " + cpu::dtypeName(flag.dtype()) +
         "; expected f32");
  return flag.data<float>();
}

} // namespace fluid::rt::cuda::optimizer

#endif // FLUID_RUNTIME_CUDA_OPTIMIZERUPDATES_CUH
