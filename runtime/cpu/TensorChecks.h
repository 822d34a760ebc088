//===- TensorChecks.h - Descriptor validation for the cpu kernels ---------===//
//
// Every cpu kernel validates its descriptors before touching any data, with
// these helpers, so that a bad call from emitted code or a test harness ends
// in an error message that names the tensor and the problem.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CPU_TENSORCHECKS_H
#define FLUID_RUNTIME_CPU_TENSORCHECKS_H

#include "fluid/runtime/Error.h"
#include "fluid/runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fluid::rt::cpu {

using Shape = std::vector<int64_t>;

/// "[2,8,4,4]" ("[]" for rank 0).
std::string formatShape(const Shape &shape);

/// "f32", "i64", ...; "dtype <n>" for an unknown value.
std::string dtypeName(int32_t dtype);

/// a * b and a + b, failing with a message naming `what` on int64 overflow.
int64_t checkedMul(int64_t a, int64_t b, const std::string &what);
int64_t checkedAdd(int64_t a, int64_t b, const std::string &what);

/// A descriptor that passed checkTensor, with its name for messages.
struct CheckedTensor {
  const fluid_tensor *desc;
  std::string name;
  Shape shape;
  int64_t numel;

  int32_t dtype() const { return desc->dtype; }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t dim(int64_t i) const { return shape[i]; }
  template <typename T> T *data() const { return static_cast<T *>(desc->data); }
};

/// Checks that `desc` is a usable descriptor: non-null, rank in
/// [0, FLUID_MAX_RANK], a known dtype, non-negative dimensions whose
/// non-zero ones make a byte size that fits in int64, and non-null data
/// unless it has no elements.
CheckedTensor checkTensor(const fluid_tensor *desc, const std::string &name);

/// Fails unless `t` has rank `rank`.
void requireRank(const CheckedTensor &t, int64_t rank);

/// Fails unless `t` has dtype `dtype`, the dtype of `reference`.
void requireDtype(const CheckedTensor &t, const CheckedTensor &reference);

/// Fails with "<name> shape [..] does not match expected [..]".
void requireShape(const CheckedTensor &t, const Shape &expected);

/// Fails (as unsupported) unless `t` is f32 or f64.
void requireFloat(const CheckedTensor &t);

/// Whether `dtype` is f16 or bf16.
inline bool isFloat16Dtype(int32_t dtype) {
  return dtype == FLUID_F16 || dtype == FLUID_BF16;
}

/// Fails (as unsupported) unless `t` is f16, bf16, f32 or f64: the dtypes
/// the cuda backend's library calls (cuDNN convolutions, cuBLAS products)
/// store, 16-bit ones accumulated in f32.
void requireLibraryFloat(const CheckedTensor &t);

/// Fails unless the parameter struct pointer is non-null.
void requireParams(const void *params);

/// The operands of a gradient written in terms of the forward output, of
/// the forward input's shape (activations, softmax).
struct OutputGradOperands {
  CheckedTensor gradOutput, output, gradInput;
};

/// Checks the descriptors of such a gradient, named grad_output, output and
/// grad_input: output is float, and grad_output and grad_input have its
/// dtype and then its shape.
OutputGradOperands checkOutputGradOperands(const fluid_tensor *gradOutputDesc,
                                           const fluid_tensor *outputDesc,
                                           const fluid_tensor *gradInputDesc);

/// Checks the optional bias of conv2d and linear, null for none: the dtype
/// of `input` and shape [channels].
void checkOptionalBias(const fluid_tensor *biasDesc, const CheckedTensor &input,
                       int64_t channels);

/// A tensor seen as [outer, length, inner] around one of its axes.
struct AxisSplit {
  int64_t outer = 1, length = 1, inner = 1;
};

/// Splits `t` around `axis`, failing unless axis is in [0, rank).
AxisSplit splitAtAxis(const CheckedTensor &t, int64_t axis);

/// Fails unless the class labels `labels` are i64 or i32.
void requireClassLabelDtype(const CheckedTensor &labels);

/// Reads class labels (i64 or i32) as int64, failing unless each is in
/// [0, classes), with a message naming the row and the value.
std::vector<int64_t> readClassLabels(const CheckedTensor &labels,
                                     int64_t classes);

/// Checks the operands of gather and its gradient: `indices` is a 1-D i32
/// or i64 tensor, and `gathered` (gather's output, the gradient's
/// grad_output) is `data` (gather's input, the gradient's grad_input) with
/// dimension `axis` replaced by the indices' count, in `data`'s dtype.
/// Returns `gathered` split around the axis (length: the count) and, in
/// `extent`, the size of `data` along the axis.
AxisSplit checkGather(const CheckedTensor &data, const CheckedTensor &indices,
                      const CheckedTensor &gathered, int64_t axis,
                      int64_t &extent);

/// Reads gather's indices (i64 or i32) as int64, failing unless each is in
/// [0, extent), with a message naming the position and the value.
std::vector<int64_t> readGatherIndices(const CheckedTensor &indices,
                                       int64_t extent);

/// Fails unless `loss`, a loss over `rows` rows or its gradient, has the
/// shape `reduction` (a fluid_loss_reduction) gives it: [rows] for none,
/// [] for mean and sum.
void requireLossShape(const CheckedTensor &loss, int64_t rows,
                      int32_t reduction);

/// Calls `body(T{})` with T the C++ type of the float dtype `dtype`
/// (already checked by requireFloat).
template <typename Fn> void dispatchFloat(int32_t dtype, Fn &&body) {
  if (dtype == FLUID_F32)
    body(float{});
  else
    body(double{});
}

/// Calls `visit(index)` for every index over the leading rank-1 dimensions
/// of `shape`, in row-major order, leaving the last dimension to the
/// caller's inner loop; once for rank 0 and 1; never for an empty shape.
template <typename Fn> void forEachRow(const Shape &shape, Fn &&visit) {
  for (int64_t size : shape)
    if (size == 0)
      return;
  size_t leading = shape.empty() ? 0 : shape.size() - 1;
  Shape index(leading, 0);
  for (;;) {
    visit(index);
    size_t d = leading;
    for (; d > 0; --d) {
      if (++index[d - 1] < shape[d - 1])
        break;
      index[d - 1] = 0;
    }
    if (d == 0)
      return;
  }
}

} // namespace fluid::rt::cpu

#endif // FLUID_RUNTIME_CPU_TENSORCHECKS_H
