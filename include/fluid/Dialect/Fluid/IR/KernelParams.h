//===- KernelParams.h - The runtime parameter structs of fluid ops --------===//
//
// Every runtime kernel takes its op's attributes as a plain struct or a few
// scalars (runtime/include/fluid/runtime/CpuKernels.h). These helpers build
// them from an op, for the two places that call kernels: the interpreter
// (which calls them) and the C++ emitter (which writes calls).
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_DIALECT_FLUID_IR_KERNELPARAMS_H
#define FLUID_DIALECT_FLUID_IR_KERNELPARAMS_H

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/runtime/CpuKernels.h"
#include "fluid/runtime/CpuOptimizerKernels.h"
#include "fluid/runtime/Init.h"

#include <algorithm>
#include <optional>

namespace mlir::fluid {

/// The runtime's element type of an MLIR element type, if it has one.
inline std::optional<fluid_dtype> getDType(Type elementType) {
  if (elementType.isF32())
    return FLUID_F32;
  if (elementType.isF64())
    return FLUID_F64;
  if (elementType.isF16())
    return FLUID_F16;
  if (elementType.isBF16())
    return FLUID_BF16;
  if (elementType.isSignlessInteger(32))
    return FLUID_I32;
  if (elementType.isSignlessInteger(64))
    return FLUID_I64;
  if (elementType.isUnsignedInteger(8))
    return FLUID_U8;
  return std::nullopt;
}

/// An axis made non-negative.
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// Reduce parameters with axes made non-negative.
inline fluid_reduce_params reduceParams(std::optional<ArrayRef<int64_t>> axes,
                                        bool keepDims, int64_t rank) {
  fluid_reduce_params p = {};
  p.keep_dims = keepDims;
  if (axes) {
    for (int64_t axis : *axes)
      p.axes[p.num_axes++] = normalizeAxis(axis, rank);
  }
  return p;
}

/// Transpose parameters. A rank beyond FLUID_MAX_RANK keeps its true value
/// in `rank` (and the first FLUID_MAX_RANK entries), so that the kernel
/// reports it instead of reading past the array.
inline fluid_transpose_params transposeParams(TransposeOp op) {
  fluid_transpose_params p = {};
  ArrayRef<int64_t> perm = op.getPermutation();
  p.rank = static_cast<int32_t>(perm.size());
  for (size_t d = 0; d < perm.size() && d < FLUID_MAX_RANK; ++d)
    p.perm[d] = perm[d];
  return p;
}

/// The runtime's fluid_loss_reduction of a reduction attribute.
inline int32_t toRuntime(Reduction reduction) {
  switch (reduction) {
  case Reduction::Mean:
    return FLUID_REDUCTION_MEAN;
  case Reduction::Sum:
    return FLUID_REDUCTION_SUM;
  case Reduction::None:
    return FLUID_REDUCTION_NONE;
  }
  return FLUID_REDUCTION_MEAN;
}

namespace detail {
template <size_t N>
inline void copyArray(int64_t (&to)[N], ArrayRef<int64_t> from) {
  std::copy_n(from.begin(), N, to);
}
} // namespace detail

/// The runtime parameters of a convolution or its gradients.
template <typename ConvLikeOp> fluid_conv2d_params convParams(ConvLikeOp op) {
  fluid_conv2d_params p = {};
  detail::copyArray(p.strides, op.getStrides());
  detail::copyArray(p.padding, op.getPadding());
  detail::copyArray(p.dilation, op.getDilation());
  p.groups = op.getGroups();
  p.channels_last = op.getChannelsLast();
  return p;
}

/// The runtime parameters of max pooling or its gradient.
template <typename MaxPoolLikeOp>
fluid_max_pool2d_params maxPoolParams(MaxPoolLikeOp op) {
  fluid_max_pool2d_params p = {};
  detail::copyArray(p.kernel, op.getKernelSize());
  detail::copyArray(p.strides, op.getStrides());
  detail::copyArray(p.padding, op.getPadding());
  detail::copyArray(p.dilation, op.getDilation());
  p.ceil_mode = op.getCeilMode();
  p.channels_last = op.getChannelsLast();
  return p;
}

/// The runtime parameters of average pooling or its gradient.
template <typename AvgPoolLikeOp>
fluid_avg_pool2d_params avgPoolParams(AvgPoolLikeOp op) {
  fluid_avg_pool2d_params p = {};
  detail::copyArray(p.kernel, op.getKernelSize());
  detail::copyArray(p.strides, op.getStrides());
  detail::copyArray(p.padding, op.getPadding());
  p.ceil_mode = op.getCeilMode();
  p.count_include_pad = op.getCountIncludePad();
  return p;
}

inline fluid_batch_norm_params batchNormParams(BatchNormOp op) {
  return {op.getEpsilon().convertToDouble(),
          op.getMomentum().convertToDouble()};
}

inline fluid_matmul_params matmulParams(MatmulOp op) {
  return {op.getTransposeLhs(), op.getTransposeRhs()};
}

/// The parameter structs of the updates, single or grouped (the ops have
/// the same attributes).
template <typename Op> fluid_sgd_params sgdParams(Op op) {
  return {op.getWeightDecay().convertToDouble()};
}

template <typename Op> fluid_momentum_params momentumParams(Op op) {
  return {op.getMomentum().convertToDouble(),
          op.getWeightDecay().convertToDouble(), op.getNesterov()};
}

template <typename Op> fluid_adam_params adamParams(Op op) {
  return {op.getBeta1().convertToDouble(), op.getBeta2().convertToDouble(),
          op.getEpsilon().convertToDouble(),
          op.getWeightDecay().convertToDouble(), op.getDecoupled()};
}

/// The runtime's description of a floating-point initializer.
inline fluid_init_spec initSpec(InitializerAttr init) {
  fluid_init_spec spec = {};
  double a = init.getAValue(), b = init.getBValue();
  spec.fan_mode =
      init.getFanMode() == FanMode::FanOut ? FLUID_FAN_OUT : FLUID_FAN_IN;
  switch (init.getKind()) {
  case InitKind::Zeros:
    spec.kind = FLUID_INIT_ZEROS;
    break;
  case InitKind::Ones:
    spec.kind = FLUID_INIT_ONES;
    break;
  case InitKind::Constant:
    spec.kind = FLUID_INIT_CONSTANT;
    spec.value = a;
    break;
  case InitKind::Normal:
    spec.kind = FLUID_INIT_NORMAL;
    spec.std = a;
    break;
  case InitKind::Uniform:
    spec.kind = FLUID_INIT_UNIFORM;
    spec.low = a;
    spec.high = b;
    break;
  case InitKind::KaimingNormal:
    spec.kind = FLUID_INIT_KAIMING_NORMAL;
    spec.gain = a;
    break;
  case InitKind::KaimingUniform:
    spec.kind = FLUID_INIT_KAIMING_UNIFORM;
    spec.gain = a;
    break;
  case InitKind::XavierUniform:
    spec.kind = FLUID_INIT_XAVIER_UNIFORM;
    spec.gain = a;
    break;
  }
  return spec;
}

/// The value an integer parameter (a step counter) starts at: 0, 1 or the
/// constant.
inline int64_t integerInitValue(InitializerAttr init) {
  if (init.getKind() == InitKind::Ones)
    return 1;
  if (init.getKind() == InitKind::Constant)
    return static_cast<int64_t>(init.getAValue());
  return 0;
}

} // namespace mlir::fluid

#endif // FLUID_DIALECT_FLUID_IR_KERNELPARAMS_H
