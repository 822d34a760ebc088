//===- CudaKernels.h - Kernels of the cuda backend (C ABI) ----------------===//
//
// Conventions, for every fluid_cuda_<op> entry point:
// - The context comes first; the remaining arguments are exactly those of
//   fluid_cpu_<op> (CpuKernels.h, CpuGradKernels.h), with the same parameter
//   structs, shape rules and aliasing rules. The cpu kernel is the oracle:
//   a cuda kernel computes the same function up to rounding.
// - Tensor descriptors describe device memory of the context's device (from
//   fluid_cuda_malloc); a tensor with no elements may have NULL data.
// - Every descriptor is checked before anything is enqueued, as the cpu
//   kernels check theirs, plus that the data is device memory: a bad call
//   returns FLUID_ERROR_INVALID_ARGUMENT (or FLUID_ERROR_UNSUPPORTED) with a
//   message naming the tensor and the problem, and never reaches a library.
// - Work is enqueued on the context's stream and the call returns without
//   waiting; a failed library call is FLUID_ERROR_DEVICE naming the call.
//   Results are visible to the host after fluid_cuda_copy_to_host or
//   fluid_cuda_synchronize.
// - Floating-point tensors are FLUID_F32 or FLUID_F64, one dtype per call,
//   NCHW and dense. f32 convolutions and GEMMs use TF32 tensor cores only
//   when the context was created with allow_tf32.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDAKERNELS_H
#define FLUID_RUNTIME_CUDAKERNELS_H

#include "fluid/runtime/CpuKernels.h"
#include "fluid/runtime/CpuOptimizerKernels.h"
#include "fluid/runtime/CudaRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// Library-backed kernels (cuDNN and cuBLAS)
//===----------------------------------------------------------------------===//

/// conv2d with cuDNN (fluid_cpu_conv2d). The algorithm is found by
/// cudnnFind once per convolution shape and cached (in the context, and in
/// its algorithm_cache_path); asymmetric padding is padded explicitly into
/// the workspace, symmetric padding goes to cuDNN directly. channels_last
/// = 1 (input [N,H,W,C], filter [O,KH,KW,C/groups], output [N,OH,OW,O])
/// runs cuDNN's NHWC convolutions on the tensors as they are, except that
/// channels-last depthwise convolutions (groups == input channels ==
/// output channels > 1) run hand-written kernels, as do their gradients
/// (runtime/cuda/KernelsDepthwise.cu).
fluid_status fluid_cuda_conv2d(fluid_cuda_context *context,
                               const fluid_tensor *input,
                               const fluid_tensor *filter,
                               const fluid_tensor *bias, fluid_tensor *output,
                               const fluid_conv2d_params *params);

/// Gradient of conv2d with respect to its input
/// (fluid_cpu_conv2d_grad_input), in either layout as fluid_cuda_conv2d.
fluid_status fluid_cuda_conv2d_grad_input(fluid_cuda_context *context,
                                          const fluid_tensor *grad_output,
                                          const fluid_tensor *filter,
                                          fluid_tensor *grad_input,
                                          const fluid_conv2d_params *params);

/// Gradient of conv2d with respect to its filter
/// (fluid_cpu_conv2d_grad_filter), in either layout as fluid_cuda_conv2d.
fluid_status fluid_cuda_conv2d_grad_filter(fluid_cuda_context *context,
                                           const fluid_tensor *grad_output,
                                           const fluid_tensor *input,
                                           fluid_tensor *grad_filter,
                                           const fluid_conv2d_params *params);

/// matmul with cuBLAS (fluid_cpu_matmul): rank 2, or rank 3 batched.
fluid_status fluid_cuda_matmul(fluid_cuda_context *context,
                               const fluid_tensor *lhs, const fluid_tensor *rhs,
                               fluid_tensor *output,
                               const fluid_matmul_params *params);

/// linear with cuBLAS, the bias added by cuDNN (fluid_cpu_linear).
fluid_status fluid_cuda_linear(fluid_cuda_context *context,
                               const fluid_tensor *input,
                               const fluid_tensor *weight,
                               const fluid_tensor *bias, fluid_tensor *output);

