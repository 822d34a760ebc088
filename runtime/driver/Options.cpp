//===- Options.cpp - The training executable's command line ---------------===//
//
// One table describes every flag: its name, its value, its help line, its
// default and how it is stored. Parsing and --help both read it, so the
// usage text cannot drift from what is accepted.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "InitFrom.h"
#include "Text.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <sys/stat.h>
#include <thread>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

/// Throws a UsageError when `problem` is one.
void check(const std::string &problem) {
  if (!problem.empty())
    throw UsageError(problem);
}

double parseNumber(const std::string &flag, const std::string &text) {
  double value = 0;
  check(driver::parseNumber(flag, text, value));
  return value;
}

/// synthetic, fashion-mnist, IMAGES,LABELS, an image folder or a list file
/// (and none when `allowNone`).
std::string parseDataSpec(const std::string &flag, const std::string &text,
                          bool allowNone) {
  DataKind kind = dataKind(text);
  if (kind != DataKind::Invalid && (allowNone || kind != DataKind::None))
    return text;
  throw UsageError(flag + " '" + text + "' must be fashion-mnist, synthetic" +
                   (allowNone ? ", none" : "") +
                   " or IMAGES,LABELS, or name an image folder or a list file");
}

/// A value of --mean or --std: one number or several, separated by commas,
/// each checked by `parse` (the shared flags' rule for one number).
std::vector<double> parseValues(
    const std::string &text,
    const std::function<std::string(const std::string &, double &)> &parse) {
  std::vector<double> values;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    double value = 0;
    check(
        parse(text.substr(start, comma == std::string::npos ? std::string::npos
                                                            : comma - start),
              value));
    values.push_back(value);
    if (comma == std::string::npos)
      return values;
    start = comma + 1;
  }
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
  std::string help;      // one line
  std::string byDefault; // "" for none
  /// Stores the value (the empty string for a switch); `flag` is "--name".
  /// None for --help, which parseOptions answers itself.
  std::function<void(Options &, const std::string &flag,
                     const std::string &value)>
      set;
};

