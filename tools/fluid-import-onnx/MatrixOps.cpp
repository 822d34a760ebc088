//===- MatrixOps.cpp - Gemm and MatMul ------------------------------------===//
//
// Matrix products. A Gemm that is nn.Linear (x W^T + b) becomes one
// fluid.linear; any other is a fluid.matmul with its scaling and bias. A
// MatMul's batch dimensions are broadcast NumPy-style, then flattened into
// one batched product. An Einsum of two operands (maxvit's attention) is
// one batched product too, between transposes and reshapes that gather its
// batch, free and contracted dimensions; of one operand, a transpose.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <map>
#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

static LogicalResult importGemm(FunctionImporter &importer,
                                const om::Node &node) {
  FailureOr<double> alpha = importer.floatAttr("alpha", 1.0);
  FailureOr<double> beta = importer.floatAttr("beta", 1.0);
  FailureOr<bool> transA = importer.boolAttr("transA"),
                  transB = importer.boolAttr("transB");
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  FailureOr<Value> a = importer.floatInput(0), b = importer.floatInput(1);
  if (failed(a) || failed(b))
    return failure();
  Value c;
  if (importer.hasInput(2)) {
    FailureOr<Value> bias = importer.floatInput(2);
    if (failed(bias))
      return failure();
    c = *bias;
  }
  RankedTensorType aType = importer.getTensorType(*a),
                   bType = importer.getTensorType(*b);
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return importer.error()
           << "A and B must be matrices, got " << aType << " and " << bType;
  int64_t n = *transB ? bType.getDimSize(0) : bType.getDimSize(1);

  // nn.Linear: x W^T + b.
  if (!*transA && *transB && *alpha == 1.0 &&
      (!c || (*beta == 1.0 &&
              importer.getTensorType(c).getShape() == ArrayRef<int64_t>{n}))) {
    SmallVector<Value, 3> operands = {*a, *b};
    if (c)
      operands.push_back(c);
    FailureOr<LinearOp> linear = importer.create<LinearOp>(operands);
    return failed(linear) ? failure() : importer.define(0, linear->getOutput());
  }

  OpBuilder &builder = importer.getBuilder();
  MatmulOp::Properties properties;
  if (*transA)
    properties.setTransposeLhs(builder.getUnitAttr());
  if (*transB)
    properties.setTransposeRhs(builder.getUnitAttr());
  FailureOr<MatmulOp> product = importer.create<MatmulOp>({*a, *b}, properties);
  if (failed(product))
    return failure();
  Value result = product->getOutput();
  Type element = aType.getElementType();
  if (*alpha != 1.0) {
    FailureOr<MulOp> scaled =
        importer.create<MulOp>({result, importer.scalar(element, *alpha)});
    if (failed(scaled))
      return failure();
    result = scaled->getOutput();
  }
  if (c && *beta != 0.0) {
    if (*beta != 1.0) {
      FailureOr<MulOp> scaled =
          importer.create<MulOp>({c, importer.scalar(element, *beta)});
      if (failed(scaled))
        return failure();
      c = scaled->getOutput();
    }
    RankedTensorType productType = importer.getTensorType(result);
    FailureOr<AddOp> sum = importer.create<AddOp>({result, c});
    if (failed(sum))
      return failure();
    if (importer.getTensorType(sum->getOutput()) != productType)
      return importer.error()
             << "C of type " << importer.getTensorType(c)
             << " does not broadcast to the product " << productType;
    result = sum->getOutput();
  }
  return importer.define(0, result);
}

