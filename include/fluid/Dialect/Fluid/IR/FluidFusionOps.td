//===- FluidFusionOps.td - Fused elementwise regions ----------------------===//
//
// `fluid.fusion` holds a group of elementwise ops that run as one kernel:
// --fluid-fuse-elementwise forms them, bufferization turns each into one
// `fluid_rt.launch "fusion"` that keeps the region, and emission generates
// the kernel from the region (a loop on the cpu backend, a gpu.func lowered
// through NVVM to PTX on the cuda backend). docs/FUSION.md explains the
// choice of a region op of our own. Included by FluidOps.td.
//
//===----------------------------------------------------------------------===//

include "mlir/Interfaces/ControlFlowInterfaces.td"

def Fluid_FusionOp : Fluid_Op<"fusion", [
    IsolatedFromAbove, RecursiveMemoryEffects, SingleBlock]> {
  let summary = "Elementwise ops over one iteration space, run as one kernel";
  let description = [{
    The body computes the results from the block arguments, which stand
    for `inputs`, with ops that `fluid::isFusibleElementwise` accepts, and
    per-channel sums (`fluid.reduce_sum` over every axis but 1, or, in
    channels-last programs, over every axis but the last, which
    `fluid::isFusibleReduction` accepts; all of one region keep the same
    axis) whose results are only yielded.
    The iteration space is the shape of the elementwise values: every
    value the body computes has it, so does every result but a sum's, and
    so does every sum's input; an input has that shape or one that the
    body's ops broadcast to it (NumPy broadcasting, or a per-channel vector
    of `fluid.batch_norm_apply`). So one pass over the iteration space
    computes every result, each element once; nothing in the body is
    computed twice.

    The body may also apply views (`fluid::isFusibleView`: `fluid.slice`
    at offset 0, a `fluid.reshape` that only adds or drops dimensions of
    size 1) to an input, for its elementwise ops to read: they compute
    nothing, the generated code reads the input's buffer at the view's
    strides. Batch norm's expansion reads each channel's first element so,
    without a copy of it (`%k` below is x[0, c, 0, 0]).

    ```mlir
    %d = fluid.fusion ins(%x : tensor<8x4x5x5xf32>) -> (tensor<8x4x5x5xf32>) {
    ^bb0(%a: tensor<8x4x5x5xf32>):
      %n = fluid.slice %a {axis = 0 : i64, offset = 0 : i64} : tensor<8x4x5x5xf32> -> tensor<1x4x5x5xf32>
      %h = fluid.slice %n {axis = 2 : i64, offset = 0 : i64} : tensor<1x4x5x5xf32> -> tensor<1x4x1x5xf32>
      %k = fluid.slice %h {axis = 3 : i64, offset = 0 : i64} : tensor<1x4x1x5xf32> -> tensor<1x4x1x1xf32>
      %s = fluid.sub %a, %k : tensor<8x4x5x5xf32>, tensor<1x4x1x1xf32> -> tensor<8x4x5x5xf32>
      fluid.yield %s : tensor<8x4x5x5xf32>
    }
    ```

    ```mlir
    %r:2 = fluid.fusion ins(%a, %b : tensor<8x64xf32>, tensor<64xf32>)
        -> (tensor<8x64xf32>, tensor<8x64xf32>) {
    ^bb0(%x: tensor<8x64xf32>, %y: tensor<64xf32>):
      %s = fluid.add %x, %y : tensor<8x64xf32>, tensor<64xf32> -> tensor<8x64xf32>
      %t = fluid.relu %s : tensor<8x64xf32>
      fluid.yield %s, %t : tensor<8x64xf32>, tensor<8x64xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Fluid_Tensor>:$inputs);
  let results = (outs Variadic<Fluid_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`ins` `(` $inputs^ `:` type($inputs) `)`)? `->` `(` type($results) `)`
    $body attr-dict
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The shape every result and every value of the body has.
    /// The shape of the body's elementwise values (and of the inputs of
    /// its reductions).
    ::llvm::ArrayRef<int64_t> getIterationShape();
    /// Whether the region has per-channel reductions (then its kernel
    /// walks the iteration space channel by channel).
    bool hasReductions();
    /// The axis the region's sums keep: 1, or the last of a channels-last
    /// region (whose kernel walks rows of channels); 1 without sums.
    int64_t getChannelAxis();
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::fluid::YieldOp getYield();
  }];
}

def Fluid_YieldOp : Fluid_Op<"yield", [Pure, Terminator, ReturnLike]> {
  let summary = "The results of a fused region";
  let description = [{
    Ends the body of a `fluid.fusion`, or of the `fluid_rt.launch "fusion"`
    that the body moves into at bufferization.
  }];
  let arguments = (ins Variadic<Fluid_Tensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
}