/// Training-mode batch norm with cuDNN, spatial mode (fluid_cpu_batch_norm).
/// new_running_mean and new_running_var may be the same buffers as
/// running_mean and running_var.
fluid_status fluid_cuda_batch_norm(
    fluid_cuda_context *context, const fluid_tensor *input,
    const fluid_tensor *scale, const fluid_tensor *shift,
    const fluid_tensor *running_mean, const fluid_tensor *running_var,
    fluid_tensor *output, fluid_tensor *saved_mean, fluid_tensor *saved_inv_std,
    fluid_tensor *new_running_mean, fluid_tensor *new_running_var,
    const fluid_batch_norm_params *params);

/// Batch norm with given statistics (fluid_cpu_batch_norm_inference).
fluid_status fluid_cuda_batch_norm_inference(
    fluid_cuda_context *context, const fluid_tensor *input,
    const fluid_tensor *scale, const fluid_tensor *shift,
    const fluid_tensor *mean, const fluid_tensor *var, fluid_tensor *output,
    double epsilon);

/// Gradient of training-mode batch norm (fluid_cpu_batch_norm_grad), from
/// the saved statistics of the forward.
fluid_status fluid_cuda_batch_norm_grad(
    fluid_cuda_context *context, const fluid_tensor *grad_output,
    const fluid_tensor *input, const fluid_tensor *scale,
    const fluid_tensor *saved_mean, const fluid_tensor *saved_inv_std,
    fluid_tensor *grad_input, fluid_tensor *grad_scale,
    fluid_tensor *grad_shift);

/* ---- own kernels ---- */

//===----------------------------------------------------------------------===//
// Own kernels (runtime/cuda/Kernels*.cu): everything but convolution, GEMM
// and batch norm. Each mirrors the fluid_cpu_<op> of CpuKernels.h,
// CpuGradKernels.h or CpuOptimizerKernels.h named in its comment.
//
// Sums (reductions, softmax, pooling gradients, sum_to) are taken in double
// by fixed trees, without atomics: results are the same from run to run on
// one device and differ from the cpu's sequential sums by rounding only.
//
// Values that live on the device (class labels, the optimizers' lr and
// step, the elements cast converts) cannot fail the call that reads them
// without a synchronization. A kernel that finds one invalid records it in
// a per-device error record instead (the first recorded error wins; of
// several bad labels in one call, any may be the one named) and:
// cross-entropy writes NaN for the loss (or gradient row) of a row with a
// bad label; an optimizer update writes nothing; cast writes nothing.
// fluid_cuda_check_errors reports and clears the record.
//===----------------------------------------------------------------------===//

/// Waits for the context's stream, then reports the first error a kernel
/// recorded on the context's device since the last call (a label outside
/// [0, C), a negative or NaN learning rate, a step below 1, an element cast
/// cannot convert) as FLUID_ERROR_INVALID_ARGUMENT, with the cpu backend's
/// message prefixed by the entry point that launched the kernel, e.g.
/// "fluid_cuda_check_errors: fluid_cuda_softmax_cross_entropy: label 12 in
/// row 3 is outside [0, 10)"; and clears the record. The record is shared
/// by every context on the device.
fluid_status fluid_cuda_check_errors(fluid_cuda_context *context);

/* Elementwise (fluid_cpu_relu, ...). add, sub and mul also take i32 and
   i64. In place as on the cpu (CpuKernels.h's elementwise section): the
   output may be the buffer of any operand of the output's shape and dtype,
   or of several, with the other operands broadcast. One engine
   (runtime/cuda/Elementwise.cuh) runs every kernel of this and the next
   group: in its flat kernel (16-byte vectors of 4 f32 or i32, 2 f64 or
   i64, and a scalar tail; scalar and per-channel operands) and in its strided
   kernel (any other broadcast), each output element, or vector of them,
   belongs to one thread, which loads every operand element it needs
   before it stores, and an operand of the output's shape is loaded at the
   output's own index (with the same alignment, so vectorized alike);
   scalar operands are loaded at the start by every thread, and are never
   of the output's shape unless it has one element, which the flat kernel
   then treats as contiguous. test/Runtime/gpu-in-place.py checks this
   bitwise. */
