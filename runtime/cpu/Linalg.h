//===- Linalg.h - The shape of a matrix product, shared by the backends ---===//

#ifndef FLUID_RUNTIME_CPU_LINALG_H
#define FLUID_RUNTIME_CPU_LINALG_H

#include "TensorChecks.h"

#include "fluid/runtime/CpuKernels.h"

namespace fluid::rt::cpu {

/// output[b] = op(lhs[b]) * op(rhs[b]), with op the optional transposition;
/// `batch` is 1 for rank-2 operands.
struct MatmulShape {
  int64_t batch, m, k, n;
  bool transposeLhs, transposeRhs;
};

/// Checks the descriptors of a matmul (every backend's) and returns its
/// shape; fails with a message naming the mismatch. f32 or f64 operands,
/// or with `sixteenBit` also f16 and bf16 (cuBLAS's).
MatmulShape checkMatmul(const CheckedTensor &lhs, const CheckedTensor &rhs,
                        const CheckedTensor &output,
                        const fluid_matmul_params *params,
                        bool sixteenBit = false);

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_LINALG_H