const std::vector<Flag> &flags() {
  static const std::vector<Flag> table = [] {
    Options defaults;
    std::vector<Flag> f;
    auto count = [&f](const CountFlag &flag, auto store) {
      f.push_back({flag.name, "N", countHelp(flag), countDefault(flag),
                   [&flag, store](Options &o, const std::string &,
                                  const std::string &value) {
                     int64_t parsed = 0;
                     check(parseCount(flag, value, parsed));
                     store(o, parsed);
                   }});
    };
    auto into = [](int64_t Options::*field) {
      return [field](Options &o, int64_t value) { o.*field = value; };
    };
    count(kStepsFlag, into(&Options::steps));
    count(kEpochsFlag, into(&Options::epochs));
    f.push_back(
        {"data", "SPEC",
         "training data: synthetic, fashion-mnist (the Debian package's "
         "files), IMAGES,LABELS (IDX files, raw or .gz, or NumPy files when "
         "IMAGES ends in .npy: u8 or f32 images [N, C, H, W], used as they "
         "are (f32 as normalized), and int64 labels [N]), a folder of class "
         "folders of JPEG and PNG images (as torchvision's ImageFolder) or a "
         "list file of 'PATH LABEL' lines; images are decoded as PIL does, "
         "randomly cropped and flipped for training, resized and "
         "center-cropped for testing",
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
    count(kLogEveryFlag, into(&Options::logEvery));
    f.push_back({"save", "FILE",
                 "write a safetensors checkpoint after every epoch and at "
                 "the end",
                 "", [](Options &o, const std::string &, const std::string &v) {
                   o.savePath = v;
                 }});
    f.push_back({"load", "FILE", kLoadHelp, "",
                 [](Options &o, const std::string &, const std::string &v) {
                   o.loadPath = v;
                 }});
    f.push_back({"init-from", "FILE", kInitFromHelp, "",
                 [](Options &o, const std::string &, const std::string &v) {
                   o.initFromPath = v;
                 }});
    count(kBatchFlag, [](Options &o, int64_t value) { o.batch = value; });
    f.push_back({"seed", "N",
                 "seed of the initializers, the shuffling, synthetic data and "
                 "the random crops and flips of image files; N from 0 to "
                 "2^64 - 1",
                 std::to_string(kDefaultSeed),
                 [](Options &o, const std::string &, const std::string &v) {
                   check(parseSeed(v, o.seed));
                 }});
    f.push_back(
        {"mean", "X",
         std::string(kMeanHelp) +
             ", or one per channel (X,X,X); image folders, list files and "
             ".npy files of 3 channels default to ImageNet's mean "
             "0.485,0.456,0.406 and std 0.229,0.224,0.225",
         numberDefault(kDefaultMean),
         [](Options &o, const std::string &flag, const std::string &v) {
           o.mean =
               parseValues(v, [&flag](const std::string &text, double &value) {
                 return driver::parseNumber(flag, text, value);
               });
         }});
    f.push_back({"std", "X", "see --mean; positive numbers",
                 numberDefault(kDefaultStd),
                 [](Options &o, const std::string &, const std::string &v) {
                   o.std = parseValues(v, parseStd);
                 }});
    f.push_back({"skip-bad-images", nullptr,
                 "replace an image file that cannot be decoded (corrupt, "
                 "truncated, not JPEG or PNG) by the next one of its dataset, "
                 "with a warning that counts them, instead of stopping",
                 "", [](Options &o, const std::string &, const std::string &) {
                   o.skipBadImages = true;
                 }});
    count(kSyntheticSizeFlag, into(&Options::syntheticSize));
    f.push_back({"no-graph", nullptr,
                 "cuda: run every step as separate launches (no CUDA graph)",
                 "", [](Options &o, const std::string &, const std::string &) {
                   o.graph = false;
                 }});
    f.push_back({"no-tf32", nullptr,
                 "cuda: full f32 precision in convolutions and GEMMs (the "
                 "default of a program compiled with --precision fp32; "
                 "otherwise TF32 tensor cores are used)",
                 "", [](Options &o, const std::string &, const std::string &) {
                   o.tf32 = false;
                   o.tf32Given = true;
                 }});
    f.push_back({"tf32", nullptr,
                 "cuda: TF32 tensor cores in f32 convolutions and GEMMs (the "
                 "default unless the program was compiled with --precision "
                 "fp32)",
                 "", [](Options &o, const std::string &, const std::string &) {
                   o.tf32 = true;
                   o.tf32Given = true;
                 }});
    count(kDeviceFlag, [](Options &o, int64_t value) {
      o.device = static_cast<int32_t>(value);
    });
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
    count(kWarmupFlag, into(&Options::warmup));
    count(kProfileFlag, into(&Options::profileSteps));
    f.push_back({"stats-json", "FILE",
                 "write throughput, memory and profile figures as JSON", "",
                 [](Options &o, const std::string &, const std::string &v) {
                   o.statsJson = v;
                 }});
    count(kPrefetchThreadsFlag, into(&Options::prefetchThreads));
    f.back().byDefault = std::to_string(defaultPrefetchThreads()) + " (" +
                         kPrefetchThreadsFlag.defaultText + ")";
    f.push_back({"info", nullptr,
                 "describe the program (parameters, buffers, launches) and "
                 "exit",
                 "", [](Options &o, const std::string &, const std::string &) {
                   o.info = true;
                 }});
    f.push_back({"help", nullptr, "print this help and exit", "", nullptr});
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

DataKind driver::dataKind(const std::string &spec) {
  if (spec == "synthetic")
    return DataKind::Synthetic;
  if (spec == "fashion-mnist")
    return DataKind::FashionMnist;
  if (spec == "none")
    return DataKind::None;
  struct stat status;
  if (!spec.empty() && stat(spec.c_str(), &status) == 0)
    return S_ISDIR(status.st_mode) ? DataKind::ImageFolder
                                   : DataKind::ImageList;
  size_t comma = spec.find(',');
  if (comma == std::string::npos || comma == 0 || comma + 1 == spec.size())
    return DataKind::Invalid;
  const std::string npy = ".npy";
  bool isNpy = comma >= npy.size() &&
               spec.compare(comma - npy.size(), npy.size(), npy) == 0;
  return isNpy ? DataKind::NpyFiles : DataKind::IdxFiles;
}

void Options::normalization(int64_t channels, std::vector<double> &meanOut,
                            std::vector<double> &stdOut) const {
  DataKind kind = dataKind(data);
  bool imageNet = channels == 3 &&
                  (kind == DataKind::ImageFolder ||
                   kind == DataKind::ImageList || kind == DataKind::NpyFiles);
  auto resolve = [&](const char *flag, const std::vector<double> &given,
                     const double *imageNetValues, double fallback) {
    std::vector<double> values = given;
    if (values.empty() && imageNet)
      values.assign(imageNetValues, imageNetValues + 3);
    if (values.empty())
      values.push_back(fallback);
    if (values.size() == 1)
      values.assign(static_cast<size_t>(channels), values[0]);
    if (static_cast<int64_t>(values.size()) != channels)
      throw UsageError(format("%s has %zu values but the program's images have "
                              "%lld channels; give 1 or %lld",
                              flag, given.size(),
                              static_cast<long long>(channels),
                              static_cast<long long>(channels)));
    return values;
  };
  meanOut = resolve("--mean", mean, kImageNetMean, kDefaultMean);
  stdOut = resolve("--std", std, kImageNetStd, kDefaultStd);
}

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

namespace {

/// How many arguments give the flag `name` (a value never starts with
/// "--", so every such argument is a flag).
int64_t occurrences(int argc, char **argv, const std::string &name) {
  int64_t count = 0;
  for (int i = 1; i < argc; ++i) {
    std::string argument = argv[i] ? argv[i] : "";
    count += argument == "--" + name ||
             argument.compare(0, name.size() + 3, "--" + name + "=") == 0;
  }
  return count;
}

} // namespace

Options driver::parseOptions(int argc, char **argv) {
  Options options;
  options.prefetchThreads = defaultPrefetchThreads();
  // The checks come in fluid-train's order (LLVM's parser first takes
  // every flag, then the values are checked): the syntax of each argument
  // and repeated flags, then --steps with --epochs, then each value.
  std::vector<std::pair<const Flag *, std::string>> given;
  auto wasGiven = [&given](const char *name) {
    return std::any_of(given.begin(), given.end(), [name](const auto &entry) {
      return std::strcmp(entry.first->name, name) == 0;
    });
  };
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
    // No flag is meant to repeat: a second value would silently win.
    if (wasGiven(flag->name))
      throw UsageError(repeatedFlag(flagText, occurrences(argc, argv, name)));
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
    if (!flag->set) { // --help, whatever else is given
      options.help = true;
      return options;
    }
    given.emplace_back(flag, value);
  }
  if (wasGiven(kStepsFlag.name) && wasGiven(kEpochsFlag.name))
    throw UsageError(stepsAndEpochs());
  if (wasGiven("init-from") && wasGiven("load"))
    throw UsageError(initFromAndLoad());
  for (const auto &[flag, value] : given)
    flag->set(options, std::string("--") + flag->name, value);
  check(checkSyntheticSize(options.syntheticSize));
  return options;
}

std::string driver::usageText(const std::string &program) {
  constexpr size_t kIndent = 26, kWidth = 79;
  std::string text =
      "usage: " + program +
      " [flags]\n\n"
      "Trains the compiled program, printing the mean loss every --log-every\n"
      "steps and the test accuracy after every epoch. Flags take their value\n"
      "as --flag VALUE or --flag=VALUE. Each flag is given at most once, and\n"
      "--steps and --epochs exclude each other. A count N is a decimal\n"
      "integer within the bounds its flag states. fluid-train takes the flags\n"
      "it shares with this program by the same rules. Flags marked cuda: are\n"
      "accepted and ignored by a program compiled for the cpu backend.\n\n";
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
  text += "\nEnvironment:\n"
          "  FLUID_POISON_MEMORY=1   fill every buffer and temporary of the\n"
          "                          program with 0xFF bytes (NaN, -1) "
          "instead of\n"
          "                          zeros, so that a read before a write "
          "shows\n";
  return text;
}
