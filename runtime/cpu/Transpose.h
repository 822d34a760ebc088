//===- Transpose.h - Permuting the dimensions of a tensor -------*- C++ -*-===//
//
// The checks of fluid_cpu_transpose, which fluid_cuda_transpose shares so
// that both backends reject a call with the same message, and the cpu's
// byte-moving permutation, which the channels-last convolutions also use to
// bring their operands into the channels-first layout and back.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPU_TRANSPOSE_H
#define FLUID_RUNTIME_CPU_TRANSPOSE_H

#include "TensorChecks.h"

#include "fluid/runtime/CpuKernels.h"

#include <cstdint>
#include <vector>

namespace fluid::rt::cpu {

/// NHWC -> NCHW (and a filter [O,KH,KW,C/groups] -> [O,C/groups,KH,KW]),
/// and back: output dimension d is input dimension perm[d].
inline constexpr int64_t kToChannelsFirst[4] = {0, 3, 1, 2};
inline constexpr int64_t kToChannelsLast[4] = {0, 2, 3, 1};

/// Checks a transpose of `input` into `output`: non-null params, the same
/// dtype, params->rank within [0, FLUID_MAX_RANK] and equal to both ranks,
/// params->perm[0..rank) a permutation of [0, rank), and the output shape
/// the input's permuted (output dimension d is input dimension perm[d]).
void checkTranspose(const CheckedTensor &input, const CheckedTensor &output,
                    const fluid_transpose_params *params);

/// The shape of `shape` permuted by `perm` (output dimension d is
/// dimension perm[d]).
Shape permuteShape(const Shape &shape, const int64_t *perm);

/// Writes the dense row-major `input` of shape `inputShape`, elements of
/// `elementSize` bytes, to `output` with its dimensions permuted by `perm`
/// (a valid permutation of [0, rank)). The buffers must not overlap.
void transposeData(const void *input, const Shape &inputShape,
                   const int64_t *perm, int64_t elementSize, void *output);

/// A copy of `data` (shape `shape`) with its dimensions permuted by `perm`.
template <typename T>
std::vector<T> transposedCopy(const T *data, const Shape &shape,
                              const int64_t *perm) {
  int64_t numel = 1;
  for (int64_t size : shape)
    numel *= size;
  std::vector<T> copy(static_cast<size_t>(numel));
  transposeData(data, shape, perm, sizeof(T), copy.data());
  return copy;
}

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_TRANSPOSE_H
