//===- Models.cpp - The built-in model zoo --------------------------------===//
//
// Each model is written the way its PyTorch definition reads, one layer per
// module, with the module's state-dict name. The references:
// - torchvision.models.resnet (v1.5: a bottleneck's stride is on its 3x3
//   convolution); ResNet.__init__ initializes every nn.Conv2d with
//   kaiming_normal(fan_out, relu), norms to ones and zeros, and leaves the
//   classifier with nn.Linear's defaults (zero_init_residual is off).
// - timm.models.resnet.ResNet with Bottleneck, cardinality 32, base width 4
//   and attn_layer='se' (timm.layers.SEModule); init_weights applies
//   kaiming_normal(fan_out, relu) to every nn.Conv2d, the squeeze-excite
//   ones included (their biases keep nn.Conv2d's default), and, with
//   zero_init_last (on by default), zeros the last norm of each block.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "ModelBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"

#include <array>
#include <string>

using namespace mlir;
using namespace mlir::fluid;
using namespace mlir::fluid::models;

//===----------------------------------------------------------------------===//
// MLP and LeNet-5
//===----------------------------------------------------------------------===//

static Value mlp(ModelBuilder &b, Value images, int64_t classes) {
  Value x = b.flatten("flatten", images);
  x = b.relu("relu1", b.linear("fc1", x, 256));
  x = b.relu("relu2", b.linear("fc2", x, 128));
  return b.linear("fc3", x, classes);
}

/// LeNet-5 with ReLU and max pooling; the first convolution is padded so
/// that 28x28 images give the classic 16x5x5 features.
static Value lenet5(ModelBuilder &b, Value images, int64_t classes) {
  auto conv = [](int64_t out) {
    return ConvSpec(out, 5).withBias().init(WeightInit::TorchDefault);
  };
  Value x = b.relu("relu1", b.conv2d("conv1", images, conv(6).padding(2)));
  x = b.maxPool("pool1", x, /*kernel=*/2, /*stride=*/2, /*padding=*/0);
  x = b.relu("relu2", b.conv2d("conv2", x, conv(16)));
  x = b.maxPool("pool2", x, /*kernel=*/2, /*stride=*/2, /*padding=*/0);
  x = b.flatten("flatten", x);
  x = b.relu("relu3", b.linear("fc1", x, 120));
  x = b.relu("relu4", b.linear("fc2", x, 84));
  return b.linear("fc3", x, classes);
}

//===----------------------------------------------------------------------===//
// ResNet and SE-ResNeXt
//===----------------------------------------------------------------------===//

namespace {

/// Whose definition a ResNet follows: it decides module names (torchvision
/// has one `relu` per block, timm `act1`, `act2`, ...) and initializers.
enum class ResNetSource { Torchvision, Timm };

struct ResNetSpec {
  ResNetSource source;
  bool bottleneck;
  std::array<int64_t, 4> depths;
  /// Groups of the 3x3 convolution, and channels per group at 64 planes.
  int64_t cardinality = 1;
  int64_t baseWidth = 64;
  bool squeezeExcite = false;
};

} // namespace

static const ResNetSpec kResNet18 = {
    ResNetSource::Torchvision, false, {2, 2, 2, 2}};
static const ResNetSpec kResNet34 = {
    ResNetSource::Torchvision, false, {3, 4, 6, 3}};
static const ResNetSpec kResNet50 = {
    ResNetSource::Torchvision, true, {3, 4, 6, 3}};
static const ResNetSpec kResNet101 = {
    ResNetSource::Torchvision, true, {3, 4, 23, 3}};
static const ResNetSpec kResNet152 = {
    ResNetSource::Torchvision, true, {3, 8, 36, 3}};
static const ResNetSpec kSEResNeXt50 = {
    ResNetSource::Timm, true, {3, 4, 6, 3}, 32, 4, true};
static const ResNetSpec kSEResNeXt101 = {
    ResNetSource::Timm, true, {3, 4, 23, 3}, 32, 4, true};
static const ResNetSpec kSEResNeXt152 = {
    ResNetSource::Timm, true, {3, 8, 36, 3}, 32, 4, true};

/// The name of a block's `index`-th activation (1-based).
static std::string activationName(const ResNetSpec &spec,
                                  const std::string &block, int index) {
  if (spec.source == ResNetSource::Torchvision)
    return block + ".relu";
  return block + ".act" + std::to_string(index);
}

/// The initializer of a block's last norm weight: timm's zero_init_last.
static InitKind lastNormInit(const ResNetSpec &spec) {
  return spec.source == ResNetSource::Timm ? InitKind::Zeros : InitKind::Ones;
}

/// timm's make_divisible(v, divisor) (round_limit 0).
static int64_t makeDivisible(double value, int64_t divisor) {
  int64_t rounded = static_cast<int64_t>(value + divisor / 2.0) / divisor;
  return std::max(divisor, rounded * divisor);
}

