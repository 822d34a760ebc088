//===- Collective.h - Averaging across the ranks of a data-parallel run ---===//
//
// A data-parallel run is one process per rank, started by MPI (mpirun,
// srun), each running the same program on its own share of the data.
// `fluid_communicator` is how a program reaches the other ranks: a table
// of operations the launcher's library fills in (libfluid_mpi: MPI on the
// host, NCCL on the GPUs), passed to the program in fluid_program_env. A
// null communicator is a run of one rank.
//
// The program's entry points average gradients in place
// (`fluid.all_reduce_mean`, --fluid-data-parallel): on the cpu backend with
// the host operation, on the cuda backend by starting the device operation
// on the communicator's stream and waiting for it where the results are
// first read.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_COLLECTIVE_H
#define FLUID_RUNTIME_COLLECTIVE_H

#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fluid_communicator fluid_communicator;
typedef struct fluid_cuda_context fluid_cuda_context;

/// The ranks of a run and the operations across them. Every operation is
/// collective: all ranks call it, in the same order, with the same sizes.
/// Each returns FLUID_OK or an error whose message fluid_last_error() has.
struct fluid_communicator {
  int32_t rank;       /* 0 .. size - 1 */
  int32_t size;       /* ranks in the run */
  int32_t local_rank; /* rank among this host's processes (its GPU) */
  void *state;        /* the implementation's */
  /// Sums `elements` values of `dtype` (f32, f64 or i64) in host memory
  /// over the ranks, in place.
  fluid_status (*all_reduce_sum_host)(fluid_communicator *self, void *data,
                                      int64_t elements, int32_t dtype);
  /// Rank `root`'s `bytes` at `data` to every rank.
  fluid_status (*broadcast_host)(fluid_communicator *self, void *data,
                                 int64_t bytes, int32_t root);
  /// Cuda backend (NULL where there is none): sets up the device side of
  /// the communicator (NCCL) for CUDA device `device`, which is current;
  /// the driver calls it once, before the first step.
  fluid_status (*init_device)(fluid_communicator *self, int32_t device);
  /// Device memory (cuda backend; NULL where there is none): enqueues, on
  /// the communicator's own stream after the work `stream` has enqueued
  /// so far, the in-place mean over the ranks of `count` tensors, and
  /// records completion as bucket `bucket`'s.
  fluid_status (*all_reduce_mean_device_start)(fluid_communicator *self,
                                               void *stream, int64_t bucket,
                                               int64_t count,
                                               const fluid_tensor *tensors);
  /// Makes `stream`'s later work wait for bucket `bucket`'s all-reduce.
  fluid_status (*all_reduce_mean_device_wait)(fluid_communicator *self,
                                              void *stream, int64_t bucket);
  /// Ends every rank's process with `code` (after an error on this one).
  void (*abort)(fluid_communicator *self, int code);
};

/// Writes into `outputs[i]` the mean over the ranks of `inputs[i]`, for
/// `count` f32 or f64 tensors of equal shapes pairwise (an output may be
/// its input). A null or one-rank communicator copies.
fluid_status fluid_cpu_all_reduce_mean(fluid_communicator *communicator,
                                       int64_t count,
                                       const fluid_tensor *inputs,
                                       fluid_tensor *outputs);

/// The cuda backend's all-reduce, in two halves: `start` enqueues the
/// in-place mean of `count` f32, f64, f16 or bf16 tensors over the ranks on
/// the communicator's stream, after the work the context's stream holds so
/// far, as bucket `bucket`; `wait` makes the context's stream wait for it,
/// right before the first launch that reads the results, so the backward
/// launches in between overlap the communication. A null or one-rank
/// communicator does nothing (the mean of one value is itself).
fluid_status fluid_cuda_all_reduce_mean_start(fluid_cuda_context *context,
                                              fluid_communicator *communicator,
                                              int64_t bucket, int64_t count,
                                              const fluid_tensor *tensors);
fluid_status fluid_cuda_all_reduce_mean_wait(fluid_cuda_context *context,
                                             fluid_communicator *communicator,
                                             int64_t bucket);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_COLLECTIVE_H
