//===- EmitProgram.cpp - Emit a bufferized program as C++ -----------------===//
//
// One pass over each function in program order. Every buffer-level value
// is a view of one storage: an argument, a parameter, a buffer (a
// memref.alloc the driver allocates, or a memref.view at a constant offset
// of such an arena) or a buffer with a memref.dealloc, which the function
// allocates and frees itself in stream order; each distinct (storage,
// shape) gets one descriptor, an entry of the function's table of
// TensorSpecs (static data) that the step turns into an array T once per
// call (a buffer the step allocates gets its address where it is
// allocated). Launches become one call each, with their operands, then
// their outputs, then the op's attributes as the runtime's parameter
// struct (static const data, shared between launches with equal
// attributes) or scalars, naming descriptors by references into T
// (`fluid_tensor &b0 = T[3];`). Data rather than one initialization per
// descriptor: the host compiler's time grew faster than the number of
// descriptors (SE-ResNeXt-152: 33 s at -O1 before, 10.7 s after; 4.1 s
// at -O0, fluid-compile's default). Constants are written into their
// buffers once, by the function's `initialize`.
//
//===----------------------------------------------------------------------===//

#include "fluid/Target/EmitProgram.h"
#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/Fluid/IR/KernelParams.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Support/ParamsFile.h"
#include "fluid/Support/Text.h"
#include "fluid/Target/FusedKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::fluid;

namespace {

//===----------------------------------------------------------------------===//
// Text helpers
//===----------------------------------------------------------------------===//

/// The C++ string literal of `text`: every byte outside printable ASCII,
/// and `"`, `\\` and `?` (trigraphs), is an escape, so that nothing taken
/// from the input can end the literal or a line. Everything that reaches
/// emitted code from the input (names, locations, file names, options)
/// passes through here.
std::string quoted(StringRef text) {
  std::string out = "\"";
  out.reserve(text.size() + 2);
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || c == '?') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte >= 0x7f) {
      // Always three octal digits, so a following digit cannot join them.
      out += '\\';
      out += static_cast<char>('0' + (byte >> 6));
      out += static_cast<char>('0' + ((byte >> 3) & 7));
      out += static_cast<char>('0' + (byte & 7));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// `text` for a `//` comment: as it is when it is short printable ASCII
/// that cannot end the comment or splice a line (no `\\`, `"` or `?`),
/// else the quoted literal of its first bytes.
std::string commentText(StringRef text) {
  constexpr size_t kMaxCommentBytes = 160;
  bool plain =
      text.size() <= kMaxCommentBytes && llvm::all_of(text, [](char c) {
        return c >= 0x20 && c < 0x7f && c != '\\' && c != '"' && c != '?';
      });
  if (plain)
    return text.str();
  if (text.size() <= kMaxCommentBytes)
    return quoted(text);
  return quoted(text.take_front(kMaxCommentBytes)) + "...";
}

/// A double that reads back exactly.
std::string doubleLiteral(double value) {
  if (std::isnan(value))
    return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<double>::infinity()"
                     : "-std::numeric_limits<double>::infinity()";
  std::string text = llvm::formatv("{0}", llvm::format("%.17g", value)).str();
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  return text;
}

std::string floatLiteral(float value) {
  if (std::isnan(value))
    return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value))
    return value > 0 ? "std::numeric_limits<float>::infinity()"
                     : "-std::numeric_limits<float>::infinity()";
  std::string text = llvm::formatv("{0}", llvm::format("%.9g", value)).str();
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  return text + "f";
}

std::string intList(ArrayRef<int64_t> values) {
  std::string out = "{";
  for (auto [i, v] : llvm::enumerate(values))
    out += (i ? ", " : "") + std::to_string(v);
  return out + "}";
}

template <size_t N> std::string intArray(const int64_t (&values)[N]) {
  return intList(ArrayRef<int64_t>(values, N));
}

struct DTypeInfo {
  const char *enumerator;
  const char *cType;
  int64_t bytes;
};

/// How emitted code spells the runtime's element type of `type`.
std::optional<DTypeInfo> dtypeOf(Type type) {
  std::optional<fluid_dtype> dtype = getDType(type);
  if (!dtype)
    return std::nullopt;
  switch (*dtype) {
  case FLUID_F32:
    return DTypeInfo{"FLUID_F32", "float", 4};
  case FLUID_F64:
    return DTypeInfo{"FLUID_F64", "double", 8};
  case FLUID_F16:
    return DTypeInfo{"FLUID_F16", "uint16_t", 2};
  case FLUID_BF16:
    return DTypeInfo{"FLUID_BF16", "uint16_t", 2};
  case FLUID_I32:
    return DTypeInfo{"FLUID_I32", "int32_t", 4};
  case FLUID_I64:
    return DTypeInfo{"FLUID_I64", "int64_t", 8};
  case FLUID_U8:
    return DTypeInfo{"FLUID_U8", "uint8_t", 1};
  }
  return std::nullopt;
}

