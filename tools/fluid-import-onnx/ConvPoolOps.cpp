//===- ConvPoolOps.cpp - Conv, AveragePool, MaxPool, GlobalAveragePool ----===//
//
// Convolution and pooling over 1-D and 2-D images. Fluid's window ops are
// 2-D: a 1-D input [N, C, L] is imported as [N, C, 1, L] and its result
// reshaped back. ONNX's output extent is checked against fluid's (PyTorch's)
// rule, which differs for a last window in ceil_mode.
//
// A Pad of zeros on the spatial dimensions before a convolution, or before
// an average pool that counts padded cells (torch.onnx exports
// nn.AvgPool2d(padding=p), count_include_pad=True, as such a Pad and a pool
// without padding), becomes the op's own padding.
//
//===----------------------------------------------------------------------===//

#include "OnnxImporterInternals.h"

#include <algorithm>
#include <limits>
#include <tuple>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::onnx_import;

namespace {

/// The window attributes of a convolution or pooling node, for 1 or 2
/// spatial dimensions.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, padBegin, padEnd;
  bool ceilMode = false;
  /// Whether the node has auto_pad SAME_* or VALID.
  bool autoPadded = false;

  /// In fluid's 2-D form: a 1-D window is a 2-D one of height 1; padding
  /// is [top, left, bottom, right], ONNX's order.
  SmallVector<int64_t> kernel2D() const { return lift(kernel, 1); }
  SmallVector<int64_t> strides2D() const { return lift(strides, 1); }
  SmallVector<int64_t> dilations2D() const { return lift(dilations, 1); }
  SmallVector<int64_t> padding2D() const {
    SmallVector<int64_t> begin = lift(padBegin, 0), end = lift(padEnd, 0);
    return {begin[0], begin[1], end[0], end[1]};
  }

private:
  static SmallVector<int64_t> lift(ArrayRef<int64_t> values, int64_t height) {
    if (values.size() == 2)
      return SmallVector<int64_t>(values);
    return {height, values[0]};
  }
};

} // namespace

static FailureOr<Window> readWindow(FunctionImporter &importer,
                                    ArrayRef<int64_t> inputSpatial,
                                    ArrayRef<int64_t> weightKernel, bool isPool,
                                    bool allowDilations) {
  size_t rank = inputSpatial.size();
  Window window;
  SmallVector<int64_t> ones(rank, 1), zeros(2 * rank, 0);
  bool hasKernel = false;
  FailureOr<SmallVector<int64_t>> kernel =
      importer.intsAttr("kernel_shape", weightKernel, &hasKernel);
  if (failed(kernel))
    return failure();
  if (isPool && !hasKernel) {
    importer.error() << "attribute 'kernel_shape' is required";
    return failure();
  }
  if (!isPool && *kernel != weightKernel) {
    importer.error() << "attribute 'kernel_shape' " << formatShape(*kernel)
                     << " differs from the weight's kernel "
                     << formatShape(weightKernel);
    return failure();
  }
  FailureOr<SmallVector<int64_t>> strides =
      importer.intsAttr("strides", ones, nullptr);
  FailureOr<SmallVector<int64_t>> dilations =
      allowDilations ? importer.intsAttr("dilations", ones, nullptr)
                     : FailureOr<SmallVector<int64_t>>(ones);
  FailureOr<SmallVector<int64_t>> pads =
      importer.intsAttr("pads", zeros, nullptr);
  FailureOr<std::string> autoPad = importer.stringAttr("auto_pad", "NOTSET");
  if (failed(strides) || failed(dilations) || failed(pads) || failed(autoPad))
    return failure();
  for (auto [name, values, size, minimum] :
       {std::tuple<StringRef, ArrayRef<int64_t>, size_t, int64_t>{
            "kernel_shape", *kernel, rank, 1},
        {"strides", *strides, rank, 1},
        {"dilations", *dilations, rank, 1},
        {"pads", *pads, 2 * rank, 0}}) {
    if (values.size() != size) {
      importer.attributeError(name, formatShape(values))
          << ": the input has " << rank << " spatial dimension"
          << (rank == 1 ? "" : "s") << ", so it needs " << size << " values";
      return failure();
    }
    // The bound keeps the window arithmetic below within 64 bits.
    for (int64_t value : values)
      if (value < minimum || value > std::numeric_limits<int32_t>::max()) {
        importer.attributeError(name, formatShape(values))
            << ": values must be in [" << minimum << ", "
            << std::numeric_limits<int32_t>::max() << "]";
        return failure();
      }
  }
  window.kernel = *kernel;
  window.strides = *strides;
  window.dilations = *dilations;
  window.padBegin.assign(pads->begin(), pads->begin() + rank);
  window.padEnd.assign(pads->begin() + rank, pads->end());

  window.autoPadded = *autoPad != "NOTSET";
  if (*autoPad == "VALID") {
    window.padBegin.assign(rank, 0);
    window.padEnd.assign(rank, 0);
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    // The output is ceil(in / stride); the padding that takes, split evenly
    // with the odd cell at the end (SAME_UPPER) or the beginning.
    for (size_t d = 0; d < rank; ++d) {
      int64_t extent = (window.kernel[d] - 1) * window.dilations[d] + 1;
      int64_t out =
          (inputSpatial[d] + window.strides[d] - 1) / window.strides[d];
      int64_t total = std::max<int64_t>(0, (out - 1) * window.strides[d] +
                                               extent - inputSpatial[d]);
      int64_t small = total / 2, large = total - small;
      bool upper = *autoPad == "SAME_UPPER";
      window.padBegin[d] = upper ? small : large;
      window.padEnd[d] = upper ? large : small;
    }
  } else if (*autoPad != "NOTSET") {
    importer.attributeError("auto_pad", "'" + *autoPad + "'")
        << " (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)";
    return failure();
  }
  return window;
}

