//===- GenerateGpuKernels.cpp - --fluid-generate-gpu-kernels --------------===//
//
// Every `fluid_rt.launch "fusion"` of a bufferized module gets a kernel in
// `gpu.module @fluid_kernels`: a `gpu.func` over flat memrefs (MLIR's
// bare-pointer calling convention: one pointer per buffer) whose grid-stride
// loop walks the region's iteration space, `width` elements per step. An
// input read at every element (an identity access) and each output move
// as 128-bit vectors where the shapes allow; a broadcast input is read per
// element at an index computed from constants (static shapes). Equal
// regions share one kernel. The launch names its kernel in
// `fluid_rt.gpu_kernel`. --fluid-lower-gpu-kernels then turns the module
// into PTX (docs/FUSION.md).
//
//===----------------------------------------------------------------------===//

#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Target/FusedKernels.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstdlib>
#include <map>

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDGENERATEGPUKERNELS
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

void mlir::fluid::registerGpuCodegenDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, cf::ControlFlowDialect, gpu::GPUDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  NVVM::NVVMDialect, scf::SCFDialect, vector::VectorDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void mlir::fluid::buildGpuLoweringPipeline(OpPassManager &pm,
                                           StringRef toolkitPath) {
  GpuNVVMAttachTargetOptions target;
  target.chip = "sm_90";
  // The default PTX version (6.0) does not support sm_90.
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  // 64-bit offsets (the loops' pointer increments); the kernels divide in
  // 32 bits where they can (--fluid-generate-gpu-kernels).
  nvvm.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa"; // PTX text, JIT-compiled at load
  binary.toolkitPath = toolkitPath.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

std::string mlir::fluid::defaultCudaToolkitPath() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  return "/usr/local/cuda";
}

namespace {

Type elementOf(Type type) { return cast<ShapedType>(type).getElementType(); }

/// Builds the kernel of one region.
class KernelBuilder {
public:
  /// `narrow`: every index of the region is below 2^30, so divisions and
  /// remainders may be 32-bit.
  /// `vectorPartials`: a channels-last kernel's partial sums are stored
  /// split-major and read back as vectors (column-partials=vector).
  /// `columnUnroll`: rows of a channels-last sum per loop step, their loads
  /// issued together (column-unroll=N). `splits`: the blocks per channel
  /// (per tile) of a region with sums (fusedReductionSplits), else 1.
  KernelBuilder(FusionOp fusion, int64_t width, bool narrow,
                bool vectorPartials, int64_t columnUnroll, int64_t splits)
      : fusion(fusion), width(width), narrow(narrow),
        vectorPartials(vectorPartials), columnUnroll(columnUnroll),
        splits(splits), space(fusion.getIterationShape()) {
    contiguous = contiguousStrides(space);
  }

  LogicalResult build(ImplicitLocOpBuilder &b, StringRef name);

private:
  using Lanes = SmallVector<Value, 4>;
  /// The body at the lanes of `elements`: computes every value, stores the
  /// elementwise outputs, and appends each sum's operand, per lane, to
  /// `sums`.
  LogicalResult body(ImplicitLocOpBuilder &b, SmallVectorImpl<Lanes> &sums);
  void laneElements(ImplicitLocOpBuilder &b, Value first);
  /// Loads every input the body reads at the lanes of `elements` (into
  /// `loads`), without computing anything.
  void loadInputs(ImplicitLocOpBuilder &b);
  /// The kernel of a channels-last region with sums (isChannelsLastSum),
  /// from the entry block on.
  LogicalResult buildColumnSums(ImplicitLocOpBuilder &b, Value thread,
                                Value block, Value scratch,
                                ArrayRef<Operation *> reductions, Type element,
                                int64_t splits);
  /// An scf.for from `lower` to `upper` by `step` carrying `inits`; `body`
  /// receives the induction variable and the carried values and returns
  /// the next ones.
  scf::ForOp
  accumulate(ImplicitLocOpBuilder &b, Value lower, Value upper, Value step,
             ValueRange inits,
             function_ref<SmallVector<Value>(Value, ValueRange)> body);
  Value constantIndex(ImplicitLocOpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, v);
  }
  /// Counts this block done on counters[counter] (by thread 0, once the
  /// block's partial sums reached the device) and returns, the same in
  /// every thread of the block, whether it was the last of `splits` (the
  /// flag travels through scratch[0], between barriers).
  Value countBlockDone(ImplicitLocOpBuilder &b, Value thread, Value scratch,
                       Value counters, Value counter, int64_t splits,
                       Type element);
  /// x / d and x % d (unsigned); in 32 bits when `narrow` (a 64-bit
  /// division by a constant costs several times the instructions). The
  /// offsets themselves stay 64-bit, as the loops' pointer increments.
  Value divide(ImplicitLocOpBuilder &b, Value x, int64_t d) {
    return narrowed<arith::DivUIOp>(b, x, d);
  }
  Value remainder(ImplicitLocOpBuilder &b, Value x, int64_t d) {
    return narrowed<arith::RemUIOp>(b, x, d);
  }
  template <typename OpTy>
  Value narrowed(ImplicitLocOpBuilder &b, Value x, int64_t d) {
    if (!narrow)
      return OpTy::create(b, x, constantIndex(b, d));
    // (x32 directly where x is the widened result of another division.)
    auto widened = x.getDefiningOp<arith::IndexCastUIOp>();
    Value x32 = widened && widened.getIn().getType().isInteger(32)
                    ? widened.getIn()
                    : arith::IndexCastUIOp::create(b, b.getI32Type(), x);
    Value d32 = arith::ConstantOp::create(
        b, b.getI32IntegerAttr(static_cast<int32_t>(d)));
    return arith::IndexCastUIOp::create(b, b.getIndexType(),
                                        OpTy::create(b, x32, d32));
  }
  /// `width` lanes of `element` at buffer[at]: a scalar load for one
  /// lane, else one vector load aligned to its size (16 bytes at most).
  Lanes loadLanes(ImplicitLocOpBuilder &b, Type element, Value buffer,
                  Value at);
  /// Stores `lanes` at buffer[at] as loadLanes reads them.
  void storeLanes(ImplicitLocOpBuilder &b, ArrayRef<Value> lanes, Value buffer,
                  Value at);
  /// The offset in a broadcast input read at `strides` of `element`.
  Value broadcastOffset(ImplicitLocOpBuilder &b, ArrayRef<int64_t> strides,
                        Value element);
  /// The operand `use` of a body op, per lane.
  Lanes operand(ImplicitLocOpBuilder &b, OpOperand &use);
  FailureOr<Value> compute(ImplicitLocOpBuilder &b, Operation *op,
                           ArrayRef<Value> a);

