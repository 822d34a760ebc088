//===- FluidOps.td - Ops of the fluid dialect ----------------------------===//
//
// Forward ops of MLP, LeNet, ResNet and SE-ResNeXt, and the parameter ops.
// Shape rules live in each op's `inferReturnTypes`, which reports why a shape
// is invalid; the printed result type is checked against the inferred one.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_OPS_TD
#define FLUID_OPS_TD

include "fluid/Dialect/Fluid/IR/FluidBase.td"
include "fluid/Dialect/Fluid/IR/FluidAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Parameters are module-level state: reading and writing one are effects on
// this resource, so reads are never moved across writes.
def Fluid_ParamResource : Resource<"::mlir::fluid::ParamResource">;

class Fluid_InferOp<string mnemonic, list<Trait> traits = []>
    : Fluid_Op<mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])>;

//===----------------------------------------------------------------------===//
// Parameters and constants
//===----------------------------------------------------------------------===//

def Fluid_ParamOp : Fluid_Op<"param", [
    Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "Declares a model parameter or persistent state tensor";
  let description = [{
    Declares a named tensor that lives across training steps: a weight, a
    batch-norm running statistic, and later optimizer state. Functions read
    it with `fluid.get_param` and write it with `fluid.set_param`.

    - `init`: how its initial value is drawn (see `#fluid.init`);
    - `trainable` (default true): whether the optimizer updates it from its
      gradient (running statistics are `trainable = false`);
    - `lr_mult`, `decay_mult` (default 1.0): this parameter's multipliers of
      the global learning rate and weight decay;
    - `storage_order` (optional): the tensor is stored with its dimensions
      permuted. `$type` is then the stored type, whose dimension d is
      dimension `storage_order[d]` of the checkpoint's (PyTorch's) shape,
      as the result of `fluid.transpose` with that permutation; the
      initializer's fans, checkpoints and PyTorch see the checkpoint shape,
      and the driver converts at load and save
      (`--fluid-permute-storage`, docs/LAYOUT.md).

    Names follow PyTorch state dicts, so weights move to and from PyTorch:

    ```mlir
    fluid.param @conv1.weight : tensor<64x3x7x7xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
    fluid.param @bn1.running_mean : tensor<64xf32> init zeros {trainable = false}
    fluid.param @fc.bias : tensor<10xf32> init zeros {decay_mult = 0.0}
    fluid.param @layer1.0.conv1.weight : tensor<64x3x3x64xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951) {storage_order = array<i64: 0, 2, 3, 1>}
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<Fluid_Tensor>:$type,
    Fluid_InitializerAttr:$init,
    DefaultValuedAttr<BoolAttr, "true">:$trainable,
    DefaultValuedAttr<F64Attr, "1.0">:$lr_mult,
    DefaultValuedAttr<F64Attr, "1.0">:$decay_mult,
    OptionalAttr<DenseI64ArrayAttr>:$storage_order);
  let assemblyFormat = [{
    $sym_name `:` $type `init` custom<Initializer>($init) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The stored type.
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
    /// The type checkpoints and the initializer see: the stored type with
    /// `storage_order` undone.
    ::mlir::RankedTensorType getCheckpointType();
  }];
}

def Fluid_GetParamOp : Fluid_Op<"get_param", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemRead<Fluid_ParamResource>]>]> {
  let summary = "Reads the current value of a parameter";
  let description = [{
    ```mlir
    %w = fluid.get_param @conv1.weight : tensor<64x3x7x7xf32>
    ```
    The symbol must name a `fluid.param` of exactly this type.
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Fluid_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Fluid_SetParamOp : Fluid_Op<"set_param", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    MemoryEffects<[MemWrite<Fluid_ParamResource>]>]> {
  let summary = "Replaces the value of a parameter";
  let description = [{
    Writes a new value into a parameter, e.g. batch-norm running statistics
    or (later) an optimizer update. Bufferization turns it into an in-place
    update of the parameter's persistent buffer.

    ```mlir
    fluid.set_param @bn1.running_mean, %new_mean : tensor<64xf32>
    ```

    A function (one training step) writes each parameter at most once: a
    second write would hand the reads after it another layer's or another
    update's value, and overwrite the first.
  }];
  let arguments = (ins FlatSymbolRefAttr:$name, Fluid_Tensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Fluid_ConstantOp : Fluid_Op<"constant", [
    ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "A scalar or tensor constant";
  let description = [{
    ```mlir
    %lr = fluid.constant dense<1.000000e-01> : tensor<f32>
    %t = fluid.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Fluid_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and normalization
//===----------------------------------------------------------------------===//

def Fluid_Conv2DOp : Fluid_InferOp<"conv2d"> {
  let summary = "2-D convolution (NCHW or NHWC), grouped and dilated, optional bias";
  let description = [{
    `input` is [N, C, H, W], `filter` is [O, C / groups, KH, KW], `bias` is
    [O]. `padding` is [top, left, bottom, right] of zeros. The output is
    [N, O, OH, OW] with OH = (H + top + bottom - dilation_h * (KH - 1) - 1)
    / stride_h + 1 (rounded down), and likewise OW.

    With `channels_last` (set by `--fluid-layout=nhwc`) the tensors are
    NHWC: `input` [N, H, W, C], `filter` [O, KH, KW, C / groups], the
    output [N, OH, OW, O]; the arithmetic is the same.

    ```mlir
    %y = fluid.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 3, 3, 3, 3>}
        : (tensor<8x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<8x64x112x112xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$input,
    Fluid_FloatTensor:$filter,
    Optional<Fluid_FloatTensor>:$bias,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<I64Attr, "1">:$groups,
    UnitAttr:$channels_last);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? attr-dict `:`
    `(` type($input) `,` type($filter) (`,` type($bias)^)? `)` `->` type($output)
  }];
}

def Fluid_BatchNormOp : Fluid_InferOp<"batch_norm", [
    AllTypesMatch<["scale", "shift", "running_mean", "running_var"]>]> {
  let summary = "Batch normalization in training form";
  let description = [{
    Normalizes `input` ([N, C, H, W] or [N, C]) with the statistics of this
    batch, per channel: output = (x - mean) * inv_std * scale + shift with
    inv_std = 1 / sqrt(var + epsilon) and var the biased batch variance.

    It also returns what the backward pass needs (`saved_mean`,
    `saved_inv_std`) and the updated running statistics, following PyTorch:
    new = (1 - momentum) * running + momentum * batch, where the running
    variance takes the unbiased batch variance. The program stores them back
    into their parameters with `fluid.set_param`.

    ```mlir
    %y, %mean, %inv_std, %rm, %rv = fluid.batch_norm %x, %gamma, %beta, %running_mean, %running_var
        {epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64} : tensor<8x64x56x56xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$input,
    Fluid_FloatTensor:$scale,
    Fluid_FloatTensor:$shift,
    Fluid_FloatTensor:$running_mean,
    Fluid_FloatTensor:$running_var,
    DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
    DefaultValuedAttr<F64Attr, "0.1">:$momentum);
  let results = (outs
    Fluid_FloatTensor:$output,
    Fluid_FloatTensor:$saved_mean,
    Fluid_FloatTensor:$saved_inv_std,
    Fluid_FloatTensor:$new_running_mean,
    Fluid_FloatTensor:$new_running_var);
  let assemblyFormat = [{
    $input `,` $scale `,` $shift `,` $running_mean `,` $running_var attr-dict
    `:` type($input) `,` type($scale)
  }];
}

def Fluid_BatchNormInferenceOp : Fluid_InferOp<"batch_norm_inference", [
    AllTypesMatch<["scale", "shift", "mean", "variance"]>]> {
  let summary = "Batch normalization with fixed statistics";
  let description = [{
    output = (x - mean) / sqrt(variance + epsilon) * scale + shift, per
    channel of an [N, C, H, W] or [N, C] input.

    ```mlir
    %y = fluid.batch_norm_inference %x, %gamma, %beta, %mean, %var {epsilon = 1.0e-05 : f64}
        : tensor<1x64x56x56xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$input,
    Fluid_FloatTensor:$scale,
    Fluid_FloatTensor:$shift,
    Fluid_FloatTensor:$mean,
    Fluid_FloatTensor:$variance,
    DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $shift `,` $mean `,` $variance attr-dict
    `:` type($input) `,` type($scale)
  }];
}

def Fluid_BatchNormApplyOp : Fluid_InferOp<"batch_norm_apply", [
    AllTypesMatch<["scale", "shift", "mean", "inv_std"]>]> {
  let summary = "Batch norm's normalize-scale-shift with saved statistics";
  let description = [{
    output = (x - mean) * inv_std * scale + shift, per channel (axis 1) of
    an [N, C, H, W] or [N, C] input (with `channels_last`, set by
    `--fluid-layout=nhwc`: the last axis of an [N, H, W, C] input), with
    the statistics that
    `fluid.batch_norm` returns (`saved_mean`, `saved_inv_std`). It
    recomputes a training batch norm's output in the backward pass from the
    kept input, rather than keeping the output between the passes, so it
    appears only after differentiation and has no gradient rule.

    On the cpu backend the result is bitwise the `output` of the
    `fluid.batch_norm` that returned the statistics, for the same input,
    scale and shift (both kernels run one normalize loop); on the cuda
    backend it equals cuDNN's training output to rounding.

    ```mlir
    %y = fluid.batch_norm_apply %x, %gamma, %beta, %saved_mean, %saved_inv_std
        : tensor<8x64x56x56xf32>, tensor<64xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$input,
    Fluid_FloatTensor:$scale,
    Fluid_FloatTensor:$shift,
    Fluid_FloatTensor:$mean,
    Fluid_FloatTensor:$inv_std,
    UnitAttr:$channels_last);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $shift `,` $mean `,` $inv_std attr-dict
    `:` type($input) `,` type($scale)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Fluid_UnaryOp<string mnemonic, string formula>
    : Fluid_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise " # formula;
  let arguments = (ins Fluid_FloatTensor:$input);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Fluid_ReluOp : Fluid_UnaryOp<"relu", "max(x, 0)">;
def Fluid_SigmoidOp : Fluid_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Fluid_TanhOp : Fluid_UnaryOp<"tanh", "tanh(x)">;

class Fluid_BinaryOp<string mnemonic, string formula,
                     Type operandType = Fluid_FloatTensor>
    : Fluid_InferOp<mnemonic> {
  let summary = "Elementwise " # formula # " with NumPy broadcasting";
  let description = [{
    Shapes are aligned from the right; each pair of dimensions must be equal
    or one of them 1. Both operands have the same element type.

    ```mlir
    %y = fluid.}] # mnemonic # [{ %a, %b : tensor<8x64x7x7xf32>, tensor<8x64x1x1xf32> -> tensor<8x64x7x7xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($output)
  }];
}

// Integer arithmetic counts steps; the rest is floating point.
// Folders: FluidFolders.cpp (rank-0 constants; x * 1, x / 1, x - 0).
def Fluid_AddOp : Fluid_BinaryOp<"add", "lhs + rhs", Fluid_Tensor> {
  let hasFolder = 1;
}
def Fluid_SubOp : Fluid_BinaryOp<"sub", "lhs - rhs", Fluid_Tensor> {
  let hasFolder = 1;
}
def Fluid_MulOp : Fluid_BinaryOp<"mul", "lhs * rhs", Fluid_Tensor> {
  let hasFolder = 1;
}
def Fluid_DivOp : Fluid_BinaryOp<"div", "lhs / rhs"> { let hasFolder = 1; }

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

class Fluid_Pool2DOp<string mnemonic, string what, dag extraArgs>
    : Fluid_InferOp<mnemonic> {
  let summary = what # " pooling over NCHW windows";
  let arguments = !con((ins
    Fluid_FloatTensor:$input,
    DenseI64ArrayAttr:$kernel_size,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    UnitAttr:$ceil_mode), extraArgs);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

// Max pooling has a channels-last form: with `channels_last`, input and
// output are [N, H, W, C] (the windows and picks are the same).
defvar Fluid_MaxPoolArgs = (ins
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    UnitAttr:$channels_last);

def Fluid_MaxPool2DOp : Fluid_Pool2DOp<"max_pool2d", "Max", Fluid_MaxPoolArgs> {
  let summary = "Max pooling over NCHW (or, with channels_last, NHWC) windows";
  let description = [{
    `padding` is [top, left, bottom, right]; padded cells never win. The
    output size follows PyTorch: OH = (H + top + bottom - dilation_h *
    (KH - 1) - 1) / stride_h + 1, rounded down, or up with `ceil_mode`, in
    which case a window that would start in the bottom padding is dropped.
    With `channels_last`, input and output are [N, H, W, C] instead of
    [N, C, H, W]: the same windows and maxima, channels innermost
    (--fluid-layout=layout=nhwc introduces it).

    ```mlir
    %y = fluid.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>,
        padding = array<i64: 1, 1, 1, 1>} : tensor<8x64x112x112xf32> -> tensor<8x64x56x56xf32>
    %z = fluid.max_pool2d %t {channels_last, kernel_size = array<i64: 3, 3>,
        strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
        : tensor<8x112x112x64xf32> -> tensor<8x56x56x64xf32>
    ```
  }];
}

def Fluid_MaxPool2DWithIndicesOp : Fluid_Pool2DOp<"max_pool2d_with_indices",
    "Max", Fluid_MaxPoolArgs> {
  let summary = "Max pooling that also returns each window's pick";
  let description = [{
    `output` is exactly `fluid.max_pool2d`'s; `indices`, of the output's
    shape, holds for each window the offset of its pick inside the window,
    `kh * KW + kw` for tap (kh, kw) of the KH x KW kernel (padded taps
    counted), by `fluid.max_pool2d`'s rule: the first maximum in row-major
    window order, but a NaN wins (the last one if several), and a window
    of -inf only picks its first tap inside the input. The indices are ui8,
    so the kernel has at most 256 cells. `fluid.max_pool2d_grad_indices`
    takes them instead of the input; --fluid-pool-indices introduces both.
    With `channels_last`, input, output and indices are [N, H, W, C]
    instead of [N, C, H, W]; the indices keep their meaning.

    ```mlir
    %y, %idx = fluid.max_pool2d_with_indices %x {kernel_size = array<i64: 3, 3>,
        strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
        : tensor<8x64x112x112xf32> -> tensor<8x64x56x56xf32>, tensor<8x64x56x56xui8>
    ```
  }];
  let results = (outs Fluid_FloatTensor:$output, Fluid_ByteTensor:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($output) `,` type($indices)
  }];
}

def Fluid_AvgPool2DOp : Fluid_Pool2DOp<"avg_pool2d", "Average",
    (ins UnitAttr:$count_include_pad)> {
  let description = [{
    Window and output sizes as for `fluid.max_pool2d` (no dilation). With
    `count_include_pad`, the divisor counts the window's cells inside the
    padded extent; without it, only the cells inside the input.
  }];
}

def Fluid_GlobalAvgPoolOp : Fluid_InferOp<"global_avg_pool"> {
  let summary = "Average over each channel's whole image: [N,C,H,W] -> [N,C,1,1]";
  let arguments = (ins Fluid_FloatTensor:$input);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Fluid_MatmulOp : Fluid_InferOp<"matmul"> {
  let summary = "Matrix product, optionally batched and transposed";
  let description = [{
    [M, K] x [K, N] -> [M, N], or with a shared leading batch dimension
    [B, M, K] x [B, K, N] -> [B, M, N]. `transpose_lhs` / `transpose_rhs`
    take the operand's last two dimensions swapped.

    ```mlir
    %y = fluid.matmul %a, %b {transpose_rhs} : tensor<8x512xf32>, tensor<10x512xf32> -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$lhs,
    Fluid_FloatTensor:$rhs,
    UnitAttr:$transpose_lhs,
    UnitAttr:$transpose_rhs);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($output)
  }];
}

def Fluid_LinearOp : Fluid_InferOp<"linear"> {
  let summary = "Fully connected layer: input x weight^T + bias";
  let description = [{
    `input` is [N, in], `weight` is [out, in] (PyTorch's layout), `bias` is
    [out]; the output is [N, out].

    ```mlir
    %y = fluid.linear %x, %w, %b : tensor<8x512xf32>, tensor<10x512xf32>, tensor<10xf32> -> tensor<8x10xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$input,
    Fluid_FloatTensor:$weight,
    Optional<Fluid_FloatTensor>:$bias);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` type($input) `,` type($weight)
    (`,` type($bias)^)? `->` type($output)
  }];
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Fluid_ReshapeOp : Fluid_Op<"reshape", [Pure]> {
  let summary = "Reinterprets a tensor's elements with a new shape";
  let description = [{
    The result type gives the new shape; the element count and type must be
    those of the input.

    ```mlir
    %y = fluid.reshape %x : tensor<8x512x1x1xf32> -> tensor<8x512xf32>
    ```
  }];
  let arguments = (ins Fluid_Tensor:$input);
  let results = (outs Fluid_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fluid_FlattenOp : Fluid_InferOp<"flatten"> {
  let summary = "Flattens to 2-D around `axis`, like ONNX Flatten";
  let description = [{
    [d0, ..., dn] -> [d0 * ... * d(axis-1), d(axis) * ... * dn]; `axis`
    (default 1) may be negative, counting from the end, or equal to the rank.

    ```mlir
    %y = fluid.flatten %x : tensor<8x512x1x1xf32> -> tensor<8x512xf32>
    ```
  }];
  let arguments = (ins Fluid_Tensor:$input, DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Fluid_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
}

def Fluid_ConcatOp : Fluid_InferOp<"concat"> {
  let summary = "Joins tensors along one axis";
  let description = [{
    All inputs have the same rank, element type and dimensions except along
    `axis` (which may be negative).

    ```mlir
    %y = fluid.concat %a, %b {axis = 1 : i64} : (tensor<8x64x7x7xf32>, tensor<8x32x7x7xf32>) -> tensor<8x96x7x7xf32>
    ```
  }];
  let arguments = (ins Variadic<Fluid_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Fluid_Tensor:$output);
  let assemblyFormat = [{
    $inputs attr-dict `:` `(` type($inputs) `)` `->` type($output)
  }];
}

def Fluid_GatherOp : Fluid_InferOp<"gather"> {
  let summary = "The slices of a tensor at given indices along one axis";
  let description = [{
    `indices` is a 1-D tensor of i32 or i64 values in [0, size of `axis`);
    the result is `input` with dimension `axis` (which may be negative)
    replaced by one slice per index: slice `i` of the result is slice
    `indices[i]` of the input (`numpy.take`, `torch.index_select`, ONNX
    Gather with 1-D indices). An index may repeat. A constant index outside
    the range is an error here, any other one in the kernels. Its gradient
    is `fluid.gather_grad`, which adds the gradient's slices back at the
    indices.

    ```mlir
    %bias = fluid.gather %table, %index {axis = 0 : i64} : (tensor<169x3xf32>, tensor<2401xi64>) -> tensor<2401x3xf32>
    ```
  }];
  let arguments = (ins Fluid_Tensor:$input, Fluid_IntTensor:$indices,
                       I64Attr:$axis);
  let results = (outs Fluid_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` `(` type($input) `,` type($indices) `)`
    `->` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Softmax and loss
//===----------------------------------------------------------------------===//

class Fluid_SoftmaxBase<string mnemonic, string what>
    : Fluid_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = what # " along `axis` (default -1, the last)";
  let arguments = (ins
    Fluid_FloatTensor:$input, DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Fluid_SoftmaxOp : Fluid_SoftmaxBase<"softmax", "exp(x) / sum(exp(x))">;
def Fluid_LogSoftmaxOp : Fluid_SoftmaxBase<"log_softmax", "x - log(sum(exp(x)))">;

def Fluid_SoftmaxCrossEntropyOp : Fluid_InferOp<"softmax_cross_entropy"> {
  let summary = "Cross-entropy of softmax(logits) against integer labels";
  let description = [{
    `logits` is [N, C], `labels` is [N] of class indices in [0, C).
    loss_i = log(sum_j exp(logits_ij)) - logits_i,label_i, reduced by
    `reduction`: `mean` (default) or `sum` give a scalar, `none` gives [N].

    ```mlir
    %loss = fluid.softmax_cross_entropy %logits, %labels : tensor<8x10xf32>, tensor<8xi64> -> tensor<f32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$logits,
    Fluid_IntTensor:$labels,
    DefaultValuedAttr<Fluid_ReductionAttr, "::mlir::fluid::Reduction::Mean">:$reduction);
  let results = (outs Fluid_FloatTensor:$loss);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->` type($loss)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Fluid_ReduceOp<string mnemonic, string what> : Fluid_InferOp<mnemonic> {
  let summary = what # " over `axes` (all axes when omitted)";
  let description = [{
    Axes may be negative (counting from the end) and must be distinct.
    Reduced dimensions are removed, or kept as 1 with `keep_dims`. The
    result has the input's element type, or is f32 for an f16 or bf16
    input: a widening sum, which reads the 16-bit values themselves
    (`--fluid-widening-reductions` makes them; they have no gradient rule).

    ```mlir
    %m = fluid.}] # mnemonic # [{ %x {axes = array<i64: 2, 3>, keep_dims} : tensor<8x64x7x7xf32> -> tensor<8x64x1x1xf32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$input,
    OptionalAttr<DenseI64ArrayAttr>:$axes,
    UnitAttr:$keep_dims);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let extraClassDeclaration = [{
    /// The inferred type, or the same shape in f32 for a 16-bit input.
    static bool isCompatibleReturnTypes(::mlir::TypeRange inferred,
                                        ::mlir::TypeRange actual) {
      return ::mlir::fluid::isReductionResultType(inferred, actual);
    }
  }];
}

def Fluid_MeanOp : Fluid_ReduceOp<"mean", "Arithmetic mean">;
def Fluid_ReduceSumOp : Fluid_ReduceOp<"reduce_sum", "Sum">;

include "fluid/Dialect/Fluid/IR/FluidMathOps.td"
include "fluid/Dialect/Fluid/IR/FluidGradOps.td"
include "fluid/Dialect/Fluid/IR/FluidOptimizerOps.td"
include "fluid/Dialect/Fluid/IR/FluidFusionOps.td"

#endif // FLUID_OPS_TD
