//===- ShapeOps.cpp - Reshapes, shapes, slices, padding and transposes ----===//
//
// Flatten, Reshape, Unsqueeze, Identity, Shape, Concat, Gather, Slice, Pad,
// Transpose, Expand and ScatterND. Shapes are static: the computations on
// them (Shape, Gather, Slice, Unsqueeze, Concat, ScatterND of known
// values) are done here, at import time, and a new shape for a run-time
// tensor is a fluid.reshape. A Gather of a run-time tensor at one known
// index is a fluid.slice, at several a fluid.gather; a ScatterND into a
// run-time tensor is a fluid.gather from the data's elements and the
// updates' joined.
// A Pad is a concatenation with constants, unless a convolution or an
// average pool takes its zeros as padding of its own (ConvPoolOps.cpp);
// in modes 'reflect' and 'edge', a concatenation with slices of its input.
// An Expand of a run-time tensor is a fluid.broadcast_to.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

#include "fluid/runtime/Tensor.h"

#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

/// The most slices a Gather of a run-time tensor becomes.
static constexpr int64_t kMaxGatherSlices = int64_t(1) << 16;

/// Defines output 0 as input 0 with a new shape: a known value stays
/// known, anything else becomes a fluid.reshape.
/// Row-major element strides of `shape`.
static SmallVector<int64_t> denseStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The known tensor of shape `shape` whose element at index i is `data`'s
/// element at offset + sum(i[d] * strides[d]): a slice (offsets and steps)
/// or a transpose (permuted strides) of a value known at import.
static ConstTensor stridedCopy(const ConstTensor &data, ArrayRef<int64_t> shape,
                               int64_t offset, ArrayRef<int64_t> strides) {
  ConstTensor result;
  result.type = data.type;
  result.shape.assign(shape.begin(), shape.end());
  int64_t elements = result.getNumElements();
  size_t size = data.getElementSize();
  result.bytes.resize(elements * size);
  for (int64_t i = 0; i < elements; ++i) {
    int64_t rest = i, source = offset;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      source += rest % shape[d] * strides[d];
      rest /= shape[d];
    }
    std::memcpy(result.bytes.data() + i * size,
                data.bytes.data() + source * size, size);
  }
  return result;
}

static LogicalResult defineReshaped(FunctionImporter &importer,
                                    ArrayRef<int64_t> shape) {
  // Float initializers are not known values: they stay parameters.
  if (const ConstTensor *known = importer.constantInput(0)) {
    ConstTensor result = *known;
    result.shape.assign(shape.begin(), shape.end());
    return importer.define(0, std::move(result));
  }
  FailureOr<Value> x = importer.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> result = importer.reshape(*x, shape);
  return failed(result) ? failure() : importer.define(0, *result);
}

static LogicalResult importFlatten(FunctionImporter &importer,
                                   const om::Node &node) {
  FailureOr<int64_t> axis = importer.intAttr("axis", 1);
  FailureOr<SmallVector<int64_t>> shape = importer.inputShape(0);
  if (failed(axis) || failed(shape))
    return failure();
  int64_t rank = shape->size();
  if (*axis < -rank || *axis > rank)
    return importer.attributeError("axis", Twine(*axis))
           << ": out of range for rank " << rank;
  int64_t split = *axis < 0 ? *axis + rank : *axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    ((d < split) ? outer : inner) *= (*shape)[d];
  return defineReshaped(importer, {outer, inner});
}

static LogicalResult importReshape(FunctionImporter &importer,
                                   const om::Node &node) {
  FailureOr<bool> allowZero = importer.boolAttr("allowzero");
  FailureOr<SmallVector<int64_t>> inShape = importer.inputShape(0);
  FailureOr<SmallVector<int64_t>> target =
      importer.intsInput(1, "the target shape");
  if (failed(allowZero) || failed(inShape) || failed(target))
    return failure();
  if (target->size() > FLUID_MAX_RANK)
    return importer.error()
           << "the target shape has " << target->size()
           << " dimensions; fluid tensors have rank at most " << FLUID_MAX_RANK;
  int64_t total = 1;
  for (int64_t dim : *inShape)
    total *= dim;
  SmallVector<int64_t> shape;
  std::optional<size_t> inferred;
  bool hasZero = false;
  int64_t known = 1;
  for (auto [i, dim] : llvm::enumerate(*target)) {
    if (dim == -1) {
      if (inferred)
        return importer.error() << "the target shape " << formatShape(*target)
                                << " has more than one -1";
      inferred = i;
      shape.push_back(1);
      continue;
    }
    if (dim < -1)
      return importer.error() << "the target shape " << formatShape(*target)
                              << " has a negative dimension other than -1";
    if (dim == 0 && !*allowZero) {
      if (i >= inShape->size())
        return importer.error()
               << "the target shape " << formatShape(*target)
               << " copies dimension " << i << " (0) of the input "
               << formatShape(*inShape) << ", which has no such dimension";
      dim = (*inShape)[i];
    } else if (dim == 0) {
      hasZero = true;
    }
    shape.push_back(dim);
    std::optional<int64_t> product = llvm::checkedMul(known, dim);
    if (!product)
      return importer.error()
             << "the target shape " << formatShape(*target) << " overflows";
    known = *product;
  }
  if (inferred) {
    if (hasZero)
      return importer.error() << "the target shape " << formatShape(*target)
                              << " has both -1 and a literal 0 (allowzero)";
    if (known == 0 || total % known != 0)
      return importer.error() << "cannot reshape " << formatShape(*inShape)
                              << " to " << formatShape(*target)
                              << ": the -1 dimension is not a whole number";
    shape[*inferred] = total / known;
  } else if (known != total) {
    return importer.error()
           << "cannot reshape " << formatShape(*inShape) << " (" << total
           << " elements) to " << formatShape(*target) << " (" << known
           << " elements)";
  }
  return defineReshaped(importer, shape);
}

