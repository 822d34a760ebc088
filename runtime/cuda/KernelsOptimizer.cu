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
// The per-element arithmetic (OptimizerUpdates.cuh) is shared with the
// grouped updates of KernelsOptimizerGroup.cu.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.cuh"
#include "OptimizerUpdates.cuh"

#include "fluid/runtime/CudaKernels.h"

using namespace fluid::rt;
using namespace fluid::rt::cuda;
using namespace fluid::rt::cuda::optimizer;

namespace {

template <typename T, int NIn, int NOut> struct Arrays {
  const T *in[NIn];
  T *out[NOut];
};

/// Runs `update` (an Update of OptimizerUpdates.cuh) over n elements.
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

} // namespace

extern "C" fluid_status
fluid_cuda_sgd(fluid_cuda_context *context, const fluid_tensor *paramDesc,
               const fluid_tensor *gradDesc, const fluid_tensor *lrDesc,
               const fluid_tensor *foundInfDesc, fluid_tensor *newParamDesc,
               const fluid_sgd_params *params) {
  return guard("fluid_cuda_sgd", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor param = checkTensor(context, paramDesc, "param");
    CheckedTensor grad = checkTensor(context, gradDesc, "grad");
    CheckedTensor lrTensor = checkTensor(context, lrDesc, "lr");
    CheckedTensor newParam = checkTensor(context, newParamDesc, "new_param");
    cpu::requireParams(params);
    requireLikeParam(param, {&grad, &newParam});
    checkSgdParams(*params);
    const LearningRate lr = checkLearningRate(lrTensor);
    const float *foundInf = checkFoundInf(context, foundInfDesc);
    DeviceErrorRecord *errors = deviceErrorRecord(context);

    cpu::dispatchFloat(param.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const Arrays<T, 2, 1> arrays{{param.data<T>(), grad.data<T>()},
                                   {newParam.data<T>()}};
      launchUpdate(stream, arrays, param.numel,
                   makeSgdUpdate<T>(lr, *params, kFromSgd, foundInf), errors);
    });
  });
}

extern "C" fluid_status fluid_cuda_momentum(
    fluid_cuda_context *context, const fluid_tensor *paramDesc,
    const fluid_tensor *gradDesc, const fluid_tensor *velocityDesc,
    const fluid_tensor *lrDesc, const fluid_tensor *foundInfDesc,
    fluid_tensor *newParamDesc, fluid_tensor *newVelocityDesc,
    const fluid_momentum_params *params) {
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
    checkMomentumParams(*params);
    const LearningRate lr = checkLearningRate(lrTensor);
    const float *foundInf = checkFoundInf(context, foundInfDesc);
    DeviceErrorRecord *errors = deviceErrorRecord(context);

    cpu::dispatchFloat(param.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const Arrays<T, 3, 2> arrays{
          {param.data<T>(), grad.data<T>(), velocity.data<T>()},
          {newParam.data<T>(), newVelocity.data<T>()}};
      launchUpdate(stream, arrays, param.numel,
                   makeMomentumUpdate<T>(lr, *params, kFromMomentum, foundInf),
                   errors);
    });
  });
}

extern "C" fluid_status
fluid_cuda_adam(fluid_cuda_context *context, const fluid_tensor *paramDesc,
                const fluid_tensor *gradDesc, const fluid_tensor *mDesc,
                const fluid_tensor *vDesc, const fluid_tensor *lrDesc,
                const fluid_tensor *stepDesc, const fluid_tensor *foundInfDesc,
                fluid_tensor *newParamDesc, fluid_tensor *newMDesc,
                fluid_tensor *newVDesc, const fluid_adam_params *params) {
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
    checkAdamParams(*params);
    const LearningRate lr = checkLearningRate(lrTensor);
    const int64_t *step = checkStep(stepTensor);
    const float *foundInf = checkFoundInf(context, foundInfDesc);
    DeviceErrorRecord *errors = deviceErrorRecord(context);

    cpu::dispatchFloat(param.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const Arrays<T, 4, 3> arrays{
          {param.data<T>(), grad.data<T>(), m.data<T>(), v.data<T>()},
          {newParam.data<T>(), newM.data<T>(), newV.data<T>()}};
      launchUpdate(stream, arrays, param.numel,
                   makeAdamUpdate<T>(lr, step, *params, kFromAdam, foundInf),
                   errors);
    });
  });
}