fluid_status fluid_cuda_relu(fluid_cuda_context *context,
                             const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_sigmoid(fluid_cuda_context *context,
                                const fluid_tensor *input,
                                fluid_tensor *output);
fluid_status fluid_cuda_tanh(fluid_cuda_context *context,
                             const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_add(fluid_cuda_context *context,
                            const fluid_tensor *lhs, const fluid_tensor *rhs,
                            fluid_tensor *output);
fluid_status fluid_cuda_sub(fluid_cuda_context *context,
                            const fluid_tensor *lhs, const fluid_tensor *rhs,
                            fluid_tensor *output);
fluid_status fluid_cuda_mul(fluid_cuda_context *context,
                            const fluid_tensor *lhs, const fluid_tensor *rhs,
                            fluid_tensor *output);
fluid_status fluid_cuda_div(fluid_cuda_context *context,
                            const fluid_tensor *lhs, const fluid_tensor *rhs,
                            fluid_tensor *output);
fluid_status fluid_cuda_relu_grad(fluid_cuda_context *context,
                                  const fluid_tensor *grad_output,
                                  const fluid_tensor *output,
                                  fluid_tensor *grad_input);
fluid_status fluid_cuda_sigmoid_grad(fluid_cuda_context *context,
                                     const fluid_tensor *grad_output,
                                     const fluid_tensor *output,
                                     fluid_tensor *grad_input);
fluid_status fluid_cuda_tanh_grad(fluid_cuda_context *context,
                                  const fluid_tensor *grad_output,
                                  const fluid_tensor *output,
                                  fluid_tensor *grad_input);

/* Elementwise math, select and cast (fluid_cpu_neg, ...), in place as the
   group above (cast between equal dtypes: a copy, skipped when the buffers
   are one). cast refuses NaN, infinities and out-of-range values on the
   device: see above. */
fluid_status fluid_cuda_neg(fluid_cuda_context *context,
                            const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_exp(fluid_cuda_context *context,
                            const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_log(fluid_cuda_context *context,
                            const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_cos(fluid_cuda_context *context,
                            const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_sqrt(fluid_cuda_context *context,
                             const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_floor(fluid_cuda_context *context,
                              const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_erf(fluid_cuda_context *context,
                            const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_pow(fluid_cuda_context *context,
                            const fluid_tensor *lhs, const fluid_tensor *rhs,
                            fluid_tensor *output);
fluid_status fluid_cuda_minimum(fluid_cuda_context *context,
                                const fluid_tensor *lhs,
                                const fluid_tensor *rhs, fluid_tensor *output);
fluid_status fluid_cuda_maximum(fluid_cuda_context *context,
                                const fluid_tensor *lhs,
                                const fluid_tensor *rhs, fluid_tensor *output);
fluid_status fluid_cuda_greater_equal(fluid_cuda_context *context,
                                      const fluid_tensor *lhs,
                                      const fluid_tensor *rhs,
                                      fluid_tensor *output);
fluid_status fluid_cuda_select(fluid_cuda_context *context,
                               const fluid_tensor *condition,
                               const fluid_tensor *on_true,
                               const fluid_tensor *on_false,
                               fluid_tensor *output);
fluid_status fluid_cuda_cast(fluid_cuda_context *context,
                             const fluid_tensor *input, fluid_tensor *output);

/* Training batch norm's output from its saved statistics
   (fluid_cpu_batch_norm_apply), an own kernel (KernelsNorm.cu): computed
   as on the cpu, in double with each operation rounded on its own, so it
   reproduces fluid_cpu_batch_norm_apply; with the statistics of
   fluid_cuda_batch_norm it equals cuDNN's training output only to
   rounding. In place: output may be the buffer of input. */
fluid_status fluid_cuda_batch_norm_apply(fluid_cuda_context *context,
                                         const fluid_tensor *input,
                                         const fluid_tensor *scale,
                                         const fluid_tensor *shift,
                                         const fluid_tensor *mean,
                                         const fluid_tensor *inv_std,
                                         fluid_tensor *output);

/* Data movement, any dtype (fluid_cpu_reshape, fluid_cpu_concat,
   fluid_cpu_slice, fluid_cpu_broadcast_to). */
fluid_status fluid_cuda_reshape(fluid_cuda_context *context,
                                const fluid_tensor *input,
                                fluid_tensor *output);
fluid_status fluid_cuda_concat(fluid_cuda_context *context,
                               const fluid_tensor *inputs, int64_t num_inputs,
                               fluid_tensor *output, int64_t axis);
fluid_status fluid_cuda_slice(fluid_cuda_context *context,
                              const fluid_tensor *input, fluid_tensor *output,
                              int64_t axis, int64_t offset);
fluid_status fluid_cuda_broadcast_to(fluid_cuda_context *context,
                                     const fluid_tensor *input,
                                     fluid_tensor *output);

/// fluid_cpu_gather and fluid_cpu_gather_grad (KernelsShape.cu). indices
/// are device memory; an index outside [0, input.shape[axis]) is reported
/// by fluid_cuda_check_errors (gather writes zeros in its place). gather
/// moves bytes of any dtype; gather_grad takes f32 and f64, one thread per
/// grad_input element, which scans the indices in order and adds the
/// matching grad_output elements in double (as on the cpu, so the result
/// is the cpu's bit for bit): its work grows as grad_input's size times
/// the number of indices, which suits small tables (swin's relative
/// position bias).
fluid_status fluid_cuda_gather(fluid_cuda_context *context,
                               const fluid_tensor *input,
                               const fluid_tensor *indices,
                               fluid_tensor *output, int64_t axis);
fluid_status fluid_cuda_gather_grad(fluid_cuda_context *context,
                                    const fluid_tensor *grad_output,
                                    const fluid_tensor *indices,
                                    fluid_tensor *grad_input, int64_t axis);

/// fluid_cpu_transpose. Dimensions adjacent in both input and output are
/// merged first; a permutation that is then a batched 2-D transpose (the
/// NCHW <-> NHWC layout changes) runs a tiled kernel through shared memory,
/// others one strided gather.
fluid_status fluid_cuda_transpose(fluid_cuda_context *context,
                                  const fluid_tensor *input,
                                  fluid_tensor *output,
                                  const fluid_transpose_params *params);

/* Reductions (fluid_cpu_mean, fluid_cpu_reduce_sum, fluid_cpu_sum_to,
   fluid_cpu_global_avg_pool). */
fluid_status fluid_cuda_mean(fluid_cuda_context *context,
                             const fluid_tensor *input, fluid_tensor *output,
                             const fluid_reduce_params *params);
fluid_status fluid_cuda_reduce_sum(fluid_cuda_context *context,
                                   const fluid_tensor *input,
                                   fluid_tensor *output,
                                   const fluid_reduce_params *params);
fluid_status fluid_cuda_sum_to(fluid_cuda_context *context,
                               const fluid_tensor *input, fluid_tensor *output);
fluid_status fluid_cuda_global_avg_pool(fluid_cuda_context *context,
                                        const fluid_tensor *input,
                                        fluid_tensor *output);

/* Pooling with ceil_mode, asymmetric padding and dilation
   (fluid_cpu_max_pool2d, ...), max pooling channels-last too. The
   gradients gather, without atomics. */
fluid_status fluid_cuda_max_pool2d(fluid_cuda_context *context,
                                   const fluid_tensor *input,
                                   fluid_tensor *output,
                                   const fluid_max_pool2d_params *params);
fluid_status
fluid_cuda_max_pool2d_with_indices(fluid_cuda_context *context,
                                   const fluid_tensor *input,
                                   fluid_tensor *output, fluid_tensor *indices,
                                   const fluid_max_pool2d_params *params);
fluid_status fluid_cuda_avg_pool2d(fluid_cuda_context *context,
                                   const fluid_tensor *input,
                                   fluid_tensor *output,
                                   const fluid_avg_pool2d_params *params);
fluid_status fluid_cuda_max_pool2d_grad(fluid_cuda_context *context,
                                        const fluid_tensor *grad_output,
                                        const fluid_tensor *input,
                                        fluid_tensor *grad_input,
                                        const fluid_max_pool2d_params *params);
fluid_status fluid_cuda_max_pool2d_grad_indices(
    fluid_cuda_context *context, const fluid_tensor *grad_output,
    const fluid_tensor *indices, fluid_tensor *grad_input,
    const fluid_max_pool2d_params *params);
fluid_status fluid_cuda_avg_pool2d_grad(fluid_cuda_context *context,
                                        const fluid_tensor *grad_output,
                                        fluid_tensor *grad_input,
                                        const fluid_avg_pool2d_params *params);

/* Softmax and cross-entropy (fluid_cpu_softmax, ...). labels are device
   memory; a label outside [0, C) is reported by fluid_cuda_check_errors. */
fluid_status fluid_cuda_softmax(fluid_cuda_context *context,
                                const fluid_tensor *input, fluid_tensor *output,
                                int64_t axis);
fluid_status fluid_cuda_log_softmax(fluid_cuda_context *context,
                                    const fluid_tensor *input,
                                    fluid_tensor *output, int64_t axis);
fluid_status fluid_cuda_softmax_grad(fluid_cuda_context *context,
                                     const fluid_tensor *grad_output,
                                     const fluid_tensor *output,
                                     fluid_tensor *grad_input, int64_t axis);
fluid_status fluid_cuda_log_softmax_grad(fluid_cuda_context *context,
                                         const fluid_tensor *grad_output,
                                         const fluid_tensor *output,
                                         fluid_tensor *grad_input,
                                         int64_t axis);
fluid_status fluid_cuda_softmax_cross_entropy(fluid_cuda_context *context,
                                              const fluid_tensor *logits,
                                              const fluid_tensor *labels,
                                              fluid_tensor *output,
                                              int32_t reduction);
fluid_status fluid_cuda_softmax_cross_entropy_grad(
    fluid_cuda_context *context, const fluid_tensor *grad_loss,
    const fluid_tensor *logits, const fluid_tensor *labels,
    fluid_tensor *grad_logits, int32_t reduction);

/* Optimizer updates (fluid_cpu_sgd, fluid_cpu_momentum, fluid_cpu_adam;
   outputs may be the input buffers). lr and step are device memory, read by
   the kernel: an invalid value is reported by fluid_cuda_check_errors; so is
   found_inf (NULL or a rank-0 f32 flag in device memory: nonzero skips the
   update, as on the cpu). */
fluid_status fluid_cuda_sgd(fluid_cuda_context *context,
                            const fluid_tensor *param, const fluid_tensor *grad,
                            const fluid_tensor *lr,
                            const fluid_tensor *found_inf,
                            fluid_tensor *new_param,
                            const fluid_sgd_params *params);
fluid_status
fluid_cuda_momentum(fluid_cuda_context *context, const fluid_tensor *param,
                    const fluid_tensor *grad, const fluid_tensor *velocity,
                    const fluid_tensor *lr, const fluid_tensor *found_inf,
                    fluid_tensor *new_param, fluid_tensor *new_velocity,
                    const fluid_momentum_params *params);
fluid_status
fluid_cuda_adam(fluid_cuda_context *context, const fluid_tensor *param,
                const fluid_tensor *grad, const fluid_tensor *m,
                const fluid_tensor *v, const fluid_tensor *lr,
                const fluid_tensor *step, const fluid_tensor *found_inf,
                fluid_tensor *new_param, fluid_tensor *new_m,
                fluid_tensor *new_v, const fluid_adam_params *params);

/* Grouped optimizer updates (fluid_cpu_sgd_group, fluid_cpu_momentum_group,
   fluid_cpu_adam_group, with the same rules and messages): every entry in
   one kernel launch (multi-tensor apply, runtime/cuda/
   KernelsOptimizerGroup.cu), each entry computed by the single kernel's
   per-element code, so it equals fluid_cuda_<op> on that entry bit for bit
   (sgd and momentum equal the cpu's too). lr and step are device memory as
   above: a bad value makes the whole call write nothing and is reported by
   fluid_cuda_check_errors.

   The launch reads the entries' addresses and sizes from a table in device
   memory, cached per `site`: an opaque key that the caller keeps stable for
   the context's lifetime, one per call site (emitted programs pass the
   address of a static object). A call whose descriptors (addresses, dtypes,
   shapes) are those of the site's last call reuses the table and skips
   their checks, which passed then; otherwise they are checked and the
   table is uploaded, which outside CUDA graph capture synchronizes the
   stream. During capture a changed table is copied by the graph from
   memory reserved at the site's earlier calls, at most twice per site (a
   third change fails the call); a site's first call must be outside
   capture. site NULL caches nothing: every call checks, synchronizes and
   uploads, and calls during capture fail. */
fluid_status fluid_cuda_sgd_group(fluid_cuda_context *context, const void *site,
                                  int64_t count, const fluid_tensor *params,
                                  const fluid_tensor *grads,
                                  const fluid_tensor *lr,
                                  const fluid_tensor *found_inf,
                                  fluid_tensor *new_params,
                                  const fluid_sgd_params *p);
fluid_status fluid_cuda_momentum_group(
    fluid_cuda_context *context, const void *site, int64_t count,
    const fluid_tensor *params, const fluid_tensor *grads,
    const fluid_tensor *velocities, const fluid_tensor *lr,
    const fluid_tensor *found_inf, fluid_tensor *new_params,
    fluid_tensor *new_velocities, const fluid_momentum_params *p);
fluid_status
fluid_cuda_adam_group(fluid_cuda_context *context, const void *site,
                      int64_t count, const fluid_tensor *params,
                      const fluid_tensor *grads, const fluid_tensor *exp_avgs,
                      const fluid_tensor *exp_avg_sqs, const fluid_tensor *lr,
                      const fluid_tensor *step, const fluid_tensor *found_inf,
                      fluid_tensor *new_params, fluid_tensor *new_exp_avgs,
                      fluid_tensor *new_exp_avg_sqs,
                      const fluid_adam_params *p);

/* fluid_cpu_unscale_grads in one launch over every entry (the grouped
   updates' multi-tensor table, cached per `site` by the same rules):
   found_inf is zeroed on the stream, then set by any thread that meets a
   non-finite element, and stays in device memory for the updates' skip
   flag. scale is read on the device. */
fluid_status fluid_cuda_unscale_grads(fluid_cuda_context *context,
                                      const void *site, int64_t count,
                                      const fluid_tensor *grads,
                                      const fluid_tensor *scale,
                                      fluid_tensor *new_grads,
                                      fluid_tensor *found_inf);

//===----------------------------------------------------------------------===//
// Generated kernels (runtime/cuda/GeneratedKernels.cpp)
//
// The compiler emits, per program, one module of generated kernels (its
// fused elementwise kernels: PTX text for sm_90 from MLIR's gpu -> NVVM
// path) as a static array, and launches them through these. They use the
// CUDA driver API, obtained from the CUDA runtime at the first load
// (libcuda is not linked: the runtime still loads without a driver); a
// driver without the entry points of CUDA 12.4 makes them fail with
// FLUID_ERROR_UNSUPPORTED. Modules and their kernels belong to the context
// (used by one thread at a time, like the rest of it) and are unloaded when
// it is destroyed, after its stream is idle: destroy CUDA graphs that launch
// generated kernels before the context.
//===----------------------------------------------------------------------===//

/// Loads the module of generated kernels `image` (NUL-terminated PTX text,
/// or a cubin/fatbin) into the context, once: later calls with the same
/// address return at once. The context keys the module by the address, so
/// `image` must stay valid and unchanged while the context lives (emitted
/// programs pass a static array). Every kernel of the module is resolved
/// and fully loaded here, so launches load nothing. Must not be called
/// during CUDA graph capture (the first call: it is refused with
/// FLUID_ERROR_INVALID_ARGUMENT); a PTX that the driver cannot JIT-compile,
/// or an image it cannot load, fails with FLUID_ERROR_DEVICE and a message
/// holding the driver's error log (on one line, cut after 2000 characters).
fluid_status fluid_cuda_load_generated(fluid_cuda_context *context,
                                       const char *image);

/// Launches the kernel `name` of the module `image` on the context's
/// stream, with a 1-D grid of `blocks` blocks (1 to 2^31-1) of `threads`
/// threads (1 to 1024, and at most what the kernel allows) and no dynamic
/// shared memory. The kernel's parameters are the data pointers of
/// `tensors[0..count)`, in order (MLIR's bare-pointer calling convention:
/// one pointer per memref); count must be the kernel's parameter count, each
/// parameter pointer-sized. Each tensor is checked like every other
/// kernel's operands (a valid descriptor, device memory of the context's
/// device) before anything is enqueued; a kernel the module lacks is an
/// error naming it and the module; a failed cuLaunchKernel is
/// FLUID_ERROR_DEVICE. Loads the module if needed (as
/// fluid_cuda_load_generated, outside capture). The (image, name) -> kernel
/// lookup is cached in the context, so a launch costs one hash lookup plus
/// cuLaunchKernel; it works inside CUDA graph capture once the module is
/// loaded.
fluid_status fluid_cuda_launch_generated(fluid_cuda_context *context,
                                         const char *image, const char *name,
                                         int64_t blocks, int32_t threads,
                                         const fluid_tensor *const *tensors,
                                         int64_t count);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_CUDAKERNELS_H
