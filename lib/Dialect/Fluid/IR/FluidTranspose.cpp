//===- FluidTranspose.cpp - fluid.transpose: verifier, folder, patterns ---===//
//
// A transpose permutes dimensions: result dimension d is input dimension
// permutation[d]. It folds away when the permutation is the identity, two
// in a row compose into one, a splat constant is transposed by changing its
// type, and a transpose that moves only dimensions of size 1 (which keeps
// every element where it was) is canonicalized into a reshape, which the
// bufferizer makes a view.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::fluid;

static SmallVector<int64_t> permutedShape(ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> result;
  result.reserve(permutation.size());
  for (int64_t d : permutation)
    result.push_back(shape[d]);
  return result;
}

static bool isIdentity(ArrayRef<int64_t> permutation) {
  for (auto [i, d] : llvm::enumerate(permutation))
    if (d != static_cast<int64_t>(i))
      return false;
  return true;
}

void TransposeOp::build(OpBuilder &builder, OperationState &state, Value input,
                        ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(input.getType());
  build(builder, state,
        RankedTensorType::get(permutedShape(type.getShape(), permutation),
                              type.getElementType()),
        input, builder.getDenseI64ArrayAttr(permutation));
}

LogicalResult TransposeOp::verify() {
  RankedTensorType input = getInput().getType(), output = getType();
  ArrayRef<int64_t> permutation = getPermutation();
  if (input.getElementType() != output.getElementType())
    return emitOpError() << "cannot change the element type ("
                         << input.getElementType() << " to "
                         << output.getElementType() << ")";
  if (static_cast<int64_t>(permutation.size()) != input.getRank() ||
      output.getRank() != input.getRank())
    return emitOpError() << "'permutation' has " << permutation.size()
                         << " entries; the input has rank " << input.getRank()
                         << " and the result rank " << output.getRank();
  SmallVector<bool> seen(permutation.size(), false);
  for (auto [i, d] : llvm::enumerate(permutation)) {
    if (d < 0 || d >= input.getRank())
      return emitOpError() << "'permutation' entry " << i << " is " << d
                           << ", outside [0, " << input.getRank() << ")";
    if (seen[d])
      return emitOpError() << "'permutation' names dimension " << d << " twice";
    seen[d] = true;
  }
  SmallVector<int64_t> expected = permutedShape(input.getShape(), permutation);
  if (ArrayRef<int64_t>(expected) != output.getShape())
    return emitOpError() << "the result must be "
                         << RankedTensorType::get(expected,
                                                  input.getElementType())
                         << " (the input " << input << " permuted), not "
                         << output;
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  if (isIdentity(getPermutation()))
    return getInput();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getInput()))
    return splat.reshape(getType());
  // transpose(transpose(x, p), q) = transpose(x, p o q): result dimension
  // d is the inner result's dimension q[d], which is x's p[q[d]].
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t d : getPermutation())
      composed.push_back(inner.getPermutation()[d]);
    if (isIdentity(composed) && inner.getInput().getType() == getType())
      return inner.getInput();
    getInputMutable().assign(inner.getInput());
    setPermutation(composed);
    return getResult();
  }
  return {};
}

namespace {

/// transpose -> reshape when the dimensions other than those of size 1
/// keep their order (the elements do not move).
struct TransposeOfUnitDims : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> shape = op.getInput().getType().getShape();
    int64_t last = -1;
    for (int64_t d : op.getPermutation()) {
      if (shape[d] == 1)
        continue;
      if (d < last)
        return rewriter.notifyMatchFailure(op, "moves elements");
      last = d;
    }
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};

} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<TransposeOfUnitDims>(context);
}
