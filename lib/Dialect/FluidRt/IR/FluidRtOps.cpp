//===- FluidRtOps.cpp - The buffer-level fluid_rt dialect -----------------===//
//
// A launch is checked by the op it runs: the tensor-level op is rebuilt,
// detached, on the buffers' shapes and verified, so every shape rule of the
// fluid dialect also guards the buffer level.
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::fluid_rt;

/// The elementwise kernels whose output may be the buffer of any input of
/// its shape and element type, on both backends (the rules in the
/// runtime's CpuKernels.h, CpuGradKernels.h and CudaKernels.h; tested in
/// test/Runtime/cpu-in-place.py and gpu-in-place.py).
static constexpr StringLiteral kElementwiseInPlaceKernels[] = {
    "add",     "sub",     "mul",       "div",          "pow",
    "minimum", "maximum", "relu",      "sigmoid",      "tanh",
    "neg",     "exp",     "log",       "cos",          "sqrt",
    "floor",   "select",  "relu_grad", "sigmoid_grad", "tanh_grad"};

#include "fluid/Dialect/FluidRt/IR/FluidRtOpsDialect.cpp.inc"

void FluidRtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.cpp.inc"
      >();
}

LogicalResult FluidRtDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kGpuKernelAttrName) {
    auto launch = dyn_cast<LaunchOp>(op);
    if (!launch || launch.getKernel() != "fusion" ||
        !isa<StringAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name
                               << "' must be a string on a launch of "
                                  "\"fusion\"";
    return success();
  }
  if (name == kGpuSumSplitsAttrName) {
    auto launch = dyn_cast<LaunchOp>(op);
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!launch || launch.getKernel() != "fusion" || !value ||
        value.getInt() < 1)
      return op->emitOpError() << "'" << name
                               << "' must be a positive integer on a launch "
                                  "of \"fusion\"";
    return success();
  }
  bool onFunction =
      name == kArenaBytesAttrName || name == kArenaLowerBoundAttrName;
  if (!onFunction && name != kWorkspaceLimitAttrName)
    return op->emitOpError()
           << "has unknown attribute '" << name
           << "'; the fluid_rt dialect's operation attributes are '"
           << kArenaBytesAttrName << "', '" << kArenaLowerBoundAttrName
           << "', '" << kWorkspaceLimitAttrName << "', '" << kGpuKernelAttrName
           << "' and '" << kGpuSumSplitsAttrName << "'";
  if (onFunction ? !isa<FunctionOpInterface>(op) : !isa<ModuleOp>(op))
    return op->emitOpError() << "'" << name << "' belongs on "
                             << (onFunction ? "functions" : "the module");
  auto value = dyn_cast<IntegerAttr>(attr.getValue());
  if (!value || !value.getType().isSignlessInteger(64) ||
      (onFunction && value.getInt() < 0))
    return op->emitOpError() << "'" << name << "' must be "
                             << (onFunction ? "a non-negative" : "an")
                             << " i64, got " << attr.getValue();
  return success();
}

bool mlir::fluid_rt::mayWriteOverInput(StringRef kernel, unsigned output) {
  // Optimizer updates read every element of their inputs before writing it.
  if (kernel == "sgd" || kernel == "momentum" || kernel == "adam")
    return true;
  if (kernel == "batch_norm") // new_running_mean, new_running_var
    return output == 3 || output == 4;
  // Elementwise kernels: each output element is written after its
  // operands were read, by the same thread.
  return output == 0 && llvm::is_contained(kElementwiseInPlaceKernels, kernel);
}

std::optional<unsigned> mlir::fluid_rt::groupedInPlaceInput(StringRef kernel,
                                                            unsigned outputs,
                                                            unsigned output) {
  // Result lists: new parameters, then new state (one list per state);
  // input lists: parameters, gradients, then the state lists.
  unsigned resultLists = kernel == "sgd_group"        ? 1
                         : kernel == "momentum_group" ? 2
                         : kernel == "adam_group"     ? 3
                                                      : 0;
  if (!resultLists || outputs % resultLists || output >= outputs)
    return std::nullopt;
  unsigned count = outputs / resultLists;
  unsigned list = output / count, entry = output % count;
  return (list == 0 ? 0 : list + 1) * count + entry;
}

static RankedTensorType tensorTypeOf(Type memref) {
  auto type = cast<MemRefType>(memref);
  return RankedTensorType::get(type.getShape(), type.getElementType());
}

//===----------------------------------------------------------------------===//
// ParamRefOp
//===----------------------------------------------------------------------===//

LogicalResult ParamRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Operation *symbol = symbolTable.lookupNearestSymbolFrom(*this, getNameAttr());
  auto param = dyn_cast_or_null<fluid::ParamOp>(symbol);
  if (!param)
    return emitOpError() << "refers to " << getNameAttr()
                         << ", which is not a fluid.param";
  if (param.getTensorType() != tensorTypeOf(getType()))
    return emitOpError() << "buffer type " << getType()
                         << " does not match parameter " << getNameAttr()
                         << " of type " << param.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// LaunchOp
//===----------------------------------------------------------------------===//

Operation *LaunchOp::buildTensorOp(Block &arguments) {
  MLIRContext *context = getContext();
  OperationName name(("fluid." + getKernel()).str(), context);
  if (!name.isRegistered() || getKernel() == "param" ||
      getKernel() == "get_param" || getKernel() == "set_param") {
    emitOpError() << "has no kernel '" << getKernel() << "'";
    return nullptr;
  }
  OperationState state(getLoc(), name);
  // A fused region's body moves between the two levels as it is.
  if (!getBody().empty()) {
    IRMapping mapping;
    getBody().cloneInto(state.addRegion(), mapping);
  } else if (getKernel() == "fusion") {
    state.addRegion();
  }
  for (Value input : getInputs())
    state.operands.push_back(
        arguments.addArgument(tensorTypeOf(input.getType()), getLoc()));
  for (Value output : getOutputs())
    state.types.push_back(tensorTypeOf(output.getType()));
  state.attributes.append(getParams().getValue());
  return Operation::create(state);
}

LogicalResult LaunchOp::verify() {
  bool fusion = getKernel() == "fusion";
  if (fusion && getBody().empty())
    return emitOpError() << "of \"fusion\" must carry the fused region";
  if (!fusion && !getBody().empty())
    return emitOpError() << "of '" << getKernel()
                         << "' cannot have a region (only \"fusion\" has one)";
  Block arguments;
  Operation *op = buildTensorOp(arguments);
  if (!op)
    return failure();
  // Recursively: this runs before the launch's own region is verified, so
  // a fused body's ops may still lack what their verifiers require (a
  // fluid.slice without its offset), and the fusion's region verifier
  // reads them.
  LogicalResult valid = mlir::verify(op, /*verifyRecursively=*/true);
  op->destroy();
  if (failed(valid))
    return emitOpError() << "is not a valid '" << getKernel()
                         << "' on these buffers";
  return success();
}

//===----------------------------------------------------------------------===//
// ViewOp
//===----------------------------------------------------------------------===//

LogicalResult ViewOp::verify() {
  auto source = cast<MemRefType>(getSource().getType());
  auto result = cast<MemRefType>(getType());
  if (source.getElementType() != result.getElementType() ||
      source.getNumElements() != result.getNumElements())
    return emitOpError() << "cannot view " << source << " as " << result;
  return success();
}

Value ViewOp::getViewSource() { return getSource(); }

#define GET_OP_CLASSES
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.cpp.inc"