static LogicalResult importUnsqueeze(FunctionImporter &importer,
                                     const om::Node &node) {
  FailureOr<SmallVector<int64_t>> axes = failure();
  if (importer.getProgram().opset >= 13) {
    axes = importer.intsInput(1, "the axes");
  } else {
    bool present = false;
    axes = importer.intsAttr("axes", {}, &present);
    if (succeeded(axes) && !present)
      return importer.error() << "attribute 'axes' is required";
  }
  FailureOr<SmallVector<int64_t>> inShape = importer.inputShape(0);
  if (failed(axes) || failed(inShape))
    return failure();
  int64_t rank = inShape->size() + axes->size();
  if (rank > FLUID_MAX_RANK)
    return importer.error()
           << "the result would have rank " << rank
           << "; fluid tensors have rank at most " << FLUID_MAX_RANK;
  llvm::SmallBitVector inserted(rank);
  for (int64_t axis : *axes) {
    if (axis < -rank || axis >= rank)
      return importer.error()
             << "axis " << axis << " is out of range for the output rank "
             << rank;
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (inserted.test(normalized))
      return importer.error() << "axis " << axis << " is given twice";
    inserted.set(normalized);
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0, next = 0; d < rank; ++d)
    shape.push_back(inserted.test(d) ? 1 : (*inShape)[next++]);
  return defineReshaped(importer, shape);
}

static LogicalResult importIdentity(FunctionImporter &importer,
                                    const om::Node &node) {
  FailureOr<Entry *> entry = importer.lookup(0);
  if (failed(entry))
    return failure();
  // torch.onnx merges initializers of equal values (a fresh model's
  // batch-norm weights, running means and variances) into one, read through
  // Identity nodes whose outputs carry the state-dict names. Each of those
  // is a weight of its own, which training updates apart from the others:
  // a parameter named after the output, with its own copy of the value.
  // An Identity of anything else (a copy among them) is that same value.
  const om::Tensor *initializer = (*entry)->initializer;
  if (initializer && isFloatDataType(initializer->type) &&
      node.inputs[0] == initializer->name) {
    Entry copy;
    copy.initializer = initializer;
    copy.param = node.outputs[0];
    return importer.define(0, std::move(copy));
  }
  return importer.define(0, **entry);
}

static LogicalResult importShape(FunctionImporter &importer,
                                 const om::Node &node) {
  FailureOr<int64_t> start = importer.intAttr("start", 0);
  FailureOr<SmallVector<int64_t>> shape = importer.inputShape(0);
  if (failed(start) || failed(shape))
    return failure();
  int64_t rank = shape->size();
  FailureOr<int64_t> end = importer.intAttr("end", rank);
  if (failed(end))
    return failure();
  auto clamp = [&](int64_t index) {
    if (index < 0)
      index += rank;
    return std::min(std::max<int64_t>(index, 0), rank);
  };
  int64_t first = clamp(*start), last = std::max(first, clamp(*end));
  SmallVector<int64_t> dims(shape->begin() + first, shape->begin() + last);
  return importer.define(0, ConstTensor::ofInts(dims, {last - first}));
}

