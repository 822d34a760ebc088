//===- AlgorithmCache.cpp - cuDNN convolution algorithms, chosen once -----===//

#include "AlgorithmCache.h"

#include "fluid/runtime/Error.h"
#include "fluid/runtime/Tensor.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>
#include <vector>

#include <unistd.h>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

/// The first token of the file; a new format gets a new version.
/// v3: deterministic algorithms are preferred.
constexpr const char *kFormat = "fluid-conv-algorithm-cache-v3";

void warn(const std::string &message) {
  std::fprintf(stderr, "fluid: warning: %s\n", message.c_str());
}

/// At most 80 characters of `text`, each unprintable one as '?', for
/// quoting a damaged file in a warning.
std::string printable(const std::string &text) {
  std::string shown = text.substr(0, 80);
  for (char &c : shown)
    if (c < ' ' || c > '~')
      c = '?';
  return shown;
}

const char *passName(ConvPass pass) {
  switch (pass) {
  case ConvPass::Forward:
    return "fwd";
  case ConvPass::BackwardData:
    return "bwd-data";
  case ConvPass::BackwardFilter:
    return "bwd-filter";
  }
  return "?";
}

int algorithmCount(ConvPass pass) {
  switch (pass) {
  case ConvPass::Forward:
    return CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  case ConvPass::BackwardData:
    return CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  case ConvPass::BackwardFilter:
    return CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  }
  return 0;
}

const char *mathName(cudnnMathType_t math) {
  switch (math) {
  case CUDNN_DEFAULT_MATH:
    return "default";
  case CUDNN_TENSOR_OP_MATH:
    return "tensor_op";
  case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
    return "tensor_op_allow_conversion";
  case CUDNN_FMA_MATH:
    return "fma";
  }
  return "?";
}

/// The dtypes of convolutions (cuDNN's data type; 16-bit ones compute in
/// f32).
const char *dtypeName(int32_t dtype) {
  const char *name = fluid_dtype_name(dtype);
  return name ? name : "?";
}

const char *layoutName(cudnnTensorFormat_t layout) {
  return layout == CUDNN_TENSOR_NHWC ? "nhwc" : "nchw";
}

/// A line that does not parse: the message says what was expected.
struct CorruptLine {
  std::string message;
};

/// Reads one line of the file, token by token, in the fixed order in which
/// ConvAlgoKey::toString and save write it.
class LineReader {
public:
  explicit LineReader(const std::string &line) {
    std::istringstream in(line);
    for (std::string token; in >> token;)
      tokens_.push_back(token);
  }

  std::string token(const char *what) {
    if (next_ == tokens_.size())
      throw CorruptLine{std::string("missing ") + what};
    return tokens_[next_++];
  }

  void literal(const char *expected) {
    std::string t = token(expected);
    if (t != expected)
      throw CorruptLine{"expected '" + std::string(expected) + "', got '" +
                        printable(t) + "'"};
  }

  /// The value of the next token, which must be "<name>=<value>".
  std::string field(const char *name) {
    std::string t = token(name);
    std::string prefix = std::string(name) + "=";
    if (t.compare(0, prefix.size(), prefix) != 0)
      throw CorruptLine{"expected " + prefix + "..., got '" + printable(t) +
                        "'"};
    return t.substr(prefix.size());
  }

  int64_t intField(const char *name, int64_t min) {
    return parseInt(field(name), name, min);
  }

  void pairField(const char *name, int64_t min, int64_t &first,
                 int64_t &second) {
    std::string value = field(name);
    size_t comma = value.find(',');
    if (comma == std::string::npos)
      throw CorruptLine{std::string(name) + " needs two values, got '" + value +
                        "'"};
    first = parseInt(value.substr(0, comma), name, min);
    second = parseInt(value.substr(comma + 1), name, min);
  }

  template <typename Enum, typename NameOf>
  Enum enumField(const char *name, std::initializer_list<Enum> values,
                 NameOf nameOf) {
    return enumValue(name, field(name), values, nameOf);
  }

  /// A bare token naming one of `values`.
  template <typename Enum, typename NameOf>
  Enum enumToken(const char *what, std::initializer_list<Enum> values,
                 NameOf nameOf) {
    return enumValue(what, token(what), values, nameOf);
  }

  void end() {
    if (next_ != tokens_.size())
      throw CorruptLine{"unexpected '" + printable(tokens_[next_]) + "'"};
  }

  static int64_t parseInt(const std::string &text, const char *name,
                          int64_t min) {
    errno = 0;
    char *end = nullptr;
    long long value = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || value < min)
      throw CorruptLine{std::string(name) + " '" + printable(text) +
                        "' is not an integer >= " + std::to_string(min)};
    return value;
  }

private:
  template <typename Enum, typename NameOf>
  static Enum enumValue(const char *what, const std::string &value,
                        std::initializer_list<Enum> values, NameOf nameOf) {
    for (Enum e : values)
      if (value == nameOf(e))
        return e;
    throw CorruptLine{std::string("unknown ") + what + " '" + printable(value) +
                      "'"};
  }

  std::vector<std::string> tokens_;
  size_t next_ = 0;
};

const std::initializer_list<cudnnMathType_t> kMathTypes = {
    CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH,
    CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, CUDNN_FMA_MATH};

