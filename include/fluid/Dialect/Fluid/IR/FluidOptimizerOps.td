//===- FluidOptimizerOps.td - Parameter update rules ---------------------===//
//
// Pure ops computing a parameter's new value (and new optimizer state) from
// its gradient and a learning rate tensor; the program writes the results
// back with fluid.set_param, and bufferization makes that in place.
// Semantics are torch.optim's. Included by FluidOps.td.
//
// Every update takes an optional `skip_if %found_inf` (a tensor<f32> flag,
// fluid.unscale_grads' result under dynamic loss scaling): where it is
// nonzero the results are the parameter and the state unchanged, as when
// torch.cuda.amp.GradScaler skips optimizer.step() after an overflow; the
// flag stays on the device, read by the update kernels.
//
//===----------------------------------------------------------------------===//

class Fluid_UpdateOp<string mnemonic, list<Trait> traits = []>
    : Fluid_Op<mnemonic, !listconcat(traits, [Pure])> {
  let hasVerifier = 1;
}

def Fluid_SgdOp : Fluid_UpdateOp<"sgd", [
    AllTypesMatch<["param", "grad", "new_param"]>]> {
  let summary = "Plain SGD: p - lr * (grad + weight_decay * p)";
  let description = [{
    ```mlir
    %p2 = fluid.sgd %p, %g, %lr {weight_decay = 1.0e-04 : f64} : tensor<64x3x7x7xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$param, Fluid_FloatTensor:$grad, Fluid_ScalarTensor:$lr,
    Optional<Fluid_F32Scalar>:$found_inf,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Fluid_FloatTensor:$new_param);
  let assemblyFormat = [{
    $param `,` $grad `,` $lr (`skip_if` $found_inf^)? attr-dict `:` type($param) `,` type($lr)
  }];
}

def Fluid_MomentumOp : Fluid_UpdateOp<"momentum", [
    AllTypesMatch<["param", "grad", "velocity", "new_param", "new_velocity"]>]> {
  let summary = "SGD with momentum (optionally Nesterov), as torch.optim.SGD";
  let description = [{
    g = grad + weight_decay * p; v' = momentum * v + g;
    p' = p - lr * (nesterov ? g + momentum * v' : v'). A zero velocity on
    the first step gives PyTorch's first update.

    ```mlir
    %p2, %v2 = fluid.momentum %p, %g, %v, %lr {momentum = 0.9 : f64, weight_decay = 1.0e-04 : f64}
        : tensor<64x3x7x7xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$param, Fluid_FloatTensor:$grad,
    Fluid_FloatTensor:$velocity, Fluid_ScalarTensor:$lr,
    Optional<Fluid_F32Scalar>:$found_inf,
    DefaultValuedAttr<F64Attr, "0.9">:$momentum,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
    UnitAttr:$nesterov);
  let results = (outs Fluid_FloatTensor:$new_param,
                      Fluid_FloatTensor:$new_velocity);
  let assemblyFormat = [{
    $param `,` $grad `,` $velocity `,` $lr (`skip_if` $found_inf^)? attr-dict `:` type($param) `,` type($lr)
  }];
}

def Fluid_AdamOp : Fluid_UpdateOp<"adam", [
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "Adam, or AdamW with `decoupled`, as torch.optim";
  let description = [{
    `step` is the 1-based number of this update (i64), for bias correction.
    Adam adds weight_decay * p to the gradient; AdamW (`decoupled`) scales p
    by 1 - lr * weight_decay first.

    ```mlir
    %p2, %m2, %v2 = fluid.adam %p, %g, %m, %v, %lr, %step {decoupled, weight_decay = 1.0e-02 : f64}
        : tensor<10x512xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins
    Fluid_FloatTensor:$param, Fluid_FloatTensor:$grad,
    Fluid_FloatTensor:$exp_avg, Fluid_FloatTensor:$exp_avg_sq,
    Fluid_ScalarTensor:$lr, Fluid_IntTensor:$step,
    Optional<Fluid_F32Scalar>:$found_inf,
    DefaultValuedAttr<F64Attr, "0.9">:$beta1,
    DefaultValuedAttr<F64Attr, "0.999">:$beta2,
    DefaultValuedAttr<F64Attr, "1.0e-8">:$epsilon,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
    UnitAttr:$decoupled);
  let results = (outs Fluid_FloatTensor:$new_param,
                      Fluid_FloatTensor:$new_exp_avg,
                      Fluid_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $lr `,` $step
    (`skip_if` $found_inf^)? attr-dict
    `:` type($param) `,` type($lr) `,` type($step)
  }];
}

//===----------------------------------------------------------------------===//
// Grouped updates
//
// One rule with one learning rate and one set of hyper-parameters applied
// to lists of parameters (--fluid-group-optimizer builds them): entry k is
// the single op on the k-th parameter, gradient and state, and the results
// are the lists of new parameters (then of new state) in the same order.
// Every list has one entry per parameter; within an entry all tensors have
// the parameter's type, and every entry has one element type. The cuda
// backend runs a group as one multi-tensor kernel launch, the cpu backend
// as a loop over the entries.
//===----------------------------------------------------------------------===//

class Fluid_GroupUpdateOp<string mnemonic, string single>
    : Fluid_Op<mnemonic, [Pure, AttrSizedOperandSegments,
                          SameVariadicResultSize]> {
  let summary = "fluid." # single # " on each entry of lists of parameters";
  let hasVerifier = 1;
}

def Fluid_SgdGroupOp : Fluid_GroupUpdateOp<"sgd_group", "sgd"> {
  let description = [{
    ```mlir
    %p:2 = fluid.sgd_group (%w, %b), (%gw, %gb), %lr {weight_decay = 1.0e-04 : f64}
        : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
    ```
  }];
  let arguments = (ins
    Variadic<Fluid_FloatTensor>:$params, Variadic<Fluid_FloatTensor>:$grads,
    Fluid_ScalarTensor:$lr, Optional<Fluid_F32Scalar>:$found_inf,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Variadic<Fluid_FloatTensor>:$new_params);
  let assemblyFormat = [{
    `(` $params `)` `,` `(` $grads `)` `,` $lr (`skip_if` $found_inf^)? attr-dict
    `:` `(` type($params) `)` `,` type($lr)
    custom<EntryTypes>(ref(type($params)), type($grads), type($new_params))
  }];
}

def Fluid_MomentumGroupOp : Fluid_GroupUpdateOp<"momentum_group", "momentum"> {
  let description = [{
    ```mlir
    %p:2, %v:2 = fluid.momentum_group (%w, %b), (%gw, %gb), (%vw, %vb), %lr {momentum = 0.9 : f64}
        : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
    ```
  }];
  let arguments = (ins
    Variadic<Fluid_FloatTensor>:$params, Variadic<Fluid_FloatTensor>:$grads,
    Variadic<Fluid_FloatTensor>:$velocities, Fluid_ScalarTensor:$lr,
    Optional<Fluid_F32Scalar>:$found_inf,
    DefaultValuedAttr<F64Attr, "0.9">:$momentum,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
    UnitAttr:$nesterov);
  let results = (outs Variadic<Fluid_FloatTensor>:$new_params,
                      Variadic<Fluid_FloatTensor>:$new_velocities);
  let assemblyFormat = [{
    `(` $params `)` `,` `(` $grads `)` `,` `(` $velocities `)` `,` $lr
    (`skip_if` $found_inf^)? attr-dict
    `:` `(` type($params) `)` `,` type($lr)
    custom<EntryTypes>(ref(type($params)), type($grads), type($velocities),
                       type($new_params), type($new_velocities))
  }];
}

def Fluid_AdamGroupOp : Fluid_GroupUpdateOp<"adam_group", "adam"> {
  let description = [{
    ```mlir
    %p:2, %m:2, %v:2 = fluid.adam_group (%w, %b), (%gw, %gb), (%mw, %mb), (%vw, %vb), %lr, %step {decoupled}
        : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>, tensor<i64>
    ```
  }];
  let arguments = (ins
    Variadic<Fluid_FloatTensor>:$params, Variadic<Fluid_FloatTensor>:$grads,
    Variadic<Fluid_FloatTensor>:$exp_avgs,
    Variadic<Fluid_FloatTensor>:$exp_avg_sqs,
    Fluid_ScalarTensor:$lr, Fluid_IntTensor:$step,
    Optional<Fluid_F32Scalar>:$found_inf,
    DefaultValuedAttr<F64Attr, "0.9">:$beta1,
    DefaultValuedAttr<F64Attr, "0.999">:$beta2,
    DefaultValuedAttr<F64Attr, "1.0e-8">:$epsilon,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
    UnitAttr:$decoupled);
  let results = (outs Variadic<Fluid_FloatTensor>:$new_params,
                      Variadic<Fluid_FloatTensor>:$new_exp_avgs,
                      Variadic<Fluid_FloatTensor>:$new_exp_avg_sqs);
  let assemblyFormat = [{
    `(` $params `)` `,` `(` $grads `)` `,` `(` $exp_avgs `)` `,`
    `(` $exp_avg_sqs `)` `,` $lr `,` $step (`skip_if` $found_inf^)? attr-dict
    `:` `(` type($params) `)` `,` type($lr) `,` type($step)
    custom<EntryTypes>(ref(type($params)), type($grads), type($exp_avgs),
                       type($exp_avg_sqs), type($new_params),
                       type($new_exp_avgs), type($new_exp_avg_sqs))
  }];
}

//===----------------------------------------------------------------------===//
// Dynamic loss scaling
//===----------------------------------------------------------------------===//

def Fluid_UnscaleGradsOp : Fluid_Op<"unscale_grads", [Pure]> {
  let summary = "Divide gradients by the loss scale and check that all are finite";
  let description = [{
    The gradients of a loss multiplied by `scale`, divided by it again (each
    element times the f32 reciprocal of `scale`, as torch.amp's
    `_amp_foreach_non_finite_check_and_unscale_` computes it), and one flag:
    `found_inf` is 1.0 when an element of any gradient is infinite or NaN,
    else 0.0. The update ops read the flag (`skip_if`), and the loss-scale
    arithmetic halves the scale with it, all on the device.
    `--fluid-append-optimizer` creates it for a loss scaled by
    `--fluid-append-backward`'s `loss-scale`. Every gradient has one float
    element type.

    ```mlir
    %u:2, %found = fluid.unscale_grads (%gw, %gb), %scale
        : (tensor<16x8xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Variadic<Fluid_FloatTensor>:$grads,
                       Fluid_F32Scalar:$scale);
  let results = (outs Variadic<Fluid_FloatTensor>:$unscaled,
                      Fluid_F32Scalar:$found_inf);
  let assemblyFormat = [{
    `(` $grads `)` `,` $scale attr-dict `:` `(` type($grads) `)`
    custom<EntryTypes>(ref(type($grads)), type($unscaled))
  }];
  let hasVerifier = 1;
}

def Fluid_AllReduceMeanOp : Fluid_Op<"all_reduce_mean"> {
  let summary = "Average tensors over the ranks of a data-parallel run";
  let description = [{
    Every rank (process) of a data-parallel run passes its own values of
    `inputs`; each result is the elementwise mean of that input over all
    ranks (the sum divided by the number of ranks), the same on every rank.
    On one rank it is the identity. `--fluid-data-parallel` inserts one per
    bucket of gradients, right after the bucket's last gradient is computed,
    so that on the cuda backend its communication overlaps the rest of the
    backward pass; `bucket` numbers the buckets in that order. Every rank
    runs the same program and so issues the same all-reduces in the same
    order. Not pure: removing or reordering one would leave the other
    ranks waiting.

    ```mlir
    %r:2 = fluid.all_reduce_mean (%gw, %gb) {bucket = 0 : i64}
        : (tensor<16x8xf32>, tensor<16xf32>)
    ```
  }];
  let arguments = (ins Variadic<Fluid_FloatTensor>:$inputs,
                       I64Attr:$bucket);
  let results = (outs Variadic<Fluid_FloatTensor>:$outputs);
  let assemblyFormat = [{
    `(` $inputs `)` attr-dict `:` `(` type($inputs) `)`
    custom<EntryTypes>(ref(type($inputs)), type($outputs))
  }];
  let hasVerifier = 1;
}