/// `{"name", FLUID_F32, rank, {shape}, {}}` of a value of stored type
/// `type`; one stored permuted (`storageOrder`, stored dimension d is
/// dimension storageOrder[d]) has its unpermuted shape and the order:
/// `{"name", FLUID_F32, rank, {shape}, {order}}`.
std::string valueLiteral(StringRef name, ShapedType type,
                         std::optional<ArrayRef<int64_t>> storageOrder = {}) {
  SmallVector<int64_t> shape(type.getShape());
  if (storageOrder)
    for (auto [d, from] : llvm::enumerate(*storageOrder))
      shape[from] = type.getDimSize(d);
  return "{" + quoted(name) + ", " +
         dtypeOf(type.getElementType())->enumerator + ", " +
         std::to_string(type.getRank()) + ", " + intList(shape) + ", " +
         (storageOrder ? intList(*storageOrder) : "{}") + "}";
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

/// Whether `op` is the arena of a memory plan: a memref.alloc that only
/// memref.views use.
/// A single update's skip flag (dynamic loss scaling), or null.
Value foundInfOf(Operation *update) {
  return llvm::TypeSwitch<Operation *, Value>(update)
      .Case<SgdOp, MomentumOp, AdamOp>(
          [](auto op) -> Value { return op.getFoundInf(); })
      .Default([](Operation *) { return Value(); });
}

bool isArena(Operation *op) {
  auto alloc = dyn_cast_or_null<memref::AllocOp>(op);
  return alloc && !alloc->use_empty() &&
         llvm::all_of(alloc->getUsers(), [](Operation *user) {
           return isa<memref::ViewOp>(user);
         });
}

/// Static data shared by every function (parameter structs and constant
/// arrays), keyed by their text so equal ones are written once, in the
/// order they were first needed.
struct StaticData {
  std::map<std::string, std::string> names;
  std::vector<std::pair<std::string, std::string>> ordered;
  /// Generated kernels (cpu): definition -> name, in order; equal regions
  /// share one.
  std::map<std::string, std::string> kernelNames;
  std::vector<std::pair<std::string, std::string>> kernels;
  /// Whether the module carries the PTX of its generated kernels.
  bool hasGpuKernels = false;
  std::string addKernel(const std::string &definition) {
    auto [it, inserted] = kernelNames.insert(
        {definition, "fused" + std::to_string(kernels.size())});
    if (inserted)
      kernels.push_back({it->second, definition});
    return it->second;
  }

  size_t size() const { return ordered.size(); }
  /// The name of `key`'s data, added as `name` if new.
  std::string add(const std::string &key, const std::string &name) {
    auto [it, inserted] = names.insert({key, name});
    if (inserted)
      ordered.push_back({key, name});
    return it->second;
  }
};

/// Where a value's bytes live: an argument, a parameter, a buffer the
/// driver allocates (at a byte offset, for the views of an arena), or a
/// buffer the function allocates and frees itself (a memref.alloc with a
/// memref.dealloc).
struct Storage {
  enum Kind { Argument, Param, Buffer, Dynamic } kind;
  int64_t index;
  int64_t offset = 0;
  bool operator==(const Storage &other) const {
    return kind == other.kind && index == other.index && offset == other.offset;
  }
};

class FunctionEmitter {
public:
  /// `sharedData` collects the static data of every function: parameter
  /// structs and constants, by their text, so equal ones are written once.
  FunctionEmitter(func::FuncOp func, const EmitOptions &options,
                  const llvm::StringMap<int64_t> &paramIndex, StringRef symbol,
                  StaticData &sharedData)
      : func(func), options(options), paramIndex(paramIndex),
        symbol(symbol.str()), sharedData(sharedData) {}

  /// Walks the function; fails at the first op it cannot emit.
  LogicalResult build();
  /// Writes the function's tables and entry points.
  void write(raw_ostream &os);

  /// `{name, arguments, ...}`: this function's fluid_program_function.
  std::string infoLiteral();
  int64_t classes = 0;

private:
  /// Whether a launch calls a generated GPU kernel (loaded at Initialize).
  bool usesGpuKernels = false;
  LogicalResult emitOp(Operation *op);
  LogicalResult emitLaunch(fluid_rt::LaunchOp launch);
  LogicalResult emitConstant(fluid_rt::LaunchOp launch);
  /// A grouped update's call arguments: (on cuda, its call site's key,)
  /// the entry count, one array per list of descriptors, the scalars,
  /// then the parameter struct.
  SmallVector<std::string> groupArguments(Operation *group,
                                          ArrayRef<std::string> inputs,
                                          ArrayRef<std::string> outputs,
                                          ArrayRef<std::string> trailing);
  /// The descriptor of `value` (declared on first use).
  FailureOr<std::string> descriptor(Value value);
  /// A shared static parameter struct: `&kName`.
  std::string paramStruct(StringRef type, StringRef prefix,
                          const std::string &initializer);
  void addCall(Operation *op, StringRef kernel, StringRef kernelName,
               ArrayRef<std::string> arguments);
  /// A launch whose call is `call` (a generated kernel's).
  void addLaunch(Operation *op, StringRef kernelName, const std::string &call);
  LogicalResult emitFusion(fluid_rt::LaunchOp launch, FusionOp fusion,
                           ArrayRef<std::string> inputs,
                           ArrayRef<std::string> outputs);
  /// A call of the runtime that is not a launch (allocation, release).
  void addRuntimeCall(Operation *op, StringRef entry,
                      ArrayRef<std::string> arguments);
  /// `fluid_cuda_NAME(context, ARGUMENTS)` or `fluid_cpu_NAME(ARGUMENTS)`.
  std::string callText(StringRef entry, ArrayRef<std::string> arguments);

  /// The cuda backend's all-reduces in flight: the bucket each of their
  /// buffers waits for, until the first op that touches it.
  DenseMap<Value, int64_t> pendingBuckets;
  /// Emits the wait for every bucket in flight that `op` touches (every
  /// bucket, for the function's return).
  void waitForBuckets(Operation *op);

  func::FuncOp func;
  const EmitOptions &options;
  const llvm::StringMap<int64_t> &paramIndex;
  std::string symbol;

  DenseMap<Value, Storage> storage;
  SmallVector<int64_t> bufferBytes;
  int64_t dynamicBuffers = 0;
  DenseSet<int64_t> released;
  // The function's descriptors, in declaration order: entry k of its
  // tensor table (T[k]) and the name that reads it.
  struct Descriptor {
    std::string name;
    std::string spec; // `{'B', 0, 256, FLUID_F32, 2, {4, 400}},  // b0_at256`
  };
  SmallVector<Descriptor> descriptors;
  using StorageKey = std::tuple<int, int64_t, int64_t>;
  // (storage, shape) -> index in `descriptors`.
  std::map<std::pair<StorageKey, std::string>, int64_t> declared;
  // Descriptors declared so far per storage: the next one is a view.
  std::map<StorageKey, int> viewCount;
  /// The step's body, in program order.
  SmallVector<std::string> body;
  void line(std::string text) { body.push_back(std::move(text)); }
  SmallVector<std::pair<std::string, std::string>> launches;
  SmallVector<std::string> initializeBody;
  SmallVector<std::string> results;
  SmallVector<int64_t> resultBuffers;
  SmallVector<std::string> arguments;
  StaticData &sharedData;
};

FailureOr<std::string> FunctionEmitter::descriptor(Value value) {
  auto it = storage.find(value);
  if (it == storage.end())
    return failure();
  auto type = cast<MemRefType>(value.getType());
  std::optional<DTypeInfo> dtype = dtypeOf(type.getElementType());
  if (!dtype)
    return failure();
  Storage where = it->second;
  std::string shape = intList(type.getShape());
  std::string key = std::string(dtype->enumerator) + shape;
  auto slot = std::make_pair(
      StorageKey(static_cast<int>(where.kind), where.index, where.offset), key);
  if (auto found = declared.find(slot); found != declared.end())
    return descriptors[found->second].name;
  const char *prefix = where.kind == Storage::Argument ? "a"
                       : where.kind == Storage::Param  ? "p"
                       : where.kind == Storage::Buffer ? "b"
                                                       : "d";
  const char *array = where.kind == Storage::Argument ? "A"
                      : where.kind == Storage::Param  ? "P"
                      : where.kind == Storage::Buffer ? "B"
                                                      : "D";
  std::string name = prefix + std::to_string(where.index);
  if (where.offset)
    name += "_at" + std::to_string(where.offset);
  if (int views = viewCount[slot.first]++)
    name += "_v" + std::to_string(views);
  std::string comment;
  if (where.kind == Storage::Param) {
    auto ref = value.getDefiningOp<fluid_rt::ParamRefOp>();
    if (ref)
      comment = " @" + commentText(ref.getName());
  } else if (where.kind == Storage::Argument) {
    comment = " " + commentText(arguments[where.index]);
  }
  auto index = static_cast<int64_t>(descriptors.size());
  declared[slot] = index;
  descriptors.push_back(
      {name, "{'" + std::string(array) + "', " + std::to_string(where.index) +
                 ", " + std::to_string(where.offset) + ", " +
                 dtype->enumerator + ", " + std::to_string(type.getRank()) +
                 ", " + shape + "},  // " + name + comment});
  // A buffer the function allocates is described once it exists.
  if (where.kind == Storage::Dynamic)
    line("  T[" + std::to_string(index) + "].data = D[" +
         std::to_string(where.index) + "];");
  return name;
}

std::string FunctionEmitter::paramStruct(StringRef type, StringRef prefix,
                                         const std::string &initializer) {
  std::string key = type.str() + " " + initializer;
  return "&" +
         sharedData.add(key, ("k" + prefix + Twine(sharedData.size())).str());
}

std::string FunctionEmitter::callText(StringRef entry,
                                      ArrayRef<std::string> callArguments) {
  std::string prefix =
      options.backend == EmitBackend::Cuda ? "fluid_cuda_" : "fluid_cpu_";
  std::string call = prefix + entry.str() + "(";
  bool first = true;
  if (options.backend == EmitBackend::Cuda) {
    call += "context";
    first = false;
  }
  for (const std::string &argument : callArguments) {
    call += (first ? "" : ", ") + argument;
    first = false;
  }
  return call + ")";
}

void FunctionEmitter::addRuntimeCall(Operation *op, StringRef entry,
                                     ArrayRef<std::string> callArguments) {
  std::string location = locationText(op->getLoc());
  std::string call = callText(entry, callArguments);
  // fluid_cpu_release cannot fail (it returns nothing).
  if (entry != "release" || options.backend == EmitBackend::Cuda)
    call = "FLUID_CHECK(" + call + ")";
  line("  " + call + ";" +
       (location.empty() ? "" : "  // " + commentText(location)));
}

void FunctionEmitter::addCall(Operation *op, StringRef kernel,
                              StringRef kernelName,
                              ArrayRef<std::string> callArguments) {
  addLaunch(op, kernelName, callText(kernel, callArguments));
}

LogicalResult FunctionEmitter::emitFusion(fluid_rt::LaunchOp launch,
                                          FusionOp fusion,
                                          ArrayRef<std::string> inputs,
                                          ArrayRef<std::string> outputs) {
  std::string index = std::to_string(launches.size());
  std::string in = "fusedIn" + index, out = "fusedOut" + index;
  auto list = [](ArrayRef<std::string> names) {
    std::string text;
    for (auto [i, name] : llvm::enumerate(names))
      text += (i ? ", " : "") + name;
    return text.empty() ? std::string("nullptr") : text;
  };
  if (options.backend == EmitBackend::Cuda) {
    auto kernel =
        launch->getAttrOfType<StringAttr>(fluid_rt::kGpuKernelAttrName);
    if (!kernel || !sharedData.hasGpuKernels)
      return launch.emitError()
             << "a fused region on the cuda backend needs its generated "
                "kernel: run --fluid-generate-gpu-kernels and "
                "--fluid-lower-gpu-kernels first";
    SmallVector<std::string> all(inputs);
    all.append(outputs.begin(), outputs.end());
    int64_t count =
        cast<RankedTensorType>(fusion.getResult(0).getType()).getNumElements();
    int64_t width = fusedVectorWidth(fusion);
    std::string mask;
    for (bool vector : fusedVectorOperands(fusion))
      mask += vector ? '1' : '0';
    std::string name = kernel.getValue().str();
    usesGpuKernels = true;
    // Grid sizes of the scalar and the vector kernel.
    auto blocksFor = [](int64_t items) {
      return std::min<int64_t>((std::max<int64_t>(items, 1) + 255) / 256, 8192);
    };
    int64_t scalarBlocks = blocksFor(count),
            vectorBlocks = blocksFor(count / width);
    // A region with sums runs the blocks per channel its kernel was
    // generated for.
    int64_t splits = 1;
    if (fusion.hasReductions()) {
      auto attr =
          launch->getAttrOfType<IntegerAttr>(fluid_rt::kGpuSumSplitsAttrName);
      if (!attr || attr.getInt() < 1 || attr.getInt() > kReductionTargetBlocks)
        return launch.emitError()
               << "a fused region with sums on the cuda backend needs "
               << fluid_rt::kGpuSumSplitsAttrName << " from 1 to "
               << kReductionTargetBlocks
               << " (run --fluid-generate-gpu-kernels)";
      splits = attr.getInt();
      scalarBlocks = vectorBlocks = fusedReductionBlocks(fusion, splits);
    }
    // Several blocks per channel combine their sums through the context's
    // counters and partial sums (the kernel's last two operands).
    if (std::optional<FusedSumScratch> sums = fusedSumScratch(fusion, splits)) {
      std::string counters = "sumCounters" + index,
                  partials = "sumPartials" + index;
      line("  fluid_tensor " + counters + ", " + partials + ";");
      line("  FLUID_CHECK(fluid_cuda_sum_scratch(context, " +
           std::to_string(sums->counters) + ", " +
           std::to_string(sums->partials) + ", " +
           (sums->element.isF64() ? "FLUID_F64" : "FLUID_F32") + ", &" +
           counters + ", &" + partials + "));");
      all.push_back("&" + counters);
      all.push_back("&" + partials);
      mask += "00";
    }
    std::string args = "fusedArgs" + index;
    // Inputs the kernel reads only in part (index: elements), for tools
    // that count its traffic.
    std::string partial;
    for (auto [i, read] : llvm::enumerate(fusedInputElementsRead(fusion)))
      if (read < cast<RankedTensorType>(fusion.getInputs()[i].getType())
                     .getNumElements())
        partial += " " + std::to_string(i) + ":" + std::to_string(read);
    line("  const fluid_tensor *const " + args + "[] = {" + list(all) + "};" +
         (partial.empty() ? "" : "  // elements read:" + partial));
    addLaunch(launch,
              fusion.hasReductions() ? "fused_sums" : "fused_elementwise",
              "launchGenerated(context, " + quoted(name) + ", " +
                  (width > 1 ? quoted(name + kVectorSuffix) : "nullptr") +
                  ", " + std::to_string(scalarBlocks) + ", " +
                  std::to_string(vectorBlocks) + ", " + args + ", " +
                  std::to_string(all.size()) + ", " + quoted(mask) + ")");
    return success();
  }
  FailureOr<std::string> definition =
      emitCpuFusedKernel(fusion, "FLUID_FUSED_KERNEL");
  if (failed(definition))
    return failure();
  std::string name = sharedData.addKernel(*definition);
  line("  const fluid_tensor *const " + in + "[] = {" + list(inputs) + "};");
  line("  fluid_tensor *const " + out + "[] = {" + list(outputs) + "};");
  addLaunch(launch, fusion.hasReductions() ? "fused_sums" : "fused_elementwise",
            name + "(" + in + ", " + out + ")");
  return success();
}

void FunctionEmitter::addLaunch(Operation *op, StringRef kernelName,
                                const std::string &call) {
  std::string location = locationText(op->getLoc());
  int64_t index = static_cast<int64_t>(launches.size());
  std::string line =
      "  FLUID_LAUNCH(" + std::to_string(index) + ", " + call + ");";
  if (!location.empty())
    line += "  // " + commentText(location);
  this->line(line);
  launches.push_back({kernelName.str(), location});
}

LogicalResult FunctionEmitter::emitConstant(fluid_rt::LaunchOp launch) {
  auto value =
      dyn_cast_or_null<DenseElementsAttr>(launch.getParams().get("value"));
  if (!value || launch.getOutputs().size() != 1)
    return launch.emitError() << "cannot emit this constant";
  Value output = launch.getOutputs()[0];
  Storage where = storage.lookup(output);
  if (where.kind != Storage::Buffer)
    return launch.emitError() << "a constant must be written to a buffer";
  Type elementType = value.getElementType();
  std::optional<DTypeInfo> dtype = dtypeOf(elementType);
  if (!dtype ||
      !(elementType.isF32() || elementType.isF64() ||
        elementType.isSignlessInteger(32) || elementType.isSignlessInteger(64)))
    return launch.emitError()
           << "cannot emit a constant of element type " << elementType;
  auto literal = [&](Attribute element) -> std::string {
    if (auto f = dyn_cast<FloatAttr>(element))
      return elementType.isF32()
                 ? floatLiteral(static_cast<float>(f.getValueAsDouble()))
                 : doubleLiteral(f.getValueAsDouble());
    int64_t v = cast<IntegerAttr>(element).getInt();
    return elementType.isSignlessInteger(64)
               ? "INT64_C(" + std::to_string(v) + ")"
               : std::to_string(v);
  };
  int64_t count = value.getNumElements();
  std::string buffer = "B[" + std::to_string(where.index) + "]";
  std::string location = locationText(launch.getLoc());
  std::string comment = location.empty() ? "" : "  // " + commentText(location);
  if (value.isSplat()) {
    initializeBody.push_back(
        "  FLUID_CHECK(fillConstant<" + std::string(dtype->cType) + ">(env, " +
        buffer + ", " + std::to_string(count) + ", " +
        literal(value.getSplatValue<Attribute>()) + "));" + comment);
    return success();
  }
  std::string elements;
  for (auto [i, element] : llvm::enumerate(value.getValues<Attribute>()))
    elements += (i ? ", " : "") + literal(element);
  std::string name =
      "kConstant" + std::to_string(sharedData.size()) + "_" + symbol;
  // Constants are unique: the key holds the definition, the value its name.
  sharedData.add("constant static const " + std::string(dtype->cType) + " " +
                     name + "[] = {" + elements + "};",
                 name);
  initializeBody.push_back("  FLUID_CHECK(copyConstant(env, " + buffer + ", " +
                           name + ", sizeof(" + name + ")));" + comment);
  return success();
}

LogicalResult FunctionEmitter::emitLaunch(fluid_rt::LaunchOp launch) {
  StringRef kernel = launch.getKernel();
  if (kernel == "constant")
    return emitConstant(launch);
  Block tensorArguments;
  Operation *tensorOp = launch.buildTensorOp(tensorArguments);
  if (!tensorOp)
    return failure();
  llvm::scope_exit destroy([&] { tensorOp->destroy(); });

  SmallVector<std::string> inputs, outputs;
  for (Value input : launch.getInputs()) {
    FailureOr<std::string> name = descriptor(input);
    if (failed(name))
      return launch.emitError() << "cannot emit an operand of this launch";
    inputs.push_back("&" + *name);
  }
  for (Value output : launch.getOutputs()) {
    FailureOr<std::string> name = descriptor(output);
    if (failed(name))
      return launch.emitError() << "cannot emit an output of this launch";
    outputs.push_back("&" + *name);
  }
  if (auto fusion = dyn_cast<FusionOp>(tensorOp))
    return emitFusion(launch, fusion, inputs, outputs);
  int64_t rank = 0;
  if (tensorOp->getNumResults())
    rank = cast<ShapedType>(tensorOp->getResult(0).getType()).getRank();

  // The all-reduce averages its buffers in place (its inputs are its
  // outputs), with the run's communicator.
  if (auto reduce = dyn_cast<AllReduceMeanOp>(tensorOp)) {
    std::string bucket = std::to_string(reduce.getBucket());
    std::string array =
        "bucket" + bucket + "_" + std::to_string(launches.size());
    std::string list;
    for (auto [i, output] : llvm::enumerate(outputs))
      list += (i ? ", " : "") + StringRef(output).drop_front().str();
    line("  fluid_tensor " + array + "[] = {" + list + "};");
    std::string count = std::to_string(outputs.size());
    if (options.backend != EmitBackend::Cuda) {
      addCall(launch, kernel, kernel,
              {"env->communicator", count, array, array});
      return success();
    }
    // Started here on the communicator's stream; waited for where its
    // buffers are next touched (waitForBuckets).
    addCall(launch, "all_reduce_mean_start", kernel,
            {"env->communicator", bucket, count, array});
    for (Value output : launch.getOutputs())
      pendingBuckets[output] = reduce.getBucket();
    return success();
  }

  // Concatenation takes its inputs as an array.
  if (auto concat = dyn_cast<ConcatOp>(tensorOp)) {
    std::string array = "inputs" + std::to_string(launches.size());
    std::string list;
    for (auto [i, input] : llvm::enumerate(inputs))
      list += (i ? ", " : "") + StringRef(input).drop_front().str();
    line("  const fluid_tensor " + array + "[] = {" + list + "};");
    addCall(launch, kernel, kernel,
            {array, std::to_string(inputs.size()), outputs[0],
             std::to_string(normalizeAxis(concat.getAxis(), rank))});
    return success();
  }

  // Optional biases the launch does not have are null, and so is an
  // update's skip flag (dynamic loss scaling).
  if (isa<Conv2DOp, LinearOp>(tensorOp) && inputs.size() == 2)
    inputs.push_back("nullptr");
  if (isa<SgdOp, MomentumOp, AdamOp>(tensorOp) && !foundInfOf(tensorOp))
    inputs.push_back("nullptr");

  // The op's attributes, after its tensors.
  bool supported = true;
  SmallVector<std::string> trailing;
  auto conv = [&](fluid_conv2d_params p) {
    return paramStruct("fluid_conv2d_params", "Conv2d",
                       "{" + intArray(p.strides) + ", " + intArray(p.padding) +
                           ", " + intArray(p.dilation) + ", " +
                           std::to_string(p.groups) + ", " +
                           std::to_string(p.channels_last) + "}");
  };
  auto maxPool = [&](fluid_max_pool2d_params p) {
    return paramStruct("fluid_max_pool2d_params", "MaxPool2d",
                       "{" + intArray(p.kernel) + ", " + intArray(p.strides) +
                           ", " + intArray(p.padding) + ", " +
                           intArray(p.dilation) + ", " +
                           std::to_string(p.ceil_mode) + ", " +
                           std::to_string(p.channels_last) + "}");
  };
  auto avgPool = [&](fluid_avg_pool2d_params p) {
    return paramStruct("fluid_avg_pool2d_params", "AvgPool2d",
                       "{" + intArray(p.kernel) + ", " + intArray(p.strides) +
                           ", " + intArray(p.padding) + ", " +
                           std::to_string(p.ceil_mode) + ", " +
                           std::to_string(p.count_include_pad) + "}");
  };
  auto reduce = [&](fluid_reduce_params p) {
    return paramStruct("fluid_reduce_params", "Reduce",
                       "{" + intList(ArrayRef<int64_t>(p.axes, p.num_axes)) +
                           ", " + std::to_string(p.num_axes) + ", " +
                           std::to_string(p.keep_dims) + "}");
  };
  auto reduction = [](Reduction r) -> std::string {
    switch (toRuntime(r)) {
    case FLUID_REDUCTION_SUM:
      return "FLUID_REDUCTION_SUM";
    case FLUID_REDUCTION_NONE:
      return "FLUID_REDUCTION_NONE";
    default:
      return "FLUID_REDUCTION_MEAN";
    }
  };
  llvm::TypeSwitch<Operation *>(tensorOp)
      .Case<Conv2DOp, Conv2DGradInputOp, Conv2DGradFilterOp>(
          [&](auto op) { trailing.push_back(conv(convParams(op))); })
      .Case([&](BatchNormOp op) {
        fluid_batch_norm_params p = batchNormParams(op);
        trailing.push_back(paramStruct("fluid_batch_norm_params", "BatchNorm",
                                       "{" + doubleLiteral(p.epsilon) + ", " +
                                           doubleLiteral(p.momentum) + "}"));
      })
      .Case([&](BatchNormInferenceOp op) {
        trailing.push_back(doubleLiteral(op.getEpsilon().convertToDouble()));
      })
      .Case<MaxPool2DOp, MaxPool2DWithIndicesOp, MaxPool2DGradOp,
            MaxPool2DGradIndicesOp>(
          [&](auto op) { trailing.push_back(maxPool(maxPoolParams(op))); })
      .Case<AvgPool2DOp, AvgPool2DGradOp>(
          [&](auto op) { trailing.push_back(avgPool(avgPoolParams(op))); })
      .Case([&](MatmulOp op) {
        fluid_matmul_params p = matmulParams(op);
        trailing.push_back(
            paramStruct("fluid_matmul_params", "Matmul",
                        "{" + std::to_string(p.transpose_lhs) + ", " +
                            std::to_string(p.transpose_rhs) + "}"));
      })
      .Case<SoftmaxOp, LogSoftmaxOp, SoftmaxGradOp, LogSoftmaxGradOp>(
          [&](auto op) {
            trailing.push_back(
                std::to_string(normalizeAxis(op.getAxis(), rank)));
          })
      .Case<SoftmaxCrossEntropyOp, SoftmaxCrossEntropyGradOp>([&](auto op) {
        trailing.push_back(reduction(op.getReduction()));
        classes = op.getLogits().getType().getDimSize(1);
      })
      .Case<MeanOp, ReduceSumOp>([&](auto op) {
        int64_t inputRank = cast<ShapedType>(op.getInput().getType()).getRank();
        trailing.push_back(
            reduce(reduceParams(op.getAxes(), op.getKeepDims(), inputRank)));
      })
      .Case([&](SliceOp op) {
        trailing.push_back(std::to_string(op.getAxis()));
        trailing.push_back(std::to_string(op.getOffset()));
      })
      .Case<GatherOp, GatherGradOp>([&](auto op) {
        trailing.push_back(std::to_string(normalizeAxis(op.getAxis(), rank)));
      })
      .Case([&](TransposeOp op) {
        fluid_transpose_params p = transposeParams(op);
        trailing.push_back(paramStruct(
            "fluid_transpose_params", "Transpose",
            "{" +
                intList(ArrayRef<int64_t>(
                    p.perm, std::min<int64_t>(p.rank, FLUID_MAX_RANK))) +
                ", " + std::to_string(p.rank) + "}"));
      })
      .Case<SgdOp, SgdGroupOp>([&](auto op) {
        trailing.push_back(
            paramStruct("fluid_sgd_params", "Sgd",
                        "{" + doubleLiteral(sgdParams(op).weight_decay) + "}"));
      })
      .Case<MomentumOp, MomentumGroupOp>([&](auto op) {
        fluid_momentum_params p = momentumParams(op);
        trailing.push_back(paramStruct("fluid_momentum_params", "Momentum",
                                       "{" + doubleLiteral(p.momentum) + ", " +
                                           doubleLiteral(p.weight_decay) +
                                           ", " + std::to_string(p.nesterov) +
                                           "}"));
      })
      .Case<AdamOp, AdamGroupOp>([&](auto op) {
        fluid_adam_params p = adamParams(op);
        trailing.push_back(paramStruct(
            "fluid_adam_params", "Adam",
            "{" + doubleLiteral(p.beta1) + ", " + doubleLiteral(p.beta2) +
                ", " + doubleLiteral(p.epsilon) + ", " +
                doubleLiteral(p.weight_decay) + ", " +
                std::to_string(p.decoupled) + "}"));
      })
      // Ops whose kernels take tensors only.
      .Case<LinearOp, ReluOp, SigmoidOp, TanhOp, AddOp, SubOp, MulOp, DivOp,
            GlobalAvgPoolOp, NegOp, ExpOp, LogOp, CosOp, SqrtOp, FloorOp, ErfOp,
            PowOp, MinimumOp, MaximumOp, GreaterEqualOp, SelectOp, CastOp,
            BroadcastToOp, SumToOp, BatchNormGradOp, BatchNormApplyOp,
            ReluGradOp, SigmoidGradOp, TanhGradOp, ReshapeOp, FlattenOp,
            UnscaleGradsOp>([](Operation *) {})
      .Default([&](Operation *) { supported = false; });
  if (!supported)
    return launch.emitError()
           << "has no runtime kernel to emit for '" << kernel << "'";
  if (isa<SgdGroupOp, MomentumGroupOp, AdamGroupOp, UnscaleGradsOp>(tensorOp)) {
    addCall(launch, kernel, kernel,
            groupArguments(tensorOp, inputs, outputs, trailing));
    return success();
  }
  // reshape and flatten copy (the bufferizer makes them views, so this is
  // only a launch someone wrote by hand).
  StringRef entry = isa<FlattenOp>(tensorOp) ? StringRef("reshape") : kernel;
  SmallVector<std::string> all(inputs);
  all.append(outputs);
  all.append(trailing);
  addCall(launch, entry, kernel, all);
  return success();
}

SmallVector<std::string>
FunctionEmitter::groupArguments(Operation *group, ArrayRef<std::string> inputs,
                                ArrayRef<std::string> outputs,
                                ArrayRef<std::string> trailing) {
  // The lists' names, inputs then outputs; the scalars follow the inputs'
  // lists (an absent skip flag is null), and unscale_grads' flag the
  // outputs' list.
  ArrayRef<StringRef> inputLists, outputLists;
  static constexpr StringRef kSgdIn[] = {"Params", "Grads"};
  static constexpr StringRef kSgdOut[] = {"NewParams"};
  static constexpr StringRef kMomentumIn[] = {"Params", "Grads", "Velocities"};
  static constexpr StringRef kMomentumOut[] = {"NewParams", "NewVelocities"};
  static constexpr StringRef kAdamIn[] = {"Params", "Grads", "ExpAvgs",
                                          "ExpAvgSqs"};
  static constexpr StringRef kAdamOut[] = {"NewParams", "NewExpAvgs",
                                           "NewExpAvgSqs"};
  static constexpr StringRef kUnscaleIn[] = {"Grads"};
  static constexpr StringRef kUnscaleOut[] = {"NewGrads"};
  size_t count = 0;
  bool nullSkipFlag = false;
  llvm::TypeSwitch<Operation *>(group)
      .Case([&](SgdGroupOp op) {
        inputLists = kSgdIn;
        outputLists = kSgdOut;
        count = op.getParams().size();
        nullSkipFlag = !op.getFoundInf();
      })
      .Case([&](MomentumGroupOp op) {
        inputLists = kMomentumIn;
        outputLists = kMomentumOut;
        count = op.getParams().size();
        nullSkipFlag = !op.getFoundInf();
      })
      .Case([&](AdamGroupOp op) {
        inputLists = kAdamIn;
        outputLists = kAdamOut;
        count = op.getParams().size();
        nullSkipFlag = !op.getFoundInf();
      })
      .Case([&](UnscaleGradsOp op) {
        inputLists = kUnscaleIn;
        outputLists = kUnscaleOut;
        count = op.getGrads().size();
      });
  std::string prefix = "group" + std::to_string(launches.size());
  SmallVector<std::string> arguments;
  if (options.backend == EmitBackend::Cuda) {
    // The call site's key for the device table of the group's tensors,
    // which the runtime sets up once per context.
    std::string site = "kGroupSite_" + symbol + "_" + prefix;
    sharedData.add("constant char " + site + " = 0;", site);
    arguments.push_back("&" + site);
  }
  arguments.push_back(std::to_string(count));
  auto list = [&](StringRef qualifier, StringRef name,
                  ArrayRef<std::string> entries) {
    std::string array = prefix + name.str();
    std::string text;
    for (auto [i, entry] : llvm::enumerate(entries))
      text += (i ? ", " : "") + StringRef(entry).drop_front().str();
    line("  " + qualifier.str() + "fluid_tensor " + array + "[] = {" + text +
         "};");
    arguments.push_back(array);
  };
  for (auto [i, name] : llvm::enumerate(inputLists))
    list("const ", name, inputs.slice(i * count, count));
  llvm::append_range(arguments, inputs.drop_front(inputLists.size() * count));
  if (nullSkipFlag)
    arguments.push_back("nullptr");
  for (auto [i, name] : llvm::enumerate(outputLists))
    list("", name, outputs.slice(i * count, count));
  llvm::append_range(arguments, outputs.drop_front(outputLists.size() * count));
  llvm::append_range(arguments, trailing);
  return arguments;
}

LogicalResult FunctionEmitter::emitOp(Operation *op) {
  if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
    MemRefType type = alloc.getType();
    bool arena = isArena(alloc);
    std::optional<DTypeInfo> dtype = dtypeOf(type.getElementType());
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        !(dtype || (arena && type.getElementType().isInteger(8))))
      return op->emitError() << "cannot emit a buffer of type " << type;
    int64_t bytes = type.getNumElements() * (dtype ? dtype->bytes : 1);
    bool freed = llvm::any_of(alloc->getUsers(), [](Operation *user) {
      return isa<memref::DeallocOp>(user);
    });
    if (freed) {
      int64_t index = dynamicBuffers++;
      storage[alloc] = {Storage::Dynamic, index};
      addRuntimeCall(
          op, "allocate",
          {std::to_string(bytes), "&D[" + std::to_string(index) + "]"});
      return success();
    }
    storage[alloc] = {Storage::Buffer,
                      static_cast<int64_t>(bufferBytes.size())};
    bufferBytes.push_back(bytes);
    return success();
  }
  if (auto free = dyn_cast<memref::DeallocOp>(op)) {
    auto it = storage.find(free.getMemref());
    if (it == storage.end() || it->second.kind != Storage::Dynamic ||
        !free.getMemref().getDefiningOp<memref::AllocOp>())
      return op->emitError() << "can free only a buffer this function "
                                "allocates (a memref.alloc)";
    if (!released.insert(it->second.index).second)
      return op->emitError() << "frees a buffer that is already freed";
    addRuntimeCall(op, "release",
                   {"D[" + std::to_string(it->second.index) + "]"});
    return success();
  }
  if (auto view = dyn_cast<memref::ViewOp>(op)) {
    auto it = storage.find(view.getSource());
    auto shift = view.getByteShift().getDefiningOp<arith::ConstantIndexOp>();
    MemRefType type = view.getType();
    std::optional<DTypeInfo> dtype = dtypeOf(type.getElementType());
    if (it == storage.end() || it->second.kind != Storage::Buffer || !shift ||
        !view.getSizes().empty() || !dtype || !type.hasStaticShape())
      return op->emitError() << "can emit only a static view at a constant "
                                "offset of an arena (--fluid-plan-memory)";
    int64_t offset = shift.value();
    int64_t end = offset + type.getNumElements() * dtype->bytes;
    if (offset < 0 || end > view.getSource().getType().getNumElements())
      return op->emitError()
             << "view of bytes [" << offset << ", " << end
             << ") is outside its arena of "
             << view.getSource().getType().getNumElements() << " bytes";
    // Copy out of the map before storage[] may grow it.
    Storage viewStorage{Storage::Buffer, it->second.index, offset};
    storage[view] = viewStorage;
    return success();
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (!constant.getType().isIndex())
      return op->emitError() << "can emit only index constants (offsets)";
    return success();
  }
  if (auto ref = dyn_cast<fluid_rt::ParamRefOp>(op)) {
    auto it = paramIndex.find(ref.getName());
    if (it == paramIndex.end())
      return op->emitError() << "@" << ref.getName() << " is not a parameter";
    storage[ref] = {Storage::Param, it->second};
    return success();
  }
  if (auto view = dyn_cast<fluid_rt::ViewOp>(op)) {
    auto it = storage.find(view.getSource());
    if (it == storage.end())
      return op->emitError() << "cannot emit a view of this value";
    Storage source = it->second;
    storage[view] = source;
    return success();
  }
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    FailureOr<std::string> from = descriptor(copy.getSource());
    FailureOr<std::string> to = descriptor(copy.getTarget());
    if (failed(from) || failed(to))
      return op->emitError() << "cannot emit this copy";
    // The runtime's reshape copies elements into a buffer of any shape.
    addCall(op, "reshape", "copy", {"&" + *from, "&" + *to});
    return success();
  }
  if (auto launch = dyn_cast<fluid_rt::LaunchOp>(op))
    return emitLaunch(launch);
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto it = storage.find(value);
      if (it == storage.end() || it->second.kind != Storage::Buffer ||
          it->second.offset || isArena(value.getDefiningOp()))
        return op->emitError()
               << "result #" << i
               << " must be a buffer of its own (run --fluid-bufferize)";
      resultBuffers.push_back(it->second.index);
    }
    return success();
  }
  return op->emitError() << "cannot emit '" << op->getName()
                         << "': the module must be bufferized first "
                            "(--fluid-bufferize)";
}