/// The zeros that `pad` adds around the spatial dimensions of an image
/// (rank 3 or 4), begins then ends, when it adds nothing else and each is
/// within a window attribute's bound; otherwise nullopt.
static std::optional<SmallVector<int64_t>>
getSpatialZeroPads(const PendingPad *pad) {
  if (!pad || pad->value != 0)
    return std::nullopt;
  ArrayRef<int64_t> pads = pad->pads;
  size_t rank = pads.size() / 2;
  if ((rank != 3 && rank != 4) || pads[0] || pads[1] || pads[rank] ||
      pads[rank + 1])
    return std::nullopt;
  SmallVector<int64_t> spatial;
  for (size_t d = 2; d < rank; ++d)
    spatial.push_back(pads[d]);
  for (size_t d = 2; d < rank; ++d)
    spatial.push_back(pads[rank + d]);
  if (llvm::any_of(spatial, [](int64_t value) {
        return value > std::numeric_limits<int32_t>::max();
      }))
    return std::nullopt;
  return spatial;
}

/// The spatial extents of `shape` with `spatialPads` added.
static SmallVector<int64_t> paddedSpatial(ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> spatialPads) {
  SmallVector<int64_t> spatial(shape.drop_front(2));
  for (size_t d = 0; d < spatial.size(); ++d)
    spatial[d] += spatialPads[d] + spatialPads[spatial.size() + d];
  return spatial;
}

/// Adds a Pad's spatial zeros to the window's padding.
static void addPadding(Window &window, ArrayRef<int64_t> spatialPads) {
  size_t rank = window.padBegin.size();
  for (size_t d = 0; d < rank; ++d) {
    window.padBegin[d] += spatialPads[d];
    window.padEnd[d] += spatialPads[rank + d];
  }
}

/// A 1-D input [N, C, L] as a 2-D one [N, C, 1, L]; 2-D as it is.
static FailureOr<Value> windowInput(FunctionImporter &importer, Value input) {
  RankedTensorType type = importer.getTensorType(input);
  if (type.getRank() == 4)
    return input;
  return importer.reshape(
      input, {type.getDimSize(0), type.getDimSize(1), 1, type.getDimSize(2)});
}

/// Checks the output of a window op on `input` (given to windowInput)
/// against ONNX's extent (fluid's is PyTorch's) and reshapes it back to 1-D
/// if it was lifted.
static FailureOr<Value> windowOutput(FunctionImporter &importer,
                                     const Window &window,
                                     RankedTensorType input, Value output) {
  ArrayRef<int64_t> inputSpatial = input.getShape().drop_front(2);
  RankedTensorType outType = importer.getTensorType(output);
  SmallVector<int64_t> shape(outType.getShape());
  if (input.getRank() == 3)
    shape.erase(shape.begin() + 2);
  for (size_t d = 0; d < inputSpatial.size(); ++d) {
    int64_t extent = (window.kernel[d] - 1) * window.dilations[d] + 1;
    int64_t span =
        inputSpatial[d] + window.padBegin[d] + window.padEnd[d] - extent;
    int64_t stride = window.strides[d];
    int64_t expected =
        window.ceilMode ? (span + stride - 1) / stride + 1 : span / stride + 1;
    if (expected != shape[d + 2]) {
      importer.error()
          << "ONNX gives this window an output extent of " << expected
          << " along spatial dimension " << d << ", fluid gives "
          << shape[d + 2]
          << ": in ceil_mode fluid (like PyTorch) drops a last window "
             "that would start in the padding";
      return failure();
    }
  }
  return importer.reshape(output, shape);
}