static LogicalResult importConcat(FunctionImporter &importer,
                                  const om::Node &node) {
  FailureOr<int64_t> axis = importer.intAttr("axis", 0);
  if (failed(axis))
    return failure();
  if (!node.findAttribute("axis"))
    return importer.error() << "attribute 'axis' is required";
  if (node.inputs.empty())
    return importer.error() << "needs at least one input";

  // Known values (shapes being assembled) are concatenated here.
  bool allKnown = true;
  for (unsigned i = 0; i < node.inputs.size(); ++i) {
    if (failed(importer.lookup(i)))
      return failure();
    allKnown &= importer.constantInput(i) != nullptr;
  }
  if (allKnown) {
    const ConstTensor *first = importer.constantInput(0);
    int64_t rank = first->shape.size();
    if (*axis < -rank || *axis >= rank)
      return importer.attributeError("axis", Twine(*axis))
             << ": out of range for rank " << rank;
    int64_t d = *axis < 0 ? *axis + rank : *axis;
    ConstTensor result = *first;
    result.shape[d] = 0;
    int64_t outer = 1;
    for (int64_t i = 0; i < d; ++i)
      outer *= first->shape[i];
    SmallVector<const ConstTensor *> parts;
    for (unsigned i = 0; i < node.inputs.size(); ++i) {
      const ConstTensor *part = importer.constantInput(i);
      if (part->type != first->type ||
          part->shape.size() != first->shape.size())
        return importer.error() << "input #" << i
                                << " differs from input #0 in element type "
                                   "or rank";
      for (int64_t k = 0; k < rank; ++k)
        if (k != d && part->shape[k] != first->shape[k])
          return importer.error()
                 << "input #" << i << " " << formatShape(part->shape)
                 << " differs from input #0 " << formatShape(first->shape)
                 << " outside the axis";
      result.shape[d] += part->shape[d];
      if (!getKnownElementCount(result.shape))
        return importer.error() << "the result of this concatenation at "
                                   "import time has more than "
                                << kMaxKnownElements << " elements";
      parts.push_back(part);
    }
    result.bytes.clear();
    for (int64_t o = 0; o < outer; ++o)
      for (const ConstTensor *part : parts) {
        size_t chunk = part->bytes.size() / std::max<int64_t>(outer, 1);
        result.bytes.insert(result.bytes.end(), part->bytes.begin() + o * chunk,
                            part->bytes.begin() + (o + 1) * chunk);
      }
    return importer.define(0, std::move(result));
  }

  SmallVector<Value> operands;
  for (unsigned i = 0; i < node.inputs.size(); ++i) {
    FailureOr<Value> operand = importer.input(i);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }
  ConcatOp::Properties properties;
  properties.setAxis(importer.getBuilder().getI64IntegerAttr(*axis));
  FailureOr<ConcatOp> concat = importer.create<ConcatOp>(operands, properties);
  return failed(concat) ? failure() : importer.define(0, concat->getOutput());
}

/// The elements `indices` of `data` along `axis`, in order: one slice per
/// index, joined.
static FailureOr<Value> gatherSlices(FunctionImporter &importer, Value data,
                                     int64_t axis, ArrayRef<int64_t> indices) {
  if (static_cast<int64_t>(indices.size()) > kMaxGatherSlices) {
    importer.error() << "gathering " << indices.size()
                     << " indices of a run-time tensor is not supported (at "
                        "most "
                     << kMaxGatherSlices << ", one slice each)";
    return failure();
  }
  SmallVector<Value> slices;
  for (int64_t index : indices)
    slices.push_back(importer.slice(data, axis, index, 1));
  if (slices.size() == 1)
    return slices.front();
  ConcatOp::Properties properties;
  properties.setAxis(importer.getBuilder().getI64IntegerAttr(axis));
  FailureOr<ConcatOp> concat = importer.create<ConcatOp>(slices, properties);
  if (failed(concat))
    return failure();
  return concat->getOutput();
}

static LogicalResult importGather(FunctionImporter &importer,
                                  const om::Node &node) {
  FailureOr<int64_t> axisAttr = importer.intAttr("axis", 0);
  FailureOr<SmallVector<int64_t>> dataShape = importer.inputShape(0);
  FailureOr<SmallVector<int64_t>> indices =
      importer.intsInput(1, "the indices");
  if (failed(axisAttr) || failed(dataShape) || failed(indices))
    return failure();
  ArrayRef<int64_t> indicesShape = importer.constantInput(1)->shape;
  int64_t rank = dataShape->size();
  if (rank == 0)
    return importer.error() << "the data must have rank >= 1";
  if (*axisAttr < -rank || *axisAttr >= rank)
    return importer.attributeError("axis", Twine(*axisAttr))
           << ": out of range for rank " << rank;
  int64_t axis = *axisAttr < 0 ? *axisAttr + rank : *axisAttr;
  int64_t extent = (*dataShape)[axis];
  for (int64_t &index : *indices) {
    if (index < -extent || index >= extent)
      return importer.error()
             << "index " << index << " is out of range for dimension " << axis
             << " of size " << extent;
    if (index < 0)
      index += extent;
  }
  SmallVector<int64_t> shape(dataShape->begin(), dataShape->begin() + axis);
  shape.append(indicesShape.begin(), indicesShape.end());
  shape.append(dataShape->begin() + axis + 1, dataShape->end());

  if (const ConstTensor *data = importer.constantInput(0)) {
    if (!getKnownElementCount(shape))
      return importer.error() << "the result " << formatShape(shape)
                              << " of this gather at import time has more than "
                              << kMaxKnownElements << " elements";
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      if (d < axis)
        outer *= (*dataShape)[d];
      else if (d > axis)
        inner *= (*dataShape)[d];
    size_t chunk = inner * data->getElementSize();
    ConstTensor result;
    result.type = data->type;
    result.shape = shape;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t index : *indices) {
        auto begin = data->bytes.begin() + (o * extent + index) * chunk;
        result.bytes.insert(result.bytes.end(), begin, begin + chunk);
      }
    return importer.define(0, std::move(result));
  }

  // Known indices into a run-time tensor: one index is a slice, several a
  // fluid.gather with the indices as a constant.
  if (indices->empty())
    return importer.error() << "gathering no elements (empty indices) is not "
                               "supported";
  FailureOr<Value> data = importer.input(0);
  if (failed(data))
    return failure();
  Value gathered;
  if (indices->size() == 1) {
    gathered = importer.slice(*data, axis, indices->front(), 1);
  } else {
    FailureOr<Value> picks = importer.constant(
        ConstTensor::ofInts(*indices, {static_cast<int64_t>(indices->size())}));
    if (failed(picks))
      return failure();
    GatherOp::Properties properties;
    properties.setAxis(importer.getBuilder().getI64IntegerAttr(axis));
    FailureOr<GatherOp> gather =
        importer.create<GatherOp>({*data, *picks}, properties);
    if (failed(gather))
      return failure();
    gathered = gather->getOutput();
  }
  FailureOr<Value> result = importer.reshape(gathered, shape);
  return failed(result) ? failure() : importer.define(0, *result);
}