  FusionOp fusion;
  int64_t width;
  bool narrow;
  bool vectorPartials;
  int64_t columnUnroll;
  int64_t splits;
  ArrayRef<int64_t> space;
  SmallVector<int64_t> contiguous;
  SmallVector<Value> buffers;
  Lanes elements; // the element index of each lane
  DenseMap<Value, Lanes> values;
  std::map<std::pair<unsigned, SmallVector<int64_t>>, Lanes> loads;
};

Value KernelBuilder::broadcastOffset(ImplicitLocOpBuilder &b,
                                     ArrayRef<int64_t> strides, Value element) {
  Value offset;
  for (size_t d = 0; d < space.size(); ++d) {
    if (strides[d] == 0 || space[d] == 1)
      continue;
    Value index = element;
    if (contiguous[d] != 1)
      index = divide(b, index, contiguous[d]);
    if (d > 0)
      index = remainder(b, index, space[d]);
    if (strides[d] != 1)
      index = arith::MulIOp::create(b, index, constantIndex(b, strides[d]));
    offset = offset ? arith::AddIOp::create(b, offset, index) : index;
  }
  return offset ? offset : constantIndex(b, 0);
}

KernelBuilder::Lanes KernelBuilder::operand(ImplicitLocOpBuilder &b,
                                            OpOperand &use) {
  BlockArgument arg = viewedArgument(use.get());
  if (!arg)
    return values.lookup(use.get());
  SmallVector<int64_t> strides = fusedAccessStrides(fusion, use);
  // A 16-bit argument read through a widening cast (a view) is widened as
  // it is loaded; such loads are keyed apart from plain ones.
  Type element = elementOf(arg.getType());
  Type wide = elementOf(use.get().getType());
  if (wide != element)
    strides.push_back(-1);
  auto key = std::make_pair(arg.getArgNumber(), strides);
  if (auto it = loads.find(key); it != loads.end())
    return it->second;
  if (wide != element)
    strides.pop_back();
  Value buffer = buffers[arg.getArgNumber()];
  Lanes lanes;
  if (strides == contiguous) {
    lanes = loadLanes(b, element, buffer, elements[0]);
  } else {
    // offset = sum over d of ((element / contiguous[d]) % space[d]) *
    // strides[d]. The lanes of a vector step start at a multiple of
    // `width`: a dimension whose contiguous stride is a multiple of it has
    // one index for all of them, and the innermost one (when its extent is
    // a multiple of it) moves by its stride per lane. When no other
    // dimension is read, lane l reads at lane 0's offset plus l times that
    // stride: the same element for a per-channel input.
    int64_t laneStride = 0;
    bool shared = width > 1;
    for (size_t d = 0; d < space.size() && shared; ++d) {
      if (strides[d] == 0 || space[d] == 1 || contiguous[d] % width == 0)
        continue;
      if (d + 1 == space.size() && space[d] % width == 0)
        laneStride = strides[d];
      else
        shared = false;
    }
    if (width > 1 && isLaneContiguousAccess(fusion, use)) {
      // Consecutive lanes read consecutive elements from an aligned offset
      // (a per-channel input of a channels-last region): one vector load
      // (fusedVectorOperands has the buffer's alignment checked).
      lanes = loadLanes(b, element, buffer,
                        broadcastOffset(b, strides, elements[0]));
    } else if (shared) {
      Value offset = broadcastOffset(b, strides, elements[0]);
      lanes.push_back(memref::LoadOp::create(b, buffer, offset));
      for (int64_t l = 1; l < width; ++l) {
        if (laneStride == 0) {
          lanes.push_back(lanes[0]);
          continue;
        }
        Value at =
            arith::AddIOp::create(b, offset, constantIndex(b, l * laneStride));
        lanes.push_back(memref::LoadOp::create(b, buffer, at));
      }
    } else {
      for (Value element : elements)
        lanes.push_back(memref::LoadOp::create(
            b, buffer, broadcastOffset(b, strides, element)));
    }
  }
  if (wide != element)
    for (Value &lane : lanes)
      lane = arith::ExtFOp::create(b, wide, lane);
  return loads[key] = lanes;
}

