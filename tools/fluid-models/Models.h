//===- Models.h - The built-in model zoo ------------------------*- C++ -*-===//
//
// MLP, LeNet-5, torchvision's ResNet-18/34/50/101/152 and timm's
// SE-ResNeXt-50/101/152 (32x4d), each as a forward program with its loss and
// with parameters named, ordered, shaped and initialized as in the PyTorch
// module's state dict.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_TOOLS_FLUID_MODELS_MODELS_H
#define FLUID_TOOLS_FLUID_MODELS_MODELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace mlir::fluid::models {

class ModelBuilder;

/// The sizes a model is generated for.
struct ModelSizes {
  int64_t batch;
  int64_t imageSize;
  int64_t channels;
  int64_t classes;
};

/// One model of the zoo.
struct ModelInfo {
  StringRef name;
  StringRef description;
  ModelSizes defaults;
  /// Emits the forward pass from `images` ([N, C, H, W]) to the logits
  /// ([N, classes]).
  Value (*forward)(ModelBuilder &builder, Value images, int64_t classes);
};

/// Every model, in the order `--list` shows them.
ArrayRef<ModelInfo> getModels();

/// The model called `name`, or null.
const ModelInfo *lookupModel(StringRef name);

/// Builds a module holding the model's parameters and
///
///   func.func @loss(%images: tensor<NxCxHxWxf32> {fluid.name = "images"},
///                   %labels: tensor<Nxi64> {fluid.name = "labels"})
///       -> tensor<f32> attributes {fluid.entry}
///
/// which returns the mean softmax cross-entropy of the logits against the
/// labels. The module is not verified yet. Returns null after reporting a
/// diagnostic when the sizes do not fit the network (a layer's shape rule
/// rejects them, or the images are too large to address).
OwningOpRef<ModuleOp> buildModel(MLIRContext &context, const ModelInfo &model,
                                 const ModelSizes &sizes);

} // namespace mlir::fluid::models

#endif // FLUID_TOOLS_FLUID_MODELS_MODELS_H
