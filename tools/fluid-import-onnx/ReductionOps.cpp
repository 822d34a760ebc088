//===- ReductionOps.cpp - ReduceMean, ReduceSum, ReduceMax, ReduceMin -----===//
//
// Reductions over a set of axes (all of them when none is given), kept as
// dimensions of size 1 (keepdims, the default) or dropped. ReduceMean and
// ReduceSum are fluid.mean and fluid.reduce_sum. ReduceMax is a max pool
// whose single window covers the reduced elements: the kept dimensions are
// moved first and the input viewed as [1, kept, 1, reduced]. ReduceMin is
// the negated ReduceMax of the negated input. All four have gradients;
// that of a max goes to the first maximum of each window, as PyTorch's
// max(dim) gives it to one element.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

namespace {
enum class ReduceKind { Mean, Sum, Max, Min };
} // namespace

/// The max (or with `negate`, the min) of `x` over `axes` (normalized,
/// ascending), as a max pool.
static FailureOr<Value> reduceMax(FunctionImporter &importer, Value x,
                                  ArrayRef<int64_t> axes, bool keepDims,
                                  bool negate) {
  OpBuilder &builder = importer.getBuilder();
  Location loc = importer.getLoc();
  RankedTensorType type = importer.getTensorType(x);
  int64_t rank = type.getRank();
  llvm::SmallBitVector reduced(rank);
  for (int64_t axis : axes)
    reduced.set(axis);
  SmallVector<int64_t> permutation, resultShape;
  int64_t kept = 1, window = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced.test(d))
      continue;
    permutation.push_back(d);
    resultShape.push_back(type.getDimSize(d));
    kept *= type.getDimSize(d);
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced.test(d))
      continue;
    permutation.push_back(d);
    window *= type.getDimSize(d);
  }
  if (keepDims) {
    resultShape.assign(type.getShape().begin(), type.getShape().end());
    for (int64_t axis : axes)
      resultShape[axis] = 1;
  }

  Value value = x;
  if (negate)
    value = NegOp::create(builder, loc, value).getOutput();
  if (!llvm::equal(permutation, llvm::seq<int64_t>(0, rank)))
    value = TransposeOp::create(builder, loc, value, permutation).getOutput();
  FailureOr<Value> rows = importer.reshape(value, {1, kept, 1, window});
  if (failed(rows))
    return failure();
  MaxPool2DOp::Properties properties;
  properties.setKernelSize(builder.getDenseI64ArrayAttr({1, window}));
  FailureOr<MaxPool2DOp> pool = importer.create<MaxPool2DOp>(*rows, properties);
  if (failed(pool))
    return failure();
  FailureOr<Value> result = importer.reshape(pool->getOutput(), resultShape);
  if (failed(result) || !negate)
    return result;
  return NegOp::create(builder, loc, *result).getOutput();
}

template <ReduceKind kind>
static LogicalResult importReduce(FunctionImporter &importer,
                                  const om::Node &node) {
  // ReduceSum-13 takes the axes as an optional input, and with
  // noop_with_empty_axes an empty list reduces nothing.
  bool axesInput = kind == ReduceKind::Sum && importer.getProgram().opset >= 13;
  FailureOr<int64_t> keepDims = importer.intAttr("keepdims", 1);
  FailureOr<Value> x = importer.floatInput(0);
  if (failed(keepDims) || failed(x))
    return failure();
  if (*keepDims != 0 && *keepDims != 1)
    return importer.attributeError("keepdims", Twine(*keepDims))
           << " (expected 0 or 1)";
  bool noop = false;
  SmallVector<int64_t> axes;
  if (axesInput) {
    if (node.findAttribute("axes"))
      return importer.error()
             << "attribute 'axes' is an input (#1) since ReduceSum-13";
    FailureOr<bool> noopAttr = importer.boolAttr("noop_with_empty_axes");
    if (failed(noopAttr))
      return failure();
    noop = *noopAttr;
    if (importer.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> given = importer.intsInput(1, "the axes");
      if (failed(given))
        return failure();
      axes = *given;
    }
  } else {
    if (node.findAttribute("noop_with_empty_axes"))
      return importer.error() << "attribute 'noop_with_empty_axes' is not "
                                 "defined before ReduceSum-13";
    FailureOr<SmallVector<int64_t>> given =
        importer.intsAttr("axes", {}, nullptr);
    if (failed(given))
      return failure();
    axes = *given;
  }

  int64_t rank = importer.getTensorType(*x).getRank();
  if (axes.empty()) {
    if (noop)
      return importer.define(0, *x);
    axes.append(llvm::seq<int64_t>(0, rank).begin(),
                llvm::seq<int64_t>(0, rank).end());
  }
  llvm::SmallBitVector seen(rank);
  for (int64_t &axis : axes) {
    if (axis < -rank || axis >= rank)
      return importer.error()
             << "axis " << axis << " is out of range for rank " << rank;
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (seen.test(normalized))
      return importer.error() << "axis " << axis << " is given twice";
    seen.set(normalized);
    axis = normalized;
  }
  llvm::sort(axes);

  if constexpr (kind == ReduceKind::Max || kind == ReduceKind::Min) {
    FailureOr<Value> result = reduceMax(importer, *x, axes, *keepDims == 1,
                                        /*negate=*/kind == ReduceKind::Min);
    return failed(result) ? failure() : importer.define(0, *result);
  } else {
    using OpT =
        std::conditional_t<kind == ReduceKind::Mean, MeanOp, ReduceSumOp>;
    OpBuilder &builder = importer.getBuilder();
    typename OpT::Properties properties;
    properties.setAxes(builder.getDenseI64ArrayAttr(axes));
    if (*keepDims)
      properties.setKeepDims(builder.getUnitAttr());
    FailureOr<OpT> reduce = importer.create<OpT>(*x, properties);
    return failed(reduce) ? failure() : importer.define(0, reduce->getOutput());
  }
}

std::vector<OperatorInfo> mlir::fluid::onnx_import::getReductionOperators() {
  return {
      {"ReduceMax",
       &importReduce<ReduceKind::Max>,
       {1, 11, 12, 13},
       {"axes", "keepdims"},
       1,
       1},
      {"ReduceMean",
       &importReduce<ReduceKind::Mean>,
       {1, 11, 13},
       {"axes", "keepdims"},
       1,
       1},
      {"ReduceMin",
       &importReduce<ReduceKind::Min>,
       {1, 11, 12, 13},
       {"axes", "keepdims"},
       1,
       1},
      {"ReduceSum",
       &importReduce<ReduceKind::Sum>,
       {1, 11, 13},
       {"axes", "keepdims", "noop_with_empty_axes"},
       2,
       1},
  };
}
