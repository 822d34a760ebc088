//===- TensorChecks.cpp - Descriptor validation for the cpu kernels -------===//

#include "TensorChecks.h"

#include "fluid/runtime/CpuKernels.h"

using namespace fluid::rt;
using namespace fluid::rt::cpu;

std::string cpu::formatShape(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string cpu::dtypeName(int32_t dtype) {
  const char *name = fluid_dtype_name(dtype);
  return name ? name : "dtype " + std::to_string(dtype);
}

int64_t cpu::checkedMul(int64_t a, int64_t b, const std::string &what) {
  int64_t product;
  if (__builtin_mul_overflow(a, b, &product))
    fail(what + " overflows int64 (" + std::to_string(a) + " * " +
         std::to_string(b) + ")");
  return product;
}

int64_t cpu::checkedAdd(int64_t a, int64_t b, const std::string &what) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum))
    fail(what + " overflows int64 (" + std::to_string(a) + " + " +
         std::to_string(b) + ")");
  return sum;
}

CheckedTensor cpu::checkTensor(const fluid_tensor *desc,
                               const std::string &name) {
  if (!desc)
    fail(name + " descriptor is null");
  if (desc->rank < 0 || desc->rank > FLUID_MAX_RANK)
    fail(name + " has rank " + std::to_string(desc->rank) + ", outside [0, " +
         std::to_string(FLUID_MAX_RANK) + "]");
  int64_t elementSize = fluid_dtype_size(desc->dtype);
  if (elementSize == 0)
    fail(name + " has unknown " + dtypeName(desc->dtype));

  Shape shape(desc->shape, desc->shape + desc->rank);
  for (int64_t size : shape)
    if (size < 0)
      fail(name + " shape " + formatShape(shape) + " has a negative dimension");
  // Bounding the byte size of the non-zero dimensions keeps every partial
  // product of the shape (strides, offsets, sizes in bytes) in range, even
  // for a tensor with no elements.
  int64_t nonZeroProduct = 1;
  bool empty = false;
  for (int64_t size : shape) {
    if (size == 0)
      empty = true;
    else
      nonZeroProduct = checkedMul(nonZeroProduct, size,
                                  name + " shape " + formatShape(shape));
  }
  checkedMul(nonZeroProduct, elementSize, name + " size in bytes");
  int64_t numel = empty ? 0 : nonZeroProduct;
  if (numel > 0 && !desc->data)
    fail(name + " data is null");
  return CheckedTensor{desc, name, std::move(shape), numel};
}

void cpu::requireRank(const CheckedTensor &t, int64_t rank) {
  if (t.rank() != rank)
    fail(t.name + " must have rank " + std::to_string(rank) + ", got shape " +
         formatShape(t.shape));
}

void cpu::requireDtype(const CheckedTensor &t, const CheckedTensor &reference) {
  if (t.dtype() != reference.dtype())
    fail(t.name + " has dtype " + dtypeName(t.dtype()) + " but " +
         reference.name + " has " + dtypeName(reference.dtype()));
}

void cpu::requireShape(const CheckedTensor &t, const Shape &expected) {
  if (t.shape != expected)
    fail(t.name + " shape " + formatShape(t.shape) +
         " does not match expected " + formatShape(expected));
}

void cpu::requireFloat(const CheckedTensor &t) {
  if (t.dtype() != FLUID_F32 && t.dtype() != FLUID_F64)
    throw Error(FLUID_ERROR_UNSUPPORTED,
                t.name + " has dtype " + dtypeName(t.dtype()) +
                    "; the cpu kernels support f32 and f64");
}

void cpu::requireLibraryFloat(const CheckedTensor &t) {
  if (!isFloat16Dtype(t.dtype()) && t.dtype() != FLUID_F32 &&
      t.dtype() != FLUID_F64)
    throw Error(FLUID_ERROR_UNSUPPORTED,
                t.name + " has dtype " + dtypeName(t.dtype()) +
                    "; expected f16, bf16, f32 or f64");
}

void cpu::requireParams(const void *params) {
  if (!params)
    fail("params is null");
}

