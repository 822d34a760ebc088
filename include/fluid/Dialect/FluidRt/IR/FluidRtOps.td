//===- FluidRtOps.td - The buffer level of a training program ------------===//
//
// After --fluid-bufferize a training step works on buffers (`memref`):
// parameters are persistent buffers, every other value lives in a buffer
// of its own (memref.alloc), and each computation is one kernel launch that
// reads its input buffers and writes its output buffers. A launch maps 1:1
// to a runtime entry point (fluid_cpu_<kernel> or fluid_cuda_<kernel>), which
// is what emission needs.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RT_OPS_TD
#define FLUID_RT_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ViewLikeInterface.td"

def FluidRt_Dialect : Dialect {
  let name = "fluid_rt";
  let cppNamespace = "::mlir::fluid_rt";
  let summary = "Buffer-level training programs: kernel launches on memrefs";
  let description = [{
    The runtime's view of a program: `fluid_rt.param_ref` names the
    persistent buffer of a `fluid.param`, and `fluid_rt.launch` runs one
    kernel of the runtime on buffers. Allocation, copies and (later) frees
    are the upstream `memref` dialect's ops.
  }];
  // Launches are verified by building the fluid op they run.
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::fluid::FluidDialect"];
  // The memory plan's attributes (kArenaBytesAttrName, ...).
  let hasOperationAttrVerify = 1;
}

class FluidRt_Op<string mnemonic, list<Trait> traits = []>
    : Op<FluidRt_Dialect, mnemonic, traits>;

def FluidRt_ParamRefOp : FluidRt_Op<"param_ref", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The persistent buffer of a parameter";
  let description = [{
    ```mlir
    %w = fluid_rt.param_ref @conv1.weight : memref<64x3x7x7xf32>
    ```
    The symbol names a `fluid.param` whose tensor type has this shape and
    element type. Launches that write the buffer update the parameter.
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs AnyStaticShapeMemRef:$buffer);
  let assemblyFormat = "$name attr-dict `:` type($buffer)";
}

def FluidRt_LaunchOp : FluidRt_Op<"launch", [AttrSizedOperandSegments,
                                              IsolatedFromAbove]> {
  let summary = "Runs one runtime kernel on buffers";
  let description = [{
    Runs the runtime's kernel `kernel` (the name of the `fluid` op it
    implements, without the dialect prefix) with `inputs` read and
    `outputs` written; `params` holds that op's attributes. The launch is
    valid exactly when the tensor-level op, built on the buffers' shapes,
    is.

    ```mlir
    fluid_rt.launch "conv2d" ins(%x, %w : memref<8x3x32x32xf32>, memref<16x3x3x3xf32>)
        outs(%y : memref<8x16x32x32xf32>) params {padding = array<i64: 1, 1, 1, 1>}
    ```

    A launch of `"fusion"` carries the body of its `fluid.fusion` (tensor
    ops on block arguments that stand for the inputs' tensors), from which
    emission generates the kernel; no other launch has a region.

    ```mlir
    fluid_rt.launch "fusion" ins(%a : memref<64xf32>) outs(%r : memref<64xf32>)
        params {} {
    ^bb0(%x: tensor<64xf32>):
      %y = fluid.relu %x : tensor<64xf32>
      fluid.yield %y : tensor<64xf32>
    }
    ```
  }];
  let arguments = (ins
    StrAttr:$kernel,
    Variadic<AnyStaticShapeMemRef>:$inputs,
    Variadic<AnyStaticShapeMemRef>:$outputs,
    DictionaryAttr:$params);
  let regions = (region AnyRegion:$body);
  let assemblyFormat = [{
    $kernel (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    `outs` `(` $outputs `:` type($outputs) `)` `params` $params ($body^)?
    attr-dict-with-keyword
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Builds the tensor-level op this launch runs, detached, on block
    /// arguments of the buffers' tensor types (for verification and for
    /// the interpreter); the caller destroys it. Null (with a diagnostic)
    /// if `kernel` names no fluid op.
    ::mlir::Operation *buildTensorOp(::mlir::Block &arguments);
  }];
}

def FluidRt_ViewOp : FluidRt_Op<"view", [
    Pure, DeclareOpInterfaceMethods<ViewLikeOpInterface>]> {
  let summary = "The same buffer seen with another shape (reshape, flatten)";
  let description = [{
    ```mlir
    %flat = fluid_rt.view %pooled : memref<8x512x1x1xf32> -> memref<8x512xf32>
    ```
  }];
  let arguments = (ins AnyStaticShapeMemRef:$source);
  let results = (outs AnyStaticShapeMemRef:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

#endif // FLUID_RT_OPS_TD
