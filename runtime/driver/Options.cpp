//===- Options.cpp - The training executable's command line ---------------===//
//
// One table describes every flag: its name, its value, its help line, its
// default and how it is stored. Parsing and --help both read it, so the
// usage text cannot drift from what is accepted.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "Text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

int64_t parseInteger(const std::string &flag, const std::string &text) {
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  long long value = std::strtoll(begin, &end, 10);
  if (text.empty() || end == begin || *end != '\0' ||
      !(text[0] == '-' || (text[0] >= '0' && text[0] <= '9')))
    throw UsageError(flag + " expects an integer, got '" + text + "'");
  if (errno == ERANGE)
    throw UsageError(flag + " " + text + " is out of range");
  return value;
}

/// An integer of at least `minimum` (0 or 1).
int64_t parseCount(const std::string &flag, const std::string &text,
                   int64_t minimum) {
  int64_t value = parseInteger(flag, text);
  if (value < minimum)
    throw UsageError(minimum == 0 ? flag + " must not be negative"
                                  : flag + " must be at least " +
                                        std::to_string(minimum));
  return value;
}

uint64_t parseUnsigned(const std::string &flag, const std::string &text) {
  if (!text.empty() && text[0] == '-') {
    parseInteger(flag, text); // reports a non-number first
    throw UsageError(flag + " must not be negative");
  }
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(begin, &end, 10);
  if (text.empty() || end == begin || *end != '\0' ||
      !(text[0] >= '0' && text[0] <= '9'))
    throw UsageError(flag + " expects an integer, got '" + text + "'");
  if (errno == ERANGE)
    throw UsageError(flag + " " + text + " is out of range");
  return value;
}

double parseNumber(const std::string &flag, const std::string &text) {
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  double value = std::strtod(begin, &end);
  if (text.empty() || end == begin || *end != '\0' ||
      std::isspace(static_cast<unsigned char>(text[0])))
    throw UsageError(flag + " expects a number, got '" + text + "'");
  if (!std::isfinite(value))
    throw UsageError(flag + " must be a finite number, got '" + text + "'");
  return value;
}

/// synthetic, fashion-mnist, IMAGES,LABELS (and none when `allowNone`).
std::string parseDataSpec(const std::string &flag, const std::string &text,
                          bool allowNone) {
  if (text == "synthetic" || text == "fashion-mnist" ||
      (allowNone && text == "none"))
    return text;
  size_t comma = text.find(',');
  if (comma != std::string::npos && comma > 0 && comma + 1 < text.size())
    return text;
  throw UsageError(flag + " '" + text + "' must be fashion-mnist, synthetic" +
                   (allowNone ? ", none" : "") + " or IMAGES,LABELS");
}

int64_t defaultPrefetchThreads() {
  unsigned hardware = std::thread::hardware_concurrency();
  return std::clamp<int64_t>(hardware, 1, 8);
}

//===----------------------------------------------------------------------===//
// The flags
//===----------------------------------------------------------------------===//

struct Flag {
  const char *name;      // without the leading "--"
  const char *value;     // e.g. "N"; nullptr for a switch
  const char *help;      // one line
  std::string byDefault; // "" for none
  /// Stores the value (the empty string for a switch); `flag` is "--name".
  std::function<void(Options &, const std::string &flag,
                     const std::string &value)>
      set;
};