static LogicalResult importConv(FunctionImporter &importer,
                                const om::Node &node) {
  // A Pad of zeros is the convolution's padding.
  const PendingPad *padded = importer.pendingPadInput(0);
  std::optional<SmallVector<int64_t>> folded = getSpatialZeroPads(padded);
  FailureOr<Value> x =
      folded ? FailureOr<Value>(padded->input) : importer.floatInput(0);
  FailureOr<Value> w = importer.floatInput(1);
  if (failed(x) || failed(w))
    return failure();
  Value bias;
  if (importer.hasInput(2)) {
    FailureOr<Value> b = importer.floatInput(2);
    if (failed(b))
      return failure();
    bias = *b;
  }
  RankedTensorType xType = importer.getTensorType(*x),
                   wType = importer.getTensorType(*w);
  int64_t rank = xType.getRank();
  if (rank != 3 && rank != 4)
    return importer.error()
           << "only 1-D and 2-D convolutions are supported (inputs "
              "of rank 3 or 4), got "
           << xType;
  if (wType.getRank() != rank)
    return importer.error() << "the weight must have rank " << rank
                            << " like the input, got " << wType;
  // auto_pad pads the padded input.
  SmallVector<int64_t> spatial(xType.getShape().drop_front(2));
  if (folded)
    spatial = paddedSpatial(xType.getShape(), *folded);
  FailureOr<Window> window =
      readWindow(importer, spatial, wType.getShape().drop_front(2),
                 /*isPool=*/false, /*allowDilations=*/true);
  FailureOr<int64_t> groups = importer.intAttr("group", 1);
  if (failed(window) || failed(groups))
    return failure();
  if (folded)
    addPadding(*window, *folded);

  // A 1-D convolution is a 2-D one over images of height 1.
  FailureOr<Value> input = windowInput(importer, *x),
                   filter = windowInput(importer, *w);
  if (failed(input) || failed(filter))
    return failure();
  OpBuilder &builder = importer.getBuilder();
  Conv2DOp::Properties properties;
  properties.setStrides(builder.getDenseI64ArrayAttr(window->strides2D()));
  properties.setDilation(builder.getDenseI64ArrayAttr(window->dilations2D()));
  properties.setPadding(builder.getDenseI64ArrayAttr(window->padding2D()));
  properties.setGroups(builder.getI64IntegerAttr(*groups));
  SmallVector<Value, 3> operands = {*input, *filter};
  if (bias)
    operands.push_back(bias);
  FailureOr<Conv2DOp> conv = importer.create<Conv2DOp>(operands, properties);
  if (failed(conv))
    return failure();
  FailureOr<Value> result =
      windowOutput(importer, *window, xType, conv->getOutput());
  return failed(result) ? failure() : importer.define(0, *result);
}

