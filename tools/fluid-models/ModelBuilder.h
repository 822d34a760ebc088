//===- ModelBuilder.h - Emits a model's layers as fluid ops -----*- C++ -*-===//
//
// The layers the zoo's models are made of (convolution, batch norm, linear,
// pooling, ...), each emitted as fluid ops located at the PyTorch module it
// transcribes (`loc("layer1.0.conv2")`) and declaring that module's
// parameters with its state-dict names, shapes and initializers.
//
// Result types come from the ops' own shape rules. When a rule rejects a
// layer (say, an image too small for a window), the rule's diagnostic is
// reported at that layer, and from then on every layer returns a null value
// without emitting anything: model code reads as straight-line PyTorch and
// checks `anyLayerFailed()` once at the end.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_TOOLS_FLUID_MODELS_MODELBUILDER_H
#define FLUID_TOOLS_FLUID_MODELS_MODELBUILDER_H

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/Twine.h"

namespace mlir::fluid::models {

/// How a convolution or linear weight is initialized.
enum class WeightInit {
  /// kaiming_normal(fan_out, gain = sqrt(2)): what torchvision's and timm's
  /// ResNets do to every nn.Conv2d.
  KaimingNormalFanOut,
  /// kaiming_uniform(fan_in, gain = sqrt(1/3)): nn.Conv2d's and nn.Linear's
  /// own reset_parameters().
  TorchDefault,
};

/// The arguments of an nn.Conv2d with square kernels, strides and padding.
/// Biases, when present, get nn.Conv2d's default uniform(+-1/sqrt(fan_in)).
struct ConvSpec {
  ConvSpec(int64_t outChannels, int64_t kernel)
      : outChannels(outChannels), kernel(kernel) {}
  ConvSpec &stride(int64_t value) {
    strideValue = value;
    return *this;
  }
  ConvSpec &padding(int64_t value) {
    paddingValue = value;
    return *this;
  }
  ConvSpec &groups(int64_t value) {
    groupsValue = value;
    return *this;
  }
  ConvSpec &withBias() {
    hasBias = true;
    return *this;
  }
  ConvSpec &init(WeightInit value) {
    weightInit = value;
    return *this;
  }

  int64_t outChannels;
  int64_t kernel;
  int64_t strideValue = 1;
  int64_t paddingValue = 0;
  int64_t groupsValue = 1;
  bool hasBias = false;
  WeightInit weightInit = WeightInit::KaimingNormalFanOut;
};

/// Which function of the model the layers go into.
enum class Phase {
  /// The loss function: batch norm uses batch statistics and updates the
  /// running ones; parameters are declared as they are first used.
  Training,
  /// The prediction function, emitted after the training one: batch norm
  /// uses the running statistics, and the parameters exist already.
  Inference,
};

/// Emits layers at the end of one function's body and declares their
/// parameters, in the order the layers are emitted, ahead of the function.
/// Every method takes the PyTorch module name the layer transcribes.
class ModelBuilder {
public:
  /// `func` must have a body; its module receives the parameters.
  explicit ModelBuilder(func::FuncOp func, Phase phase = Phase::Training);

  /// nn.Conv2d; the input channels come from `input`'s type.
  Value conv2d(const Twine &name, Value input, const ConvSpec &spec);
  /// nn.BatchNorm2d (or 1d). In training: normalizes with the batch's
  /// statistics and writes the new running statistics back into
  /// `NAME.running_mean` and `NAME.running_var`; in inference: normalizes
  /// with the running statistics. `weightInit` is Ones, or Zeros for timm's
  /// zero-initialized last norm of a residual block.
  Value batchNorm(const Twine &name, Value input,
                  InitKind weightInit = InitKind::Ones);
  /// nn.Linear with a bias and PyTorch's default initializers; the input
  /// features come from `input`'s type.
  Value linear(const Twine &name, Value input, int64_t outFeatures);
  Value relu(const Twine &name, Value input);
  Value sigmoid(const Twine &name, Value input);
  /// nn.MaxPool2d with square windows.
  Value maxPool(const Twine &name, Value input, int64_t kernel, int64_t stride,
                int64_t padding);
  /// nn.AdaptiveAvgPool2d(1): [N, C, H, W] -> [N, C, 1, 1].
  Value globalAvgPool(const Twine &name, Value input);
  /// torch.flatten(x, 1).
  Value flatten(const Twine &name, Value input);
  /// Broadcasting elementwise sum and product.
  Value add(const Twine &name, Value lhs, Value rhs);
  Value mul(const Twine &name, Value lhs, Value rhs);
  /// nn.CrossEntropyLoss() on integer labels: the batch mean, a scalar.
  Value softmaxCrossEntropy(const Twine &name, Value logits, Value labels);

  /// Whether a layer was rejected by its shape rule (and reported).
  bool anyLayerFailed() const { return hasFailed; }

private:
  /// Declares `NAME` as a parameter and reads it at `loc`.
  Value param(Location loc, const Twine &name, ArrayRef<int64_t> shape,
              InitializerAttr init, bool trainable = true);
  /// Creates an op with the result types its shape rule infers, or reports
  /// the rule's diagnostic at `loc` and returns null (the generated builders
  /// would abort instead).
  template <typename OpT>
  OpT createInferred(Location loc, ValueRange operands,
                     const typename OpT::Properties &properties = {});

  Location layerLoc(const Twine &name);
  InitializerAttr weightInitializer(WeightInit init);
  /// uniform(-1/sqrt(fanIn), 1/sqrt(fanIn)), PyTorch's default for biases.
  InitializerAttr biasInitializer(int64_t fanIn);
  InitializerAttr constantInitializer(InitKind kind);

  OpBuilder body;
  OpBuilder params;
  Phase phase;
  bool hasFailed = false;
};

} // namespace mlir::fluid::models

#endif // FLUID_TOOLS_FLUID_MODELS_MODELBUILDER_H