LogicalResult FunctionEmitter::build() {
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "can only emit single-block functions";
  Block &block = func.getBody().front();
  for (auto [i, argument] : llvm::enumerate(block.getArguments())) {
    auto type = dyn_cast<MemRefType>(argument.getType());
    if (!type || !type.hasStaticShape() || !dtypeOf(type.getElementType()))
      return func.emitError()
             << "argument #" << i << " has type " << argument.getType()
             << "; run --fluid-bufferize first";
    auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttrName);
    arguments.push_back(name ? name.getValue().str()
                             : "arg" + std::to_string(i));
    storage[argument] = {Storage::Argument, static_cast<int64_t>(i)};
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    std::string name = "result" + std::to_string(i);
    if (func.getResultAttr(i, kLossAttrName))
      name = "loss";
    else if (func.getResultAttr(i, kLearningRateResultAttrName))
      name = "learning_rate";
    else if (func.getSymName() == "predict" && i == 0)
      name = "logits";
    results.push_back(name);
  }
  for (Operation &op : block) {
    waitForBuckets(&op);
    if (failed(emitOp(&op)))
      return failure();
  }
  return success();
}

void FunctionEmitter::waitForBuckets(Operation *op) {
  if (pendingBuckets.empty())
    return;
  // A buffer in flight, or a view of one.
  auto bucketOf = [&](Value value) -> std::optional<int64_t> {
    while (value) {
      if (auto it = pendingBuckets.find(value); it != pendingBuckets.end())
        return it->second;
      auto view = value.getDefiningOp<ViewLikeOpInterface>();
      value = view ? view.getViewSource() : Value();
    }
    return std::nullopt;
  };
  std::set<int64_t> buckets;
  if (isa<func::ReturnOp>(op)) {
    for (auto &[value, bucket] : pendingBuckets)
      buckets.insert(bucket);
  } else {
    for (Value operand : op->getOperands())
      if (std::optional<int64_t> bucket = bucketOf(operand))
        buckets.insert(*bucket);
  }
  for (int64_t bucket : buckets) {
    addRuntimeCall(op, "all_reduce_mean_wait",
                   {"env->communicator", std::to_string(bucket)});
    SmallVector<Value> done;
    for (auto &[value, pending] : pendingBuckets)
      if (pending == bucket)
        done.push_back(value);
    for (Value value : done)
      pendingBuckets.erase(value);
  }
}