template <bool isMax>
static LogicalResult importPool(FunctionImporter &importer,
                                const om::Node &node) {
  FailureOr<SmallVector<int64_t>> shape = importer.inputShape(0);
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  if (rank != 3 && rank != 4) {
    FailureOr<Value> x = importer.floatInput(0);
    if (failed(x))
      return failure();
    return importer.error()
           << "only 1-D and 2-D pooling is supported (inputs of rank "
              "3 or 4), got "
           << x->getType();
  }
  FailureOr<bool> ceilMode = importer.boolAttr("ceil_mode");
  if (failed(ceilMode))
    return failure();
  bool countIncludePad = false;
  if constexpr (isMax) {
    FailureOr<int64_t> storageOrder = importer.intAttr("storage_order", 0);
    if (failed(storageOrder))
      return failure();
    if (*storageOrder != 0)
      return importer.attributeError("storage_order", Twine(*storageOrder))
             << " (only 0, row-major)";
    if (failed(importer.expectOutputs(1, "the Indices of the maxima")))
      return failure();
  } else {
    FailureOr<bool> include = importer.boolAttr("count_include_pad");
    if (failed(include))
      return failure();
    countIncludePad = *include;
  }
  ArrayRef<int64_t> spatial = ArrayRef<int64_t>(*shape).drop_front(2);
  FailureOr<Window> window = readWindow(importer, spatial, {}, /*isPool=*/true,
                                        /*allowDilations=*/isMax);
  if (failed(window))
    return failure();
  // With auto_pad the padding already gives ONNX's output extent.
  window->ceilMode = *ceilMode && !window->autoPadded;

  // An average over a Pad's zeros counts them as cells: the pool's own
  // padding must be counted too (or be none), and no last window of
  // ceil_mode may reach past the zeros, where fluid would not count them.
  std::optional<SmallVector<int64_t>> folded;
  const PendingPad *padded = nullptr;
  if constexpr (!isMax) {
    padded = importer.pendingPadInput(0);
    folded = getSpatialZeroPads(padded);
    bool ownPadding =
        llvm::any_of(window->padBegin, [](int64_t p) { return p != 0; }) ||
        llvm::any_of(window->padEnd, [](int64_t p) { return p != 0; });
    if (window->ceilMode || (ownPadding && !countIncludePad))
      folded.reset();
  }
  FailureOr<Value> x =
      folded ? FailureOr<Value>(padded->input) : importer.floatInput(0);
  if (failed(x))
    return failure();
  if (folded) {
    addPadding(*window, *folded);
    countIncludePad = true;
  }
  RankedTensorType xType = importer.getTensorType(*x);

  FailureOr<Value> input = windowInput(importer, *x);
  if (failed(input))
    return failure();
  OpBuilder &builder = importer.getBuilder();
  DenseI64ArrayAttr kernel = builder.getDenseI64ArrayAttr(window->kernel2D());
  DenseI64ArrayAttr strides = builder.getDenseI64ArrayAttr(window->strides2D());
  DenseI64ArrayAttr padding = builder.getDenseI64ArrayAttr(window->padding2D());
  UnitAttr ceil = window->ceilMode ? builder.getUnitAttr() : UnitAttr();
  Value output;
  if constexpr (isMax) {
    MaxPool2DOp::Properties properties;
    properties.setKernelSize(kernel);
    properties.setStrides(strides);
    properties.setPadding(padding);
    properties.setDilation(builder.getDenseI64ArrayAttr(window->dilations2D()));
    properties.setCeilMode(ceil);
    FailureOr<MaxPool2DOp> pool =
        importer.create<MaxPool2DOp>(*input, properties);
    if (failed(pool))
      return failure();
    output = pool->getOutput();
  } else {
    AvgPool2DOp::Properties properties;
    properties.setKernelSize(kernel);
    properties.setStrides(strides);
    properties.setPadding(padding);
    properties.setCeilMode(ceil);
    if (countIncludePad)
      properties.setCountIncludePad(builder.getUnitAttr());
    FailureOr<AvgPool2DOp> pool =
        importer.create<AvgPool2DOp>(*input, properties);
    if (failed(pool))
      return failure();
    output = pool->getOutput();
  }
  FailureOr<Value> result = windowOutput(importer, *window, xType, output);
  return failed(result) ? failure() : importer.define(0, *result);
}

static LogicalResult importGlobalAveragePool(FunctionImporter &importer,
                                             const om::Node &node) {
  FailureOr<Value> x = importer.floatInput(0);
  if (failed(x))
    return failure();
  RankedTensorType type = importer.getTensorType(*x);
  if (type.getRank() != 3 && type.getRank() != 4)
    return importer.error()
           << "only inputs of rank 3 or 4 are supported, got " << type;
  FailureOr<Value> input = windowInput(importer, *x);
  if (failed(input))
    return failure();
  FailureOr<GlobalAvgPoolOp> pool = importer.create<GlobalAvgPoolOp>(*input);
  if (failed(pool))
    return failure();
  SmallVector<int64_t> shape(type.getRank(), 1);
  shape[0] = type.getDimSize(0);
  shape[1] = type.getDimSize(1);
  FailureOr<Value> result = importer.reshape(pool->getOutput(), shape);
  return failed(result) ? failure() : importer.define(0, *result);
}

std::vector<OperatorInfo> mlir::fluid::onnx_import::getConvPoolOperators() {
  return {
      {"AveragePool",
       &importPool</*isMax=*/false>,
       {1, 7, 10, 11},
       {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads",
        "strides"},
       1,
       1},
      {"Conv",
       &importConv,
       {1, 11},
       {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"},
       3,
       1},
      {"GlobalAveragePool", &importGlobalAveragePool, {1}, {}, 1, 1},
      {"MaxPool",
       &importPool</*isMax=*/true>,
       {1, 8, 10, 11, 12},
       {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
        "storage_order", "strides"},
       1,
       2},
  };
}