FailureOr<Value> KernelBuilder::compute(ImplicitLocOpBuilder &b, Operation *op,
                                        ArrayRef<Value> a) {
  Type type = elementOf(op->getResult(0).getType());
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, type, b.getFloatAttr(type, v));
  };
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) -> Value {
    return arith::CmpFOp::create(b, p, x, y);
  };
  auto select = [&](Value c, Value x, Value y) -> Value {
    return arith::SelectOp::create(b, c, x, y);
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddFOp::create(b, x, y);
  };
  auto sub = [&](Value x, Value y) -> Value {
    return arith::SubFOp::create(b, x, y);
  };
  auto mul = [&](Value x, Value y) -> Value {
    return arith::MulFOp::create(b, x, y);
  };
  using P = arith::CmpFPredicate;
  // The same formulas as the cuda kernels (runtime/cuda); NaN propagates
  // like theirs (relu, minimum and maximum keep a NaN operand).
  std::optional<Value> v =
      llvm::TypeSwitch<Operation *, std::optional<Value>>(op)
          .Case([&](ReluOp) {
            return select(cmp(P::OLT, a[0], constant(0)), constant(0), a[0]);
          })
          .Case([&](SigmoidOp) -> Value {
            Value e = math::ExpOp::create(b, arith::NegFOp::create(b, a[0]));
            return arith::DivFOp::create(b, constant(1), add(constant(1), e));
          })
          .Case([&](TanhOp) -> Value { return math::TanhOp::create(b, a[0]); })
          .Case([&](NegOp) -> Value { return arith::NegFOp::create(b, a[0]); })
          .Case([&](ExpOp) -> Value { return math::ExpOp::create(b, a[0]); })
          .Case([&](LogOp) -> Value { return math::LogOp::create(b, a[0]); })
          .Case([&](CosOp) -> Value { return math::CosOp::create(b, a[0]); })
          .Case([&](SqrtOp) -> Value { return math::SqrtOp::create(b, a[0]); })
          // erff/erf of libdevice (__nv_erff), linked by
          // --fluid-lower-gpu-kernels; the emitter rejects PTX that still
          // declares a libdevice function.
          .Case([&](ErfOp) -> Value { return math::ErfOp::create(b, a[0]); })
          .Case(
              [&](FloorOp) -> Value { return math::FloorOp::create(b, a[0]); })
          .Case([&](AddOp) { return add(a[0], a[1]); })
          .Case([&](SubOp) { return sub(a[0], a[1]); })
          .Case([&](MulOp) { return mul(a[0], a[1]); })
          .Case([&](DivOp) -> Value {
            return arith::DivFOp::create(b, a[0], a[1]);
          })
          .Case([&](PowOp) -> Value {
            return math::PowFOp::create(b, a[0], a[1]);
          })
          .Case<MinimumOp, MaximumOp>([&](auto m) -> Value {
            P p = isa<MinimumOp>(m.getOperation()) ? P::OLT : P::OGT;
            Value keep = arith::OrIOp::create(b, cmp(p, a[0], a[1]),
                                              cmp(P::UNE, a[0], a[0]));
            return select(keep, a[0], a[1]);
          })
          .Case([&](GreaterEqualOp) {
            return select(cmp(P::OGE, a[0], a[1]), constant(1), constant(0));
          })
          .Case([&](SelectOp) {
            Type c = a[0].getType();
            Value zero = arith::ConstantOp::create(b, c, b.getFloatAttr(c, 0));
            return select(cmp(P::UNE, a[0], zero), a[1], a[2]);
          })
          .Case([&](CastOp) -> Value {
            unsigned from = a[0].getType().getIntOrFloatBitWidth(),
                     to = type.getIntOrFloatBitWidth();
            if (from < to)
              return arith::ExtFOp::create(b, type, a[0]);
            if (from > to)
              return arith::TruncFOp::create(b, type, a[0]);
            return a[0];
          })
          .Case([&](BroadcastToOp) { return a[0]; })
          .Case([&](ReluGradOp) {
            return select(cmp(P::OLE, a[1], constant(0)), constant(0), a[0]);
          })
          .Case([&](SigmoidGradOp) {
            return mul(mul(a[0], a[1]), sub(constant(1), a[1]));
          })
          .Case([&](TanhGradOp) {
            return mul(a[0], sub(constant(1), mul(a[1], a[1])));
          })
          .Case([&](BatchNormApplyOp) {
            // (x - mean) * (scale * inv_std) + shift
            return add(mul(sub(a[0], a[3]), mul(a[1], a[4])), a[2]);
          })
          .Default([](Operation *) { return std::nullopt; });
  if (!v)
    return op->emitOpError() << "has no generated GPU code";
  return *v;
}

LogicalResult KernelBuilder::body(ImplicitLocOpBuilder &b,
                                  SmallVectorImpl<Lanes> &sums) {
  Block &body = fusion.getBodyBlock();
  for (Operation &op : body.without_terminator()) {
    if (isLoadedView(&op))
      continue; // its readers load through it
    if (isFusibleReduction(&op)) {
      sums.push_back(operand(b, op.getOpOperand(0)));
      continue;
    }
    SmallVector<Lanes> operands;
    for (OpOperand &use : op.getOpOperands())
      operands.push_back(operand(b, use));
    Lanes results;
    for (int64_t l = 0; l < width; ++l) {
      SmallVector<Value> a;
      for (Lanes &lanes : operands)
        a.push_back(lanes[l]);
      FailureOr<Value> v = compute(b, &op, a);
      if (failed(v))
        return failure();
      results.push_back(*v);
    }
    values[op.getResult(0)] = results;
  }
  // Every input of this step is read; now the outputs are written.
  unsigned outputBase = fusion.getInputs().size();
  for (auto [k, use] : llvm::enumerate(fusion.getYield()->getOpOperands())) {
    Operation *producer = use.get().getDefiningOp();
    if (producer && isFusibleReduction(producer))
      continue;
    storeLanes(b, operand(b, use), buffers[outputBase + k], elements[0]);
  }
  return success();
}

KernelBuilder::Lanes KernelBuilder::loadLanes(ImplicitLocOpBuilder &b,
                                              Type element, Value buffer,
                                              Value at) {
  Lanes lanes;
  if (width == 1) {
    lanes.push_back(memref::LoadOp::create(b, buffer, at));
    return lanes;
  }
  Value vector = vector::LoadOp::create(
      b, VectorType::get({width}, element), buffer, at,
      /*nontemporal=*/false,
      llvm::MaybeAlign(
          std::min<int64_t>(16, width * element.getIntOrFloatBitWidth() / 8)));
  for (int64_t l = 0; l < width; ++l)
    lanes.push_back(vector::ExtractOp::create(b, vector, l));
  return lanes;
}

void KernelBuilder::storeLanes(ImplicitLocOpBuilder &b, ArrayRef<Value> lanes,
                               Value buffer, Value at) {
  if (width == 1) {
    memref::StoreOp::create(b, lanes[0], buffer, at);
    return;
  }
  Type element = lanes[0].getType();
  vector::StoreOp::create(
      b,
      vector::FromElementsOp::create(b, VectorType::get({width}, element),
                                     lanes),
      buffer, at, /*nontemporal=*/false,
      llvm::MaybeAlign(
          std::min<int64_t>(16, width * element.getIntOrFloatBitWidth() / 8)));
}

void KernelBuilder::laneElements(ImplicitLocOpBuilder &b, Value first) {
  elements.push_back(first);
  for (int64_t l = 1; l < width; ++l)
    elements.push_back(arith::AddIOp::create(b, first, constantIndex(b, l)));
}