void FunctionEmitter::write(raw_ostream &os) {
  const std::string &s = symbol;
  std::string title = "//===- @" + commentText(func.getSymName()) + " ";
  os << title << std::string(std::max<int>(1, 77 - title.size()), '-')
     << "===//\n\n";
  os << "const fluid_program_value " << s << "Arguments[] = {\n";
  for (auto [i, argument] : llvm::enumerate(func.getArguments())) {
    std::optional<ArrayRef<int64_t>> order;
    if (auto attr =
            func.getArgAttrOfType<DenseI64ArrayAttr>(i, kStorageOrderAttrName))
      order = attr.asArrayRef();
    os << "    "
       << valueLiteral(arguments[i], cast<MemRefType>(argument.getType()),
                       order)
       << ",\n";
  }
  os << "};\n";
  os << "const fluid_program_value " << s << "Results[] = {\n";
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    os << "    " << valueLiteral(results[i], cast<MemRefType>(type)) << ",\n";
  os << "};\n";
  os << "const int64_t " << s << "ResultBuffers[] = " << intList(resultBuffers)
     << ";\n";
  os << "const int64_t " << s << "BufferBytes[] = {";
  for (auto [i, bytes] : llvm::enumerate(bufferBytes))
    os << (i % 8 ? " " : "\n    ") << bytes << ",";
  os << "\n};\n";
  os << "const fluid_program_launch " << s << "Launches[] = {\n";
  for (auto &[kernel, location] : launches)
    os << "    {" << quoted(kernel) << ", " << quoted(location) << "},\n";
  os << "};\n\n";

  // The signature of an entry point, its parameters aligned.
  auto signature = [&](StringRef entry) {
    std::string head = "fluid_status " + s + entry.str() + "(";
    os << head << "const fluid_program_env *env,\n"
       << std::string(head.size(), ' ')
       << "const fluid_program_memory *memory) {\n";
  };
  signature("Initialize");
  os << "  void *const *B = memory->buffers;\n"
        "  (void)env;\n  (void)B;\n";
  if (usesGpuKernels)
    os << "  FLUID_CHECK(fluid_cuda_load_generated(\n"
          "      static_cast<fluid_cuda_context *>(env->backend_context), "
          "kGpuKernels));\n";
  for (const std::string &line : initializeBody)
    os << line << "\n";
  if (options.backend == EmitBackend::Cuda)
    os << "  return fluid_cuda_synchronize(\n"
          "      static_cast<fluid_cuda_context *>(env->backend_context));\n";
  else
    os << "  return FLUID_OK;\n";
  os << "}\n\n";

  // The descriptors: a table the step turns into T once per call.
  os << "const TensorSpec " << s << "Tensors[] = {\n";
  for (const Descriptor &d : descriptors)
    os << "    " << d.spec << "\n";
  if (descriptors.empty())
    os << "    {'A', 0, 0, 0, 0, {}},  // (none)\n";
  os << "};\n\n";

  signature("Run");
  if (options.backend == EmitBackend::Cuda)
    os << "  fluid_cuda_context *context =\n"
          "      static_cast<fluid_cuda_context *>(env->backend_context);\n";
  os << "  void *const *A = memory->arguments;\n"
        "  void *const *P = memory->params;\n"
        "  void *const *B = memory->buffers;\n";
  if (dynamicBuffers)
    os << "  // Buffers allocated and freed in stream order.\n"
       << "  void *D[" << dynamicBuffers << "] = {};\n";
  os << "  fluid_tensor T[" << std::max<size_t>(descriptors.size(), 1) << "];\n"
     << "  describeTensors(" << s << "Tensors, " << descriptors.size()
     << ", A, P, B, T);\n";
  for (auto [k, d] : llvm::enumerate(descriptors))
    os << "  fluid_tensor &" << d.name << " = T[" << k << "];\n";
  os << "\n";
  for (const std::string &text : body)
    os << text << "\n";
  os << "  return FLUID_OK;\n}\n\n";
}

