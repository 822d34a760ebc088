//===- Broadcasting.h - NumPy broadcasting for the cpu kernels ------------===//
//
// The shape rule and the element walk shared by every cpu kernel whose
// operands broadcast against each other (binary elementwise ops, select):
// shapes are aligned from the right and each dimension is equal or 1, a
// missing dimension acting as 1 (so a rank-0 operand broadcasts everywhere).
// Also the bodies of the float unary and binary elementwise entry points,
// which are built on that walk.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPU_BROADCASTING_H
#define FLUID_RUNTIME_CPU_BROADCASTING_H

#include "TensorChecks.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace fluid::rt::cpu {

/// The NumPy broadcast of the operands' shapes, failing with a message that
/// names every operand's shape and the first conflicting dimension.
template <size_t N>
Shape broadcastShapes(const std::array<const CheckedTensor *, N> &operands) {
  size_t rank = 0;
  for (const CheckedTensor *operand : operands)
    rank = std::max(rank, operand->shape.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // i counts dimensions from the right; a missing dimension acts as 1.
    int64_t size = 1;
    for (const CheckedTensor *operand : operands) {
      const Shape &shape = operand->shape;
      int64_t d = i < shape.size() ? shape[shape.size() - 1 - i] : 1;
      if (d == 1 || d == size)
        continue;
      if (size != 1) {
        std::string names;
        for (size_t k = 0; k < N; ++k) {
          if (k > 0)
            names += k + 1 == N ? " and " : ", ";
          names +=
              operands[k]->name + " shape " + formatShape(operands[k]->shape);
        }
        fail(names + " do not broadcast (" + std::to_string(size) + " vs " +
             std::to_string(d) + " in dimension " +
             std::to_string(rank - 1 - i) + " of the result)");
      }
      size = d;
    }
    result[rank - 1 - i] = size;
  }
  return result;
}

/// Element strides of an operand of shape `operand` indexed by the output's
/// dimensions: 0 along dimensions it is broadcast over (missing or of size
/// 1).
inline Shape broadcastStrides(const Shape &operand, size_t outRank) {
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

/// Calls `visit(outIndex, offsets)` for every element of `outShape` in
/// row-major order, where outIndex is the element's linear index and
/// offsets[k] the linear index of the element of operand k (of shape
/// operandShapes[k], which broadcasts to outShape) that it reads.
template <size_t N, typename Fn>
void forEachBroadcastElement(const Shape &outShape,
                             const std::array<Shape, N> &operandShapes,
                             Fn &&visit) {
  std::array<Shape, N> strides;
  std::array<int64_t, N> steps;
  for (size_t k = 0; k < N; ++k) {
    strides[k] = broadcastStrides(operandShapes[k], outShape.size());
    steps[k] = outShape.empty() ? 0 : strides[k].back();
  }
  const int64_t rowLength = outShape.empty() ? 1 : outShape.back();
  int64_t outIndex = 0;
  forEachRow(outShape, [&](const Shape &index) {
    std::array<int64_t, N> rowStart{};
    for (size_t k = 0; k < N; ++k)
      for (size_t d = 0; d < index.size(); ++d)
        rowStart[k] += index[d] * strides[k][d];
    std::array<int64_t, N> offsets;
    for (int64_t i = 0; i < rowLength; ++i) {
      for (size_t k = 0; k < N; ++k)
        offsets[k] = rowStart[k] + i * steps[k];
      visit(outIndex++, offsets);
    }
  });
}

namespace detail {
template <typename T, size_t N, typename Fn, size_t... K>
T applyAt(Fn &apply, const std::array<const T *, N> &data,
          const std::array<int64_t, N> &offsets, std::index_sequence<K...>) {
  return apply(data[K][offsets[K]]...);
}
} // namespace detail

/// output = apply(operand values...) elementwise, with NumPy broadcasting,
/// for float operands and an output of one dtype. Checks the dtypes and the
/// output's shape before writing anything; each output element is written
/// after all of its operands were read, so the output may be the buffer of
/// an operand of its shape.
template <size_t N, typename Fn>
void mapBroadcast(const std::array<const CheckedTensor *, N> &operands,
                  const CheckedTensor &output, Fn &&apply) {
  requireFloat(*operands[0]);
  for (size_t k = 1; k < N; ++k)
    requireDtype(*operands[k], *operands[0]);
  requireDtype(output, *operands[0]);
  requireShape(output, broadcastShapes(operands));

  std::array<Shape, N> shapes;
  for (size_t k = 0; k < N; ++k)
    shapes[k] = operands[k]->shape;
  dispatchFloat(output.dtype(), [&](auto zero) {
    using T = decltype(zero);
    std::array<const T *, N> data;
    for (size_t k = 0; k < N; ++k)
      data[k] = operands[k]->template data<T>();
    T *out = output.data<T>();
    auto visit = [&](int64_t i, const std::array<int64_t, N> &offsets) {
      out[i] =
          detail::applyAt(apply, data, offsets, std::make_index_sequence<N>());
    };
    // Operands of the output's shape are read at the output's index: a plain
    // loop, which the compiler vectorizes, walks them.
    bool broadcasts = false;
    for (size_t k = 0; k < N; ++k)
      broadcasts = broadcasts || shapes[k] != output.shape;
    if (broadcasts) {
      forEachBroadcastElement(output.shape, shapes, visit);
      return;
    }
    for (int64_t i = 0; i < output.numel; ++i) {
      std::array<int64_t, N> offsets;
      offsets.fill(i);
      visit(i, offsets);
    }
  });
}

/// The body of a C entry point that computes output = apply(input)
/// elementwise (mapBroadcast with one operand: float, the input's dtype and
/// shape), reporting errors as `entryPoint`.
template <typename Fn>
fluid_status unaryEntry(const char *entryPoint, const fluid_tensor *inputDesc,
                        fluid_tensor *outputDesc, Fn &&apply) {
  return guard(entryPoint, [&] {
    CheckedTensor input = checkTensor(inputDesc, "input");
    CheckedTensor output = checkTensor(outputDesc, "output");
    mapBroadcast<1>({&input}, output, apply);
  });
}

/// The body of a C entry point that computes output = apply(lhs, rhs)
/// elementwise with NumPy broadcasting (mapBroadcast), reporting errors as
/// `entryPoint`.
template <typename Fn>
fluid_status binaryEntry(const char *entryPoint, const fluid_tensor *lhsDesc,
                         const fluid_tensor *rhsDesc, fluid_tensor *outputDesc,
                         Fn &&apply) {
  return guard(entryPoint, [&] {
    CheckedTensor lhs = checkTensor(lhsDesc, "lhs");
    CheckedTensor rhs = checkTensor(rhsDesc, "rhs");
    CheckedTensor output = checkTensor(outputDesc, "output");
    mapBroadcast<2>({&lhs, &rhs}, output, apply);
  });
}

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_BROADCASTING_H