const std::vector<Flag> &flags() {
  static const std::vector<Flag> table = [] {
    Options defaults;
    std::vector<Flag> f;
    auto integer = [](int64_t Options::*field, int64_t minimum) {
      return [field, minimum](Options &o, const std::string &flag,
                              const std::string &value) {
        o.*field = parseCount(flag, value, minimum);
      };
    };
    f.push_back({"steps", "N", "train N steps (0: until --epochs are done)",
                 std::to_string(defaults.steps), integer(&Options::steps, 0)});
    f.push_back({"epochs", "N", "train until N epochs are complete",
                 std::to_string(defaults.epochs),
                 integer(&Options::epochs, 1)});
    f.push_back(
        {"data", "SPEC",
         "training data: synthetic, fashion-mnist (the Debian "
         "package's files) or IMAGES,LABELS (IDX files, raw or .gz)",
         defaults.data,
         [](Options &o, const std::string &flag, const std::string &value) {
           o.data = parseDataSpec(flag, value, false);
         }});
    f.push_back(
        {"test-data", "SPEC",
         "evaluation data after each epoch, as --data, or none",
         "fashion-mnist's test split after --data fashion-mnist, "
         "else synthetic (seed + 1)",
         [](Options &o, const std::string &flag, const std::string &value) {
           o.testData = parseDataSpec(flag, value, true);
         }});
    f.push_back(
        {"lr", "X",
         "base learning rate (the schedule scales it); replaces the "
         "compiled or loaded one",
         "the compiled one, or the checkpoint's",
         [](Options &o, const std::string &flag, const std::string &value) {
           double lr = parseNumber(flag, value);
           if (lr < 0)
             throw UsageError(flag + " must not be negative");
           o.learningRate = lr;
         }});
    f.push_back({"log-every", "N", "print the mean loss every N steps",
                 std::to_string(defaults.logEvery),
                 integer(&Options::logEvery, 1)});
    f.push_back({"save", "FILE",
                 "write a safetensors checkpoint after every epoch and at "
                 "the end",
                 "", [](Options &o, const std::string &, const std::string &v) {
                   o.savePath = v;
                 }});
    f.push_back({"load", "FILE",
                 "resume from a safetensors checkpoint (fluid-train's too)", "",
                 [](Options &o, const std::string &, const std::string &v) {
                   o.loadPath = v;
                 }});
    f.push_back(
        {"batch", "N",
         "check that the program was compiled for batch N (the "
         "batch is fixed at compile time)",
         "", [](Options &o, const std::string &flag, const std::string &value) {
           o.batch = parseCount(flag, value, 1);
         }});
    f.push_back(
        {"seed", "N",
         "seed of the initializers, the shuffling and synthetic data",
         std::to_string(defaults.seed),
         [](Options &o, const std::string &flag, const std::string &value) {
           o.seed = parseUnsigned(flag, value);
         }});
    f.push_back(
        {"mean", "X", "normalization: (pixel / 255 - mean) / std",
         format("%.4f", defaults.mean),
         [](Options &o, const std::string &flag, const std::string &value) {
           o.mean = parseNumber(flag, value);
         }});
    f.push_back(
        {"std", "X", "see --mean (positive)", format("%.4f", defaults.std),
         [](Options &o, const std::string &flag, const std::string &value) {
           o.std = parseNumber(flag, value);
           if (o.std <= 0)
             throw UsageError(flag + " must be positive");
         }});
    f.push_back({"synthetic-size", "N", "examples in a synthetic dataset",
                 std::to_string(defaults.syntheticSize),
                 integer(&Options::syntheticSize, 1)});
    f.push_back({"no-graph", nullptr,
                 "cuda: run every step as separate launches (no CUDA graph)",
                 "", [](Options &o, const std::string &, const std::string &) {
                   o.graph = false;
                 }});
    f.push_back({"no-tf32", nullptr,
                 "cuda: full f32 precision in convolutions and GEMMs (TF32 "
                 "tensor cores are used by default)",
                 "", [](Options &o, const std::string &, const std::string &) {
                   o.tf32 = false;
                 }});
    f.push_back(
        {"device", "N", "cuda: the CUDA device ordinal",
         std::to_string(defaults.device),
         [](Options &o, const std::string &flag, const std::string &value) {
           int64_t device = parseCount(flag, value, 0);
           if (device > INT32_MAX)
             throw UsageError(flag + " " + value + " is out of range");
           o.device = static_cast<int32_t>(device);
         }});
    std::string cache = defaultAlgorithmCachePath();
    f.push_back(
        {"algorithm-cache", "FILE",
         "cuda: where convolution algorithm choices persist between "
         "runs (none: in memory only)",
         cache.empty() ? "none ($HOME is not set)" : cache,
         [](Options &o, const std::string &flag, const std::string &value) {
           if (value.empty())
             throw UsageError(flag + " needs a file name or none");
           o.algorithmCache = value;
         }});
    f.push_back({"warmup", "N",
                 "steps before timing starts and the CUDA graph is captured",
                 std::to_string(defaults.warmup),
                 integer(&Options::warmup, 0)});
    f.push_back({"profile", "N",
                 "after training, run N more training steps without a graph "
                 "and print the time per op class (these steps train, but "
                 "come after the last --save)",
                 "0 (off)", integer(&Options::profileSteps, 0)});
    f.push_back({"stats-json", "FILE",
                 "write throughput, memory and profile figures as JSON", "",
                 [](Options &o, const std::string &, const std::string &v) {
                   o.statsJson = v;
                 }});
    f.push_back({"prefetch-threads", "N",
                 "host threads that prepare each batch",
                 std::to_string(defaultPrefetchThreads()) +
                     " (min(8, hardware threads))",
                 integer(&Options::prefetchThreads, 1)});
    f.push_back({"info", nullptr,
                 "describe the program (parameters, buffers, launches) and "
                 "exit",
                 "", [](Options &o, const std::string &, const std::string &) {
                   o.info = true;
                 }});
    f.push_back({"help", nullptr, "print this help and exit", "",
                 [](Options &o, const std::string &, const std::string &) {
                   o.help = true;
                 }});
    return f;
  }();
  return table;
}