std::string FunctionEmitter::infoLiteral() {
  const std::string &s = symbol;
  return "{" + quoted(func.getSymName()) + ", " +
         std::to_string(func.getNumArguments()) + ", " + s + "Arguments, " +
         std::to_string(func.getNumResults()) + ", " + s + "Results, " + s +
         "ResultBuffers, " + std::to_string(bufferBytes.size()) + ", " + s +
         "BufferBytes, " + std::to_string(launches.size()) + ", " + s +
         "Launches, " + s + "Initialize, " + s + "Run}";
}

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

constexpr const char *kPreamble = R"cpp(
namespace {

/// Where a descriptor's data lives: 'A'rgument, 'P'arameter or 'B'uffer
/// `index` (at byte `offset`), or 'D': a buffer the step allocates, whose
/// address the step sets when it has it.
struct TensorSpec {
  char array;
  int64_t index, offset;
  int32_t dtype, rank;
  int64_t shape[FLUID_MAX_RANK];
};

/// The descriptors of `specs`, into `T` (a loop over data, which compiles
/// far faster than one initialization per descriptor).
void describeTensors(const TensorSpec *specs, int64_t count,
                     void *const *A, void *const *P, void *const *B,
                     fluid_tensor *T) {
  for (int64_t k = 0; k < count; ++k) {
    const TensorSpec &spec = specs[k];
    void *const *base = spec.array == 'A'   ? A
                        : spec.array == 'P' ? P
                        : spec.array == 'B' ? B
                                            : nullptr;
    fluid_tensor t = {};
    t.data = base ? static_cast<char *>(base[spec.index]) + spec.offset
                  : nullptr;
    t.dtype = spec.dtype;
    t.rank = spec.rank;
    for (int32_t d = 0; d < spec.rank; ++d)
      t.shape[d] = spec.shape[d];
    T[k] = t;
  }
}

#define FLUID_CHECK(call)                                                      \
  do {                                                                         \
    fluid_status status_ = (call);                                             \
    if (status_ != FLUID_OK)                                                   \
      return status_;                                                          \
  } while (0)

/// One launch: the profiling hook around it, its status checked.
#define FLUID_LAUNCH(index, call)                                              \
  do {                                                                         \
    if (env->on_launch)                                                        \
      env->on_launch(env->user, index, 0);                                     \
    fluid_status status_ = (call);                                             \
    if (env->on_launch)                                                        \
      env->on_launch(env->user, index, 1);                                     \
    if (status_ != FLUID_OK)                                                   \
      return status_;                                                          \
  } while (0)
)cpp";

