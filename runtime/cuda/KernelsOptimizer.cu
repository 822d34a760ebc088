//===- KernelsOptimizer.cu - SGD, momentum and Adam(W) updates ------------===//
//
// One kernel per update, over the parameter's elements with 16-byte vector
// loads and stores where the pointers allow. Each thread reads element i of
// every input before writing element i of any output, so outputs may be
// the input buffers (an in-place update), as on the cpu backend.
//
// The learning rate and Adam's step counter are rank-0 tensors in device
// memory, read by every thread at the start of the kernel: the host never
// waits for them. A learning rate that is negative or NaN, or a step below
// 1, cannot fail the call; the kernel then writes nothing (an in-place
// update leaves the parameter and the state as they were) and flags the
// value for fluid_cuda_check_errors (KernelsCommon.cu).
//
// The arithmetic follows the cpu backend (Optimizer.cpp) operation by
// operation, with explicitly rounded intrinsics (DeviceMath.cuh) so that
// nothing is fused that the cpu does not fuse: SGD and momentum give the
// cpu's results bit for bit; Adam's bias corrections use CUDA's pow, which
// may differ from the host's by an ulp in double.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.cuh"
#include "KernelUtils.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <initializer_list>
#include <sstream>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

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

template <typename T, int NIn, int NOut> struct Arrays {
  const T *in[NIn];
  T *out[NOut];
};

/// Runs `update` over n elements. Update has a Scalars type, a device
/// `prepare(Scalars &, errors, report)` that reads the device-resident
/// hyper-parameters (false: write nothing), and a device
/// `apply(const Scalars &, const T (&in)[NIn], T (&out)[NOut])`.
template <int Vec, typename T, int NIn, int NOut, typename Update>
__global__ void __launch_bounds__(kBlockSize)
    updateKernel(Arrays<T, NIn, NOut> arrays, int64_t n, Update update,
                 DeviceErrorRecord *errors) {
  typename Update::Scalars scalars;
  if (!update.prepare(scalars, errors, blockIdx.x == 0 && threadIdx.x == 0))
    return;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t vectors = n / Vec;
  for (int64_t v = first; v < vectors; v += stride) {
    Vector<T, Vec> in[NIn], out[NOut];
#pragma unroll
    for (int k = 0; k < NIn; ++k)
      in[k] = reinterpret_cast<const Vector<T, Vec> *>(arrays.in[k])[v];
#pragma unroll
    for (int j = 0; j < Vec; ++j) {
      T values[NIn], results[NOut];
#pragma unroll
      for (int k = 0; k < NIn; ++k)
        values[k] = in[k].v[j];
      update.apply(scalars, values, results);
#pragma unroll
      for (int k = 0; k < NOut; ++k)
        out[k].v[j] = results[k];
    }
#pragma unroll
    for (int k = 0; k < NOut; ++k)
      reinterpret_cast<Vector<T, Vec> *>(arrays.out[k])[v] = out[k];
  }
  if constexpr (Vec > 1) {
    const int64_t i = vectors * Vec + first;
    if (i < n) {
      T values[NIn], results[NOut];
#pragma unroll
      for (int k = 0; k < NIn; ++k)
        values[k] = arrays.in[k][i];
      update.apply(scalars, values, results);
#pragma unroll
      for (int k = 0; k < NOut; ++k)
        arrays.out[k][i] = results[k];
    }
  }
}

template <typename T, int NIn, int NOut, typename Update>
void launchUpdate(cudaStream_t stream, const Arrays<T, NIn, NOut> &arrays,
                  int64_t n, const Update &update, DeviceErrorRecord *errors) {
  if (n == 0)
    return;
  constexpr int kVec = int(16 / sizeof(T));
  bool aligned = true;
  for (int k = 0; k < NIn; ++k)
    aligned = aligned && isVectorAligned<T, kVec>(arrays.in[k]);
  for (int k = 0; k < NOut; ++k)
    aligned = aligned && isVectorAligned<T, kVec>(arrays.out[k]);
  if (aligned)
    updateKernel<kVec><<<gridSizeFor(n / kVec), kBlockSize, 0, stream>>>(
        arrays, n, update, errors);
  else
    updateKernel<1>
        <<<gridSizeFor(n), kBlockSize, 0, stream>>>(arrays, n, update, errors);
  checkLaunch();
}

