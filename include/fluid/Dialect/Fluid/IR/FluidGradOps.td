//===- FluidGradOps.td - Gradient ops of the backward pass ---------------===//
//
// One op per gradient rule that is not already a composition of forward ops
// (matmul, reduce_sum, sum_to and friends cover the rest). Each is named
// after the forward op and what it differentiates, takes the gradient of the
// forward result first, and, where the forward op's shape rule can check it,
// is verified against that rule. Included by FluidOps.td.
//
//===----------------------------------------------------------------------===//

class Fluid_GradOp<string mnemonic, list<Trait> traits = []>
    : Fluid_Op<mnemonic, !listconcat(traits, [Pure])>;

def Fluid_Conv2DGradInputOp : Fluid_GradOp<"conv2d_grad_input"> {
  let summary = "Gradient of conv2d with respect to its input";
  let description = [{
    The result type is the forward input's type; the verifier checks that a
    `fluid.conv2d` of that input with `filter` and these attributes has
    `grad_output`'s type.

    ```mlir
    %dx = fluid.conv2d_grad_input %dy, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
        : (tensor<8x64x28x28xf32>, tensor<64x32x3x3xf32>) -> tensor<8x32x56x56xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$grad_output,
    Fluid_FloatTensor:$filter,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<I64Attr, "1">:$groups,
    UnitAttr:$channels_last);
  let results = (outs Fluid_FloatTensor:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $filter attr-dict `:`
    `(` type($grad_output) `,` type($filter) `)` `->` type($grad_input)
  }];
  let hasVerifier = 1;
}

def Fluid_Conv2DGradFilterOp : Fluid_GradOp<"conv2d_grad_filter"> {
  let summary = "Gradient of conv2d with respect to its filter";
  let description = [{
    The result type is the filter's type; the verifier checks that a
    `fluid.conv2d` of `input` with such a filter has `grad_output`'s type.

    ```mlir
    %dw = fluid.conv2d_grad_filter %dy, %x {padding = array<i64: 1, 1, 1, 1>}
        : (tensor<8x64x56x56xf32>, tensor<8x64x56x56xf32>) -> tensor<64x64x3x3xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$grad_output,
    Fluid_FloatTensor:$input,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<I64Attr, "1">:$groups,
    UnitAttr:$channels_last);
  let results = (outs Fluid_FloatTensor:$grad_filter);
  let assemblyFormat = [{
    $grad_output `,` $input attr-dict `:`
    `(` type($grad_output) `,` type($input) `)` `->` type($grad_filter)
  }];
  let hasVerifier = 1;
}

def Fluid_BatchNormGradOp : Fluid_GradOp<"batch_norm_grad", [
    InferTypeOpAdaptor,
    AllTypesMatch<["grad_output", "input"]>,
    AllTypesMatch<["scale", "saved_mean", "saved_inv_std"]>]> {
  let summary = "Gradients of training-mode batch norm";
  let description = [{
    From the saved batch statistics of `fluid.batch_norm`, the gradients with
    respect to its input, scale and shift.

    ```mlir
    %dx, %dgamma, %dbeta = fluid.batch_norm_grad %dy, %x, %gamma, %mean, %inv_std
        : tensor<8x64x56x56xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$grad_output,
    Fluid_FloatTensor:$input,
    Fluid_FloatTensor:$scale,
    Fluid_FloatTensor:$saved_mean,
    Fluid_FloatTensor:$saved_inv_std);
  let results = (outs
    Fluid_FloatTensor:$grad_input,
    Fluid_FloatTensor:$grad_scale,
    Fluid_FloatTensor:$grad_shift);
  let assemblyFormat = [{
    $grad_output `,` $input `,` $scale `,` $saved_mean `,` $saved_inv_std
    attr-dict `:` type($input) `,` type($scale)
  }];
}

class Fluid_ActivationGradOp<string mnemonic, string formula>
    : Fluid_GradOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "Gradient of an activation from its output: " # formula;
  let arguments = (ins Fluid_FloatTensor:$grad_output, Fluid_FloatTensor:$output);
  let results = (outs Fluid_FloatTensor:$grad_input);
  let assemblyFormat = "$grad_output `,` $output attr-dict `:` type($output)";
}

def Fluid_ReluGradOp : Fluid_ActivationGradOp<"relu_grad", "g where y > 0, else 0">;
def Fluid_SigmoidGradOp : Fluid_ActivationGradOp<"sigmoid_grad", "g * y * (1 - y)">;
def Fluid_TanhGradOp : Fluid_ActivationGradOp<"tanh_grad", "g * (1 - y^2)">;

def Fluid_MaxPool2DGradOp : Fluid_GradOp<"max_pool2d_grad", [
    AllTypesMatch<["input", "grad_input"]>]> {
  let summary = "Gradient of max_pool2d: each window's gradient goes to its maximum";
  let description = [{
    The maxima are found again in `input` (the first in row-major order
    wins a tie, as in PyTorch). With `channels_last`, all three tensors
    are [N, H, W, C], as `fluid.max_pool2d`'s. A cell picked by several
    windows gets their sum, rounded once to f32; in f16 or bf16 that f32
    sum is rounded once more, to the tensors' type.

    ```mlir
    %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        padding = array<i64: 1, 1, 1, 1>} : tensor<8x64x56x56xf32>, tensor<8x64x112x112xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$grad_output,
    Fluid_FloatTensor:$input,
    DenseI64ArrayAttr:$kernel_size,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    UnitAttr:$ceil_mode,
    UnitAttr:$channels_last);
  let results = (outs Fluid_FloatTensor:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $input attr-dict `:` type($grad_output) `,` type($input)
  }];
  let hasVerifier = 1;
}

