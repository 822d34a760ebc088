//===- Gemm.cpp - matmul and linear with cuBLAS ---------------------------===//
//
// Tensors are row-major, cuBLAS is column-major: a row-major [M,N] matrix
// is the column-major [N,M] matrix of its transpose. So C = op(A) op(B)
// (row-major) is computed as C^T = op(B)^T op(A)^T (column-major), i.e.
// cuBLAS is called with the operands swapped and M and N exchanged, each
// operand's transpose flag kept, and its leading dimension the length of
// its stored rows. One strided-batched call covers rank 2 (a batch of one)
// and rank 3. The 64-bit cuBLAS API takes the sizes as they are.
//
// f32 computes in CUBLAS_COMPUTE_32F_FAST_TF32 with allow_tf32 and in
// CUBLAS_COMPUTE_32F otherwise (matching the handle's math mode); f64 in
// CUBLAS_COMPUTE_64F; f16 and bf16 in CUBLAS_COMPUTE_32F (tensor cores,
// f32 sums, the result rounded to the operands' type). linear's bias is
// broadcast-added by cudnnAddTensor after the GEMM, on the same stream.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "../cpu/Linalg.h"
#include "../cpu/TensorChecks.h"

#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/CudaKernels.h"

using namespace fluid::rt;
using namespace fluid::rt::cpu;
using namespace fluid::rt::cuda;

namespace {

/// The validated sizes of one matmul: batch x [M,K] * [K,N].
/// output = lhs * rhs, or with `accumulate` output = lhs * rhs + output
/// (in the compute type, rounded once), batched, all row-major device
/// memory of `dtype`.
void gemm(fluid_cuda_context *context, int32_t dtype, const MatmulShape &s,
          const void *lhs, const void *rhs, void *output,
          bool accumulate = false) {
  if (s.batch == 0 || s.m == 0 || s.n == 0)
    return;
  if (s.k == 0) {
    if (accumulate)
      return; // output + an empty sum
    // An empty sum: cuBLAS may leave C alone when k is 0.
    FLUID_CUDA_CHECK(cudaMemsetAsync(
        output, 0,
        static_cast<size_t>(s.batch * s.m * s.n * fluid_dtype_size(dtype)),
        streamOf(context)));
    return;
  }
  const bool f64 = dtype == FLUID_F64;
  const cudaDataType type = f64                   ? CUDA_R_64F
                            : dtype == FLUID_F16  ? CUDA_R_16F
                            : dtype == FLUID_BF16 ? CUDA_R_16BF
                                                  : CUDA_R_32F;
  // 16-bit operands run on the tensor cores with f32 sums whatever the
  // TF32 choice.
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F
      : allowTf32(context) && !isFloat16Dtype(dtype)
          ? CUBLAS_COMPUTE_32F_FAST_TF32
          : CUBLAS_COMPUTE_32F;
  // The column-major call: C^T [N,M] = op(rhs)^T [N,K] * op(lhs)^T [K,M].
  const cublasOperation_t opRhs = s.transposeRhs ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opLhs = s.transposeLhs ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ldRhs = s.transposeRhs ? s.k : s.n;
  const int64_t ldLhs = s.transposeLhs ? s.m : s.k;
  FLUID_CUBLAS_CHECK(cublasGemmStridedBatchedEx_64(
      cublasOf(context), opRhs, opLhs, s.n, s.m, s.k, scalarOne(dtype), rhs,
      type, ldRhs, s.k * s.n, lhs, type, ldLhs, s.m * s.k,
      accumulate ? scalarOne(dtype) : scalarZero(dtype), output, type, s.n,
      s.m * s.n, s.batch, compute, CUBLAS_GEMM_DEFAULT));
}

} // namespace

extern "C" fluid_status fluid_cuda_matmul(fluid_cuda_context *context,
                                          const fluid_tensor *lhsDesc,
                                          const fluid_tensor *rhsDesc,
                                          fluid_tensor *outputDesc,
                                          const fluid_matmul_params *params) {
  return guard("fluid_cuda_matmul", [&] {
    requireContext(context);
    CheckedTensor lhs = checkTensor(lhsDesc, "lhs");
    CheckedTensor rhs = checkTensor(rhsDesc, "rhs");
    CheckedTensor output = checkTensor(outputDesc, "output");
    MatmulShape s = checkMatmul(lhs, rhs, output, params, /*sixteenBit=*/true);
    requireDeviceMemory(context, lhs);
    requireDeviceMemory(context, rhs);
    requireDeviceMemory(context, output);

    gemm(context, lhs.dtype(), s, lhs.desc->data, rhs.desc->data,
         output.desc->data);
  });
}

extern "C" fluid_status fluid_cuda_linear(fluid_cuda_context *context,
                                          const fluid_tensor *inputDesc,
                                          const fluid_tensor *weightDesc,
                                          const fluid_tensor *biasDesc,
                                          fluid_tensor *outputDesc) {
  return guard("fluid_cuda_linear", [&] {
    requireContext(context);
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor weight = checkTensor(weightDesc, "weight");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireLibraryFloat(input);
    requireDtype(weight, input);
    requireDtype(output, input);
    requireRank(input, 2);
    requireRank(weight, 2);
    const int64_t batch = input.dim(0), inFeatures = input.dim(1);
    const int64_t outFeatures = weight.dim(0);
    if (weight.dim(1) != inFeatures)
      fail("weight shape " + formatShape(weight.shape) +
           " does not match input features " + std::to_string(inFeatures) +
           " (expected [out," + std::to_string(inFeatures) + "])");
    if (biasDesc) {
      CheckedTensor bias = checkTensor(biasDesc, "bias");
      requireDtype(bias, input);
      requireShape(bias, {outFeatures});
      requireDeviceMemory(context, bias);
    }
    requireShape(output, {batch, outFeatures});
    requireDeviceMemory(context, input);
    requireDeviceMemory(context, weight);
    requireDeviceMemory(context, output);

    // output = input * weight^T (+ bias). A 16-bit output takes the bias
    // first (exact) and the product blended onto it in f32, so that the
    // sum is rounded to 16 bits once, as the cpu backend rounds it.
    const int32_t dtype = input.dtype();
    const bool withBias = biasDesc && output.numel > 0;
    const bool biasFirst = withBias && isFloat16Dtype(dtype);
    auto addBias = [&](bool replace) {
      addChannelBias(context, dtype, biasDesc->data, output.desc->data,
                     CUDNN_TENSOR_NCHW, batch, outFeatures, 1, 1, replace);
    };
    if (biasFirst)
      addBias(/*replace=*/true);
    MatmulShape s{1, batch, inFeatures, outFeatures, false, true};
    gemm(context, dtype, s, input.desc->data, weight.desc->data,
         output.desc->data, biasFirst);
    if (withBias && !biasFirst)
      addBias(/*replace=*/false);
  });
}