namespace {
/// The elements a Slice takes along one dimension: `count` of them from
/// `first`, `step` apart.
struct SliceRange {
  int64_t first = 0, step = 1, count = 0;
};
} // namespace

static LogicalResult importSlice(FunctionImporter &importer,
                                 const om::Node &node) {
  FailureOr<SmallVector<int64_t>> shape = importer.inputShape(0);
  FailureOr<SmallVector<int64_t>> starts = importer.intsInput(1, "the starts");
  FailureOr<SmallVector<int64_t>> ends = importer.intsInput(2, "the ends");
  if (failed(shape) || failed(starts) || failed(ends))
    return failure();
  int64_t rank = shape->size();
  size_t count = starts->size();
  if (ends->size() != count)
    return importer.error()
           << "the starts " << formatShape(*starts) << " and the ends "
           << formatShape(*ends) << " differ in length";
  SmallVector<int64_t> axes, steps(count, 1);
  for (size_t i = 0; i < count; ++i)
    axes.push_back(static_cast<int64_t>(i));
  if (importer.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> given = importer.intsInput(3, "the axes");
    if (failed(given))
      return failure();
    axes = *given;
  }
  if (importer.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> given = importer.intsInput(4, "the steps");
    if (failed(given))
      return failure();
    steps = *given;
  }
  if (axes.size() != count || steps.size() != count)
    return importer.error()
           << "the starts, ends, axes and steps have " << count << ", " << count
           << ", " << axes.size() << " and " << steps.size()
           << " values; they must have as many";

  // ONNX's rule: negative indices count from the end, and the range is
  // clamped to the dimension ([0, dim] going forward, [-1, dim - 1]
  // backward), so an out-of-range start or end takes what there is.
  SmallVector<SliceRange> ranges;
  for (int64_t dim : *shape)
    ranges.push_back({0, 1, dim});
  llvm::SmallBitVector seen(rank);
  for (size_t i = 0; i < count; ++i) {
    int64_t axis = axes[i];
    if (axis < -rank || axis >= rank)
      return importer.error()
             << "axis " << axis << " is out of range for rank " << rank;
    if (axis < 0)
      axis += rank;
    if (seen.test(axis))
      return importer.error() << "axis " << axes[i] << " is given twice";
    seen.set(axis);
    int64_t step = steps[i];
    if (step == 0)
      return importer.error()
             << "the steps " << formatShape(steps) << " include 0";
    int64_t dim = (*shape)[axis];
    int64_t start = (*starts)[i], end = (*ends)[i];
    // dim >= 0, so adding it to a negative index cannot overflow.
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    SliceRange &range = ranges[axis];
    range.step = step;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      range.count = end > start ? (end - start - 1) / step + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      int64_t stride = step == std::numeric_limits<int64_t>::min()
                           ? std::numeric_limits<int64_t>::max()
                           : -step;
      range.count = start > end ? (start - end - 1) / stride + 1 : 0;
    }
    range.first = start;
  }
  SmallVector<int64_t> resultShape;
  for (const SliceRange &range : ranges)
    resultShape.push_back(range.count);

  // Known values (shapes) are sliced here.
  if (const ConstTensor *data = importer.constantInput(0)) {
    SmallVector<int64_t> dense = denseStrides(*shape), strides;
    int64_t offset = 0;
    for (int64_t d = 0; d < rank; ++d) {
      offset += ranges[d].first * dense[d];
      strides.push_back(ranges[d].step * dense[d]);
    }
    return importer.define(0, stridedCopy(*data, resultShape, offset, strides));
  }

  FailureOr<Value> x = importer.input(0);
  if (failed(x))
    return failure();
  for (int64_t d = 0; d < rank; ++d)
    if (ranges[d].count == 0)
      return importer.error() << "takes no elements along axis " << d
                              << "; fluid tensors hold at least one element";
  Value result = *x;
  for (int64_t d = 0; d < rank; ++d) {
    const SliceRange &range = ranges[d];
    if (range.step == 1) {
      if (range.count != (*shape)[d])
        result = importer.slice(result, d, range.first, range.count);
      continue;
    }
    // Other steps: one slice per element.
    if (range.count > kMaxGatherSlices)
      return importer.error()
             << "a step of " << range.step << " takes " << range.count
             << " elements of a run-time tensor along axis " << d
             << "; at most " << kMaxGatherSlices << " (one slice each)";
    SmallVector<int64_t> indices;
    for (int64_t k = 0; k < range.count; ++k)
      indices.push_back(range.first + k * range.step);
    FailureOr<Value> gathered = gatherSlices(importer, result, d, indices);
    if (failed(gathered))
      return failure();
    result = *gathered;
  }
  return importer.define(0, result);
}