def Fluid_MaxPool2DGradIndicesOp : Fluid_GradOp<"max_pool2d_grad_indices"> {
  let summary = "Gradient of max_pool2d from the picks max_pool2d_with_indices saved";
  let description = [{
    Each window's gradient goes to the cell its index names (the offset
    `kh * KW + kw` of the pick in the window, see
    `fluid.max_pool2d_with_indices`); a cell that several windows picked
    gets their sum, in row-major window order: the same result as
    `fluid.max_pool2d_grad` of the input the indices were taken from,
    which this op does not read (in f16 or bf16 too: the f32 sum rounded
    to the type). The result type is the forward input's;
    the verifier checks that a `fluid.max_pool2d_with_indices` of it with
    these attributes has the types of `grad_output` and `indices`. With
    `channels_last`, all four tensors are [N, H, W, C].

    ```mlir
    %dx = fluid.max_pool2d_grad_indices %dy, %idx {kernel_size = array<i64: 3, 3>,
        strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
        : tensor<8x64x56x56xf32>, tensor<8x64x56x56xui8> -> tensor<8x64x112x112xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$grad_output,
    Fluid_ByteTensor:$indices,
    DenseI64ArrayAttr:$kernel_size,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    UnitAttr:$ceil_mode,
    UnitAttr:$channels_last);
  let results = (outs Fluid_FloatTensor:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $indices attr-dict `:` type($grad_output) `,`
    type($indices) `->` type($grad_input)
  }];
  let hasVerifier = 1;
}

def Fluid_AvgPool2DGradOp : Fluid_GradOp<"avg_pool2d_grad"> {
  let summary = "Gradient of avg_pool2d";
  let description = [{
    The result type is the forward input's; the verifier checks that an
    `fluid.avg_pool2d` of it with these attributes has `grad_output`'s type.
  }];
  let arguments = (ins
    Fluid_FloatTensor:$grad_output,
    DenseI64ArrayAttr:$kernel_size,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    UnitAttr:$ceil_mode,
    UnitAttr:$count_include_pad);
  let results = (outs Fluid_FloatTensor:$grad_input);
  let assemblyFormat = [{
    $grad_output attr-dict `:` type($grad_output) `->` type($grad_input)
  }];
  let hasVerifier = 1;
}

class Fluid_SoftmaxGradBase<string mnemonic, string formula>
    : Fluid_GradOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "Gradient of " # formula # " from its output";
  let arguments = (ins
    Fluid_FloatTensor:$grad_output, Fluid_FloatTensor:$output,
    DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Fluid_FloatTensor:$grad_input);
  let assemblyFormat = "$grad_output `,` $output attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Fluid_SoftmaxGradOp : Fluid_SoftmaxGradBase<"softmax_grad", "softmax: y * (g - sum(g * y))">;
def Fluid_LogSoftmaxGradOp : Fluid_SoftmaxGradBase<"log_softmax_grad", "log_softmax: g - exp(y) * sum(g)">;

def Fluid_GatherGradOp : Fluid_GradOp<"gather_grad"> {
  let summary = "Gradient of gather with respect to its input";
  let description = [{
    The result type is the forward input's type; the verifier checks that a
    `fluid.gather` of that input with `indices` along `axis` (made
    non-negative) has `grad_output`'s type. Slice `r` of the result along
    `axis` is the sum of the slices `i` of `grad_output` whose index
    `indices[i]` is `r`, in the order of `i` (zeros where no index is `r`).

    ```mlir
    %dtable = fluid.gather_grad %dbias, %index {axis = 0 : i64}
        : (tensor<2401x3xf32>, tensor<2401xi64>) -> tensor<169x3xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$grad_output,
    Fluid_IntTensor:$indices,
    I64Attr:$axis);
  let results = (outs Fluid_FloatTensor:$grad_input);
  let assemblyFormat = [{
    $grad_output `,` $indices attr-dict `:`
    `(` type($grad_output) `,` type($indices) `)` `->` type($grad_input)
  }];
  let hasVerifier = 1;
}

def Fluid_SoftmaxCrossEntropyGradOp : Fluid_GradOp<"softmax_cross_entropy_grad", [
    AllTypesMatch<["logits", "grad_logits"]>]> {
  let summary = "Gradient of softmax_cross_entropy with respect to the logits";
  let description = [{
    (softmax(logits) - onehot(labels)) * grad_loss, divided by the batch size
    for the `mean` reduction. `grad_loss` has the loss's type.

    ```mlir
    %dlogits = fluid.softmax_cross_entropy_grad %dloss, %logits, %labels
        : tensor<f32>, tensor<8x10xf32>, tensor<8xi64>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$grad_loss,
    Fluid_FloatTensor:$logits,
    Fluid_IntTensor:$labels,
    DefaultValuedAttr<Fluid_ReductionAttr, "::mlir::fluid::Reduction::Mean">:$reduction);
  let results = (outs Fluid_FloatTensor:$grad_logits);
  let assemblyFormat = [{
    $grad_loss `,` $logits `,` $labels attr-dict `:` type($grad_loss) `,`
    type($logits) `,` type($labels)
  }];
  let hasVerifier = 1;
}