static LogicalResult importMatMul(FunctionImporter &importer,
                                  const om::Node &node) {
  FailureOr<Value> a = importer.floatInput(0), b = importer.floatInput(1);
  if (failed(a) || failed(b))
    return failure();
  RankedTensorType aType = importer.getTensorType(*a),
                   bType = importer.getTensorType(*b);
  SmallVector<int64_t> aShape(aType.getShape()), bShape(bType.getShape());
  if (aShape.empty() || bShape.empty())
    return importer.error() << "MatMul of a scalar is not defined, got "
                            << aType << " and " << bType;
  // Vectors become matrices; their added dimension is dropped at the end.
  bool vectorA = aShape.size() == 1, vectorB = bShape.size() == 1;
  if (vectorA)
    aShape.insert(aShape.begin(), 1);
  if (vectorB)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back();
  int64_t n = bShape.back();
  if (bShape[bShape.size() - 2] != k)
    return importer.error()
           << "the contraction dimensions differ: " << aType << " x " << bType;
  ArrayRef<int64_t> aBatch = ArrayRef<int64_t>(aShape).drop_back(2);
  ArrayRef<int64_t> bBatch = ArrayRef<int64_t>(bShape).drop_back(2);
  std::optional<SmallVector<int64_t>> batch = broadcastShapes(aBatch, bBatch);
  if (!batch)
    return importer.error() << "the batch dimensions of " << aType << " and "
                            << bType << " are not broadcast-compatible";
  // The product is at most as large as a broadcast operand, which must be a
  // fluid tensor.
  SmallVector<int64_t> productShape(*batch);
  productShape.append({m, n});
  for (ArrayRef<int64_t> shape :
       {ArrayRef<int64_t>(productShape), ArrayRef<int64_t>(aShape),
        ArrayRef<int64_t>(bShape)}) {
    SmallVector<int64_t> full(*batch);
    full.append(shape.end() - 2, shape.end());
    if (!isFluidTensor(RankedTensorType::get(full, aType.getElementType())))
      return importer.error() << "the batched product of " << aType << " and "
                              << bType << " is too large";
  }
  int64_t batchSize = 1;
  for (int64_t dim : *batch)
    batchSize *= dim;

  Value lhs = *a, rhs = *b, product;
  if (bBatch.empty()) {
    // [..., M, K] x [K, N]: one matrix product over all rows.
    FailureOr<Value> rows = importer.reshape(lhs, {batchSize * m, k});
    FailureOr<Value> matrix = importer.reshape(rhs, {k, n});
    if (failed(rows) || failed(matrix))
      return failure();
    FailureOr<MatmulOp> op = importer.create<MatmulOp>({*rows, *matrix});
    if (failed(op))
      return failure();
    product = op->getOutput();
  } else {
    // Broadcast both to the batch shape, then one batched product.
    auto toBatch = [&](Value value, ArrayRef<int64_t> shape, int64_t rows,
                       int64_t cols) -> FailureOr<Value> {
      FailureOr<Value> full = importer.reshape(value, shape);
      if (failed(full))
        return failure();
      SmallVector<int64_t> target(*batch);
      target.append({rows, cols});
      Value broadcast = *full;
      if (ArrayRef<int64_t>(target) != ArrayRef<int64_t>(shape)) {
        SmallVector<int64_t> padded(target.size() - shape.size(), 1);
        padded.append(shape.begin(), shape.end());
        FailureOr<Value> aligned = importer.reshape(*full, padded);
        if (failed(aligned))
          return failure();
        auto type = RankedTensorType::get(
            target, importer.getTensorType(value).getElementType());
        broadcast = BroadcastToOp::create(importer.getBuilder(),
                                          importer.getLoc(), type, *aligned)
                        .getOutput();
      }
      return importer.reshape(broadcast, {batchSize, rows, cols});
    };
    FailureOr<Value> lhs3 = toBatch(lhs, aShape, m, k);
    FailureOr<Value> rhs3 = toBatch(rhs, bShape, k, n);
    if (failed(lhs3) || failed(rhs3))
      return failure();
    FailureOr<MatmulOp> op = importer.create<MatmulOp>({*lhs3, *rhs3});
    if (failed(op))
      return failure();
    product = op->getOutput();
  }
  SmallVector<int64_t> shape(*batch);
  if (!vectorA)
    shape.push_back(m);
  if (!vectorB)
    shape.push_back(n);
  FailureOr<Value> result = importer.reshape(product, shape);
  return failed(result) ? failure() : importer.define(0, *result);
}

/// `value` with its dimensions permuted (none if `perm` is the identity).
static Value transposed(FunctionImporter &importer, Value value,
                        ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return value;
  return TransposeOp::create(importer.getBuilder(), importer.getLoc(), value,
                             perm)
      .getOutput();
}