/// `x` padded by `pads` (ONNX's order, all >= 0) with its own elements:
/// mirrored without repeating the edge (`reflect`, as np.pad's 'reflect'
/// and PyTorch's ReflectionPad) or the edge repeated (else, 'edge', as
/// PyTorch's ReplicationPad). Each padded dimension is a concatenation of
/// slices of the tensor padded so far (so corners mirror both ways): one
/// slice per reflected element, or a broadcast of the edge's slice, all
/// ops with gradients (integer tensors repeat the edge's slice instead).
static FailureOr<Value> padWithEdges(FunctionImporter &importer, Value x,
                                     ArrayRef<int64_t> pads, bool reflect) {
  OpBuilder &builder = importer.getBuilder();
  int64_t rank = importer.getTensorType(x).getRank();
  Value result = x;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t before = pads[d], after = pads[rank + d];
    if (before == 0 && after == 0)
      continue;
    RankedTensorType type = importer.getTensorType(result);
    int64_t extent = type.getDimSize(d);
    // The `count` elements added before the dimension or after it.
    auto part = [&](int64_t count, bool atEnd) -> FailureOr<Value> {
      if (reflect) {
        // Before: [count, ..., 1]; after: [extent - 2, ..., extent - 1 -
        // count].
        SmallVector<int64_t> indices;
        for (int64_t k = 1; k <= count; ++k)
          indices.push_back(atEnd ? extent - 1 - k : count + 1 - k);
        return gatherSlices(importer, result, d, indices);
      }
      int64_t edgeIndex = atEnd ? extent - 1 : 0;
      // fluid.broadcast_to takes floats; integers have no gradient to
      // keep, and repeat one slice per element.
      if (!isFloatTensor(type))
        return gatherSlices(importer, result, d,
                            SmallVector<int64_t>(count, edgeIndex));
      Value edge = importer.slice(result, d, edgeIndex, 1);
      if (count == 1)
        return edge;
      SmallVector<int64_t> shape(type.getShape());
      shape[d] = count;
      return BroadcastToOp::create(
                 builder, importer.getLoc(),
                 RankedTensorType::get(shape, type.getElementType()), edge)
          .getOutput();
    };
    SmallVector<Value, 3> parts;
    if (before > 0) {
      FailureOr<Value> value = part(before, false);
      if (failed(value))
        return failure();
      parts.push_back(*value);
    }
    parts.push_back(result);
    if (after > 0) {
      FailureOr<Value> value = part(after, true);
      if (failed(value))
        return failure();
      parts.push_back(*value);
    }
    ConcatOp::Properties properties;
    properties.setAxis(builder.getI64IntegerAttr(d));
    FailureOr<ConcatOp> concat = importer.create<ConcatOp>(parts, properties);
    if (failed(concat))
      return failure();
    result = concat->getOutput();
  }
  return result;
}