/// timm's SEModule: channel gates from the pooled features, reduction 16.
static Value squeezeExcite(ModelBuilder &b, const std::string &name, Value x,
                           int64_t channels) {
  int64_t reduced = makeDivisible(channels / 16.0, 8);
  Value gate = b.globalAvgPool(name, x);
  gate = b.conv2d(name + ".fc1", gate, ConvSpec(reduced, 1).withBias());
  gate = b.relu(name + ".act", gate);
  gate = b.conv2d(name + ".fc2", gate, ConvSpec(channels, 1).withBias());
  gate = b.sigmoid(name + ".gate", gate);
  return b.mul(name, x, gate);
}

/// The shortcut's projection: a strided 1x1 convolution and a norm.
static Value downsample(ModelBuilder &b, const std::string &name, Value x,
                        int64_t channels, int64_t stride) {
  x = b.conv2d(name + ".0", x, ConvSpec(channels, 1).stride(stride));
  return b.batchNorm(name + ".1", x);
}

/// BasicBlock: two 3x3 convolutions, the first one strided.
static Value basicBlock(ModelBuilder &b, const ResNetSpec &spec,
                        const std::string &name, Value x, int64_t planes,
                        int64_t stride, bool project) {
  Value y = b.conv2d(name + ".conv1", x,
                     ConvSpec(planes, 3).stride(stride).padding(1));
  y = b.relu(activationName(spec, name, 1), b.batchNorm(name + ".bn1", y));
  y = b.conv2d(name + ".conv2", y, ConvSpec(planes, 3).padding(1));
  y = b.batchNorm(name + ".bn2", y, lastNormInit(spec));
  Value shortcut =
      project ? downsample(b, name + ".downsample", x, planes, stride) : x;
  return b.relu(activationName(spec, name, 2), b.add(name, y, shortcut));
}

/// Bottleneck: 1x1 reduce, 3x3 grouped and strided, 1x1 expand (x4).
static Value bottleneck(ModelBuilder &b, const ResNetSpec &spec,
                        const std::string &name, Value x, int64_t planes,
                        int64_t stride, bool project) {
  int64_t width = planes * spec.baseWidth / 64 * spec.cardinality;
  int64_t channels = planes * 4;
  Value y = b.conv2d(name + ".conv1", x, ConvSpec(width, 1));
  y = b.relu(activationName(spec, name, 1), b.batchNorm(name + ".bn1", y));
  y = b.conv2d(
      name + ".conv2", y,
      ConvSpec(width, 3).stride(stride).padding(1).groups(spec.cardinality));
  y = b.relu(activationName(spec, name, 2), b.batchNorm(name + ".bn2", y));
  y = b.conv2d(name + ".conv3", y, ConvSpec(channels, 1));
  y = b.batchNorm(name + ".bn3", y, lastNormInit(spec));
  if (spec.squeezeExcite)
    y = squeezeExcite(b, name + ".se", y, channels);
  Value shortcut =
      project ? downsample(b, name + ".downsample", x, channels, stride) : x;
  return b.relu(activationName(spec, name, 3), b.add(name, y, shortcut));
}

static Value resnet(ModelBuilder &b, const ResNetSpec &spec, Value images,
                    int64_t classes) {
  bool timm = spec.source == ResNetSource::Timm;
  Value x = b.conv2d("conv1", images, ConvSpec(64, 7).stride(2).padding(3));
  x = b.relu(timm ? "act1" : "relu", b.batchNorm("bn1", x));
  x = b.maxPool("maxpool", x, /*kernel=*/3, /*stride=*/2, /*padding=*/1);

  int64_t expansion = spec.bottleneck ? 4 : 1;
  int64_t channels = 64;
  for (auto [stage, depth] : llvm::enumerate(spec.depths)) {
    int64_t planes = int64_t(64) << stage;
    for (int64_t index = 0; index < depth; ++index) {
      std::string name =
          "layer" + std::to_string(stage + 1) + "." + std::to_string(index);
      int64_t stride = stage > 0 && index == 0 ? 2 : 1;
      bool project = stride != 1 || channels != planes * expansion;
      x = spec.bottleneck
              ? bottleneck(b, spec, name, x, planes, stride, project)
              : basicBlock(b, spec, name, x, planes, stride, project);
      channels = planes * expansion;
    }
  }

  x = b.globalAvgPool(timm ? "global_pool.pool" : "avgpool", x);
  x = b.flatten(timm ? "global_pool.flatten" : "flatten", x);
  return b.linear("fc", x, classes);
}

//===----------------------------------------------------------------------===//
// The zoo
//===----------------------------------------------------------------------===//

static constexpr ModelSizes kDigits = {32, 28, 1, 10};
static constexpr ModelSizes kImageNet = {32, 224, 3, 1000};

