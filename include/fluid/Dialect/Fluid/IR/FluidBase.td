//===- FluidBase.td - The fluid dialect and its type constraints ---------===//
//
// The `fluid` dialect describes whole training programs at the tensor level:
// module-level parameters, forward ops, and (in later layers) gradient,
// optimizer and buffer-level ops. Every tensor is statically shaped: a
// training step is compiled for one batch size.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_BASE_TD
#define FLUID_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Fluid_Dialect : Dialect {
  let name = "fluid";
  let cppNamespace = "::mlir::fluid";
  let summary = "Whole training programs for deep-learning models";
  let description = [{
    The `fluid` dialect holds a model's forward computation with its loss,
    the parameters it reads (`fluid.param`, declared once per module), and,
    after the training passes, its backward pass and optimizer. Tensors are
    statically shaped, row-major, and images are NCHW.

    Op names follow a convention that leaves room for what later layers add:
    forward ops are plain names (`fluid.conv2d`), gradient ops add a `_grad`
    suffix naming the operand they differentiate (`fluid.conv2d_grad_input`),
    optimizer updates are named after their rule (`fluid.sgd`,
    `fluid.momentum`), and buffer-level runtime ops live in their own
    `fluid_rt` dialect.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  // `fluid.*` attributes on other ops, function arguments and results.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes (FluidAttrs.cpp, where their storage is).
    void registerAttributes();
  }];
}

// Rejects attributes an op does not declare (a misspelled `dilations` on
// fluid.conv2d would otherwise be kept and ignored). Attributes of another
// dialect (`fluid.*`, `foo.*`) are that dialect's to verify.
def Fluid_NoUnknownAttributes : NativeOpTrait<"NoUnknownAttributes"> {
  let cppNamespace = "::mlir::fluid::OpTrait";
}

class Fluid_Op<string mnemonic, list<Trait> traits = []>
    : Op<Fluid_Dialect, mnemonic, !listconcat(traits,
                                              [Fluid_NoUnknownAttributes])>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Floating-point tensors: activations, parameters, gradients. The byte size
// must fit in 64 bits so that no later shape or size computation overflows.
def Fluid_FloatTensor : Type<
    CPred<"::mlir::fluid::isFloatTensor($_self)">,
    "statically shaped tensor of f16, bf16, f32 or f64, of rank at most 8, whose size fits in 64 bits",
    "::mlir::RankedTensorType">;

// Integer tensors: class labels, step counters.
def Fluid_IntTensor : Type<
    CPred<"::mlir::fluid::isIntTensor($_self)">,
    "statically shaped tensor of i32 or i64, of rank at most 8, whose size fits in 64 bits",
    "::mlir::RankedTensorType">;

// Byte tensors: the window-local picks of fluid.max_pool2d_with_indices.
def Fluid_ByteTensor : Type<
    CPred<"::mlir::fluid::isByteTensor($_self)">,
    "statically shaped tensor of ui8, of rank at most 8, whose size fits in 64 bits",
    "::mlir::RankedTensorType">;

def Fluid_Tensor : Type<
    CPred<"::mlir::fluid::isFluidTensor($_self)">,
    "statically shaped tensor of f16, bf16, f32, f64, i32 or i64, of rank at most 8, whose size fits in 64 bits",
    "::mlir::RankedTensorType">;

// A rank-0 floating-point tensor, e.g. a loss.
def Fluid_ScalarTensor : Type<
    And<[CPred<"::mlir::fluid::isFloatTensor($_self)">,
         CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0">]>,
    "rank-0 tensor of f16, bf16, f32 or f64",
    "::mlir::RankedTensorType">;

// A tensor<f32>: dynamic loss scaling's scale, and its "a gradient is not
// finite" flag (1.0 or 0.0).
def Fluid_F32Scalar : Type<
    And<[CPred<"::llvm::isa<::mlir::RankedTensorType>($_self)">,
         CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0">,
         CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getElementType().isF32()">]>,
    "tensor<f32>",
    "::mlir::RankedTensorType">,
  BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;

#endif // FLUID_BASE_TD
