//===- MemoryReport.cpp - --fluid-memory-report ---------------------------===//
//
// What a bufferized training step needs in memory, from BufferLiveness:
// the bytes of temporaries (the arena of a memory plan, the peak with frees
// at last use, or all of them when nothing is freed), the lower bound no
// plan can beat, where the peak is and which buffers make it, and the
// persistent bytes apart. Only the training step (findEntryFunction) is
// reported.
//
// Launches are numbered as the emitted program numbers them (EmitProgram:
// every fluid_rt.launch but the initializer's "constant" ones, and every
// memref.copy, from 0 in program order), so a report's launch is the same
// launch as in the executable's --profile output. Every size of a
// temporary is rounded up to 256 bytes (the alignment of CUDA allocations
// and --fluid-plan-memory's default); persistent sizes are exact:
//   persistent_bytes = parameter_bytes (model parameters)
//                    + optimizer_state_bytes (fluid.optimizer_state)
//                    + result_bytes + constant_bytes,
// and argument_bytes (the batch the caller passes) is given apart.
//
//===----------------------------------------------------------------------===//

#include "fluid/Analysis/BufferLiveness.h"
#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/FluidRt/IR/FluidRtOps.h"
#include "fluid/Passes/Passes.h"
#include "fluid/Support/OutputFile.h"
#include "fluid/Support/Text.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mlir::fluid {
#define GEN_PASS_DEF_FLUIDMEMORYREPORT
#include "fluid/Passes/Passes.h.inc"
} // namespace mlir::fluid

using namespace mlir;
using namespace mlir::fluid;