static LogicalResult importPad(FunctionImporter &importer,
                               const om::Node &node) {
  FailureOr<std::string> mode = importer.stringAttr("mode", "constant");
  if (failed(mode))
    return failure();
  if (*mode != "constant" && *mode != "reflect" && *mode != "edge")
    return importer.attributeError("mode", "'" + *mode + "'")
           << " (expected constant, reflect or edge)";
  // Padding with a constant builds it in the input's float type; slices
  // and concatenations take any element type.
  FailureOr<Value> x =
      *mode == "constant" ? importer.floatInput(0) : importer.input(0);
  FailureOr<SmallVector<int64_t>> pads = importer.intsInput(1, "the pads");
  if (failed(x) || failed(pads))
    return failure();
  RankedTensorType type = importer.getTensorType(*x);
  int64_t rank = type.getRank();
  if (static_cast<int64_t>(pads->size()) != 2 * rank)
    return importer.error()
           << "the pads " << formatShape(*pads) << " have " << pads->size()
           << " values; an input of rank " << rank << " needs " << 2 * rank;
  double fill = 0;
  if (importer.hasInput(2)) {
    FailureOr<double> value = importer.scalarInput(2, "the constant value");
    if (failed(value))
      return failure();
    fill = *value;
  }
  if (llvm::all_of(*pads, [](int64_t pad) { return pad == 0; })) {
    FailureOr<Entry *> entry = importer.lookup(0);
    return failed(entry) ? failure() : importer.define(0, **entry);
  }
  if (*mode != "constant") {
    // Which elements a crop on one side and a reflection on the other
    // take is not defined; ONNX's reference (np.pad) has no crops.
    for (int64_t pad : *pads)
      if (pad < 0)
        return importer.error()
               << "the pads " << formatShape(*pads) << " crop (a negative "
               << "pad), which only mode 'constant' does";
    for (int64_t d = 0; d < rank && *mode == "reflect"; ++d) {
      int64_t extent = type.getDimSize(d);
      int64_t widest = std::max((*pads)[d], (*pads)[rank + d]);
      if (widest >= extent)
        return importer.error()
               << "mode 'reflect' pads dimension " << d << " of " << type
               << " by " << widest << " elements; a reflection takes at most "
               << extent - 1 << " (the dimension's size less one, as in "
               << "PyTorch's ReflectionPad)";
    }
  }
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t d = 0; d < rank; ++d) {
    std::optional<int64_t> sum = llvm::checkedAdd(shape[d], (*pads)[d]);
    if (sum)
      sum = llvm::checkedAdd(*sum, (*pads)[rank + d]);
    if (!sum || *sum <= 0)
      return importer.error()
             << "the pads " << formatShape(*pads) << " leave "
             << (sum ? std::to_string(*sum) : std::string("too many"))
             << " elements in dimension " << d << " of " << type;
    shape[d] = *sum;
  }
  if (!isFluidTensor(RankedTensorType::get(shape, type.getElementType())))
    return importer.error() << "the pads " << formatShape(*pads) << " of "
                            << type << " make too large a tensor";
  if (*mode != "constant") {
    FailureOr<Value> result =
        padWithEdges(importer, *x, *pads, *mode == "reflect");
    return failed(result) ? failure() : importer.define(0, *result);
  }
  // Added elements only: a convolution or an average pool may take them
  // as its own padding, so the padded tensor is built at another use.
  if (llvm::all_of(*pads, [](int64_t pad) { return pad >= 0; })) {
    Entry entry;
    entry.pendingPad = PendingPad{*x, *pads, fill, shape, importer.getLoc()};
    return importer.define(0, std::move(entry));
  }
  FailureOr<Value> result = importer.pad(*x, *pads, fill);
  return failed(result) ? failure() : importer.define(0, *result);
}

static LogicalResult importTranspose(FunctionImporter &importer,
                                     const om::Node &node) {
  FailureOr<SmallVector<int64_t>> shape = importer.inputShape(0);
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  SmallVector<int64_t> reversed;
  for (int64_t d = rank - 1; d >= 0; --d)
    reversed.push_back(d);
  FailureOr<SmallVector<int64_t>> perm =
      importer.intsAttr("perm", reversed, nullptr);
  if (failed(perm))
    return failure();
  llvm::SmallBitVector seen(rank);
  bool valid = static_cast<int64_t>(perm->size()) == rank;
  for (int64_t d : *perm) {
    valid = valid && d >= 0 && d < rank && !seen.test(d);
    if (valid)
      seen.set(d);
  }
  if (!valid)
    return importer.attributeError("perm", formatShape(*perm))
           << ": not a permutation of the input's " << rank << " dimensions";
  if (llvm::equal(*perm, llvm::seq<int64_t>(0, rank))) {
    FailureOr<Entry *> entry = importer.lookup(0);
    return failed(entry) ? failure() : importer.define(0, **entry);
  }

  // Known values (F.pad's pads are computed on) are transposed here.
  if (const ConstTensor *data = importer.constantInput(0)) {
    SmallVector<int64_t> dense = denseStrides(*shape), resultShape, strides;
    for (int64_t d : *perm) {
      resultShape.push_back((*shape)[d]);
      strides.push_back(dense[d]);
    }
    return importer.define(0, stridedCopy(*data, resultShape, 0, strides));
  }
  FailureOr<Value> x = importer.input(0);
  if (failed(x))
    return failure();
  return importer.define(0, TransposeOp::create(importer.getBuilder(),
                                                importer.getLoc(), *x, *perm)
                                .getOutput());
}