constexpr const char *kCopyCpu = R"cpp(
fluid_status copyConstant(const fluid_program_env *, void *buffer,
                          const void *data, size_t bytes) {
  std::memcpy(buffer, data, bytes);
  return FLUID_OK;
}
)cpp";

constexpr const char *kCopyCuda = R"cpp(
fluid_status copyConstant(const fluid_program_env *env, void *buffer,
                          const void *data, size_t bytes) {
  return fluid_cuda_copy_to_device(
      static_cast<fluid_cuda_context *>(env->backend_context), buffer, data,
      static_cast<int64_t>(bytes));
}
)cpp";

constexpr const char *kLaunchGenerated = R"cpp(
/// Launches generated kernel `name` on `blocks` blocks, or its vector
/// variant `vectorName` on `vectorBlocks` when every operand that one
/// moves as vectors (`mask`: '1' per such tensor) is 16-byte aligned.
fluid_status launchGenerated(fluid_cuda_context *context, const char *name,
                             const char *vectorName, int64_t blocks,
                             int64_t vectorBlocks,
                             const fluid_tensor *const *tensors,
                             int64_t tensorCount, const char *mask) {
  bool vector = vectorName != nullptr;
  for (int64_t k = 0; vector && k < tensorCount; ++k)
    if (mask[k] == '1' &&
        reinterpret_cast<std::uintptr_t>(tensors[k]->data) % 16 != 0)
      vector = false;
  return fluid_cuda_launch_generated(
      context, kGpuKernels, vector ? vectorName : name,
      vector ? vectorBlocks : blocks, 256, tensors, tensorCount);
}
)cpp";

