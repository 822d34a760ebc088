//===- Passes.td - Fluid's passes ----------------------------------------===//
//
// Every pass of the project is declared here, with a one-line summary and a
// description, and lives in one file of passes/ named after its flag.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_PASSES_TD
#define FLUID_PASSES_TD

include "mlir/Pass/PassBase.td"

def FluidParamSummary : Pass<"fluid-param-summary", "::mlir::ModuleOp"> {
  let summary = "Print a table of the module's parameters and their sizes";
  let description = [{
    An analysis pass: prints one row per `fluid.param` (name, shape, element
    type, element count, bytes, initializer, trainable) and the totals, so a
    model's size can be checked against its reference implementation (e.g.
    torchvision's ResNet-50 has 25,557,032 parameters). The IR is unchanged.
    The table goes to standard error, or to the file named by `output`.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the table ('-' for standard error)">
  ];
}

def FluidAppendBackward : Pass<"fluid-append-backward", "::mlir::ModuleOp"> {
  let summary = "Append reverse-mode gradients of a scalar loss for every trainable parameter";
  let description = [{
    Turns the function that computes a scalar loss (the one marked
    `fluid.entry`, the only public one, or the one named by `func`) into a
    training step's forward and backward pass: after the forward ops it
    appends, in reverse order, one gradient rule per op, and returns the
    loss followed by the gradient of every trainable parameter, in the order
    the parameters are declared. Each gradient result carries
    `fluid.grad_of = @param`, which `--fluid-append-optimizer` reads.

    Values with several uses get the sum of their gradients. Only values
    that depend on a trainable parameter are differentiated: labels, integer
    inputs, the images and non-trainable parameters (batch-norm running
    statistics) get no gradient code. The activations the backward pass
    needs are the forward ops' SSA results themselves, so the memory passes
    later see exactly what is saved for the backward pass. A trainable
    parameter that the loss does not depend on gets a zero gradient.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"\"",
           "The loss function (default: the entry function)">
  ];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidAppendOptimizer : Pass<"fluid-append-optimizer", "::mlir::ModuleOp"> {
  let summary = "Append parameter updates, a step counter and a learning-rate schedule";
  let description = [{
    Reads the function built by `--fluid-append-backward` (its results are
    the loss and gradients marked `fluid.grad_of`) and turns it into a whole
    training step that returns the loss and the step's learning rate (f64,
    marked `fluid.learning_rate`, for logs):

    - a parameter `@global_step` (i64, not trainable) counts completed
      steps; the step reads it as t and stores t + 1;
    - the learning rate is computed from t by the schedule, as ordinary ops:
      `constant`; `step` (x gamma every `step-size` steps, StepLR);
      `multistep` (x gamma at each of `milestones`, MultiStepLR);
      `exponential` (x gamma every step); `cosine` (from lr down to
      `eta-min` over `total-steps`, CosineAnnealingLR); with
      `warmup-steps` > 0, a linear warm-up from `warmup-start-factor` x lr
      comes first and the schedule starts after it (SequentialLR of LinearLR
      and the schedule);
    - each parameter's rate is the global rate times its `lr_mult`, one
      product per parameter, the way Fluid did (`--fluid-fold-lr-math`
      removes them), and its weight decay is `weight-decay` x `decay_mult`;
    - each parameter is updated by `sgd`, `momentum` (optionally
      `nesterov`), `adam` or `adamw`, as torch.optim does, and written back
      with `fluid.set_param`; optimizer state (momentum buffers, Adam
      moments) becomes new zero-initialized, non-trainable parameters named
      `PARAM.momentum_buffer`, `PARAM.exp_avg`, `PARAM.exp_avg_sq`, so
      checkpoints hold it.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"\"",
           "The training-step function (default: the entry function)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"momentum\"",
           "sgd, momentum, adam or adamw">,
    Option<"lr", "lr", "double", /*default=*/"0.1", "Base learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum (momentum optimizer)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "Weight decay (L2 for sgd/momentum/adam, decoupled for adamw)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"constant\"",
           "constant, step, multistep, exponential or cosine">,
    Option<"stepSize", "step-size", "int64_t", /*default=*/"30",
           "Steps between decays (step schedule)">,
    Option<"gamma", "gamma", "double", /*default=*/"0.1",
           "Decay factor (step, multistep, exponential)">,
    ListOption<"milestones", "milestones", "int64_t",
               "Steps at which the rate decays (multistep schedule)">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "Length of the cosine schedule (after warm-up)">,
    Option<"etaMin", "eta-min", "double", /*default=*/"0.0",
           "Final rate of the cosine schedule">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "Steps of linear warm-up before the schedule">,
    Option<"warmupStartFactor", "warmup-start-factor", "double",
           /*default=*/"0.1", "Fraction of lr the warm-up starts at">,
    Option<"lrParam", "lr-param", "bool", /*default=*/"false",
           "Read the base rate from the parameter @learning_rate (f64, "
           "initialized to lr) instead of baking it in, so that a compiled "
           "program can be given another rate when it starts">
  ];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidBufferize : Pass<"fluid-bufferize", "::mlir::ModuleOp"> {
  let summary = "Move every function from tensors to buffers and kernel launches";
  let description = [{
    The baseline bufferization, without any memory optimization (the "no
    optimization" row of the seed's memory table):

    - `fluid.get_param` becomes `fluid_rt.param_ref`, the parameter's
      persistent buffer (copied into a buffer of its own when the value is
      still read after a `fluid.set_param` of that parameter);
    - `fluid.set_param` becomes a `memref.copy` into the persistent buffer;
    - `fluid.reshape` and `fluid.flatten` become `fluid_rt.view`s;
    - every other op becomes one `fluid_rt.launch` of its kernel, writing
      results into fresh `memref.alloc` buffers (constants are launches of
      the `constant` kernel);
    - arguments and results become memrefs; a result that is a parameter's
      buffer is returned as a copy.

    Nothing is freed: `--fluid-insert-frees` and `--fluid-plan-memory` come
    after, and in-place updates of parameters are a pass of their own.
  }];
  let dependentDialects = ["::mlir::fluid_rt::FluidRtDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FluidUpdateInPlace : Pass<"fluid-update-in-place", "::mlir::ModuleOp"> {
  let summary = "Write parameter updates straight into the parameters' buffers";
  let description = [{
    After `--fluid-bufferize`, a parameter update is a launch writing a fresh
    buffer followed by a `memref.copy` into the parameter. When the launch's
    kernel may write that output over its inputs (the optimizer updates,
    batch norm's running statistics, same-shape add/sub/mul such as the step
    counter) and nothing touches the parameter between the launch and the
    copy, the launch writes the parameter's buffer directly: the copy and
    the fresh buffer disappear. This is how parameters and optimizer state
    are updated in place; turning the pass off measures what it saves.
  }];
  let dependentDialects = ["::mlir::fluid_rt::FluidRtDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // FLUID_PASSES_TD