static LogicalResult importExpand(FunctionImporter &importer,
                                  const om::Node &node) {
  FailureOr<SmallVector<int64_t>> shape = importer.inputShape(0);
  FailureOr<SmallVector<int64_t>> given = importer.intsInput(1, "the shape");
  if (failed(shape) || failed(given))
    return failure();
  for (int64_t dim : *given)
    if (dim < 0)
      return importer.error()
             << "the shape " << formatShape(*given) << " has a negative "
             << "dimension";
  // ONNX broadcasts both ways: a 1 in the given shape keeps the input's
  // dimension.
  std::optional<SmallVector<int64_t>> result = broadcastShapes(*shape, *given);
  if (!result)
    return importer.error() << "cannot expand " << formatShape(*shape) << " to "
                            << formatShape(*given)
                            << ": the shapes are not broadcast-compatible";
  if (*result == *shape) {
    FailureOr<Entry *> entry = importer.lookup(0);
    return failed(entry) ? failure() : importer.define(0, **entry);
  }
  if (const ConstTensor *known = importer.constantInput(0)) {
    if (!getKnownElementCount(*result))
      return importer.error()
             << "the result " << formatShape(*result)
             << " of this expansion at import time has more than "
             << kMaxKnownElements << " elements";
    return importer.define(0, broadcastConstant(*known, *result));
  }
  FailureOr<Value> x = importer.floatInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = importer.getTensorType(*x);
  auto resultType = RankedTensorType::get(*result, type.getElementType());
  if (!isFluidTensor(resultType))
    return importer.error()
           << "expanding " << type << " to " << formatShape(*result)
           << " makes too large a tensor";
  Value input = *x;
  if (shape->size() < result->size()) {
    SmallVector<int64_t> aligned(result->size() - shape->size(), 1);
    aligned.append(shape->begin(), shape->end());
    FailureOr<Value> lifted = importer.reshape(input, aligned);
    if (failed(lifted))
      return failure();
    input = *lifted;
  }
  return importer.define(0, BroadcastToOp::create(importer.getBuilder(),
                                                  importer.getLoc(), resultType,
                                                  input)
                                .getOutput());
}

/// `target` op= `update` (both elements of one tensor type) for a
/// ScatterND's reduction: 'none' replaces, 'add' adds, 'mul' multiplies.
static void scatterElement(ConstTensor &target, int64_t index,
                           const ConstTensor &updates, int64_t from,
                           StringRef reduction) {
  size_t size = target.getElementSize();
  if (reduction == "none") {
    std::memcpy(target.bytes.data() + index * size,
                updates.bytes.data() + from * size, size);
    return;
  }
  bool add = reduction == "add";
  if (target.type == om::DataType::Float) {
    float x, y;
    std::memcpy(&x, target.bytes.data() + index * 4, 4);
    std::memcpy(&y, updates.bytes.data() + from * 4, 4);
    float value = add ? x + y : x * y;
    std::memcpy(target.bytes.data() + index * 4, &value, 4);
  } else if (target.type == om::DataType::Double) {
    double x = target.getDouble(index), y = updates.getDouble(from);
    double value = add ? x + y : x * y;
    std::memcpy(target.bytes.data() + index * 8, &value, 8);
  } else {
    // Integers wrap, as they do in ONNX's reference.
    uint64_t x = target.getInt(index), y = updates.getInt(from);
    target.setInt(index, static_cast<int64_t>(add ? x + y : x * y));
  }
}