namespace {

/// The allocation granularity every temporary is rounded up to.
constexpr int64_t kAlignment = 256;
constexpr double kMiB = 1024.0 * 1024.0;

int64_t addSaturating(int64_t a, int64_t b) {
  return llvm::checkedAdd(a, b).value_or(std::numeric_limits<int64_t>::max());
}

int64_t alignUp(int64_t bytes) {
  if (bytes > std::numeric_limits<int64_t>::max() - (kAlignment - 1))
    return std::numeric_limits<int64_t>::max();
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

/// The kernel name of a numbered launch as the program's profile names it.
std::string kernelOf(Operation *op) {
  if (auto launch = dyn_cast<fluid_rt::LaunchOp>(op))
    return launch.getKernel().str();
  if (isa<memref::CopyOp>(op))
    return "copy";
  return op->getName().getStringRef().str();
}

/// Whether the emitted program numbers `op` as a launch.
bool isNumberedLaunch(Operation *op) {
  if (auto launch = dyn_cast<fluid_rt::LaunchOp>(op))
    return launch.getKernel() != "constant";
  return isa<memref::CopyOp>(op);
}

/// Text from the input (names, locations) as valid UTF-8.
std::string validUTF8(StringRef text) {
  return llvm::json::isUTF8(text) ? text.str() : llvm::json::fixUTF8(text);
}

/// Text from the input for XML character data or attribute values:
/// markup escaped, and the characters XML 1.0 forbids (controls other than
/// tab and newline, U+FFFE, U+FFFF) replaced by U+FFFD.
std::string xmlText(StringRef input) {
  std::string text = validUTF8(input), out;
  constexpr StringLiteral kReplacement = "\xEF\xBF\xBD";
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = text[i];
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&apos;";
    else if (c < 0x20 && c != '\t' && c != '\n')
      out += kReplacement;
    else if (c == 0xEF && i + 2 < text.size() &&
             static_cast<unsigned char>(text[i + 1]) == 0xBF &&
             (static_cast<unsigned char>(text[i + 2]) == 0xBE ||
              static_cast<unsigned char>(text[i + 2]) == 0xBF)) {
      out += kReplacement;
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

/// Text from the input for a terminal: non-printable bytes as \XX.
std::string printableText(StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printEscapedString(text, os);
  return out;
}

/// 1234567 as "1.18 MiB", in the largest binary unit below the value.
std::string humanBytes(int64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  unsigned unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(units)) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0)
    return std::to_string(bytes) + " B";
  return llvm::formatv("{0:f2} {1}", value, units[unit]).str();
}

/// "1 launch", "2 launches".
std::string countText(size_t n, StringRef one, StringRef many) {
  return std::to_string(n) + " " + (n == 1 ? one : many).str();
}

/// A temporary live at the peak.
struct LiveBuffer {
  int64_t bytes;
  SmallVector<int64_t> shape;
  std::string dtype;
  std::string kernel;
  std::string location;
  int64_t firstLaunch, lastLaunch;
  /// The byte offset in the arena (-1: not a view of an arena).
  int64_t arenaOffset;
};

/// Everything the report says about one function.
struct Report {
  std::string function;
  StringRef mode;
  int64_t arenaBytes = 0;
  int64_t lowerBoundBytes = 0;
  int64_t peakLaunch = -1;
  std::string peakKernel, peakLocation;
  int64_t parameterBytes = 0, optimizerStateBytes = 0, resultBytes = 0,
          constantBytes = 0, argumentBytes = 0;
  int64_t workspaceBytes = -1;
  int64_t temporaries = 0;
  /// Launches of batch_norm_apply (--fluid-recompute-elementwise's
  /// recomputations) and the bytes they write.
  int64_t recomputedLaunches = 0, recomputedBytes = 0;
  /// Per launch: its kernel and the bytes of temporaries live at it.
  SmallVector<std::string> launchKernels;
  SmallVector<int64_t> liveBytes;
  SmallVector<LiveBuffer> largestLive;

  int64_t persistentBytes() const {
    return addSaturating(addSaturating(parameterBytes, optimizerStateBytes),
                         addSaturating(resultBytes, constantBytes));
  }
};

/// Fails with "run --fluid-bufferize first" when `func` still works on
/// tensors.
LogicalResult checkBufferized(func::FuncOp func) {
  auto notBufferized = [&](const Twine &why) {
    return func.emitError()
           << "@" << func.getSymName() << " is not bufferized (" << why
           << "): run --fluid-bufferize first";
  };
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (isa<TensorType>(type))
      return notBufferized("argument #" + Twine(i) + " is a tensor");
  for (auto [i, type] : llvm::enumerate(func.getResultTypes()))
    if (isa<TensorType>(type))
      return notBufferized("result #" + Twine(i) + " is a tensor");
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "--fluid-memory-report handles single-block "
                               "functions only";
  for (Operation &op : func.getBody().front()) {
    bool tensors =
        llvm::any_of(op.getOperandTypes(), llvm::IsaPred<TensorType>) ||
        llvm::any_of(op.getResultTypes(), llvm::IsaPred<TensorType>);
    if (isa_and_nonnull<FluidDialect>(op.getDialect()) || tensors)
      return notBufferized("it has '" + op.getName().getStringRef() + "'");
  }
  return success();
}

Report buildReport(ModuleOp module, func::FuncOp func, unsigned top) {
  BufferLiveness liveness(func);
  ArrayRef<BufferLiveness::Buffer> buffers = liveness.getBuffers();
  int64_t numOps = liveness.getNumOps();
  Report report;
  report.function = func.getSymName().str();

  // Launch numbers, and for every position the launches before it.
  SmallVector<int64_t> launchPositions, launchesBefore(numOps + 1, 0);
  for (int64_t position = 0; position < numOps; ++position) {
    Operation *op = liveness.getOp(position);
    launchesBefore[position + 1] = launchesBefore[position];
    if (!isNumberedLaunch(op))
      continue;
    launchPositions.push_back(position);
    report.launchKernels.push_back(kernelOf(op));
    if (auto launch = dyn_cast<fluid_rt::LaunchOp>(op);
        launch && launch.getKernel() == "batch_norm_apply") {
      ++report.recomputedLaunches;
      for (Value output : launch.getOutputs()) {
        auto type = cast<MemRefType>(output.getType());
        report.recomputedBytes += alignUp(
            type.getNumElements() *
            static_cast<int64_t>((type.getElementTypeBitWidth() + 7) / 8));
      }
    }
    ++launchesBefore[position + 1];
  }

  // Bytes live at every position: +bytes at first use, -bytes after last.
  SmallVector<int64_t> delta(numOps + 1, 0);
  bool planned = false, freed = false;
  int64_t allTemporaries = 0;
  for (const BufferLiveness::Buffer &buffer : buffers) {
    if (buffer.kind == BufferLiveness::Kind::Arena) {
      planned = true;
      report.arenaBytes = addSaturating(report.arenaBytes, buffer.bytes);
    }
    if (!buffer.isTemporary())
      continue;
    ++report.temporaries;
    int64_t bytes = alignUp(buffer.bytes);
    allTemporaries = addSaturating(allTemporaries, bytes);
    if (buffer.first < 0)
      continue;
    delta[buffer.first] = addSaturating(delta[buffer.first], bytes);
    delta[buffer.last + 1] -= bytes;
  }
  SmallVector<int64_t> live(numOps, 0);
  for (int64_t position = 0, total = 0; position < numOps; ++position) {
    total = addSaturating(total, delta[position]);
    live[position] = total;
  }
  report.lowerBoundBytes = liveness.peak(kAlignment).first;

  int64_t peakPosition = -1;
  for (auto [index, position] : llvm::enumerate(launchPositions)) {
    report.liveBytes.push_back(live[position]);
    if (live[position] > 0 &&
        (report.peakLaunch < 0 || live[position] > live[peakPosition])) {
      report.peakLaunch = static_cast<int64_t>(index);
      peakPosition = position;
    }
  }

  func.walk([&](memref::DeallocOp) { freed = true; });
  if (planned) {
    report.mode = "planned";
  } else if (freed) {
    report.mode = "freed";
    report.arenaBytes = report.lowerBoundBytes;
  } else {
    report.mode = "none";
    report.arenaBytes = allTemporaries;
  }

  if (peakPosition >= 0) {
    Operation *peakOp = liveness.getOp(peakPosition);
    report.peakKernel = kernelOf(peakOp);
    report.peakLocation = locationText(peakOp->getLoc());
    SmallVector<const BufferLiveness::Buffer *> atPeak;
    for (const BufferLiveness::Buffer &buffer : buffers)
      if (buffer.isTemporary() && buffer.isLive(peakPosition))
        atPeak.push_back(&buffer);
    // The largest first, then in order of definition.
    std::stable_sort(
        atPeak.begin(), atPeak.end(),
        [](const BufferLiveness::Buffer *a, const BufferLiveness::Buffer *b) {
          return a->bytes > b->bytes;
        });
    if (atPeak.size() > top)
      atPeak.resize(top);
    for (const BufferLiveness::Buffer *buffer : atPeak) {
      auto type = cast<MemRefType>(buffer->root.getType());
      std::string dtype;
      llvm::raw_string_ostream(dtype) << type.getElementType();
      Operation *producer = buffer->producer;
      report.largestLive.push_back(
          {buffer->bytes, llvm::to_vector(type.getShape()), dtype,
           kernelOf(producer), locationText(producer->getLoc()),
           launchesBefore[buffer->first], launchesBefore[buffer->last + 1] - 1,
           buffer->arena ? buffer->arenaOffset : -1});
    }
  }

  for (fluid::ParamOp param : module.getOps<fluid::ParamOp>()) {
    RankedTensorType type = param.getTensorType();
    int64_t bytes = llvm::checkedMul<int64_t>(
                        type.getNumElements(),
                        (type.getElementType().getIntOrFloatBitWidth() + 7) / 8)
                        .value_or(std::numeric_limits<int64_t>::max());
    int64_t &total = param->hasAttr(kOptimizerStateAttrName)
                         ? report.optimizerStateBytes
                         : report.parameterBytes;
    total = addSaturating(total, bytes);
  }
  report.resultBytes = liveness.persistentBytes(BufferLiveness::Kind::Result);
  report.constantBytes =
      liveness.persistentBytes(BufferLiveness::Kind::Constant);
  report.argumentBytes =
      liveness.persistentBytes(BufferLiveness::Kind::Argument);
  if (auto limit =
          module->getAttrOfType<IntegerAttr>(fluid_rt::kWorkspaceLimitAttrName))
    report.workspaceBytes = std::max<int64_t>(limit.getInt(), -1);
  return report;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

void printJson(const Report &report, raw_ostream &os) {
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("function", validUTF8(report.function));
    json.attribute("mode", report.mode);
    json.attribute("alignment", kAlignment);
    json.attribute("arena_bytes", report.arenaBytes);
    json.attribute("lower_bound_bytes", report.lowerBoundBytes);
    json.attribute("peak_launch", report.peakLaunch);
    json.attribute("peak_kernel", validUTF8(report.peakKernel));
    json.attribute("peak_location", validUTF8(report.peakLocation));
    json.attribute("persistent_bytes", report.persistentBytes());
    json.attribute("parameter_bytes", report.parameterBytes);
    json.attribute("optimizer_state_bytes", report.optimizerStateBytes);
    json.attribute("result_bytes", report.resultBytes);
    json.attribute("constant_bytes", report.constantBytes);
    json.attribute("argument_bytes", report.argumentBytes);
    json.attribute("workspace_bytes", report.workspaceBytes);
    json.attribute("temporaries", report.temporaries);
    json.attribute("launches",
                   static_cast<int64_t>(report.launchKernels.size()));
    json.attribute("recomputed_launches", report.recomputedLaunches);
    json.attribute("recomputed_bytes", report.recomputedBytes);
    json.attributeArray("largest_live", [&] {
      for (const LiveBuffer &buffer : report.largestLive) {
        json.object([&] {
          json.attribute("bytes", buffer.bytes);
          json.attributeArray("shape", [&] {
            for (int64_t size : buffer.shape)
              json.value(size);
          });
          json.attribute("dtype", buffer.dtype);
          json.attribute("kernel", validUTF8(buffer.kernel));
          json.attribute("location", validUTF8(buffer.location));
          json.attribute("first_launch", buffer.firstLaunch);
          json.attribute("last_launch", buffer.lastLaunch);
          json.attribute("arena_offset", buffer.arenaOffset);
        });
      }
    });
  });
  os << "\n";
}

/// Kernel names need no quoting: a launch's kernel is a fluid op's name
/// (the launch verifier builds that op).
void printCsv(const Report &report, raw_ostream &os) {
  os << "launch,kernel,live_bytes\n";
  for (auto [index, kernel] : llvm::enumerate(report.launchKernels))
    os << index << "," << kernel << "," << report.liveBytes[index] << "\n";
}

/// A step of 1, 2 or 5 times a power of ten that cuts `range` into at
/// most `ticks` intervals.
double niceStep(double range, int ticks) {
  if (range <= 0)
    return 1;
  double rough = range / ticks;
  double power = std::pow(10.0, std::floor(std::log10(rough)));
  for (double factor : {1.0, 2.0, 5.0, 10.0})
    if (factor * power >= rough)
      return factor * power;
  return 10 * power;
}

/// A coordinate with one decimal at most: "12", "12.5".
std::string svgNumber(double value) {
  std::string text = llvm::formatv("{0:f1}", value).str();
  if (StringRef(text).ends_with(".0"))
    text.resize(text.size() - 2);
  return text == "-0" ? "0" : text;
}

void printSvg(const Report &report, raw_ostream &os) {
  constexpr double width = 960, height = 480;
  constexpr double left = 90, right = 170, top = 56, bottom = 60;
  constexpr double plotWidth = width - left - right;
  constexpr double plotHeight = height - top - bottom;
  constexpr double plotRight = left + plotWidth, plotBottom = top + plotHeight;
  size_t launches = report.liveBytes.size();

  int64_t maxBytes = std::max(report.arenaBytes, report.lowerBoundBytes);
  for (int64_t bytes : report.liveBytes)
    maxBytes = std::max(maxBytes, bytes);
  // Some room above the highest line; 1 MiB when nothing is live.
  double yRange = maxBytes > 0 ? maxBytes / kMiB * 1.1 : 1;
  double yStep = niceStep(yRange, 5);
  double yMax = std::ceil(yRange / yStep) * yStep;
  double xMax = launches > 1 ? static_cast<double>(launches - 1) : 1;
  double xStep = std::max(1.0, niceStep(xMax, 8));
  auto x = [&](double launch) { return left + launch / xMax * plotWidth; };
  auto y = [&](double bytes) {
    return plotBottom - bytes / kMiB / yMax * plotHeight;
  };
  auto n = svgNumber;
  auto horizontal = [&](double atY, StringRef attributes) {
    os << "<line x1=\"" << n(left) << "\" y1=\"" << n(atY) << "\" x2=\""
       << n(plotRight) << "\" y2=\"" << n(atY) << "\" " << attributes << "/>\n";
  };

  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << n(width)
     << "\" height=\"" << n(height) << "\" viewBox=\"0 0 " << n(width) << " "
     << n(height) << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << n(width / 2) << "\" y=\"24\" text-anchor=\"middle\" "
     << "font-size=\"16\">Live temporaries of @" << xmlText(report.function)
     << " (" << report.mode << ", " << countText(launches, "launch", "launches")
     << ")</text>\n";

  // Grid, tick labels and axes.
  os << "<g stroke=\"#ddd\">\n";
  for (double tick = 0; tick <= yMax + yStep / 2; tick += yStep)
    horizontal(y(tick * kMiB), "");
  os << "</g>\n<g text-anchor=\"end\">\n";
  for (double tick = 0; tick <= yMax + yStep / 2; tick += yStep)
    os << "<text x=\"" << n(left - 6) << "\" y=\"" << n(y(tick * kMiB) + 4)
       << "\">" << llvm::format("%g", tick) << "</text>\n";
  os << "</g>\n<g text-anchor=\"middle\">\n";
  double lastLaunch = launches ? static_cast<double>(launches - 1) : 0;
  for (double tick = 0; tick <= lastLaunch + 1e-9; tick += xStep)
    os << "<text x=\"" << n(x(tick)) << "\" y=\"" << n(plotBottom + 18) << "\">"
       << static_cast<int64_t>(tick) << "</text>\n";
  os << "</g>\n"
     << "<path d=\"M" << n(left) << " " << n(top) << " V" << n(plotBottom)
     << " H" << n(plotRight) << "\" fill=\"none\" stroke=\"black\"/>\n"
     << "<text x=\"" << n(left + plotWidth / 2) << "\" y=\"" << n(height - 16)
     << "\" text-anchor=\"middle\">launch</text>\n"
     << "<text transform=\"translate(24 " << n(top + plotHeight / 2)
     << ") rotate(-90)\" text-anchor=\"middle\">live MiB</text>\n";

  // The arena and the lower bound, labelled in the right margin (pushed
  // apart when the lines are close), where no curve runs.
  StringRef arenaLabel = report.mode == "planned" ? "arena"
                         : report.mode == "freed" ? "peak with frees"
                                                  : "all temporaries";
  double arenaY = y(report.arenaBytes), boundY = y(report.lowerBoundBytes);
  double arenaTextY = arenaY + 4, boundTextY = boundY + 4;
  if (std::abs(arenaY - boundY) < 14) {
    arenaTextY = std::min(arenaY, boundY) - 3;
    boundTextY = std::max(arenaY, boundY) + 11;
  }
  horizontal(arenaY, "stroke=\"#c00\" stroke-dasharray=\"6 4\"");
  horizontal(boundY, "stroke=\"#06c\" stroke-dasharray=\"2 3\"");
  os << "<text x=\"" << n(plotRight + 6) << "\" y=\"" << n(arenaTextY)
     << "\" fill=\"#c00\">" << arenaLabel << " "
     << humanBytes(report.arenaBytes) << "</text>\n"
     << "<text x=\"" << n(plotRight + 6) << "\" y=\"" << n(boundTextY)
     << "\" fill=\"#06c\">lower bound " << humanBytes(report.lowerBoundBytes)
     << "</text>\n";

  // The curve, and its peak: the label goes above the dot, where the
  // curve never is (nothing is higher than the peak), on a white box that
  // hides the lines behind it.
  os << "<polyline fill=\"none\" stroke=\"black\" stroke-width=\"1.5\" "
        "points=\"";
  for (auto [index, bytes] : llvm::enumerate(report.liveBytes))
    os << (index ? " " : "") << n(x(index)) << "," << n(y(bytes));
  os << "\"/>\n";
  if (report.peakLaunch >= 0) {
    int64_t bytes = report.liveBytes[report.peakLaunch];
    std::string label = "peak " + humanBytes(bytes) + " at launch " +
                        std::to_string(report.peakLaunch) + " (" +
                        validUTF8(report.peakKernel) + ")";
    // About 0.6 em per character of a sans-serif font at 12 px.
    double labelWidth = 6.6 * llvm::count_if(label, [](char c) {
                          return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
                        });
    bool leftHalf = report.peakLaunch <= xMax / 2;
    double px = x(report.peakLaunch), py = y(bytes);
    double labelX = leftHalf ? px - 4 : px + 4 - labelWidth;
    os << "<circle cx=\"" << n(px) << "\" cy=\"" << n(py)
       << "\" r=\"4\" fill=\"#c00\"/>\n"
       << "<rect x=\"" << n(labelX - 2) << "\" y=\"" << n(py - 24)
       << "\" width=\"" << n(labelWidth + 4) << "\" height=\"16\" "
       << "fill=\"white\" fill-opacity=\"0.85\"/>\n"
       << "<text x=\"" << n(labelX) << "\" y=\"" << n(py - 12) << "\">"
       << xmlText(label) << "</text>\n";
  }
  os << "</svg>\n";
}

void printTable(const Report &report, raw_ostream &os) {
  auto row = [&](StringRef label, int64_t bytes) {
    os << llvm::formatv("  {0,-22} {1,18} bytes  {2,12}\n", label,
                        withThousands(bytes), humanBytes(bytes));
  };
  os << "memory of @" << printableText(report.function) << " (mode "
     << report.mode << ", "
     << countText(report.launchKernels.size(), "launch", "launches") << ", "
     << countText(report.temporaries, "temporary", "temporaries") << ")\n";
  row(report.mode == "planned" ? "arena"
      : report.mode == "freed" ? "peak with frees"
                               : "all temporaries",
      report.arenaBytes);
  row("lower bound", report.lowerBoundBytes);
  if (report.recomputedLaunches)
    row("recomputed (" + std::to_string(report.recomputedLaunches) + ")",
        report.recomputedBytes);
  row("persistent", report.persistentBytes());
  row("  parameters", report.parameterBytes);
  row("  optimizer state", report.optimizerStateBytes);
  row("  results", report.resultBytes);
  row("  constants", report.constantBytes);
  row("arguments", report.argumentBytes);
  if (report.workspaceBytes < 0)
    os << llvm::formatv("  {0,-22} {1,18}\n", "workspace limit", "none");
  else
    row("workspace limit", report.workspaceBytes);
  if (report.peakLaunch < 0) {
    os << "no temporary is live at any launch\n";
    return;
  }
  os << "peak at launch " << report.peakLaunch << " ("
     << printableText(report.peakKernel);
  if (!report.peakLocation.empty())
    os << ", " << printableText(report.peakLocation);
  os << "); the largest temporaries live there:\n";
  os << llvm::formatv("  {0,14}  {1,-24} {2,-20} {3,-13} {4}\n", "bytes",
                      "type", "kernel", "launches", "location");
  for (const LiveBuffer &buffer : report.largestLive) {
    std::string type;
    for (int64_t size : buffer.shape)
      type += std::to_string(size) + "x";
    type += buffer.dtype;
    os << llvm::formatv(
        "  {0,14}  {1,-24} {2,-20} {3,-13} {4}\n", withThousands(buffer.bytes),
        type, printableText(buffer.kernel),
        llvm::formatv("{0}..{1}", buffer.firstLaunch, buffer.lastLaunch).str(),
        printableText(buffer.location));
  }
}

/// The running tool's name, for "TOOL: error: cannot write ...".
std::string toolName() {
  std::string executable = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  StringRef name = llvm::sys::path::filename(executable);
  return name.empty() ? "fluid-opt" : name.str();
}

struct FluidMemoryReportPass
    : public mlir::fluid::impl::FluidMemoryReportBase<FluidMemoryReportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string why;
    FailureOr<func::FuncOp> func = findEntryFunction(module, "", why);
    if (failed(func)) {
      module.emitError() << "--fluid-memory-report: " << why;
      return signalPassFailure();
    }
    if (failed(checkBufferized(*func)))
      return signalPassFailure();
    Report report = buildReport(module, *func, top);
    markAllAnalysesPreserved();

    if (file.empty()) {
      printTable(report, llvm::outs());
      llvm::outs().flush();
      return;
    }
    std::string tool = toolName();
    using Printer = void (*)(const Report &, raw_ostream &);
    for (const auto &format :
         {std::pair<StringRef, Printer>{".json", printJson},
          {".csv", printCsv},
          {".svg", printSvg}}) {
      Printer print = format.second;
      if (failed(writeOutputFile(file + format.first.str(), tool,
                                 [&](raw_ostream &os) { print(report, os); })))
        return signalPassFailure();
    }
  }
};

} // namespace