void KernelBuilder::loadInputs(ImplicitLocOpBuilder &b) {
  auto load = [&](OpOperand &use) {
    if (viewedArgument(use.get()))
      operand(b, use);
  };
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    if (!isLoadedView(&op))
      llvm::for_each(op.getOpOperands(), load);
  llvm::for_each(fusion.getYield()->getOpOperands(), load);
}

LogicalResult KernelBuilder::build(ImplicitLocOpBuilder &b, StringRef name) {
  SmallVector<Type> arguments;
  auto flat = [](Type type) {
    auto shaped = cast<ShapedType>(type);
    return MemRefType::get({std::max<int64_t>(1, shaped.getNumElements())},
                           shaped.getElementType());
  };
  for (Type type : fusion.getInputs().getTypes())
    arguments.push_back(flat(type));
  for (Type type : fusion.getResultTypes())
    arguments.push_back(flat(type));
  bool reduces = fusion.hasReductions();
  SmallVector<Operation *> reductions;
  for (Operation &op : fusion.getBodyBlock().without_terminator())
    if (isFusibleReduction(&op))
      reductions.push_back(&op);
  Type element =
      cast<ShapedType>(
          fusion.getBodyBlock().getTerminator()->getOperand(0).getType())
          .getElementType();
  if (reduces)
    element = cast<ShapedType>(reductions[0]->getResult(0).getType())
                  .getElementType();
  // Several blocks per channel: a counter per channel and a partial sum
  // per block and reduction.
  if (std::optional<FusedSumScratch> sums = fusedSumScratch(fusion, splits)) {
    arguments.push_back(MemRefType::get({sums->counters}, b.getI32Type()));
    arguments.push_back(MemRefType::get({sums->partials}, sums->element));
  }
  auto func = gpu::GPUFuncOp::create(b, name, b.getFunctionType(arguments, {}));
  func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  Value scratch;
  // A channels-last kernel's threads hold a sum per lane (channel).
  int64_t perThread = static_cast<int64_t>(reductions.size()) *
                      (isChannelsLastSum(fusion) ? width : 1);
  if (reduces)
    scratch = func.addWorkgroupAttribution(
        MemRefType::get({kReductionThreads * perThread}, element,
                        MemRefLayoutAttrInterface(),
                        gpu::AddressSpaceAttr::get(
                            b.getContext(), gpu::AddressSpace::Workgroup)),
        b.getLoc());
  Block &entry = func.getBody().front();
  buffers.assign(entry.args_begin(),
                 entry.args_begin() + static_cast<int64_t>(arguments.size()));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&entry);
  Value thread = gpu::ThreadIdOp::create(b, gpu::Dimension::x);
  Value block = gpu::BlockIdOp::create(b, gpu::Dimension::x);
  int64_t count = 1;
  for (int64_t d : space)
    count *= d;

  if (!reduces) {
    Value blockSize = gpu::BlockDimOp::create(b, gpu::Dimension::x);
    Value gridSize = gpu::GridDimOp::create(b, gpu::Dimension::x);
    Value start = arith::AddIOp::create(
        b, arith::MulIOp::create(b, block, blockSize), thread);
    Value step = arith::MulIOp::create(b, gridSize, blockSize);
    auto loop =
        scf::ForOp::create(b, start, constantIndex(b, count / width), step);
    gpu::ReturnOp::create(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first = loop.getInductionVar();
    if (width > 1)
      first = arith::MulIOp::create(b, first, constantIndex(b, width));
    laneElements(b, first);
    SmallVector<Lanes> none;
    return body(b, none);
  }
  if (isChannelsLastSum(fusion))
    return buildColumnSums(b, thread, block, scratch, reductions, element,
                           splits);

  // Per-channel sums: block k handles channel k / splits, the elements
  // (n, hw) of that channel from split k % splits on, `width` contiguous
  // ones (in one row) per step; each thread sums its steps and the block
  // sums its threads in workgroup memory. With one split thread 0 stores
  // the block's sum. With several it stores it among the partial sums and
  // counts the block done on the channel's counter; the block that counts
  // last sums the channel's partials, in split order by a fixed tree, stores
  // the result and sets the counter back to zero. No atomic adds of
  // floating-point values: the sums are the same from run to run.
  int64_t channels = space[1];
  int64_t inner = 1; // H * W
  for (size_t d = 2; d < space.size(); ++d)
    inner *= space[d];
  int64_t perChannel = count / channels;
  Value channel = divide(b, block, splits);
  Value split = remainder(b, block, splits);
  Value start = arith::AddIOp::create(
      b, arith::MulIOp::create(b, split, constantIndex(b, kReductionThreads)),
      thread);
  Value step = constantIndex(b, splits * kReductionThreads);
  SmallVector<Value> zeros;
  for (size_t r = 0; r < reductions.size(); ++r)
    zeros.push_back(
        arith::ConstantOp::create(b, element, b.getFloatAttr(element, 0)));
  auto loop = scf::ForOp::create(b, start, constantIndex(b, perChannel / width),
                                 step, zeros);
  {
    OpBuilder::InsertionGuard inLoop(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    if (width > 1)
      j = arith::MulIOp::create(b, j, constantIndex(b, width));
    // element = (j / inner) * channels * inner + channel * inner + j % inner
    Value n = divide(b, j, inner);
    Value within = remainder(b, j, inner);
    Value first = arith::AddIOp::create(
        b,
        arith::AddIOp::create(
            b, arith::MulIOp::create(b, n, constantIndex(b, channels * inner)),
            arith::MulIOp::create(b, channel, constantIndex(b, inner))),
        within);
    laneElements(b, first);
    SmallVector<Lanes> sums;
    if (failed(body(b, sums)))
      return failure();
    // This step's lanes (one channel), added in lane order.
    SmallVector<Value> next;
    for (auto [acc, lanes] : llvm::zip(loop.getRegionIterArgs(), sums)) {
      Value sum = lanes[0];
      for (int64_t l = 1; l < width; ++l)
        sum = arith::AddFOp::create(b, sum, lanes[l]);
      next.push_back(arith::AddFOp::create(b, acc, sum));
    }
    Block *loopBody = loop.getBody();
    if (!loopBody->empty() &&
        loopBody->back().hasTrait<::mlir::OpTrait::IsTerminator>())
      loopBody->back().erase();
    b.setInsertionPointToEnd(loopBody);
    scf::YieldOp::create(b, next);
  }
  // The block's sum: a tree in workgroup memory.
  for (auto [r, partial] : llvm::enumerate(loop.getResults())) {
    Value at = arith::AddIOp::create(
        b, thread,
        constantIndex(b, static_cast<int64_t>(r) * kReductionThreads));
    memref::StoreOp::create(b, partial, scratch, at);
  }
  gpu::BarrierOp::create(b);
  auto isThread = [&](int64_t t) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, thread,
                                 constantIndex(b, t));
  };
  // A tree over the first `size` (a power of two) of each reduction's
  // kReductionThreads values in workgroup memory, the total left at the
  // front.
  int64_t numReductions = static_cast<int64_t>(reductions.size());
  auto blockTree = [&](int64_t size) {
    for (int64_t half = size / 2; half >= 1; half /= 2) {
      Value active = arith::CmpIOp::create(b, arith::CmpIPredicate::ult, thread,
                                           constantIndex(b, half));
      auto when = scf::IfOp::create(b, active, /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard inIf(b);
        b.setInsertionPointToStart(when.thenBlock());
        for (int64_t r = 0; r < numReductions; ++r) {
          Value base = constantIndex(b, r * kReductionThreads);
          Value mine = arith::AddIOp::create(b, thread, base);
          Value other = arith::AddIOp::create(b, mine, constantIndex(b, half));
          Value sum =
              arith::AddFOp::create(b, memref::LoadOp::create(b, scratch, mine),
                                    memref::LoadOp::create(b, scratch, other));
          memref::StoreOp::create(b, sum, scratch, mine);
        }
      }
      gpu::BarrierOp::create(b);
    }
  };
  auto total = [&](int64_t r) {
    return memref::LoadOp::create(b, scratch,
                                  constantIndex(b, r * kReductionThreads));
  };
  // Thread 0 stores every total into its output.
  auto storeTotals = [&] {
    unsigned outputBase = fusion.getInputs().size();
    for (auto [k, use] : llvm::enumerate(fusion.getYield()->getOpOperands())) {
      Operation *producer = use.get().getDefiningOp();
      auto it = llvm::find(reductions, producer);
      if (!producer || it == reductions.end())
        continue;
      memref::StoreOp::create(b, total(it - reductions.begin()),
                              buffers[outputBase + k], channel);
    }
  };
  blockTree(kReductionThreads);
  if (splits == 1) {
    {
      auto when = scf::IfOp::create(b, isThread(0), /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPointToStart(when.thenBlock());
      storeTotals();
    }
    gpu::ReturnOp::create(b);
    return success();
  }
  // The last two operands (the workgroup attribution follows them).
  Value counters = buffers[buffers.size() - 2];
  Value partials = buffers.back();
  Value zeroElement =
      arith::ConstantOp::create(b, element, b.getFloatAttr(element, 0));
  {
    auto when = scf::IfOp::create(b, isThread(0), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inIf(b);
    b.setInsertionPointToStart(when.thenBlock());
    Value mine =
        arith::MulIOp::create(b, block, constantIndex(b, numReductions));
    for (int64_t r = 0; r < numReductions; ++r)
      memref::StoreOp::create(
          b, total(r), partials,
          ValueRange{arith::AddIOp::create(b, mine, constantIndex(b, r))});
    // The partials reach the device before the count does.
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
  }
  Value isLast =
      countBlockDone(b, thread, scratch, counters, channel, splits, element);
  // Uniform across the block: the barriers of the tree are safe inside.
  auto whenLast = scf::IfOp::create(b, isLast, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard inIf(b);
    b.setInsertionPointToStart(whenLast.thenBlock());
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
    // Read at the device's level (an atomic add of -0, which changes no
    // value): another SM wrote them, and this SM's cache may hold stale
    // lines of a neighbouring channel's partials.
    Value negativeZero =
        arith::ConstantOp::create(b, element, b.getFloatAttr(element, -0.0));
    Value firstPartial = arith::MulIOp::create(
        b, channel, constantIndex(b, splits * numReductions));
    for (int64_t r = 0; r < numReductions; ++r) {
      auto sum = scf::ForOp::create(b, thread, constantIndex(b, splits),
                                    constantIndex(b, kReductionThreads),
                                    ValueRange{zeroElement});
      {
        OpBuilder::InsertionGuard inLoop(b);
        b.setInsertionPointToStart(sum.getBody());
        Value at = arith::AddIOp::create(
            b, firstPartial,
            arith::AddIOp::create(
                b,
                arith::MulIOp::create(b, sum.getInductionVar(),
                                      constantIndex(b, numReductions)),
                constantIndex(b, r)));
        Value partial = memref::AtomicRMWOp::create(
            b, arith::AtomicRMWKind::addf, negativeZero, partials, at);
        Block *loopBody = sum.getBody();
        if (!loopBody->empty() &&
            loopBody->back().hasTrait<::mlir::OpTrait::IsTerminator>())
          loopBody->back().erase();
        b.setInsertionPointToEnd(loopBody);
        scf::YieldOp::create(b, ValueRange{arith::AddFOp::create(
                                    b, sum.getRegionIterArgs()[0], partial)});
      }
      memref::StoreOp::create(
          b, sum.getResult(0), scratch,
          ValueRange{arith::AddIOp::create(
              b, thread, constantIndex(b, r * kReductionThreads))});
    }
    gpu::BarrierOp::create(b);
    blockTree(std::min<int64_t>(llvm::PowerOf2Ceil(splits), kReductionThreads));
    auto when = scf::IfOp::create(b, isThread(0), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inThread(b);
    b.setInsertionPointToStart(when.thenBlock());
    storeTotals();
    memref::StoreOp::create(
        b, arith::ConstantOp::create(b, b.getI32IntegerAttr(0)), counters,
        channel);
  }
  gpu::ReturnOp::create(b);
  return success();
}

Value KernelBuilder::countBlockDone(ImplicitLocOpBuilder &b, Value thread,
                                    Value scratch, Value counters,
                                    Value counter, int64_t splits,
                                    Type element) {
  Value zero =
      arith::ConstantOp::create(b, element, b.getFloatAttr(element, 0));
  {
    Value isThread0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, thread,
                                            constantIndex(b, 0));
    auto when = scf::IfOp::create(b, isThread0, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inIf(b);
    b.setInsertionPointToStart(when.thenBlock());
    Value before = memref::AtomicRMWOp::create(
        b, arith::AtomicRMWKind::addi,
        arith::ConstantOp::create(b, b.getI32IntegerAttr(1)), counters,
        ValueRange{counter});
    Value last = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq, before,
        arith::ConstantOp::create(b, b.getI32IntegerAttr(splits - 1)));
    Value one =
        arith::ConstantOp::create(b, element, b.getFloatAttr(element, 1));
    memref::StoreOp::create(b, arith::SelectOp::create(b, last, one, zero),
                            scratch, ValueRange{constantIndex(b, 0)});
  }
  gpu::BarrierOp::create(b);
  Value flag =
      memref::LoadOp::create(b, scratch, ValueRange{constantIndex(b, 0)});
  gpu::BarrierOp::create(b);
  return arith::CmpFOp::create(b, arith::CmpFPredicate::UNE, flag, zero);
}

scf::ForOp KernelBuilder::accumulate(
    ImplicitLocOpBuilder &b, Value lower, Value upper, Value step,
    ValueRange inits,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = scf::ForOp::create(b, lower, upper, step, inits);
  OpBuilder::InsertionGuard inLoop(b);
  Block *loopBody = loop.getBody();
  if (!loopBody->empty() &&
      loopBody->back().hasTrait<::mlir::OpTrait::IsTerminator>())
    loopBody->back().erase();
  b.setInsertionPointToEnd(loopBody);
  scf::YieldOp::create(b,
                       body(loop.getInductionVar(), loop.getRegionIterArgs()));
  return loop;
}

LogicalResult KernelBuilder::buildColumnSums(ImplicitLocOpBuilder &b,
                                             Value thread, Value block,
                                             Value scratch,
                                             ArrayRef<Operation *> reductions,
                                             Type element, int64_t splits) {
  // The iteration space as [rows, C]. Thread t of block k: channel vector
  // vec = (k / splits) * vectors + t % vectors of its tile, rows
  // (k % splits) * rowLanes + t / vectors on, splits * rowLanes apart. Each
  // thread keeps a sum per reduction and lane; the block sums its row
  // lanes in workgroup memory, in row-lane order. With several splits the
  // partial sums combine as in the NCHW kernel (the tile's last block, by
  // a counter per tile), again in a fixed order: deterministic sums. With
  // vectorPartials the partials are split-major, so that a thread's
  // `width` channels are one vector, stored and read back whole.
  constexpr int64_t threads = kReductionThreads;
  int64_t channels = space.back();
  int64_t count = 1;
  for (int64_t d : space)
    count *= d;
  int64_t rows = count / channels;
  int64_t tile = fusedColumnTileChannels(fusion);
  int64_t vectors = tile / width;
  int64_t rowLanes = threads / vectors;
  int64_t numReductions = static_cast<int64_t>(reductions.size());
  int64_t perThread = numReductions * width;
  auto index = [&](int64_t v) { return constantIndex(b, v); };
  auto mul = [&](Value x, int64_t y) -> Value {
    return arith::MulIOp::create(b, x, index(y));
  };
  auto add = [&](Value x, Value y) -> Value {
    return arith::AddIOp::create(b, x, y);
  };
  auto less = [&](Value x, int64_t y) -> Value {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, index(y));
  };
  Value tx = remainder(b, thread, vectors);
  Value ty = divide(b, thread, vectors);
  Value tileIndex = divide(b, block, splits);
  Value split = remainder(b, block, splits);
  Value vec = add(mul(tileIndex, vectors), tx);
  Value valid =
      arith::AndIOp::create(b, less(ty, rowLanes), less(vec, channels / width));
  Value zero =
      arith::ConstantOp::create(b, element, b.getFloatAttr(element, 0));
  SmallVector<Value> zeros(perThread, zero);
  // The channel of lane l: vec * width + l.
  auto channelOf = [&](int64_t l) { return add(mul(vec, width), index(l)); };

  // The rows: an idle thread starts past the end.
  Value start = arith::SelectOp::create(b, valid, add(mul(split, rowLanes), ty),
                                        index(rows));
  bool failedBody = false;
  int64_t rowStep = splits * rowLanes;
  // Adds the sums of `rowsAt`, in order, to `acc`. Every row's inputs are
  // loaded before any row is computed or stored, so that a thread has
  // several loads in flight (the stores of a row may alias the next row's
  // inputs as far as the compiler knows, so it could not hoist them). Loads
  // that do not depend on the row (per-channel inputs) are shared.
  auto sumRows = [&](ArrayRef<Value> rowsAt,
                     ValueRange acc) -> SmallVector<Value> {
    SmallVector<Value> next(acc.begin(), acc.end());
    SmallVector<Lanes> rowElements;
    SmallVector<decltype(loads)> rowLoads;
    decltype(loads) shared;
    for (Value row : rowsAt) {
      elements.clear();
      laneElements(b, add(mul(row, channels), mul(vec, width)));
      rowElements.push_back(elements);
      values.clear();
      loads = shared;
      if (rowsAt.size() > 1)
        loadInputs(b);
      rowLoads.push_back(loads);
      for (auto &[key, lanes] : loads)
        if (llvm::all_of(
                ArrayRef<int64_t>(key.second).take_front(space.size() - 1),
                [](int64_t stride) { return stride == 0; }))
          shared.insert({key, lanes});
    }
    for (auto [k, row] : llvm::enumerate(rowsAt)) {
      elements = rowElements[k];
      loads = rowLoads[k];
      values.clear();
      SmallVector<Lanes> sums;
      if (failed(body(b, sums))) {
        failedBody = true;
        return next;
      }
      for (int64_t r = 0; r < numReductions; ++r)
        for (int64_t l = 0; l < width; ++l)
          next[r * width + l] =
              arith::AddFOp::create(b, next[r * width + l], sums[r][l]);
    }
    return next;
  };
  SmallVector<Value> rowSums;
  if (columnUnroll == 1) {
    scf::ForOp loop = accumulate(
        b, start, index(rows), index(rowStep), zeros,
        [&](Value row, ValueRange acc) { return sumRows({row}, acc); });
    llvm::append_range(rowSums, loop.getResults());
  } else {
    // columnUnroll rows per step while the last of them is in range (the
    // next row carried after the sums), then the rest one at a time: the
    // same sums in the same order as one row per step.
    SmallVector<Value> inits(zeros);
    inits.push_back(start);
    scf::ForOp unrolled = accumulate(
        b, start, index(rows - (columnUnroll - 1) * rowStep),
        index(columnUnroll * rowStep), inits, [&](Value row, ValueRange acc) {
          SmallVector<Value> rowsAt;
          for (int64_t u = 0; u < columnUnroll; ++u)
            rowsAt.push_back(add(row, index(u * rowStep)));
          SmallVector<Value> next = sumRows(rowsAt, acc.drop_back());
          next.push_back(add(row, index(columnUnroll * rowStep)));
          return next;
        });
    scf::ForOp rest = accumulate(
        b, unrolled.getResults().back(), index(rows), index(rowStep),
        unrolled.getResults().drop_back(),
        [&](Value row, ValueRange acc) { return sumRows({row}, acc); });
    llvm::append_range(rowSums, rest.getResults());
  }
  if (failedBody)
    return failure();

  // Sums `values` (perThread per thread) over the block's row lanes by a
  // tree in workgroup memory (lane ty adds lane ty + s, for s halving from
  // the largest power of two below rowLanes: a fixed order); the threads of
  // row lane 0 pass the totals to `use`. Thread (ty, tx) keeps value k at
  // k * threads + ty * vectors + tx.
  auto combine = [&](ValueRange values,
                     function_ref<void(ArrayRef<Value>)> use) {
    auto slot = [&](int64_t k, Value at) {
      return add(index(k * threads), at);
    };
    for (auto [k, value] : llvm::enumerate(values))
      memref::StoreOp::create(
          b, value, scratch, ValueRange{slot(static_cast<int64_t>(k), thread)});
    gpu::BarrierOp::create(b);
    for (int64_t step = static_cast<int64_t>(llvm::PowerOf2Ceil(rowLanes)) / 2;
         step >= 1; step /= 2) {
      // Lanes below min(step, rowLanes - step) have a partner.
      int64_t active = std::min(step, rowLanes - step);
      if (active > 0) {
        auto when = scf::IfOp::create(b, less(ty, active),
                                      /*withElseRegion=*/false);
        OpBuilder::InsertionGuard inIf(b);
        b.setInsertionPointToStart(when.thenBlock());
        Value partner = add(thread, index(step * vectors));
        for (int64_t k = 0; k < perThread; ++k) {
          Value mine =
              memref::LoadOp::create(b, scratch, ValueRange{slot(k, thread)});
          Value theirs =
              memref::LoadOp::create(b, scratch, ValueRange{slot(k, partner)});
          memref::StoreOp::create(b, arith::AddFOp::create(b, mine, theirs),
                                  scratch, ValueRange{slot(k, thread)});
        }
      }
      gpu::BarrierOp::create(b);
    }
    Value first = arith::AndIOp::create(
        b, valid,
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, ty, index(0)));
    auto when = scf::IfOp::create(b, first, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inIf(b);
    b.setInsertionPointToStart(when.thenBlock());
    SmallVector<Value> totals;
    for (int64_t k = 0; k < perThread; ++k)
      totals.push_back(
          memref::LoadOp::create(b, scratch, ValueRange{slot(k, thread)}));
    use(totals);
  };
  unsigned outputBase = fusion.getInputs().size();
  auto storeTotals = [&](ArrayRef<Value> totals) {
    for (auto [k, use] : llvm::enumerate(fusion.getYield()->getOpOperands())) {
      Operation *producer = use.get().getDefiningOp();
      auto it = llvm::find(reductions, producer);
      if (!producer || it == reductions.end())
        continue;
      int64_t r = it - reductions.begin();
      for (int64_t l = 0; l < width; ++l)
        memref::StoreOp::create(b, totals[r * width + l],
                                buffers[outputBase + k],
                                ValueRange{channelOf(l)});
    }
  };
  // Split s's sum r of lane l's channel c. vectorPartials: at
  // partials[(s * numReductions + r) * channels + c], so that a thread's
  // lanes, `width` consecutive channels, are one aligned vector (the
  // buffer is its own allocation, and channels is a multiple of width);
  // else at partials[(c * splits + s) * numReductions + r].
  Value partials = splits > 1 ? buffers.back() : Value();
  auto partialAt = [&](int64_t l, Value s, int64_t r) {
    if (vectorPartials)
      return add(mul(add(mul(s, numReductions), index(r)), channels),
                 channelOf(l));
    return add(mul(add(mul(channelOf(l), splits), s), numReductions), index(r));
  };
  if (splits == 1) {
    combine(rowSums, storeTotals);
    gpu::ReturnOp::create(b);
    return success();
  }
  combine(rowSums, [&](ArrayRef<Value> totals) {
    for (int64_t r = 0; r < numReductions; ++r) {
      if (vectorPartials) {
        storeLanes(b, totals.slice(r * width, width), partials,
                   partialAt(0, split, r));
        continue;
      }
      for (int64_t l = 0; l < width; ++l)
        memref::StoreOp::create(b, totals[r * width + l], partials,
                                ValueRange{partialAt(l, split, r)});
    }
    // The partials reach the device before the count does.
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
  });
  // (Every row lane 0 stored its partials: the count waits for them.)
  gpu::BarrierOp::create(b);
  Value counters = buffers[buffers.size() - 2];
  Value counter = mul(tileIndex, tile);
  Value isLast =
      countBlockDone(b, thread, scratch, counters, counter, splits, element);
  // Uniform across the block: the barriers inside are safe.
  auto whenLast = scf::IfOp::create(b, isLast, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard inIf(b);
    b.setInsertionPointToStart(whenLast.thenBlock());
    // The writers fenced before counting and this block fences after
    // seeing the count. vectorPartials: plain vector loads, a split's lanes
    // at once (the fences order them, and no thread of this kernel read
    // these addresses before, so no cache holds an older value); else one
    // read at the device's level per value (an atomic add of -0), as the
    // NCHW kernel does.
    NVVM::MembarOp::create(b, NVVM::MemScopeKind::GPU);
    Value negativeZero =
        arith::ConstantOp::create(b, element, b.getFloatAttr(element, -0.0));
    Value from = arith::SelectOp::create(b, valid, ty, index(splits));
    scf::ForOp sum = accumulate(
        b, from, index(splits), index(rowLanes), zeros,
        [&](Value s, ValueRange acc) {
          SmallVector<Value> next;
          for (int64_t r = 0; r < numReductions; ++r) {
            Lanes lanes;
            if (vectorPartials)
              lanes = loadLanes(b, element, partials, partialAt(0, s, r));
            for (int64_t l = 0; l < width; ++l) {
              Value partial =
                  vectorPartials
                      ? lanes[l]
                      : memref::AtomicRMWOp::create(
                            b, arith::AtomicRMWKind::addf, negativeZero,
                            partials, ValueRange{partialAt(l, s, r)})
                            .getResult();
              next.push_back(
                  arith::AddFOp::create(b, acc[r * width + l], partial));
            }
          }
          // (The order of `next` is r-major, as `acc`.)
          return next;
        });
    combine(sum.getResults(), storeTotals);
    Value isThread0 =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, thread, index(0));
    auto when = scf::IfOp::create(b, isThread0, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard inThread(b);
    b.setInsertionPointToStart(when.thenBlock());
    memref::StoreOp::create(
        b, arith::ConstantOp::create(b, b.getI32IntegerAttr(0)), counters,
        ValueRange{counter});
  }
  gpu::ReturnOp::create(b);
  return success();
}

