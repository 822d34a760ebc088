//===- Elementwise.cpp - Unary and broadcasting binary ops on the cpu -----===//
//
// Each element of the output is written after both of its operands were
// read, so an output may share its buffer with an input of the same shape.
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"

#include "fluid/runtime/CpuKernels.h"

#include <algorithm>
#include <cmath>

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

template <typename Fn>
fluid_status unary(const char *entryPoint, const fluid_tensor *inputDesc,
                   fluid_tensor *outputDesc, Fn &&apply) {
  return guard(entryPoint, [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireFloat(input);
    requireDtype(output, input);
    requireShape(output, input.shape);
    dispatchFloat(input.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T *in = input.data<T>();
      T *out = output.data<T>();
      for (int64_t i = 0; i < input.numel; ++i)
        out[i] = apply(in[i]);
    });
  });
}

/// The NumPy broadcast of two shapes, failing if they are incompatible.
Shape broadcastShapes(const CheckedTensor &lhs, const CheckedTensor &rhs) {
  size_t rank = std::max(lhs.shape.size(), rhs.shape.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // i counts dimensions from the right; a missing dimension acts as 1.
    int64_t l = i < lhs.shape.size() ? lhs.shape[lhs.shape.size() - 1 - i] : 1;
    int64_t r = i < rhs.shape.size() ? rhs.shape[rhs.shape.size() - 1 - i] : 1;
    if (l != r && l != 1 && r != 1)
      fail("lhs shape " + formatShape(lhs.shape) + " and rhs shape " +
           formatShape(rhs.shape) + " do not broadcast (" + std::to_string(l) +
           " vs " + std::to_string(r) + " in dimension " +
           std::to_string(rank - 1 - i) + " of the result)");
    result[rank - 1 - i] = l == 1 ? r : l;
  }
  return result;
}

/// Element strides of `operand` indexed by the output's dimensions: 0 along
/// dimensions it is broadcast over (missing or of size 1).
Shape broadcastStrides(const Shape &operand, size_t outRank) {
  Shape strides(outRank, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < operand.size(); ++i) {
    size_t d = operand.size() - 1 - i;
    if (operand[d] != 1)
      strides[outRank - 1 - i] = stride;
    stride *= operand[d];
  }
  return strides;
}

template <typename T, typename Fn>
void broadcastBinary(const T *lhs, const Shape &lhsStrides, const T *rhs,
                     const Shape &rhsStrides, T *out, const Shape &outShape,
                     Fn &&apply) {
  const int64_t rowLength = outShape.empty() ? 1 : outShape.back();
  const int64_t lhsStep = outShape.empty() ? 0 : lhsStrides.back();
  const int64_t rhsStep = outShape.empty() ? 0 : rhsStrides.back();
  T *outRow = out;
  forEachRow(outShape, [&](const Shape &index) {
    int64_t lhsOffset = 0, rhsOffset = 0;
    for (size_t d = 0; d < index.size(); ++d) {
      lhsOffset += index[d] * lhsStrides[d];
      rhsOffset += index[d] * rhsStrides[d];
    }
    for (int64_t i = 0; i < rowLength; ++i)
      outRow[i] =
          apply(lhs[lhsOffset + i * lhsStep], rhs[rhsOffset + i * rhsStep]);
    outRow += rowLength;
  });
}

template <typename Fn>
fluid_status binary(const char *entryPoint, const fluid_tensor *lhsDesc,
                    const fluid_tensor *rhsDesc, fluid_tensor *outputDesc,
                    Fn &&apply) {
  return guard(entryPoint, [&] {
    CheckedTensor lhs = checkTensor(lhsDesc, "lhs");
    CheckedTensor rhs = checkTensor(rhsDesc, "rhs");
    CheckedTensor output = checkTensor(outputDesc, "output");
    requireFloat(lhs);
    requireDtype(rhs, lhs);
    requireDtype(output, lhs);
    requireShape(output, broadcastShapes(lhs, rhs));

    const size_t rank = output.shape.size();
    Shape lhsStrides = broadcastStrides(lhs.shape, rank);
    Shape rhsStrides = broadcastStrides(rhs.shape, rank);
    dispatchFloat(lhs.dtype(), [&](auto zero) {
      using T = decltype(zero);
      broadcastBinary(lhs.data<T>(), lhsStrides, rhs.data<T>(), rhsStrides,
                      output.data<T>(), output.shape, apply);
    });
  });
}

} // namespace

extern "C" fluid_status fluid_cpu_relu(const fluid_tensor *input,
                                       fluid_tensor *output) {
  // `x < 0 ? 0 : x` rather than max(x, 0) so that NaN propagates.
  return unary("fluid_cpu_relu", input, output,
               [](auto x) { return x < 0 ? decltype(x)(0) : x; });
}

extern "C" fluid_status fluid_cpu_sigmoid(const fluid_tensor *input,
                                          fluid_tensor *output) {
  return unary("fluid_cpu_sigmoid", input, output, [](auto x) {
    using T = decltype(x);
    return T(1) / (T(1) + std::exp(-x));
  });
}

extern "C" fluid_status fluid_cpu_tanh(const fluid_tensor *input,
                                       fluid_tensor *output) {
  return unary("fluid_cpu_tanh", input, output,
               [](auto x) { return std::tanh(x); });
}

extern "C" fluid_status fluid_cpu_add(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  return binary("fluid_cpu_add", lhs, rhs, output,
                [](auto a, auto b) { return a + b; });
}

extern "C" fluid_status fluid_cpu_sub(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  return binary("fluid_cpu_sub", lhs, rhs, output,
                [](auto a, auto b) { return a - b; });
}

extern "C" fluid_status fluid_cpu_mul(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  return binary("fluid_cpu_mul", lhs, rhs, output,
                [](auto a, auto b) { return a * b; });
}

extern "C" fluid_status fluid_cpu_div(const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output) {
  return binary("fluid_cpu_div", lhs, rhs, output,
                [](auto a, auto b) { return a / b; });
}