static LogicalResult importEinsum(FunctionImporter &importer,
                                  const om::Node &node) {
  FailureOr<std::string> equationAttr = importer.stringAttr("equation", "");
  if (failed(equationAttr))
    return failure();
  std::string equation;
  for (char c : *equationAttr)
    if (c != ' ')
      equation.push_back(c);
  size_t count = node.inputs.size();
  if (count != 1 && count != 2)
    return importer.error() << "an Einsum of " << count
                            << " operands is not supported (one or two)";
  auto unsupported = [&](const Twine &why) {
    return importer.attributeError("equation", "'" + *equationAttr + "'")
           << ": " << why;
  };
  if (equation.find("...") != std::string::npos)
    return unsupported("ellipses are not supported");
  size_t arrow = equation.find("->");
  StringRef inputsText = StringRef(equation).substr(0, arrow);
  SmallVector<StringRef, 2> terms;
  inputsText.split(terms, ',');
  if (terms.size() != count)
    return unsupported("it names " + Twine(terms.size()) +
                       " operands, the node has " + Twine(count));

  SmallVector<Value, 2> operands;
  std::map<char, int64_t> extents;
  std::string counted;
  for (auto [i, term] : llvm::enumerate(terms)) {
    FailureOr<Value> value = importer.floatInput(i);
    if (failed(value))
      return failure();
    operands.push_back(*value);
    ArrayRef<int64_t> shape = importer.getTensorType(*value).getShape();
    if (term.size() != shape.size())
      return unsupported("operand " + Twine(i) + " has " + Twine(term.size()) +
                         " subscripts and rank " + Twine(shape.size()));
    for (auto [d, c] : llvm::enumerate(term)) {
      if (!llvm::isAlpha(c))
        return unsupported("'" + Twine(c) + "' is not a subscript");
      if (term.find(c) != d)
        return unsupported("subscript '" + Twine(c) +
                           "' repeats in one operand (a diagonal)");
      auto [it, inserted] = extents.try_emplace(c, shape[d]);
      if (!inserted && it->second != shape[d])
        return unsupported("subscript '" + Twine(c) + "' has extents " +
                           Twine(it->second) + " and " + Twine(shape[d]));
      counted.push_back(c);
    }
  }
  // Without "->", the output is the subscripts used once, in order.
  std::string output;
  if (arrow != std::string::npos) {
    output = equation.substr(arrow + 2);
  } else {
    for (char c = 'A'; c <= 'z'; ++c)
      if (llvm::count(counted, c) == 1)
        output.push_back(c);
  }
  for (auto [d, c] : llvm::enumerate(output)) {
    if (!extents.count(c))
      return unsupported("the output's subscript '" + Twine(c) +
                         "' is no operand's");
    if (output.find(c) != d)
      return unsupported("the output repeats subscript '" + Twine(c) + "'");
  }
  // Each subscript is kept (in the output) or contracted (in both
  // operands); one summed within one operand is not supported.
  for (auto [i, term] : llvm::enumerate(terms))
    for (char c : term)
      if (output.find(c) == std::string::npos &&
          (count == 1 || terms[1 - i].find(c) == StringRef::npos))
        return unsupported("it sums over subscript '" + Twine(c) +
                           "' of one operand only");

  auto positions = [](StringRef term, StringRef letters) {
    SmallVector<int64_t> perm;
    for (char c : letters)
      perm.push_back(term.find(c));
    return perm;
  };
  if (count == 1) {
    Value result =
        transposed(importer, operands[0], positions(terms[0], output));
    return importer.define(0, result);
  }

  // [batch, free of A, contracted] x [batch, contracted, free of B].
  std::string batch, freeA, freeB, contracted;
  for (char c : output) {
    bool inA = terms[0].contains(c), inB = terms[1].contains(c);
    (inA && inB ? batch : inA ? freeA : freeB).push_back(c);
  }
  for (char c : terms[0])
    if (output.find(c) == std::string::npos && terms[1].contains(c))
      contracted.push_back(c);
  auto extent = [&](StringRef letters) {
    int64_t product = 1;
    for (char c : letters)
      product *= extents[c];
    return product;
  };
  int64_t batchSize = extent(batch), m = extent(freeA), n = extent(freeB),
          k = extent(contracted);
  // Each factor is at most an operand's size; the product may be larger.
  std::optional<int64_t> productSize = llvm::checkedMul(batchSize, m);
  if (productSize)
    productSize = llvm::checkedMul(*productSize, n);
  Type element = importer.getTensorType(operands[0]).getElementType();
  if (!productSize ||
      !isFluidTensor(RankedTensorType::get({*productSize}, element)))
    return importer.error()
           << "the product of " << importer.getTensorType(operands[0])
           << " and " << importer.getTensorType(operands[1]) << " is too large";
  Value lhs = transposed(importer, operands[0],
                         positions(terms[0], batch + freeA + contracted));
  Value rhs = transposed(importer, operands[1],
                         positions(terms[1], batch + contracted + freeB));
  FailureOr<Value> lhs3 = importer.reshape(lhs, {batchSize, m, k});
  FailureOr<Value> rhs3 = importer.reshape(rhs, {batchSize, k, n});
  if (failed(lhs3) || failed(rhs3))
    return failure();
  FailureOr<MatmulOp> op = importer.create<MatmulOp>({*lhs3, *rhs3});
  if (failed(op))
    return failure();
  std::string order = batch + freeA + freeB;
  SmallVector<int64_t> shape;
  for (char c : order)
    shape.push_back(extents[c]);
  FailureOr<Value> product = importer.reshape(op->getOutput(), shape);
  if (failed(product))
    return failure();
  return importer.define(
      0, transposed(importer, *product, positions(order, output)));
}

std::vector<OperatorInfo> mlir::fluid::onnx_import::getMatrixOperators() {
  return {
      {"Gemm",
       &importGemm,
       {1, 6, 7, 9, 11, 13},
       {"alpha", "beta", "transA", "transB"},
       3,
       1},
      {"Einsum", &importEinsum, {12}, {"equation"}, kAnyNumber, 1},
      {"MatMul", &importMatMul, {1, 9, 13}, {}, 2, 1},
  };
}
