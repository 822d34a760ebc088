//===- Linalg.cpp - matmul and linear on the cpu --------------------------===//

#include "Linalg.h"
#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuKernels.h"

#include <algorithm>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

/// A matrix operand read through element strides, so that a transposed
/// operand needs no copy.
template <typename T> struct StridedMatrix {
  const T *data;
  int64_t rowStride, colStride;
  T at(int64_t row, int64_t col) const {
    return data[row * rowStride + col * colStride];
  }
};

/// The validated sizes of one matmul call: batch x [M,K] * [K,N].
template <typename T>
void matmul(const T *lhsData, const T *rhsData, T *out, const MatmulShape &s) {
  // Sums over K are kept in double so that f32 results are rounded once.
  std::vector<double> row(s.n);
  for (int64_t b = 0; b < s.batch; ++b) {
    StridedMatrix<T> lhs{lhsData + b * s.m * s.k, s.transposeLhs ? 1 : s.k,
                         s.transposeLhs ? s.m : 1};
    StridedMatrix<T> rhs{rhsData + b * s.k * s.n, s.transposeRhs ? 1 : s.n,
                         s.transposeRhs ? s.k : 1};
    for (int64_t i = 0; i < s.m; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t p = 0; p < s.k; ++p) {
        const double a = lhs.at(i, p);
        for (int64_t j = 0; j < s.n; ++j)
          row[j] += a * rhs.at(p, j);
      }
      out = std::copy(row.begin(), row.end(), out);
    }
  }
}

template <typename T>
void linear(const T *input, const T *weight, const T *bias, T *output,
            int64_t batch, int64_t inFeatures, int64_t outFeatures) {
  for (int64_t n = 0; n < batch; ++n) {
    const T *x = input + n * inFeatures;
    for (int64_t o = 0; o < outFeatures; ++o) {
      const T *w = weight + o * inFeatures;
      double sum = bias ? double(bias[o]) : 0.0;
      for (int64_t i = 0; i < inFeatures; ++i)
        sum += double(x[i]) * w[i];
      *output++ = T(sum);
    }
  }
}

} // namespace

MatmulShape fluid::rt::cpu::checkMatmul(const CheckedTensor &lhs,
                                        const CheckedTensor &rhs,
                                        const CheckedTensor &output,
                                        const fluid_matmul_params *params,
                                        bool sixteenBit) {
  requireParams(params);
  if (sixteenBit)
    requireLibraryFloat(lhs);
  else
    requireFloat(lhs);
  requireDtype(rhs, lhs);
  requireDtype(output, lhs);
  if (lhs.rank() != 2 && lhs.rank() != 3)
    fail("lhs must have rank 2 or 3, got shape " + formatShape(lhs.shape));
  requireRank(rhs, lhs.rank());

  MatmulShape s;
  s.transposeLhs = params->transpose_lhs != 0;
  s.transposeRhs = params->transpose_rhs != 0;
  const int64_t rows = lhs.rank() - 2; // index of the matrix dimensions
  s.batch = lhs.rank() == 3 ? lhs.dim(0) : 1;
  if (lhs.rank() == 3 && rhs.dim(0) != s.batch)
    fail("lhs shape " + formatShape(lhs.shape) + " and rhs shape " +
         formatShape(rhs.shape) + " have different batch sizes");
  s.m = lhs.dim(rows + (s.transposeLhs ? 1 : 0));
  s.k = lhs.dim(rows + (s.transposeLhs ? 0 : 1));
  s.n = rhs.dim(rows + (s.transposeRhs ? 0 : 1));
  int64_t rhsK = rhs.dim(rows + (s.transposeRhs ? 1 : 0));
  if (rhsK != s.k)
    fail("contraction sizes differ: lhs shape " + formatShape(lhs.shape) +
         (s.transposeLhs ? " (transposed)" : "") +
         " has K = " + std::to_string(s.k) + ", rhs shape " +
         formatShape(rhs.shape) + (s.transposeRhs ? " (transposed)" : "") +
         " has K = " + std::to_string(rhsK));
  Shape expected{s.m, s.n};
  if (lhs.rank() == 3)
    expected.insert(expected.begin(), s.batch);
  requireShape(output, expected);
  return s;
}

extern "C" fluid_status fluid_cpu_matmul(const fluid_tensor *lhsDesc,
                                         const fluid_tensor *rhsDesc,
                                         fluid_tensor *outputDesc,
                                         const fluid_matmul_params *params) {
  if (auto status = throughF32("fluid_cpu_matmul", fluid_cpu_matmul, lhsDesc,
                               rhsDesc, outputDesc, params))
    return *status;
  return guard("fluid_cpu_matmul", [&] {
    CheckedTensor lhs = checkTensor(lhsDesc, "lhs");
    CheckedTensor rhs = checkTensor(rhsDesc, "rhs");
    CheckedTensor output = checkTensor(outputDesc, "output");
    MatmulShape s = checkMatmul(lhs, rhs, output, params);

    dispatchFloat(lhs.dtype(), [&](auto zero) {
      using T = decltype(zero);
      matmul(lhs.data<T>(), rhs.data<T>(), output.data<T>(), s);
    });
  });
}

extern "C" fluid_status fluid_cpu_linear(const fluid_tensor *inputDesc,
                                         const fluid_tensor *weightDesc,
                                         const fluid_tensor *biasDesc,
                                         fluid_tensor *outputDesc) {
  if (auto status = throughF32("fluid_cpu_linear", fluid_cpu_linear, inputDesc,
                               weightDesc, biasDesc, outputDesc))
    return *status;
  return guard("fluid_cpu_linear", [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor weight = checkTensor(weightDesc, "weight");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireFloat(input);
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
    checkOptionalBias(biasDesc, input, outFeatures);
    requireShape(output, {batch, outFeatures});

    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      linear(input.data<T>(), weight.data<T>(),
             biasDesc ? static_cast<const T *>(biasDesc->data) : nullptr,
             output.data<T>(), batch, inFeatures, outFeatures);
    });
  });
}