OutputGradOperands
cpu::checkOutputGradOperands(const fluid_tensor *gradOutputDesc,
                             const fluid_tensor *outputDesc,
                             const fluid_tensor *gradInputDesc) {
  OutputGradOperands t{checkTensor(gradOutputDesc, "grad_output"),
                       checkTensor(outputDesc, "output"),
                       checkTensor(gradInputDesc, "grad_input")};
  requireFloat(t.output);
  requireDtype(t.gradOutput, t.output);
  requireDtype(t.gradInput, t.output);
  requireShape(t.gradOutput, t.output.shape);
  requireShape(t.gradInput, t.output.shape);
  return t;
}

void cpu::checkOptionalBias(const fluid_tensor *biasDesc,
                            const CheckedTensor &input, int64_t channels) {
  if (!biasDesc)
    return;
  CheckedTensor bias = checkTensor(biasDesc, "bias");
  requireDtype(bias, input);
  requireShape(bias, {channels});
}

AxisSplit cpu::splitAtAxis(const CheckedTensor &t, int64_t axis) {
  if (axis < 0 || axis >= t.rank())
    fail("axis " + std::to_string(axis) + " is outside [0, " +
         std::to_string(t.rank()) + ") for " + t.name + " shape " +
         formatShape(t.shape));
  AxisSplit split;
  for (int64_t d = 0; d < axis; ++d)
    split.outer *= t.dim(d);
  split.length = t.dim(axis);
  for (int64_t d = axis + 1; d < t.rank(); ++d)
    split.inner *= t.dim(d);
  return split;
}

void cpu::requireClassLabelDtype(const CheckedTensor &labels) {
  if (labels.dtype() != FLUID_I64 && labels.dtype() != FLUID_I32)
    fail(labels.name + " has dtype " + dtypeName(labels.dtype()) +
         "; expected i64 or i32");
}

std::vector<int64_t> cpu::readClassLabels(const CheckedTensor &labels,
                                          int64_t classes) {
  requireClassLabelDtype(labels);
  std::vector<int64_t> values(labels.numel);
  for (int64_t i = 0; i < labels.numel; ++i)
    values[i] = labels.dtype() == FLUID_I64 ? labels.data<int64_t>()[i]
                                            : labels.data<int32_t>()[i];
  for (int64_t i = 0; i < labels.numel; ++i)
    if (values[i] < 0 || values[i] >= classes)
      fail("label " + std::to_string(values[i]) + " in row " +
           std::to_string(i) + " is outside [0, " + std::to_string(classes) +
           ")");
  return values;
}

AxisSplit cpu::checkGather(const CheckedTensor &data,
                           const CheckedTensor &indices,
                           const CheckedTensor &gathered, int64_t axis,
                           int64_t &extent) {
  if (indices.dtype() != FLUID_I64 && indices.dtype() != FLUID_I32)
    fail(indices.name + " has dtype " + dtypeName(indices.dtype()) +
         "; expected i64 or i32");
  requireRank(indices, 1);
  extent = splitAtAxis(data, axis).length;
  requireDtype(gathered, data);
  Shape expected = data.shape;
  expected[axis] = indices.dim(0);
  requireShape(gathered, expected);
  return splitAtAxis(gathered, axis);
}

std::vector<int64_t> cpu::readGatherIndices(const CheckedTensor &indices,
                                            int64_t extent) {
  std::vector<int64_t> values(indices.numel);
  for (int64_t i = 0; i < indices.numel; ++i)
    values[i] = indices.dtype() == FLUID_I64 ? indices.data<int64_t>()[i]
                                             : indices.data<int32_t>()[i];
  for (int64_t i = 0; i < indices.numel; ++i)
    if (values[i] < 0 || values[i] >= extent)
      fail("index " + std::to_string(values[i]) + " at position " +
           std::to_string(i) + " of " + indices.name + " is outside [0, " +
           std::to_string(extent) + ")");
  return values;
}

void cpu::requireLossShape(const CheckedTensor &loss, int64_t rows,
                           int32_t reduction) {
  if (reduction == FLUID_REDUCTION_NONE)
    requireShape(loss, {rows});
  else if (reduction == FLUID_REDUCTION_MEAN ||
           reduction == FLUID_REDUCTION_SUM)
    requireShape(loss, {});
  else
    fail("unknown reduction " + std::to_string(reduction) +
         " (expected 0 mean, 1 sum or 2 none)");
}
