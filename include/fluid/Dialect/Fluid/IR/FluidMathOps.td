//===- FluidMathOps.td - Elementwise math and broadcasting ops -----------===//
//
// The arithmetic that learning-rate schedules and gradient rules are written
// in: elementwise functions, comparisons and selection with NumPy
// broadcasting, dtype casts, and explicit broadcasting and its reverse.
// Included by FluidOps.td.
//
//===----------------------------------------------------------------------===//

// Folders (FluidFolders.cpp) fold rank-0 constants where the result is
// exactly what every backend computes (correctly rounded IEEE arithmetic;
// no transcendental functions), and identities that are exact (x * 1,
// x / 1, x - 0): learning-rate arithmetic folds with --canonicalize.
def Fluid_NegOp : Fluid_UnaryOp<"neg", "-x"> { let hasFolder = 1; }
def Fluid_ExpOp : Fluid_UnaryOp<"exp", "exp(x)">;
def Fluid_LogOp : Fluid_UnaryOp<"log", "log(x)">;
def Fluid_CosOp : Fluid_UnaryOp<"cos", "cos(x)">;
def Fluid_SqrtOp : Fluid_UnaryOp<"sqrt", "sqrt(x)"> { let hasFolder = 1; }
def Fluid_FloorOp : Fluid_UnaryOp<"floor", "floor(x)"> { let hasFolder = 1; }
def Fluid_ErfOp : Fluid_UnaryOp<"erf", "erf(x)"> {
  let description = [{
    The Gauss error function, 2 / sqrt(pi) times the integral of exp(-t^2)
    from 0 to x: exact GELU is x * (1 + erf(x / sqrt(2))) / 2, which is how
    PyTorch exports nn.GELU to ONNX (Div, Erf, Add, Mul). Its gradient is
    2 / sqrt(pi) * exp(-x^2) times the output's.

    ```mlir
    %y = fluid.erf %x : tensor<2x197x3072xf32>
    ```
  }];
}

def Fluid_PowOp : Fluid_BinaryOp<"pow", "lhs ^ rhs">;
def Fluid_MinimumOp : Fluid_BinaryOp<"minimum", "min(lhs, rhs)"> {
  let hasFolder = 1;
}
def Fluid_MaximumOp : Fluid_BinaryOp<"maximum", "max(lhs, rhs)"> {
  let hasFolder = 1;
}
def Fluid_GreaterEqualOp : Fluid_BinaryOp<"greater_equal",
    "comparison lhs >= rhs, as 1.0 or 0.0 of the operands' type,"> {
  let hasFolder = 1;
}

def Fluid_SelectOp : Fluid_InferOp<"select"> {
  let summary = "on_true where condition is nonzero, else on_false, with NumPy broadcasting";
  let description = [{
    ```mlir
    %y = fluid.select %c, %a, %b : tensor<f32>, tensor<f32>, tensor<f32> -> tensor<f32>
    ```
  }];
  let arguments = (ins Fluid_FloatTensor:$condition, Fluid_FloatTensor:$on_true,
                       Fluid_FloatTensor:$on_false);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false) `->` type($output)
  }];
  let hasFolder = 1;
}

def Fluid_CastOp : Fluid_Op<"cast", [Pure]> {
  let summary = "Converts each element to the result's element type";
  let description = [{
    Between f16, bf16, f32, f64, i32 and i64; float to integer truncates
    toward zero, a narrower float rounds to nearest (ties to even, once).
    A cast back of an exact widening folds away (bf16 -> f32 -> bf16 is
    the bf16 value; i32 -> i64 -> i32 the i32 one).

    ```mlir
    %f = fluid.cast %step : tensor<i64> -> tensor<f32>
    ```
  }];
  let arguments = (ins Fluid_Tensor:$input);
  let results = (outs Fluid_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Fluid_BroadcastToOp : Fluid_Op<"broadcast_to", [Pure]> {
  let summary = "Broadcasts a tensor to the result's shape (NumPy rules)";
  let description = [{
    ```mlir
    %y = fluid.broadcast_to %x : tensor<8x64x1x1xf32> -> tensor<8x64x7x7xf32>
    ```
  }];
  let arguments = (ins Fluid_FloatTensor:$input);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Fluid_SumToOp : Fluid_Op<"sum_to", [Pure]> {
  let summary = "Sums a tensor down to a shape that broadcasts to it";
  let description = [{
    The reverse of `fluid.broadcast_to`: sums over every dimension that
    broadcasting the result's shape to the input's would expand. It is the
    gradient of a broadcasting binary op with respect to its smaller operand.
    The result has the input's element type, or is f32 for an f16 or bf16
    input (a widening sum, as `fluid.reduce_sum`'s).

    ```mlir
    %db = fluid.sum_to %dy : tensor<8x64x7x7xf32> -> tensor<64x1x1xf32>
    ```
  }];
  let arguments = (ins Fluid_FloatTensor:$input);
  let results = (outs Fluid_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Fluid_TransposeOp : Fluid_Op<"transpose", [Pure]> {
  let summary = "Permutes a tensor's dimensions";
  let description = [{
    Result dimension `d` is input dimension `permutation[d]`, as
    `numpy.transpose` and ONNX Transpose. Layout assignment uses it for the
    changes between NCHW and NHWC (`[0, 2, 3, 1]` and `[0, 3, 1, 2]`); its
    gradient is the transpose by the inverse permutation. A transpose that
    moves only dimensions of size 1 keeps the elements in order and folds
    to a reshape when canonicalized; two transposes in a row become one.

    ```mlir
    %y = fluid.transpose %x {permutation = array<i64: 0, 2, 3, 1>} : tensor<8x64x7x7xf32> -> tensor<8x7x7x64xf32>
    ```
  }];
  let arguments = (ins Fluid_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Fluid_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let builders = [
    // The result type follows from the input's and the permutation.
    OpBuilder<(ins "Value":$input, "ArrayRef<int64_t>":$permutation)>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Fluid_SliceOp : Fluid_Op<"slice", [Pure]> {
  let summary = "The result-shaped window of a tensor at `offset` along `axis`";
  let description = [{
    All dimensions but `axis` are the input's; along `axis` the result takes
    the elements [offset, offset + size). It is the gradient of concat.

    ```mlir
    %a = fluid.slice %x {axis = 1 : i64, offset = 64 : i64} : tensor<8x96x7x7xf32> -> tensor<8x32x7x7xf32>
    ```
  }];
  let arguments = (ins Fluid_Tensor:$input, I64Attr:$axis, I64Attr:$offset);
  let results = (outs Fluid_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}
