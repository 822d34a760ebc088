//===- Norm.h - Operand checks shared by batch norm and its gradient ------===//
//
// Defined in Norm.cpp, used by the forward kernels there and the gradient
// in NormGrad.cpp, so that both accept the same operands.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPU_NORM_H
#define FLUID_RUNTIME_CPU_NORM_H

#include "TensorChecks.h"

#include <cstdint>
#include <string>

namespace fluid::rt::cpu {

/// The layout of a batch-norm input: [N,C] or [N,C,H,W] seen as
/// [N, C, spatial].
struct ChannelLayout {
  int64_t batch, channels, spatial;

  /// Calls visit(offset) for every element of channel `c`.
  template <typename Fn> void forEachInChannel(int64_t c, Fn &&visit) const {
    for (int64_t n = 0; n < batch; ++n) {
      int64_t base = (n * channels + c) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        visit(base + i);
    }
  }
};

/// Checks a batch-norm input (rank 2 or 4, float) and returns its layout.
ChannelLayout checkNormInput(const CheckedTensor &input);

/// Checks a per-channel operand: the input's dtype and shape [C].
CheckedTensor checkChannelTensor(const fluid_tensor *desc,
                                 const std::string &name,
                                 const CheckedTensor &input);

/// Checks an operand of the input's shape (the output or a gradient): the
/// input's dtype and shape.
CheckedTensor checkInputShapedTensor(const fluid_tensor *desc,
                                     const std::string &name,
                                     const CheckedTensor &input);

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_NORM_H
