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
    later see exactly what is saved for the backward pass; a value the
    program stores in 16 bits (rounded by a `fluid.cast` to f16 or bf16 and
    read through the cast back, as `--fluid-mixed-precision` writes it) is
    read by the gradient rules as it is stored, so only the 16-bit copy is
    kept. A trainable parameter that the loss does not depend on gets a
    zero gradient.

    With `loss-scale` > 0 (dynamic loss scaling, for fp16 gradients), the
    backward pass starts from the value of a new f32 parameter
    `@loss_scale` (non-trainable optimizer state, initialized to
    `loss-scale`) instead of 1, so every gradient is the scaled loss's; the
    loss result is marked `fluid.loss_scale = @loss_scale`, and
    `--fluid-append-optimizer` unscales, checks and updates. The loss
    itself is returned unscaled.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"\"",
           "The loss function (default: the entry function)">,
    Option<"lossScale", "loss-scale", "double", /*default=*/"0.0",
           "Initial dynamic loss scale (0: none; fp16 programs use 65536)">
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
      checkpoints hold it;
    - dynamic loss scaling, when the loss is marked `fluid.loss_scale`
      (`--fluid-append-backward`'s `loss-scale`), as
      torch.cuda.amp.GradScaler does it, on the device: `fluid.unscale_grads`
      divides the gradients by `@loss_scale` and flags any that is not
      finite; every update takes the flag (`skip_if`: a step that
      overflowed updates nothing); then the scale is multiplied by
      `scale-backoff-factor` after an overflow, by `scale-growth-factor`
      after `scale-growth-interval` steps without one, and kept within
      [`min-loss-scale`, `max-loss-scale`]. `@loss_scale.growth_tracker`
      (f32) counts the steps since the last change and
      `@loss_scale.skipped_steps` (i64) the skipped steps, which the
      driver logs. The step counter and the schedule advance on skipped
      steps too (as a schedule stepped every iteration does in PyTorch),
      while Adam's bias correction counts only the updates made (as
      torch.optim's step count does).
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
           "program can be given another rate when it starts">,
    Option<"scaleGrowthInterval", "scale-growth-interval", "int64_t",
           /*default=*/"2000",
           "Dynamic loss scaling: steps without overflow before the scale "
           "grows">,
    Option<"scaleGrowthFactor", "scale-growth-factor", "double",
           /*default=*/"2.0", "Dynamic loss scaling: growth factor (> 1)">,
    Option<"scaleBackoffFactor", "scale-backoff-factor", "double",
           /*default=*/"0.5",
           "Dynamic loss scaling: factor after an overflow (in (0, 1))">,
    Option<"minLossScale", "min-loss-scale", "double", /*default=*/"1.0",
           "Dynamic loss scaling: the smallest scale">,
    Option<"maxLossScale", "max-loss-scale", "double",
           /*default=*/"16777216.0",
           "Dynamic loss scaling: the largest scale (2^24)">
  ];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidFoldLrMath : Pass<"fluid-fold-lr-math", "::mlir::ModuleOp"> {
  let summary = "Fold and merge the learning-rate arithmetic of the parameter updates";
  let description = [{
    `--fluid-append-optimizer` computes the step's learning rate from the
    step counter, then one product `rate x lr_mult` per parameter (nearly
    all by 1.0), as Paddle Fluid did. This pass folds that arithmetic where
    it is known at compile time and computes what depends on the step once:

    - it takes the learning-rate computation: the rank-0 ops that the
      update ops' `lr` and `step` operands (single and grouped) and the
      step's `fluid.learning_rate` result are computed from;
    - on those ops it runs the fluid dialect's folders and canonicalization
      patterns (what `--canonicalize` does, see FluidFolders.cpp: rank-0
      constants of exactly rounded arithmetic, `x * 1`, `x / 1`, `x - 0`,
      casts to the same type, constant conditions), so a product by 1.0
      disappears and constant schedules become constants;
    - then it merges equal ops among them (equal constants, equal products
      of the same rate and multiplier, equal reads of a parameter with no
      `fluid.set_param` of it in between), so each distinct multiplier
      leaves one product per step, shared by its parameters.

    This is what `--canonicalize --cse` would do to those ops; the pass
    adds the scope: it touches only the learning-rate computation (and
    scalar math left unused, such as the step's conversion under a
    constant schedule), never the model's forward and backward ops, so it
    is safe in the default training pipeline and its effect can be
    measured alone. Nothing is reassociated or computed in another
    precision: the program's results are bitwise the same with and without
    the pass.
  }];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidGroupOptimizer : Pass<"fluid-group-optimizer", "::mlir::ModuleOp"> {
  let summary = "Group per-parameter updates with equal hyper-parameters into one multi-tensor update";
  let description = [{
    Paddle Fluid's `sgd_group_op`: instead of one update op (and one kernel
    launch) per parameter, all `fluid.sgd`, `fluid.momentum` and
    `fluid.adam` ops of a function that share the rule, the element type,
    the learning rate (the same value, or equal computations of it, such
    as the rate times equal multipliers when `--fluid-fold-lr-math` has not
    merged them; the group then reads the first member's), Adam's step,
    and every
    hyper-parameter (weight decay, momentum, Nesterov, betas, epsilon,
    decoupled) become one `fluid.sgd_group`, `fluid.momentum_group` or
    `fluid.adam_group` over the lists of parameters, gradients and state,
    in program order. Updates that differ in any of these stay apart.

    The group is placed where its last member was, and the members'
    `fluid.set_param`s move right behind it. An update joins a group only
    if that is invisible: its results feed only `fluid.set_param`s, and
    nothing between it and the group's place reads or writes the
    parameters it sets; a parameter set twice stays out. A group of one is
    left as the single op. Bufferization keeps the group one launch, and
    `--fluid-update-in-place` writes its outputs over its inputs; the cuda
    backend runs it as one multi-tensor kernel, the cpu backend as a loop.
  }];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidExpandBatchNorm : Pass<"fluid-expand-batch-norm", "::mlir::ModuleOp"> {
  let summary = "Expand training batch norm and its gradient into per-channel reductions and elementwise ops";
  let description = [{
    `fluid.batch_norm` becomes one pass of shifted sums over the input
    (shift: the channel's first element; `fluid.reduce_sum` of x - K and
    of its square), per-channel arithmetic for the mean, the biased
    variance, inv_std and the running statistics (PyTorch's rule), and
    `fluid.batch_norm_apply`; `fluid.batch_norm_grad` becomes the two
    per-channel sums of dy and dy * xhat and one elementwise expression for
    the input gradient. After it, --fluid-fuse-elementwise fuses the sums
    with their producers (ReLU's gradient) and the normalization with its
    consumers (ReLU, residual add). Numerics: docs/FUSION.md.
  }];
  let statistics = [
    Statistic<"numExpanded", "expanded", "Batch norms and gradients expanded">,
  ];
}

def FluidLayout : Pass<"fluid-layout", "::mlir::ModuleOp"> {
  let summary = "Assign the activations' memory layout: NCHW or NHWC (channels last)";
  let description = [{
    With `layout=nhwc`, every convolution and its two gradients run
    channels-last (`channels_last`: NHWC activations, filters [O, KH, KW,
    C / groups]); layout-agnostic ops whose 4-D operands come from a
    converted op are converted with them (elementwise ops, with their
    broadcast operands permuted; `fluid.broadcast_to`, `fluid.sum_to`,
    `fluid.slice` and `fluid.reduce_sum` / `fluid.mean`, their axes
    renumbered). Each layout change left is a `fluid.transpose`, placed
    only where a converted value meets an op that is not converted (the
    program's inputs and parameters, pooling, `fluid.batch_norm_apply`,
    the optimizer); the canonicalizer then removes inverse pairs and turns
    transposes of per-channel vectors into reshapes. `layout=nchw` (the
    default) changes nothing. Parameters keep PyTorch's shapes: a filter is
    transposed where it is read and its gradient where it is written, the
    images where the first convolution reads them
    (--fluid-permute-storage then stores them permuted instead). Runs
    after --fluid-expand-batch-norm and before --fluid-permute-storage.
    Design and what is not converted yet: docs/LAYOUT.md.
  }];
  let options = [
    Option<"layout", "layout", "std::string", /*default=*/"\"nchw\"",
           "nchw (no change) or nhwc (channels last)">,
  ];
  let statistics = [
    Statistic<"numConverted", "converted", "Ops converted to channels last">,
    Statistic<"numTransposes", "transposes", "Layout changes left after canonicalization">,
  ];
}

def FluidPermuteStorage : Pass<"fluid-permute-storage", "::mlir::ModuleOp"> {
  let summary = "Store parameters and inputs in the layout their uses read, not per step";
  let description = [{
    Moves the layout changes that --fluid-layout leaves at the program's
    boundary out of the step. A `fluid.param` (a convolution filter, say)
    whose every value is read through one `fluid.transpose` permutation
    (or a `fluid.reshape` that moves only dimensions of size 1 as that
    permutation does) and written back from the inverse one is stored
    permuted: its type becomes the transposed type and its
    `storage_order` the permutation, and the transposes go. What couples
    values to one layout: `fluid.get_param` and `fluid.set_param`,
    elementwise ops whose operands have one shape (or are scalars), the
    updates (`fluid.sgd`, `fluid.momentum`, `fluid.adam`, entry by entry
    in their groups) and `fluid.unscale_grads`; so a filter's optimizer
    state (momentum buffers, Adam moments) is permuted with it, and the
    casts of mixed precision follow. Any other use keeps the whole group
    as it is.

    An argument of a function no one calls (the step's `images`) starts a
    group the same way; one without parameters, whose permutation keeps
    dimension 0 first (a batch stays split by examples), is stored
    permuted, the argument marked `fluid.storage_order`; the data
    pipeline writes it in that order.

    Checkpoints keep the unpermuted shapes: the driver converts at load,
    initialization and save (docs/LAYOUT.md). Runs after --fluid-layout
    and before --fluid-fuse-elementwise.
  }];
  let statistics = [
    Statistic<"numParams", "params", "Parameters stored permuted">,
    Statistic<"numArguments", "arguments", "Arguments stored permuted">,
    Statistic<"numRemoved", "removed", "Layout changes removed">,
  ];
}

def FluidFuseElementwise : Pass<"fluid-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Group elementwise ops into fused regions, each run as one generated kernel";
  let description = [{
    Maximal groups of elementwise ops (activations and their gradients,
    arithmetic with broadcasting, casts, select, batch norm's
    normalize-scale-shift `fluid.batch_norm_apply`) become one
    `fluid.fusion` region each; emission generates one kernel per region
    (a loop on the cpu backend, a gpu.func lowered to PTX on the cuda
    backend), so the values between the ops never go to memory.

    Legality and cost model (docs/FUSION.md): no library call (convolution,
    matmul, batch norm's statistics, pooling, reductions) is fused; all ops
    of a region compute the same shape, smaller operands are broadcast
    inputs; nothing expensive is recomputed for several consumers, and a
    value that ops outside the region read is one more result of it (the
    exception: an op reading 16-bit values through widening casts whose
    wider result costs more to store and read back than its inputs cost to
    read again, such as relu_grad in a 16-bit batch norm's backward pass,
    is copied for each later user that only fusible, view and small ops
    separate from it); a region runs where its last op ran, so an op joins a
    group only if nothing outside the group reads the group's values
    before it; a group of one op stays that op. An
    input that is a view of another value (slices at offset 0, reshapes of
    unit dimensions) becomes that value with the view applied inside the
    region, so the kernel reads it in place instead of a copy.

    On the cpu backend a fused region computes every element exactly as
    the unfused kernels do (same operations in the same types): the
    results are bitwise the same.
  }];
  let options = [
    Option<"maxBuffers", "max-buffers", "unsigned", /*default=*/"64",
           "The most inputs and results one region may have (kernel parameters)">,
  ];
  let statistics = [
    Statistic<"numRegions", "regions", "Fused regions formed">,
    Statistic<"numFusedOps", "fused-ops", "Elementwise ops moved into regions">,
    Statistic<"numDuplicatedOps", "duplicated-ops",
              "Widening ops copied for later users instead of stored">,
  ];
}

def FluidGenerateGpuKernels
    : Pass<"fluid-generate-gpu-kernels", "::mlir::ModuleOp"> {
  let summary = "Generate a gpu.func for every fused region of a bufferized module";
  let description = [{
    For the cuda backend: each `fluid_rt.launch "fusion"` gets a kernel in
    `gpu.module @fluid_kernels` and names it in `fluid_rt.gpu_kernel`.
    The kernel takes one flat memref per input and output (bare pointers)
    and walks the iteration space in a grid-stride loop. Where every value
    of the region has one element type and the element count allows, a
    second kernel (suffix `_v`) handles 16 bytes per step: inputs read at
    every element and the outputs move as aligned 128-bit vectors, and the
    program calls it when those operands are 16-byte aligned. Broadcast
    inputs are read per element at an index computed from constants.
    Equal regions share one kernel. `--fluid-lower-gpu-kernels` lowers the
    module to PTX.

    Divisions and remainders (the broadcast inputs' offsets, the rows and
    columns of a reduction) are 32-bit when `index-bitwidth=32` (the
    default) and every buffer and the iteration space of the region have at
    most 2^30 elements: a 64-bit division by a constant costs several times
    the instructions of a 32-bit one. Element offsets stay 64-bit (the
    loops' pointer increments). Lanes of a vector step that read the same
    element of a broadcast input (a per-channel value over H*W a multiple
    of the width) share one load and its index arithmetic.

    A channels-last region's sums split over several blocks combine in the
    tile's last block. `column-partials=vector` (the default) stores the
    blocks' partial sums split-major and reads a thread's channels back as
    one vector with plain loads after the fence; `column-partials=atomic`
    stores them channel-major and reads each back with an atomic add of -0
    (the same sums in the same order, so the same bits; vector with
    `column-unroll=4` made ResNet-50's bf16 step 6.2% faster on an H100,
    bench/NOTES.md, session 25).

    `column-unroll=N` (1 to 8, default 4) makes a channels-last sum's loop
    take N rows per step, loading all of their inputs before computing and
    storing any, so that each thread has N loads in flight (one row per
    step leaves a thread one load at a time: a row's stores might alias the
    next row's inputs as far as the compiler knows); the remaining rows run
    one per step. The same sums in the same order, so the same bits.

    A region with sums runs several blocks per channel (per tile of
    channels for channels-last sums) where it has the work: each launch
    records that count in `fluid_rt.gpu_sum_splits`, which the emitted
    program launches and sizes the scratch by. `column-min-elements=N`
    (default 16384) is the fewest elements a channels-last block adds:
    smaller, more blocks (more loads in flight, more partial sums for the
    tile's last block; at most kColumnPartialsPerThread per thread).
  }];
  let options = [
    Option<"indexBitwidth", "index-bitwidth", "unsigned", /*default=*/"32",
           "Bit width of the kernels' divisions and remainders (32 or 64; "
           "32 only where every index fits, see the description)">,
    Option<"columnPartials", "column-partials", "std::string",
           /*default=*/"\"vector\"",
           "How a channels-last sum's last block reads the partial sums: "
           "atomic (one atomic read per value) or vector (split-major, "
           "vector loads)">,
    Option<"columnMinElements", "column-min-elements", "int64_t",
           /*default=*/"16384",
           "The fewest elements each block of a channels-last sum adds "
           "(256 to 2^30; fewer: more blocks per tile of channels)">,
    Option<"columnUnroll", "column-unroll", "int64_t", /*default=*/"4",
           "Rows per step of a channels-last sum's loop, their loads issued "
           "together (1 to 8)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect",
    "::mlir::math::MathDialect", "::mlir::memref::MemRefDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect"];
  let statistics = [
    Statistic<"numKernels", "kernels", "Kernels generated (distinct regions)">,
  ];
}

def FluidDataParallel : Pass<"fluid-data-parallel", "::mlir::ModuleOp"> {
  let summary = "Average the gradients over the ranks of a data-parallel run, in buckets";
  let description = [{
    PyTorch DDP's gradient reduction, planned at compile time. Each rank runs
    the same training step on its own share of the batch; before the
    update, every gradient is replaced by its mean over the ranks, so that
    all ranks apply the same update (the gradient of the mean loss over
    the whole batch, batch norm's statistics aside: they stay per rank).

    The gradients are the values the updates read (`fluid.sgd`,
    `fluid.momentum`, `fluid.adam` and their groups), or, under dynamic
    loss scaling, the scaled values `fluid.unscale_grads` reads, so that
    every rank sees the same overflow flag. In the order the backward pass
    computes them they are grouped into buckets of at least `bucket-bytes`
    (the last bucket may be smaller; 0: one gradient a bucket), and each
    bucket becomes one `fluid.all_reduce_mean`, placed right after its last
    gradient's producer, whose results replace the gradients in those
    readers. The cuda backend runs a bucket's all-reduce on a stream of its
    own (NCCL), overlapped with the backward ops that follow; the first op
    that touches the bucket's buffers waits for it. A function that already holds a `fluid.all_reduce_mean` is an
    error (the pass runs once). Run it on the finished training step, after
    the other tensor-level passes (`fluid-compile --data-parallel` runs it
    right before `--fluid-bufferize`).
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "uint64_t", /*default=*/"26214400",
           "Gradient bytes per all-reduce (default 25 MiB, DDP's "
           "bucket_cap_mb); 0: one all-reduce per gradient">
  ];
  let statistics = [
    Statistic<"numBuckets", "buckets", "All-reduces inserted">,
    Statistic<"numGradients", "gradients", "Gradients averaged">,
    Statistic<"numGradientBytes", "gradient-bytes",
              "Bytes averaged per step">
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
      the `constant` kernel; a `fluid.fusion` is a launch of `fusion` that
      keeps the region);
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

def FluidMixedPrecision : Pass<"fluid-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Run convolutions and matrix products on 16-bit inputs";
  let description = [{
    Every `fluid.conv2d`, `fluid.matmul` and `fluid.linear` of f32 tensors
    becomes the same op on bf16 (`precision=bf16`) or f16
    (`precision=fp16`) operands, each a `fluid.cast` of the f32 one, whose
    16-bit result is cast back to f32: the tensor-core inputs of
    `torch.autocast`, with f32 master weights (the parameters stay f32 and
    are cast at their use) and everything else, the loss included, in f32.
    A convolution's or linear layer's bias is added after the cast back, in
    f32 (a `fluid.reshape` to [O, 1, 1] and a broadcasting `fluid.add` for
    a convolution), so that the bias and its gradient stay f32. Run it on the forward program, before the training step is built: the
    gradient of a cast is the cast back, so the backward convolutions and
    products run on 16-bit tensors too and the parameters' gradients reach
    the optimizer in f32. The table of what runs in which precision, and
    what is still to come (16-bit activations, loss scaling), is in
    docs/PRECISION.md. `fluid-compile --precision bf16|fp16` runs it; the
    cuda backend runs the 16-bit ops on cuDNN's and cuBLAS's tensor cores
    with f32 sums, and the cpu backend computes them in f32 and rounds
    their results once.

    With `store-activations` (the default), activations are stored in 16
    bits as autocast's are: every f32 value of rank 3 or more that an
    activation function (relu, sigmoid, tanh) computes, or that another op
    computes and more than one op or a non-elementwise op reads (a
    residual stream, a pooling input), is rounded to the 16-bit type where
    it is made and read through an exact widening cast, which fused regions
    apply as they load (a view), so only the 16-bit copy is ever written; a
    convolution or product reads the 16-bit value itself. The gradients
    that flow back through these casts are rounded the same way. Values
    that one elementwise op reads (batch norm's output into its ReLU) stay
    inside their fused region in f32.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"bf16\"",
           "bf16 or fp16">,
    Option<"storeActivations", "store-activations", "bool",
           /*default=*/"true",
           "Store activations in 16 bits (false: only the tensor-core "
           "inputs are 16-bit)">
  ];
  let statistics = [
    Statistic<"numOps", "ops", "Convolutions and products run in 16 bits">,
    Statistic<"numStored", "stored",
              "Activations stored in 16 bits">,
  ];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidWideningReductions
    : Pass<"fluid-widening-reductions", "::mlir::ModuleOp"> {
  let summary = "Let means and sums read 16-bit values widened to f32 directly";
  let description = [{
    A `fluid.mean`, `fluid.reduce_sum` or `fluid.sum_to` with an f32
    result whose input is a `fluid.cast` of an f16 or bf16 value to f32
    reads the 16-bit value instead (a widening sum: the runtime's
    reductions widen each element exactly as they load and sum in double,
    as they do f32 ones, so the result is the same); the cast goes when
    nothing else reads it. In a mixed-precision training step every
    reduction that is not a generated kernel's (those read widening casts
    as they load already) read an activation-sized f32 copy written just
    for it: SE-ResNeXt-50's squeezes and their gradients are 9.4 GB of
    casts per step at batch 128 (`bench/fused-kernels.py --casts`).

    Run after the training step is built (widening sums have no gradient
    rule) and after `--fluid-layout` (which rebuilds reductions); before
    `--fluid-fuse-elementwise`. `fluid-compile` runs it for
    `--precision bf16|fp16`; `--no-widening-reductions` skips it.
  }];
  let statistics = [
    Statistic<"numWidened", "widened", "Reductions that read 16-bit values">,
    Statistic<"numCasts", "casts-removed", "Widening casts removed">,
  ];
}

def FluidNarrowDataMovement
    : Pass<"fluid-narrow-data-movement", "::mlir::ModuleOp"> {
  let summary = "Reshape, transpose, slice and max-pool 16-bit values before widening them";
  let description = [{
    A `fluid.reshape`, `fluid.transpose`, `fluid.slice`, `fluid.max_pool2d`
    or `fluid.max_pool2d_with_indices` of a `fluid.cast` that widens an f16
    or bf16 tensor to f32 becomes the same op on the 16-bit tensor followed
    by the widening cast of its (first) result (max pooling's picks are
    the same: widening keeps the order, NaNs included); a `fluid.reshape` or
    `fluid.transpose` of an f32 value that only casts to one 16-bit type
    read becomes the same op on the value cast to that type (the cast then
    meets the op that made the value, whose generated kernel can write the
    16-bit tensor itself; not slices, whose cast would convert the
    elements they drop); a cast back of an exact widening (`fluid.cast`'s
    folder, applied to casts alone) is the tensor that was widened, such
    as the 16-bit one; a max-pooling gradient of a widened 16-bit gradient
    (and, for `fluid.max_pool2d_grad`, of a widened input of that type)
    that only a narrowing to that type reads is computed in that type (its
    definition: the f32 sums rounded to it), as `--fluid-narrow-gradients`
    leaves the stem's pooling gradient of a ResNet. A slice or reshape that generated
    kernels apply as a view while they load (offset 0, or unit dimensions
    only; read by fusible ops) stays on the widened value: it moves nothing
    there, and fused views are of f32 values. All are exact (casts are
    elementwise, widening is exact, and the ops only move or select
    elements), so the step computes the same bits while moving fewer bytes.

    In a mixed-precision step the activations and gradients are stored in
    16 bits and read through widening casts, so the data movement between
    matrix products (a transformer's head split and merge, its class token
    slice, their gradients) ran on f32 copies and was narrowed again for the
    next product: on vit_b_16 (batch 64, bf16) 196 such chains, 36.6 GB of
    casts per step before the pass (`bench/fused-kernels.py --casts`). A
    ResNet's stem pooled an f32 copy of its bf16 activation and wrote its
    gradient in f32: 1.35 GB of casts per ResNet-50 step at batch 128
    before, 0.43 GB after.

    Only these rewrites run (no folding elsewhere); casts and ops left
    unused are erased. `fluid-compile` runs it for `--precision bf16|fp16`
    after `--fluid-permute-storage` and before `--fluid-widening-reductions`;
    `--no-narrow-data-movement` skips it.
  }];
  let statistics = [
    Statistic<"numMoved", "moved", "Data movement and max pooling ops moved before a widening cast">,
    Statistic<"numRoundTrips", "round-trips", "Narrowing casts of widened values removed">,
  ];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidNarrowGradients : Pass<"fluid-narrow-gradients", "::mlir::ModuleOp"> {
  let summary = "Store a mixed-precision step's activation gradients in 16 bits";
  let description = [{
    Run on a training step built from a program that
    `--fluid-mixed-precision` made 16-bit (fluid-compile runs it right
    after the step is built, for `--precision bf16|fp16`; `--no-narrow-gradients`
    skips it). The backward pass computes its activation gradients in f32
    from the 16-bit values the forward stored and the 16-bit results of the
    backward convolutions; where such a gradient is read by more than one op
    (the residual stream's gradient, which both branches of a block read) or
    by an op that is not elementwise, it is written as f32 and read again,
    twice the bytes of the 16-bit activation it belongs to. torch.autocast
    keeps these gradients in the activation's own 16-bit type.

    Each f32 value of rank 3 or more that an elementwise op (not a cast)
    computes only from 16-bit values (widening casts of them, their
    reshapes and broadcasts; operands smaller than the result, such as a
    per-channel factor or a scalar, do not count), and that more than one op
    or a non-elementwise op reads, is rounded to that 16-bit type where it
    is made and read through an exact widening cast, which fused regions
    apply as they load: `--fluid-mixed-precision`'s rule for activations.
    So is max pooling's gradient (`fluid.max_pool2d_grad`,
    `fluid.max_pool2d_grad_indices`) of such a value, whoever reads it (no
    fused region takes it, so it is written to memory in any case), as
    torch.autocast's max pooling, which runs in the activation's type.
    Values that a chain of elementwise ops, casts and reshapes carries into
    a `fluid.set_param` (the parameters' gradients and the optimizer's
    arithmetic) stay f32, and so do values the function returns.
  }];
  let statistics = [
    Statistic<"numNarrowed", "narrowed",
              "Gradients stored in 16 bits">,
  ];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidPoolIndices : Pass<"fluid-pool-indices", "::mlir::ModuleOp"> {
  let summary = "Save max pooling's picks for its gradient instead of finding them again";
  let description = [{
    `fluid.max_pool2d_grad` finds each window's maximum again in the
    forward input: it reads the input a second time, and the input lives
    until the backward pass. Each `fluid.max_pool2d` whose gradient is
    taken becomes `fluid.max_pool2d_with_indices`, which also writes each
    window's pick as one byte (its offset in the window), and each of its
    `fluid.max_pool2d_grad`s a `fluid.max_pool2d_grad_indices` of those
    bytes, which does not read the input. On ResNet's stem at batch 128
    the gradient then moves 539 MB instead of 925 MB (bench/pool-grad.py),
    and the forward writes 26 MB more.

    A pool is rewritten only when every `fluid.max_pool2d_grad` that reads
    its input is its gradient (the same input, attributes and output type)
    and comes after it in its block, and when its kernel has at most 256
    cells (the picks are ui8); then all of its gradients are, otherwise
    none. The results are bitwise equal: the picks follow
    `fluid.max_pool2d`'s rule and the gradient adds them up in the same
    order (the cpu backend's differential test,
    test/Passes/pool-indices-vs-cpu.test). fluid-compile runs it before
    `--fluid-recompute-elementwise` (`--no-pool-indices` skips it).
  }];
  let statistics = [
    Statistic<"numPools", "pools", "Max pools that save their picks">,
    Statistic<"numGradients", "gradients",
              "Max-pool gradients that read the saved picks">,
  ];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidRecomputeElementwise
    : Pass<"fluid-recompute-elementwise", "::mlir::ModuleOp"> {
  let summary = "Recompute cheap activations in the backward pass instead of keeping them";
  let description = [{
    Rematerialization, decided per value by bytes saved against work added.
    On the tensor level of a training step (before `--fluid-bufferize`),
    every value of these forms that the backward pass reads is computed
    again in the backward pass from the batch norms' inputs and saved
    statistics (`fluid.batch_norm_apply`), and the backward pass reads the
    copy: `relu(batch_norm(x))` (read by the ReLU's gradient and the next
    convolution's filter gradient); a residual block's output
    `relu(batch_norm(x) + z)` where z is another batch norm's output (a
    projection shortcut) or a value the backward pass reads there or later
    anyway (an identity shortcut, the block's input; since a recomputed
    input is no longer kept, every other block of a chain qualifies); and
    `batch_norm(x)` itself (read by the gradient of a squeeze-and-excitation
    product). The forward value then dies at its last forward use: per
    convolution + batch norm (+ ReLU), one activation less lives from the
    forward to the backward pass. In mixed precision
    (`--fluid-mixed-precision`) the activation is kept as the ReLU's 16-bit
    cast, read back through a widening cast; the copy repeats both casts,
    so it is bitwise the stored value.

    A value is recomputed only when the batch norm's input and statistics
    are read by the backward pass anyway (so recomputing extends no other
    lifetime). The copy is placed where the batch norm's gradient reads
    them: a filter gradient reading the activation before that point moves
    after it (with what reads its result), so that
    `--fluid-fuse-elementwise` computes the copy inside the gradient's sums
    kernel, which reads the batch norm's input anyway. The activation then
    costs one more write in the backward pass and no launch. Values below
    `min-bytes` (default 1 MiB) stay stored. On the cpu backend the copy is
    bitwise the forward value.

    A second rule covers chains of elementwise ops (GELU composed as
    `x * 0.5 * (1 + erf(x / sqrt(2)))` keeps four tensors the size of x for
    its gradient and the next layer; a composed layer norm keeps `x - mean`
    and its quotient). Each forward value of an elementwise op (no casts,
    no batch-norm applications) that the backward pass reads, of at least
    `min-bytes`, is a candidate; its cone is the elementwise ops it is
    computed by (at most 16), its leaves the other values they read.
    Candidates sharing a leaf are decided together: recomputed, once, before
    the backward pass's first use of any of them, when their bytes exceed
    those of their leaves that nothing keeps yet (parameters, constants,
    arguments and values the backward pass reads anyway cost nothing).
    torchvision's vit_b_16 at batch 64 plans 9.0 GiB instead of 12.8, and
    convnext_tiny 6.2 instead of 11.3. The pass statistics
    (`--mlir-pass-statistics`) count the values and bytes; the memory report
    counts `batch_norm_apply` launches (none when all are fused).
  }];
  let options = [
    Option<"minBytes", "min-bytes", "uint64_t", /*default=*/"1048576",
           "Recompute only activations of at least this many bytes "
           "(default 1 MiB)">
  ];
  let statistics = [
    Statistic<"numRecomputed", "recomputed-values",
              "Activations recomputed in the backward pass">,
    Statistic<"numRecomputedBytes", "recomputed-bytes",
              "Bytes of the activations recomputed">
  ];
  let dependentDialects = ["::mlir::fluid::FluidDialect"];
}

def FluidInsertFrees : Pass<"fluid-insert-frees", "::mlir::ModuleOp"> {
  let summary = "Free every temporary buffer right after its last use";
  let description = [{
    The seed's release policy, done at compile time: for every temporary of
    the buffer level (a `memref.alloc` that is not returned, not a constant
    and not an arena; see `BufferLiveness`), a `memref.dealloc` goes right
    after the last op that reads or writes it through any of its views.
    Parameters, arguments, results and constants are never freed. Emitted
    programs allocate such buffers where their `memref.alloc` is and free
    them where their `memref.dealloc` is, in stream order (cudaMallocAsync
    and cudaFreeAsync on the compute stream, nothing waits on the host).

    This is the "free at last use" row of the seed's memory table and the
    baseline of `--fluid-plan-memory`, which replaces the frees with static
    offsets in one arena. Running it twice changes nothing.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numFreed", "freed-buffers", "Temporaries freed at last use">
  ];
}

def FluidPlanMemory : Pass<"fluid-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Give every temporary a static offset in one arena per function";
  let description = [{
    From the lifetimes of `BufferLiveness`, every temporary of a function
    becomes a `memref.view` of one arena (`memref.alloc() : memref<Nxi8>`)
    at a constant byte offset, so that buffers whose lifetimes do not meet
    share memory and the function's peak is known at compile time. Frees
    of planned buffers (from `--fluid-insert-frees`) are removed: the arena
    is allocated once and lives across steps.

    Before offsets are assigned, elementwise launches run in place where
    their kernel allows it: the output of `add`, `sub`, `mul`, `relu`,
    `relu_grad` and the other kernels that `fluid_rt::mayWriteOverInput`
    lists takes over the buffer of an input whose last use is that launch,
    when the input is a temporary of the output's exact type (shape and
    element type). An input read later, of another shape or dtype, a
    parameter, a result or a constant is never overwritten.

    Offsets come from greedy placement (each buffer at the lowest offset
    that no buffer of an overlapping lifetime occupies), tried in two
    orders: by size, and by size times lifetime; the smaller arena wins.
    Every buffer starts at a multiple of `alignment` bytes. The pass
    records on each function `fluid_rt.arena_bytes` and
    `fluid_rt.arena_lower_bound` (the largest sum of aligned bytes live at any
    op: no plan can do better) and, on the module, the cuDNN workspace
    limit the plan assumes (`fluid_rt.workspace_limit`, bytes), which the
    driver gives cuDNN's algorithm choice.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Byte alignment of every buffer in the arena (a power of two)">,
    Option<"inPlace", "in-place", "bool", /*default=*/"true",
           "Let elementwise launches write over a dead input">,
    Option<"workspaceLimitMiB", "workspace-limit", "int64_t",
           /*default=*/"-1",
           "cuDNN workspace limit in MiB recorded for the driver (-1: none)">
  ];
  let statistics = [
    Statistic<"numPlanned", "planned-buffers",
              "Temporaries given an offset in an arena">,
    Statistic<"numInPlace", "in-place-launches",
              "Launches that write their output over a dead input">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def FluidMemoryReport : Pass<"fluid-memory-report", "::mlir::ModuleOp"> {
  let summary = "Report a training step's memory at compile time";
  let description = [{
    For the training step of a bufferized module (after
    `--fluid-plan-memory`, `--fluid-insert-frees` or neither): the bytes
    the step needs (the arena, or the peak of live temporaries when frees
    are dynamic, or every temporary when nothing is freed), the lower bound
    (the largest sum of bytes live at any launch), the launch where the
    peak occurs and the largest buffers live there with the ops that made
    them, persistent bytes (parameters, optimizer state, results and
    constants) apart from temporaries, and the cuDNN workspace limit.
    Printed as a table to stdout, or with `file=PATH` written as
    `PATH.json`, `PATH.csv` (live bytes after every launch) and `PATH.svg`
    (that curve, the peak marked). The module is not changed.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"\"",
           "Write PATH.json, PATH.csv and PATH.svg instead of printing">,
    Option<"top", "top", "unsigned", /*default=*/"10",
           "How many of the largest buffers live at the peak to list">
  ];
}

def FluidTestBufferLiveness
    : Pass<"fluid-test-buffer-liveness", "::mlir::ModuleOp"> {
  let summary = "Print the buffer liveness analysis of every function (for tests)";
  let description = [{
    A test of `BufferLiveness`: for every function with a body, prints to
    standard output one line per root buffer, in the analysis's order
    (arguments first, then definitions in program order): its index, its
    kind (temporary, parameter, argument, result, constant, arena), where
    it is defined (`arg N` or the position of its defining op), its bytes,
    for a view of an arena the arena and the offset, its interval
    `[first, last]` of op positions (or `unused`), the op that produced it
    (a launch shows its kernel) and how many values alias it. Then the
    persistent bytes by kind (`persistentBytes`) and the function's peak of
    live temporaries and its position, at alignment 1 and 256. Positions count every op of the function's block from 0. The
    IR is unchanged.
  }];
}

#endif // FLUID_PASSES_TD