const Flag *findFlag(const std::string &name) {
  for (const Flag &flag : flags())
    if (name == flag.name)
      return &flag;
  return nullptr;
}

} // namespace

std::string Options::effectiveTestData() const {
  if (!testData.empty())
    return testData;
  return data == "fashion-mnist" ? "fashion-mnist" : "synthetic";
}

std::string driver::defaultAlgorithmCachePath() {
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/')
    return std::string(xdg) + "/fluid/conv-algorithms.txt";
  const char *home = std::getenv("HOME");
  if (home && home[0] == '/')
    return std::string(home) + "/.cache/fluid/conv-algorithms.txt";
  return "";
}

Options driver::parseOptions(int argc, char **argv) {
  Options options;
  options.prefetchThreads = defaultPrefetchThreads();
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i] ? argv[i] : "";
    if (argument == "-h")
      argument = "--help";
    if (argument.size() < 3 || argument.compare(0, 2, "--") != 0)
      throw UsageError("unexpected argument '" + argument +
                       "' (flags start with --)");
    size_t equals = argument.find('=');
    std::string name = argument.substr(
        2, equals == std::string::npos ? std::string::npos : equals - 2);
    std::string flagText = "--" + name;
    const Flag *flag = findFlag(name);
    if (!flag)
      throw UsageError("unknown flag " + flagText);
    std::string value;
    if (!flag->value) {
      if (equals != std::string::npos)
        throw UsageError(flagText + " takes no value");
    } else if (equals != std::string::npos) {
      value = argument.substr(equals + 1);
    } else {
      // A value never starts with "--": "--load --steps 3" lacks one.
      if (i + 1 >= argc || !argv[i + 1] ||
          std::string(argv[i + 1]).compare(0, 2, "--") == 0)
        throw UsageError(flagText + " needs a value (" + flag->value + ")");
      value = argv[++i];
    }
    flag->set(options, flagText, value);
    if (options.help)
      return options;
  }
  return options;
}

std::string driver::usageText(const std::string &program) {
  constexpr size_t kIndent = 26, kWidth = 79;
  std::string text =
      "usage: " + program +
      " [flags]\n\n"
      "Trains the compiled program, printing the mean loss every --log-every\n"
      "steps and the test accuracy after every epoch. Flags take their value\n"
      "as --flag VALUE or --flag=VALUE. Flags marked cuda: are accepted and\n"
      "ignored by a program compiled for the cpu backend.\n\n";
  for (const Flag &flag : flags()) {
    std::string line = std::string("  --") + flag.name;
    if (flag.value)
      line += std::string(" ") + flag.value;
    if (line.size() + 1 > kIndent) {
      text += line + "\n";
      line.clear();
    }
    line.resize(kIndent, ' ');
    std::string words = flag.help;
    if (!flag.byDefault.empty())
      words += " (default: " + flag.byDefault + ")";
    // Fills lines of at most kWidth columns, word by word.
    size_t lineStart = line.size();
    size_t position = 0;
    while (position < words.size()) {
      size_t space = words.find(' ', position);
      std::string word =
          words.substr(position, space == std::string::npos ? std::string::npos
                                                            : space - position);
      position = space == std::string::npos ? words.size() : space + 1;
      if (line.size() > lineStart && line.size() + 1 + word.size() > kWidth) {
        text += line + "\n";
        line.assign(kIndent, ' ');
        lineStart = kIndent;
      }
      if (line.size() > lineStart)
        line += ' ';
      line += word;
    }
    text += line + "\n";
  }
  return text;
}