struct FluidGenerateGpuKernelsPass
    : public mlir::fluid::impl::FluidGenerateGpuKernelsBase<
          FluidGenerateGpuKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<fluid_rt::LaunchOp> launches;
    module.walk([&](fluid_rt::LaunchOp launch) {
      if (launch.getKernel() == "fusion")
        launches.push_back(launch);
    });
    if (columnPartials != "atomic" && columnPartials != "vector") {
      module.emitError() << "column-partials must be atomic or vector, got '"
                         << columnPartials << "'";
      return signalPassFailure();
    }
    if (columnMinElements < kColumnMinElementsLow ||
        columnMinElements > kColumnMinElementsHigh) {
      module.emitError() << "column-min-elements must be "
                         << kColumnMinElementsLow << " to 2^30, got "
                         << static_cast<int64_t>(columnMinElements);
      return signalPassFailure();
    }
    if (columnUnroll < 1 || columnUnroll > kMaxColumnUnroll) {
      module.emitError() << "column-unroll must be 1 to " << kMaxColumnUnroll
                         << ", got " << static_cast<int64_t>(columnUnroll);
      return signalPassFailure();
    }
    if (indexBitwidth != 32 && indexBitwidth != 64) {
      module.emitError() << "index-bitwidth must be 32 or 64, got "
                         << static_cast<unsigned>(indexBitwidth);
      return signalPassFailure();
    }
    if (launches.empty())
      return;
    if (module.lookupSymbol(kGpuKernelModuleName)) {
      module.emitError() << "already has a symbol @" << kGpuKernelModuleName
                         << " (run --fluid-generate-gpu-kernels once)";
      return signalPassFailure();
    }
    ImplicitLocOpBuilder b(module.getLoc(), module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, kGpuKernelModuleName);
    b.setInsertionPointToStart(kernels.getBody());
    // 32-bit divisions where every index of the region fits with room for
    // the grid-stride step (at most 8192 x 256 threads).
    constexpr int64_t kIndex32Limit = int64_t(1) << 30;
    // Equal regions (same body, same types) share a kernel.
    llvm::StringMap<std::pair<std::string, int64_t>> byText;
    for (fluid_rt::LaunchOp launch : launches) {
      Block scratch;
      auto fusion = cast<FusionOp>(launch.buildTensorOp(scratch));
      llvm::scope_exit destroy([&] { fusion->destroy(); });
      std::string text;
      llvm::raw_string_ostream os(text);
      fusion->print(os, OpPrintingFlags().printGenericOpForm());
      int64_t splits = fusion.hasReductions()
                           ? fusedReductionSplits(fusion, columnMinElements)
                           : 1;
      auto [it, inserted] = byText.try_emplace(
          text, "fused_" + std::to_string(byText.size()), splits);
      const std::string &name = it->second.first;
      if (inserted) {
        b.setLoc(launch.getLoc());
        auto fits = [&](Type type) {
          return cast<ShapedType>(type).getNumElements() <= kIndex32Limit;
        };
        int64_t count = 1;
        for (int64_t d : fusion.getIterationShape())
          count *= d;
        bool narrow = indexBitwidth == 32 && count <= kIndex32Limit &&
                      llvm::all_of(fusion.getInputs().getTypes(), fits) &&
                      llvm::all_of(fusion.getResultTypes(), fits);
        int64_t width = fusedVectorWidth(fusion);
        bool vectorPartials = columnPartials == "vector";
        if (failed(KernelBuilder(fusion, 1, narrow, vectorPartials,
                                 columnUnroll, splits)
                       .build(b, name)))
          return signalPassFailure();
        if (width > 1 &&
            failed(KernelBuilder(fusion, width, narrow, vectorPartials,
                                 columnUnroll, splits)
                       .build(b, name + kVectorSuffix)))
          return signalPassFailure();
        ++numKernels;
      }
      launch->setAttr(fluid_rt::kGpuKernelAttrName, b.getStringAttr(name));
      if (fusion.hasReductions())
        launch->setAttr(fluid_rt::kGpuSumSplitsAttrName,
                        b.getI64IntegerAttr(it->second.second));
    }
  }
};

} // namespace