std::pair<ConvAlgoKey, ConvAlgoChoice> parseLine(const std::string &line) {
  LineReader in(line);
  ConvAlgoKey key;
  key.pass = in.enumToken<ConvPass>(
      "pass",
      {ConvPass::Forward, ConvPass::BackwardData, ConvPass::BackwardFilter},
      passName);
  key.batch = in.intField("n", 1);
  key.inChannels = in.intField("c", 1);
  key.inHeight = in.intField("h", 1);
  key.inWidth = in.intField("w", 1);
  key.outChannels = in.intField("k", 1);
  key.inChannelsPerGroup = in.intField("c/g", 1);
  key.kernelHeight = in.intField("r", 1);
  key.kernelWidth = in.intField("s", 1);
  in.pairField("stride", 1, key.strideHeight, key.strideWidth);
  in.pairField("pad", 0, key.padHeight, key.padWidth);
  in.pairField("dilation", 1, key.dilationHeight, key.dilationWidth);
  key.groups = in.intField("groups", 1);
  key.dtype = in.enumField<int32_t>(
      "dtype", {FLUID_F32, FLUID_F64, FLUID_F16, FLUID_BF16}, dtypeName);
  key.layout = in.enumField<cudnnTensorFormat_t>(
      "layout", {CUDNN_TENSOR_NCHW, CUDNN_TENSOR_NHWC}, layoutName);
  key.mathType = in.enumField<cudnnMathType_t>("math", kMathTypes, mathName);
  in.literal("->");
  ConvAlgoChoice choice;
  choice.algorithm = static_cast<int>(in.intField("algo", 0));
  if (choice.algorithm >= algorithmCount(key.pass))
    throw CorruptLine{"algo " + std::to_string(choice.algorithm) +
                      " is not a " + passName(key.pass) + " algorithm"};
  choice.mathType =
      in.enumField<cudnnMathType_t>("algo_math", kMathTypes, mathName);
  std::string limit = in.field("workspace_limit");
  if (limit != "none")
    choice.searchLimit =
        static_cast<size_t>(in.parseInt(limit, "workspace_limit", 0));
  in.end();
  return {key, choice};
}

} // namespace

std::string ConvAlgoKey::toString() const {
  std::ostringstream s;
  s << passName(pass) << " n=" << batch << " c=" << inChannels
    << " h=" << inHeight << " w=" << inWidth << " k=" << outChannels
    << " c/g=" << inChannelsPerGroup << " r=" << kernelHeight
    << " s=" << kernelWidth << " stride=" << strideHeight << "," << strideWidth
    << " pad=" << padHeight << "," << padWidth << " dilation=" << dilationHeight
    << "," << dilationWidth << " groups=" << groups
    << " dtype=" << dtypeName(dtype) << " layout=" << layoutName(layout)
    << " math=" << mathName(mathType);
  return s.str();
}

ConvAlgoCache::ConvAlgoCache(std::string path, std::string fingerprint)
    : path_(std::move(path)), fingerprint_(std::move(fingerprint)) {
  if (!path_.empty())
    load();
}

void ConvAlgoCache::load() {
  std::ifstream file(path_);
  if (!file) {
    // No file yet is the normal first run; one we cannot read is not.
    if (errno != ENOENT)
      warn("cannot read the convolution algorithm cache " + path_ + ": " +
           std::strerror(errno) + "; searching again");
    return;
  }
  std::string line;
  if (!std::getline(file, line))
    return; // an empty file holds no choices
  const std::string header = std::string(kFormat) + " " + fingerprint_;
  if (line != header) {
    warn("ignoring the convolution algorithm cache " + path_ +
         ": its header '" + printable(line) + "' is not '" + header +
         "' (another format, cuDNN version or GPU)");
    dirty_ = true; // rewrite it for this cuDNN and GPU
    return;
  }
  std::map<ConvAlgoKey, ConvAlgoChoice> loaded;
  for (int lineNumber = 2; std::getline(file, line); ++lineNumber) {
    if (line.empty())
      continue;
    try {
      auto [key, choice] = parseLine(line);
      if (!loaded.emplace(key, choice).second)
        throw CorruptLine{"the key appears twice"};
    } catch (const CorruptLine &corrupt) {
      warn("ignoring the corrupt convolution algorithm cache " + path_ +
           ": line " + std::to_string(lineNumber) + ": " + corrupt.message);
      dirty_ = true;
      return;
    }
  }
  if (file.bad()) {
    warn("cannot read the convolution algorithm cache " + path_ +
         "; searching again");
    return;
  }
  choices_ = std::move(loaded);
}

ConvAlgoChoice *ConvAlgoCache::lookup(const ConvAlgoKey &key) {
  auto it = choices_.find(key);
  return it == choices_.end() ? nullptr : &it->second;
}

ConvAlgoChoice &ConvAlgoCache::insert(const ConvAlgoKey &key,
                                      const ConvAlgoChoice &choice) {
  ++searches_;
  dirty_ = true;
  return choices_[key] = choice;
}

void ConvAlgoCache::erase(const ConvAlgoKey &key) {
  if (choices_.erase(key))
    dirty_ = true;
}

void ConvAlgoCache::save() {
  if (path_.empty() || !dirty_)
    return;
  // A name of our own next to the file, so that the rename is atomic and
  // two processes saving at once never mix their lines.
  const std::string temporary =
      path_ + ".tmp." + std::to_string(static_cast<long>(getpid()));
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << kFormat << " " << fingerprint_ << "\n";
    for (const auto &[key, choice] : choices_)
      file << key.toString() << " -> algo=" << choice.algorithm
           << " algo_math=" << mathName(choice.mathType) << " workspace_limit="
           << (choice.searchLimit ? std::to_string(*choice.searchLimit)
                                  : std::string("none"))
           << "\n";
    file.close();
    if (!file) {
      std::remove(temporary.c_str());
      throw Error(FLUID_ERROR_IO,
                  "cannot write the convolution algorithm cache " + temporary);
    }
  }
  if (std::rename(temporary.c_str(), path_.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw Error(FLUID_ERROR_IO,
                "cannot rename " + temporary + " to " + path_ + ": " + reason);
  }
  dirty_ = false;
}