static LogicalResult importScatterND(FunctionImporter &importer,
                                     const om::Node &node) {
  FailureOr<std::string> reduction = importer.stringAttr("reduction", "none");
  FailureOr<SmallVector<int64_t>> dataShape = importer.inputShape(0);
  FailureOr<SmallVector<int64_t>> indices =
      importer.intsInput(1, "the indices");
  FailureOr<SmallVector<int64_t>> updatesShape = importer.inputShape(2);
  FailureOr<om::DataType> dataType = importer.inputType(0),
                          updatesType = importer.inputType(2);
  if (failed(reduction) || failed(dataShape) || failed(indices) ||
      failed(updatesShape) || failed(dataType) || failed(updatesType))
    return failure();
  if (*reduction != "none" && *reduction != "add" && *reduction != "mul")
    return importer.attributeError("reduction", "'" + *reduction + "'")
           << " (expected none, add or mul)";
  if (importer.getProgram().opset < 16 && node.findAttribute("reduction"))
    return importer.error()
           << "attribute 'reduction' is ScatterND-16's; opset "
           << importer.getProgram().opset << " does not define it";
  if (*dataType != *updatesType)
    return importer.error() << "the data and the updates have different "
                               "element types ("
                            << om::getDataTypeName(*dataType) << " and "
                            << om::getDataTypeName(*updatesType) << ")";
  // Each of the indices' last dimension's tuples (of k values) picks an
  // element or a slice of the data: the indices [..., k] and the updates
  // [..., data dimensions from k on].
  ArrayRef<int64_t> indicesShape = importer.constantInput(1)->shape;
  int64_t rank = dataShape->size();
  if (indicesShape.empty())
    return importer.error() << "the indices must have rank >= 1";
  int64_t k = indicesShape.back();
  if (k == 0)
    return importer.error() << "the indices " << formatShape(indicesShape)
                            << " have tuples of no values (the last "
                               "dimension is 0)";
  if (k > rank)
    return importer.error()
           << "the indices " << formatShape(indicesShape) << " index " << k
           << " dimensions of data of rank " << rank;
  SmallVector<int64_t> expected(indicesShape.drop_back());
  expected.append(dataShape->begin() + k, dataShape->end());
  if (*updatesShape != expected)
    return importer.error()
           << "the updates " << formatShape(*updatesShape) << " must have the "
           << "shape " << formatShape(expected) << " (the indices' leading "
           << "dimensions, then the data's from dimension " << k << " on)";
  // Each tuple's first element in the data (row-major), and the elements
  // of each slice.
  SmallVector<int64_t> strides = denseStrides(*dataShape);
  int64_t sliceSize = 1;
  for (int64_t d = k; d < rank; ++d)
    sliceSize *= (*dataShape)[d];
  SmallVector<int64_t> offsets;
  for (size_t t = 0; t < indices->size(); t += k) {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t index = (*indices)[t + d], extent = (*dataShape)[d];
      if (index < -extent || index >= extent)
        return importer.error()
               << "index " << index << " is out of range for dimension " << d
               << " of size " << extent;
      offset += (index < 0 ? index + extent : index) * strides[d];
    }
    offsets.push_back(offset);
  }

  const ConstTensor *data = importer.constantInput(0),
                    *updates = importer.constantInput(2);
  if (data && updates) {
    ConstTensor result = *data;
    // In order: with 'none', a later update of an element wins.
    for (auto [t, offset] : llvm::enumerate(offsets))
      for (int64_t e = 0; e < sliceSize; ++e)
        scatterElement(result, offset + e, *updates, t * sliceSize + e,
                       *reduction);
    return importer.define(0, std::move(result));
  }
  // No update: the data as it is.
  if (offsets.empty()) {
    FailureOr<Entry *> entry = importer.lookup(0);
    return failed(entry) ? failure() : importer.define(0, **entry);
  }
  if (*reduction != "none")
    return importer.error()
           << "reduction '" << *reduction
           << "' is supported on values known at import time only; on "
              "run-time tensors, 'none' is";
  // At run time: the data's elements and then the updates', flattened and
  // joined, and a fluid.gather that picks each result element from one of
  // them (the last update of an element wins, as in ONNX's reference).
  std::optional<int64_t> dataCount = getKnownElementCount(*dataShape);
  if (!dataCount)
    return importer.error()
           << "the data " << formatShape(*dataShape) << " has more than "
           << kMaxKnownElements
           << " elements; a scatter into run-time data builds a constant "
              "map of its elements";
  int64_t updateCount = static_cast<int64_t>(offsets.size()) * sliceSize;
  FailureOr<Value> dataValue = importer.input(0),
                   updatesValue = importer.input(2);
  if (failed(dataValue) || failed(updatesValue))
    return failure();
  FailureOr<Value> flatData = importer.reshape(*dataValue, {*dataCount});
  FailureOr<Value> flatUpdates = importer.reshape(*updatesValue, {updateCount});
  if (failed(flatData) || failed(flatUpdates))
    return failure();
  ConcatOp::Properties concatProperties;
  concatProperties.setAxis(importer.getBuilder().getI64IntegerAttr(0));
  FailureOr<ConcatOp> joined =
      importer.create<ConcatOp>({*flatData, *flatUpdates}, concatProperties);
  if (failed(joined))
    return failure();
  SmallVector<int64_t> map = llvm::to_vector(llvm::seq<int64_t>(0, *dataCount));
  for (auto [t, offset] : llvm::enumerate(offsets))
    for (int64_t e = 0; e < sliceSize; ++e)
      map[offset + e] = *dataCount + static_cast<int64_t>(t) * sliceSize + e;
  FailureOr<Value> picks =
      importer.constant(ConstTensor::ofInts(map, {*dataCount}));
  if (failed(picks))
    return failure();
  GatherOp::Properties gatherProperties;
  gatherProperties.setAxis(importer.getBuilder().getI64IntegerAttr(0));
  FailureOr<GatherOp> gather = importer.create<GatherOp>(
      {joined->getOutput(), *picks}, gatherProperties);
  if (failed(gather))
    return failure();
  FailureOr<Value> result = importer.reshape(gather->getOutput(), *dataShape);
  return failed(result) ? failure() : importer.define(0, *result);
}

std::vector<OperatorInfo> mlir::fluid::onnx_import::getShapeOperators() {
  return {
      {"Concat", &importConcat, {1, 4, 11, 13}, {"axis"}, kAnyNumber, 1},
      {"Expand", &importExpand, {8, 13}, {}, 2, 1},
      {"Flatten", &importFlatten, {1, 9, 11, 13}, {"axis"}, 1, 1},
      {"Gather", &importGather, {1, 11, 13}, {"axis"}, 2, 1},
      {"Identity", &importIdentity, {1, 13, 14, 16}, {}, 1, 1},
      {"Pad", &importPad, {1, 2, 11, 13}, {"mode"}, 3, 1},
      {"Reshape", &importReshape, {1, 5, 13, 14}, {"allowzero"}, 2, 1},
      {"ScatterND", &importScatterND, {11, 13, 16}, {"reduction"}, 3, 1},
      {"Shape", &importShape, {1, 13, 15}, {"end", "start"}, 1, 1},
      {"Slice", &importSlice, {1, 10, 11, 13}, {}, 5, 1},
      {"Transpose", &importTranspose, {1, 13}, {"perm"}, 1, 1},
      {"Unsqueeze", &importUnsqueeze, {1, 11, 13}, {"axes"}, 2, 1},
  };
}