constexpr const char *kFill = R"cpp(
template <typename T>
fluid_status fillConstant(const fluid_program_env *env, void *buffer,
                          size_t count, T value) {
  std::vector<T> values(count, value);
  return copyConstant(env, buffer, values.data(), count * sizeof(T));
}
)cpp";

} // namespace

LogicalResult mlir::fluid::emitProgram(ModuleOp module,
                                       const EmitOptions &options,
                                       raw_ostream &os) {
  // Parameters, in the module's order.
  llvm::StringMap<int64_t> paramIndex;
  SmallVector<ParamOp> params;
  for (ParamOp param : module.getOps<ParamOp>()) {
    if (!dtypeOf(param.getTensorType().getElementType()))
      return param.emitError()
             << "cannot emit a parameter of type " << param.getTensorType();
    paramIndex[param.getSymName()] = static_cast<int64_t>(params.size());
    params.push_back(param);
  }

  std::string why;
  FailureOr<func::FuncOp> entry = findEntryFunction(module, "", why);
  if (failed(entry))
    return module.emitError() << "cannot emit the program: " << why;

  StaticData data;
  // The generated GPU kernels: PTX in the gpu.binary of
  // --fluid-lower-gpu-kernels.
  std::string gpuKernels;
  if (Operation *symbol = module.lookupSymbol(kGpuKernelModuleName)) {
    auto binary = dyn_cast<gpu::BinaryOp>(symbol);
    if (!binary || binary.getObjects().size() != 1)
      return symbol->emitError()
             << "the generated kernels must be lowered to one PTX object "
                "first (--fluid-lower-gpu-kernels)";
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    gpuKernels = object.getObject().getValue().str();
    // A math function libdevice should have defined: the PTX would not
    // load.
    if (StringRef(gpuKernels).contains(".extern .func __nv_"))
      return binary.emitError()
             << "the generated kernels call libdevice functions that were "
                "not linked (libdevice.10.bc not found under the CUDA "
                "toolkit; set CUDA_HOME)";
    data.hasGpuKernels = options.backend == EmitBackend::Cuda;
  }
  std::vector<std::unique_ptr<FunctionEmitter>> functions;
  int64_t trainIndex = -1, predictIndex = -1, classes = 0;
  // A program that all-reduces runs as one rank of several (MPI's main).
  bool dataParallel = false;
  module.walk([&](fluid_rt::LaunchOp launch) {
    dataParallel |= launch.getKernel() == "all_reduce_mean";
  });
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (func == *entry)
      trainIndex = static_cast<int64_t>(functions.size());
    else if (func.getSymName() == "predict")
      predictIndex = static_cast<int64_t>(functions.size());
    auto emitter = std::make_unique<FunctionEmitter>(
        func, options, paramIndex, "f" + std::to_string(functions.size()),
        data);
    if (failed(emitter->build()))
      return failure();
    if (func == *entry)
      classes = emitter->classes;
    functions.push_back(std::move(emitter));
  }

  auto lookupParam = [&](StringRef name, Type elementType) -> int64_t {
    auto it = paramIndex.find(name);
    if (it == paramIndex.end())
      return -1;
    RankedTensorType type = params[it->second].getTensorType();
    return type.getRank() == 0 && type.getElementType() == elementType
               ? it->second
               : -1;
  };
  Builder builder(module.getContext());

  int64_t workspaceLimit = -1;
  if (auto limit =
          module->getAttrOfType<IntegerAttr>(fluid_rt::kWorkspaceLimitAttrName))
    workspaceLimit = limit.getInt();

  bool cuda = options.backend == EmitBackend::Cuda;
  os << "// Generated by fluid-compile from " << commentText(options.source)
     << ": do not edit.\n"
     << "// Backend: " << (cuda ? "cuda" : "cpu")
     << ". Training options: " << commentText(options.trainingOptions) << "\n"
     << "// Each launch is one runtime call, in program order; descriptors "
        "name\n"
     << "// arguments (a), parameters (p), buffers (b, at a byte offset for\n"
     << "// an arena's views) and buffers the step allocates and frees (d).\n\n"
     << "#include \"fluid/runtime/Program.h\"\n"
     << (cuda ? "#include \"fluid/runtime/CudaKernels.h\"\n"
              : "#include \"fluid/runtime/CpuGradKernels.h\"\n"
                "#include \"fluid/runtime/CpuKernels.h\"\n"
                "#include \"fluid/runtime/CpuOptimizerKernels.h\"\n"
                "#include \"fluid/runtime/Float16.h\"\n")
     << "\n#include <cstddef>\n#include <cstdint>\n#include <cstring>\n"
        "#include <initializer_list>\n#include <limits>\n#include <vector>\n"
     << (cuda ? "" : "#include <cmath>\n") << kPreamble
     << (cuda ? kCopyCuda : kCopyCpu) << kFill << "\n";

  // Parameters.
  os << "//===- Parameters " << std::string(53, '-') << "===//\n\n";
  os << "const fluid_program_param kParams[] = {\n";
  for (ParamOp param : params) {
    RankedTensorType type = param.getTensorType();
    InitializerAttr init = param.getInit();
    fluid_init_spec spec = initSpec(init);
    bool integer = isa<IntegerType>(type.getElementType());
    os << "    {"
       << valueLiteral(param.getSymName(), type, param.getStorageOrder())
       << ",\n     {" << spec.kind << ", " << spec.fan_mode << ", "
       << doubleLiteral(spec.value) << ", " << doubleLiteral(spec.mean) << ", "
       << doubleLiteral(spec.std) << ", " << doubleLiteral(spec.low) << ", "
       << doubleLiteral(spec.high) << ", " << doubleLiteral(spec.gain) << "}, "
       << (integer ? integerInitValue(init) : 0) << ", "
       << (param.getTrainable() ? 1 : 0) << ", "
       << (param->hasAttr(kOptimizerStateAttrName) ? 1 : 0) << "},\n";
  }
  os << "};\n\n";

  // Shared parameter structs and constant data.
  os << "//===- Kernel parameters " << std::string(46, '-') << "===//\n\n";
  for (auto &[key, name] : data.ordered) {
    if (StringRef(key).starts_with("constant ")) {
      os << StringRef(key).drop_front(9) << "\n";
      continue;
    }
    auto [type, initializer] = StringRef(key).split(' ');
    os << "const " << type << " " << name << " = " << initializer << ";\n";
  }
  os << "\n";

  if (!data.kernels.empty()) {
    os << "//===- Fused kernels " << std::string(50, '-') << "===//\n\n";
    for (auto &[name, definition] : data.kernels) {
      StringRef text(definition);
      size_t at = text.find("FLUID_FUSED_KERNEL");
      os << text.take_front(at) << name
         << text.drop_front(at + strlen("FLUID_FUSED_KERNEL")) << "\n";
    }
  }

  if (data.hasGpuKernels) {
    os << "//===- Generated GPU kernels (PTX) " << std::string(36, '-')
       << "===//\n\n";
    os << "const char kGpuKernels[] =\n";
    SmallVector<StringRef> lines;
    StringRef(gpuKernels).split(lines, '\n');
    for (StringRef text : lines)
      os << "    " << quoted((text + "\n").str()) << "\n";
    os << "    ;\n" << kLaunchGenerated << "\n";
  }

  for (auto &function : functions)
    function->write(os);

  os << "const fluid_program_function kFunctions[] = {\n";
  for (auto &function : functions)
    os << "    " << function->infoLiteral() << ",\n";
  os << "};\n\n";
  os << "const fluid_program_info kProgram = {\n"
     << "    FLUID_PROGRAM_ABI_VERSION,\n"
     << "    " << (cuda ? "FLUID_BACKEND_CUDA" : "FLUID_BACKEND_CPU") << ",\n"
     << "    " << quoted(options.source) << ",\n"
     << "    " << quoted(options.trainingOptions) << ",\n"
     << "    " << params.size() << ",\n    kParams,\n"
     << "    " << functions.size() << ",\n    kFunctions,\n"
     << "    " << trainIndex << ", // training step\n"
     << "    " << predictIndex << ", // inference\n"
     << "    " << lookupParam("learning_rate", builder.getF64Type())
     << ", // base learning rate\n"
     << "    " << lookupParam("global_step", builder.getI64Type())
     << ", // step counter\n"
     << "    " << classes << ", // classes\n"
     << "    " << workspaceLimit
     << ", // cuDNN workspace limit in bytes (-1: none)\n"
     << "    " << (options.tf32 ? 1 : 0)
     << ", // TF32 by default (0: --precision fp32)\n"
     << "    "
     << (getParamsFile(module).empty() ? "nullptr"
                                       : quoted(getParamsFile(module).str()))
     << ", // the imported parameters' file (nullptr: none)\n"
     << "    " << (dataParallel ? 1 : 0)
     << ", // data parallel (averages gradients over ranks)\n};\n\n"
     << "} // namespace\n\n"
     << "extern \"C\" const fluid_program_info *fluid_program(void) {\n"
     << "  return &kProgram;\n}\n";
  if (options.withMain)
    os << "\nint main(int argc, char **argv) {\n"
       << "  return "
       << (dataParallel ? "fluid_mpi_driver_main" : "fluid_driver_main")
       << "(argc, argv, fluid_program());\n}\n";
  return success();
}