template <typename T> struct SgdUpdate {
  LearningRate lr;
  T weightDecay;

  struct Scalars {
    T negRate;
  };

  __device__ bool prepare(Scalars &s, DeviceErrorRecord *errors,
                          bool report) const {
    double rate;
    if (!lr.read(rate, errors, kFromSgd, report))
      return false;
    s.negRate = T(-rate);
    return true;
  }

  // d_p = grad.add(param, alpha=weight_decay), skipped for 0 as PyTorch
  // does; param.add_(d_p, alpha=-lr).
  __device__ void apply(const Scalars &s, const T (&in)[2], T (&out)[1]) const {
    const T p = in[0];
    T d = in[1];
    if (weightDecay != 0)
      d = math::fmaRn(p, weightDecay, d);
    out[0] = math::fmaRn(d, s.negRate, p);
  }
};

template <typename T> struct MomentumUpdate {
  LearningRate lr;
  T momentum, weightDecay;
  bool nesterov;

  struct Scalars {
    T negRate;
  };

  __device__ bool prepare(Scalars &s, DeviceErrorRecord *errors,
                          bool report) const {
    double rate;
    if (!lr.read(rate, errors, kFromMomentum, report))
      return false;
    s.negRate = T(-rate);
    return true;
  }

  // in: param, grad, velocity; out: new_param, new_velocity.
  __device__ void apply(const Scalars &s, const T (&in)[3], T (&out)[2]) const {
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
  LearningRate lr;
  const int64_t *step;
  double beta1Value, beta2Value, weightDecayValue;
  T weightDecay, b1, oneMinusB1, b2, oneMinusB2, epsilon;
  bool decoupled;

  struct Scalars {
    T decay, bc2Sqrt, negStepSize;
  };

  __device__ bool prepare(Scalars &s, DeviceErrorRecord *errors,
                          bool report) const {
    double rate;
    if (!lr.read(rate, errors, kFromAdam, report))
      return false;
    const int64_t t = *step;
    if (t < 1) {
      if (report) {
        DeviceErrorRecord error{};
        error.kind = kBadStep;
        error.source = kFromAdam;
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
    return true;
  }

  // in: param, grad, m, v; out: new_param, new_m, new_v.
  __device__ void apply(const Scalars &s, const T (&in)[4], T (&out)[3]) const {
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

//===----------------------------------------------------------------------===//
// Host-side checks (as Optimizer.cpp)
//===----------------------------------------------------------------------===//

std::string formatValue(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

void requireNonNegative(const char *name, double value) {
  if (!(value >= 0))
    fail(std::string(name) + " must be >= 0, got " + formatValue(value));
}

void requireUnitInterval(const char *name, double value) {
  if (!(value >= 0 && value < 1))
    fail(std::string(name) + " must be in [0, 1), got " + formatValue(value));
}

void requireFlag(const char *name, int32_t value) {
  if (value != 0 && value != 1)
    fail(std::string(name) + " must be 0 or 1, got " + std::to_string(value));
}

void requireLikeParam(const CheckedTensor &param,
                      std::initializer_list<const CheckedTensor *> others) {
  requireFloatDtype(param);
  for (const CheckedTensor *t : others) {
    cpu::requireDtype(*t, param);
    cpu::requireShape(*t, param.shape);
  }
}

/// The learning-rate tensor's descriptor checks; its value is checked on
/// the device.
LearningRate checkLearningRate(const CheckedTensor &lr) {
  cpu::requireRank(lr, 0);
  if (lr.dtype() != FLUID_F32 && lr.dtype() != FLUID_F64)
    fail(lr.name + " has dtype " + cpu::dtypeName(lr.dtype()) +
         "; expected f32 or f64");
  return LearningRate{lr.desc->data, lr.dtype() == FLUID_F32};
}

const int64_t *checkStep(const CheckedTensor &step) {
  cpu::requireRank(step, 0);
  if (step.dtype() != FLUID_I64)
    fail(step.name + " has dtype " + cpu::dtypeName(step.dtype()) +
         "; expected i64");
  return step.data<int64_t>();
}

} // namespace

extern "C" fluid_status
fluid_cuda_sgd(fluid_cuda_context *context, const fluid_tensor *paramDesc,
               const fluid_tensor *gradDesc, const fluid_tensor *lrDesc,
               fluid_tensor *newParamDesc, const fluid_sgd_params *params) {
  return guard("fluid_cuda_sgd", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor param = checkTensor(context, paramDesc, "param");
    CheckedTensor grad = checkTensor(context, gradDesc, "grad");
    CheckedTensor lrTensor = checkTensor(context, lrDesc, "lr");
    CheckedTensor newParam = checkTensor(context, newParamDesc, "new_param");
    cpu::requireParams(params);
    requireLikeParam(param, {&grad, &newParam});
    requireNonNegative("weight_decay", params->weight_decay);
    const LearningRate lr = checkLearningRate(lrTensor);
    DeviceErrorRecord *errors = deviceErrorRecord(context);

    cpu::dispatchFloat(param.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const Arrays<T, 2, 1> arrays{{param.data<T>(), grad.data<T>()},
                                   {newParam.data<T>()}};
      launchUpdate(stream, arrays, param.numel,
                   SgdUpdate<T>{lr, T(params->weight_decay)}, errors);
    });
  });
}

extern "C" fluid_status fluid_cuda_momentum(
    fluid_cuda_context *context, const fluid_tensor *paramDesc,
    const fluid_tensor *gradDesc, const fluid_tensor *velocityDesc,
    const fluid_tensor *lrDesc, fluid_tensor *newParamDesc,
    fluid_tensor *newVelocityDesc, const fluid_momentum_params *params) {
  return guard("fluid_cuda_momentum", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor param = checkTensor(context, paramDesc, "param");
    CheckedTensor grad = checkTensor(context, gradDesc, "grad");
    CheckedTensor velocity = checkTensor(context, velocityDesc, "velocity");
    CheckedTensor lrTensor = checkTensor(context, lrDesc, "lr");
    CheckedTensor newParam = checkTensor(context, newParamDesc, "new_param");
    CheckedTensor newVelocity =
        checkTensor(context, newVelocityDesc, "new_velocity");
    cpu::requireParams(params);
    requireLikeParam(param, {&grad, &velocity, &newParam, &newVelocity});
    requireNonNegative("momentum", params->momentum);
    requireNonNegative("weight_decay", params->weight_decay);
    requireFlag("nesterov", params->nesterov);
    if (params->nesterov && params->momentum == 0)
      fail("nesterov needs a momentum > 0");
    const LearningRate lr = checkLearningRate(lrTensor);
    DeviceErrorRecord *errors = deviceErrorRecord(context);

    cpu::dispatchFloat(param.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const Arrays<T, 3, 2> arrays{
          {param.data<T>(), grad.data<T>(), velocity.data<T>()},
          {newParam.data<T>(), newVelocity.data<T>()}};
      launchUpdate(stream, arrays, param.numel,
                   MomentumUpdate<T>{lr, T(params->momentum),
                                     T(params->weight_decay),
                                     params->nesterov != 0},
                   errors);
    });
  });
}

extern "C" fluid_status
fluid_cuda_adam(fluid_cuda_context *context, const fluid_tensor *paramDesc,
                const fluid_tensor *gradDesc, const fluid_tensor *mDesc,
                const fluid_tensor *vDesc, const fluid_tensor *lrDesc,
                const fluid_tensor *stepDesc, fluid_tensor *newParamDesc,
                fluid_tensor *newMDesc, fluid_tensor *newVDesc,
                const fluid_adam_params *params) {
  return guard("fluid_cuda_adam", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor param = checkTensor(context, paramDesc, "param");
    CheckedTensor grad = checkTensor(context, gradDesc, "grad");
    CheckedTensor m = checkTensor(context, mDesc, "m");
    CheckedTensor v = checkTensor(context, vDesc, "v");
    CheckedTensor lrTensor = checkTensor(context, lrDesc, "lr");
    CheckedTensor stepTensor = checkTensor(context, stepDesc, "step");
    CheckedTensor newParam = checkTensor(context, newParamDesc, "new_param");
    CheckedTensor newM = checkTensor(context, newMDesc, "new_m");
    CheckedTensor newV = checkTensor(context, newVDesc, "new_v");
    cpu::requireParams(params);
    requireLikeParam(param, {&grad, &m, &v, &newParam, &newM, &newV});
    requireUnitInterval("beta1", params->beta1);
    requireUnitInterval("beta2", params->beta2);
    requireNonNegative("epsilon", params->epsilon);
    requireNonNegative("weight_decay", params->weight_decay);
    requireFlag("decoupled", params->decoupled);
    const LearningRate lr = checkLearningRate(lrTensor);
    const int64_t *step = checkStep(stepTensor);
    DeviceErrorRecord *errors = deviceErrorRecord(context);

    cpu::dispatchFloat(param.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const Arrays<T, 4, 3> arrays{
          {param.data<T>(), grad.data<T>(), m.data<T>(), v.data<T>()},
          {newParam.data<T>(), newM.data<T>(), newV.data<T>()}};
      const double beta1 = params->beta1, beta2 = params->beta2;
      const AdamUpdate<T> update{lr,
                                 step,
                                 beta1,
                                 beta2,
                                 params->weight_decay,
                                 T(params->weight_decay),
                                 T(beta1),
                                 T(1 - beta1),
                                 T(beta2),
                                 T(1 - beta2),
                                 T(params->epsilon),
                                 params->decoupled != 0};
      launchUpdate(stream, arrays, param.numel, update, errors);
    });
  });
}