ArrayRef<ModelInfo> mlir::fluid::models::getModels() {
  static const ModelInfo models[] = {
      {"mlp",
       "multilayer perceptron: flatten, linear 256, 128 with ReLU, linear "
       "classifier",
       kDigits, mlp},
      {"lenet5",
       "LeNet-5: conv 5x5 (6, 16) with ReLU and 2x2 max pooling, linear 120, "
       "84, classifier",
       kDigits, lenet5},
      {"resnet18", "torchvision ResNet-18: basic blocks [2, 2, 2, 2]",
       kImageNet,
       [](ModelBuilder &b, Value x, int64_t n) {
         return resnet(b, kResNet18, x, n);
       }},
      {"resnet34", "torchvision ResNet-34: basic blocks [3, 4, 6, 3]",
       kImageNet,
       [](ModelBuilder &b, Value x, int64_t n) {
         return resnet(b, kResNet34, x, n);
       }},
      {"resnet50", "torchvision ResNet-50 (v1.5): bottlenecks [3, 4, 6, 3]",
       kImageNet,
       [](ModelBuilder &b, Value x, int64_t n) {
         return resnet(b, kResNet50, x, n);
       }},
      {"resnet101", "torchvision ResNet-101 (v1.5): bottlenecks [3, 4, 23, 3]",
       kImageNet,
       [](ModelBuilder &b, Value x, int64_t n) {
         return resnet(b, kResNet101, x, n);
       }},
      {"resnet152", "torchvision ResNet-152 (v1.5): bottlenecks [3, 8, 36, 3]",
       kImageNet,
       [](ModelBuilder &b, Value x, int64_t n) {
         return resnet(b, kResNet152, x, n);
       }},
      {"se_resnext50_32x4d",
       "timm seresnext50_32x4d: bottlenecks [3, 4, 6, 3], 32 groups x 4 "
       "channels, squeeze-excite",
       kImageNet,
       [](ModelBuilder &b, Value x, int64_t n) {
         return resnet(b, kSEResNeXt50, x, n);
       }},
      {"se_resnext101_32x4d",
       "timm seresnext101_32x4d: bottlenecks [3, 4, 23, 3], 32 groups x 4 "
       "channels, squeeze-excite",
       kImageNet,
       [](ModelBuilder &b, Value x, int64_t n) {
         return resnet(b, kSEResNeXt101, x, n);
       }},
      {"se_resnext152_32x4d",
       "SE-ResNeXt-152 (32x4d) built as timm builds seresnext50_32x4d: "
       "bottlenecks [3, 8, 36, 3]",
       kImageNet,
       [](ModelBuilder &b, Value x, int64_t n) {
         return resnet(b, kSEResNeXt152, x, n);
       }},
  };
  return models;
}

const ModelInfo *mlir::fluid::models::lookupModel(StringRef name) {
  for (const ModelInfo &model : getModels())
    if (model.name == name)
      return &model;
  return nullptr;
}

OwningOpRef<ModuleOp> mlir::fluid::models::buildModel(MLIRContext &context,
                                                      const ModelInfo &model,
                                                      const ModelSizes &sizes) {
  OpBuilder b(&context);
  auto nameLoc = [&](StringRef name) {
    return NameLoc::get(b.getStringAttr(name));
  };
  Type f32 = b.getF32Type();
  auto imagesType = RankedTensorType::get(
      {sizes.batch, sizes.channels, sizes.imageSize, sizes.imageSize}, f32);
  auto labelsType = RankedTensorType::get({sizes.batch}, b.getI64Type());
  if (!isFloatTensor(imagesType)) {
    emitError(b.getUnknownLoc())
        << "a batch of images of type " << imagesType
        << " is too large: its size in bytes must fit in 64 bits";
    return nullptr;
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  auto func =
      func::FuncOp::create(b, nameLoc(model.name), "loss",
                           b.getFunctionType({imagesType, labelsType},
                                             {RankedTensorType::get({}, f32)}));
  func->setAttr("fluid.entry", b.getUnitAttr());
  func.setArgAttr(0, "fluid.name", b.getStringAttr("images"));
  func.setArgAttr(1, "fluid.name", b.getStringAttr("labels"));
  Block *entry = func.addEntryBlock();
  Value images = entry->getArgument(0), labels = entry->getArgument(1);
  images.setLoc(nameLoc("images"));
  labels.setLoc(nameLoc("labels"));

  ModelBuilder layers(func);
  Value logits = model.forward(layers, images, sizes.classes);
  Value loss = layers.softmaxCrossEntropy("loss", logits, labels);
  if (layers.anyLayerFailed())
    return nullptr;
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, nameLoc("loss"), loss);

  // @predict: the logits, with batch norm in inference form, for evaluation.
  b.setInsertionPointToEnd(module->getBody());
  auto logitsType = cast<RankedTensorType>(logits.getType());
  auto predict =
      func::FuncOp::create(b, nameLoc(model.name), "predict",
                           b.getFunctionType({imagesType}, {logitsType}));
  predict.setArgAttr(0, "fluid.name", b.getStringAttr("images"));
  Block *predictEntry = predict.addEntryBlock();
  predictEntry->getArgument(0).setLoc(nameLoc("images"));
  ModelBuilder inference(predict, Phase::Inference);
  Value predicted =
      model.forward(inference, predictEntry->getArgument(0), sizes.classes);
  if (inference.anyLayerFailed())
    return nullptr;
  b.setInsertionPointToEnd(predictEntry);
  func::ReturnOp::create(b, nameLoc("logits"), predicted);
  return module;
}
