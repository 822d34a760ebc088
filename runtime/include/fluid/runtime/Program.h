//===- Program.h - The interface between emitted programs and the driver --===//
//
// `fluid-compile` emits one C++ translation unit per model (see
// docs/COMPILE.md). It describes the program with the plain data below and
// runs it through the runtime's kernel entry points; the driver
// (fluid_driver_main, in libfluid_runtime) owns everything else: memory
// (but the temporaries a program allocates itself, below), parameters and
// their initial values, data, checkpoints, CUDA graphs and logging.
// Emitted code never synchronizes.
//
// Memory is given to a function as three pointer arrays: one per parameter
// (the program's order), one per buffer of the function (its temporaries,
// each `buffer_bytes[i]` bytes, 256-byte aligned on every backend), one per
// argument. A function's results live in its buffers. On the cuda backend
// every pointer is device memory of the context's device. A program that
// frees its temporaries at their last use allocates them itself, with
// fluid_cpu_allocate / fluid_cpu_release (CpuMemory.h) or
// fluid_cuda_allocate / fluid_cuda_release (CudaRuntime.h), and releases
// within one run whatever it allocates in it.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_PROGRAM_H
#define FLUID_RUNTIME_PROGRAM_H

#include "fluid/runtime/Collective.h"
#include "fluid/runtime/Init.h"
#include "fluid/runtime/Tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Bumped whenever a struct below changes; the driver refuses other values.
#define FLUID_PROGRAM_ABI_VERSION 6

/// Where a program's kernels run. The numeric values are part of the ABI.
typedef enum fluid_backend {
  FLUID_BACKEND_CPU = 0,
  FLUID_BACKEND_CUDA = 1,
} fluid_backend;

/// A named tensor type (no data).
typedef struct fluid_program_value {
  const char *name;
  int32_t dtype; /* a fluid_dtype */
  int32_t rank;
  /* The shape checkpoints, PyTorch and the data see, e.g. a filter
     [O, C, KH, KW] or images [N, C, H, W]. */
  int64_t shape[FLUID_MAX_RANK];
  /* How the tensor is laid out in memory: all zeros, row-major in `shape`'s
     order; else a permutation of [0, rank) and row-major in the order
     `shape[storage_order[0]], ..., shape[storage_order[rank - 1]]`
     (dimension d of memory is dimension storage_order[d]; {0, 2, 3, 1}: a
     filter stored [O, KH, KW, C], images stored [N, H, W, C]). The driver
     converts at load, initialization and save, never per step.
     (ABI version 4.) */
  int32_t storage_order[FLUID_MAX_RANK];
} fluid_program_value;

/// A persistent tensor: a model parameter or optimizer state.
typedef struct fluid_program_param {
  fluid_program_value value; /* value.name is the parameter's name */
  fluid_init_spec init;      /* floating-point parameters */
  int64_t integer_init;      /* integer parameters (step counters) */
  int32_t trainable;         /* 1 for model weights */
  int32_t optimizer_state;   /* 1: a checkpoint may lack it (kept as is) */
} fluid_program_param;

/// The memory a function runs on (see the file comment).
typedef struct fluid_program_memory {
  void *const *params;
  void *const *buffers;
  void *const *arguments;
} fluid_program_memory;

/// How a function is run.
typedef struct fluid_program_env {
  /// The backend's context: a fluid_cuda_context * on cuda, NULL on cpu.
  void *backend_context;
  /// Optional (NULL: none): called right before (phase 0) and right after
  /// (phase 1) launch number `launch` is enqueued, for profiling.
  void (*on_launch)(void *user, int64_t launch, int32_t phase);
  void *user;
  /// The other ranks of a data-parallel run (Collective.h); NULL: one
  /// rank. (ABI version 6.)
  fluid_communicator *communicator;
} fluid_program_env;

/// One kernel launch of a function, for logs and profiles.
typedef struct fluid_program_launch {
  const char *kernel;   /* the op's name, e.g. "conv2d_grad_filter" */
  const char *location; /* the op's location in the source, or "" */
} fluid_program_launch;

typedef fluid_status (*fluid_program_entry)(const fluid_program_env *env,
                                            const fluid_program_memory *memory);

/// A function of the program: the training step or the inference function.
typedef struct fluid_program_function {
  const char *name;
  int64_t num_arguments;
  const fluid_program_value *arguments; /* value.name: "images", "labels" */
  int64_t num_results;
  const fluid_program_value *results; /* value.name: "loss", "learning_rate",
                                         "logits", ... */
  const int64_t *result_buffers;      /* the buffer holding each result */
  int64_t num_buffers;
  const int64_t *buffer_bytes;
  int64_t num_launches;
  const fluid_program_launch *launches;
  /// Fills the buffers that hold constants; call once per memory, before
  /// the first run (on cuda it waits for its copies to finish).
  fluid_program_entry initialize;
  /// Enqueues the function's launches (on cuda it returns without waiting).
  fluid_program_entry run;
} fluid_program_function;

/// A whole program, as emitted.
typedef struct fluid_program_info {
  int32_t abi_version; /* FLUID_PROGRAM_ABI_VERSION */
  int32_t backend;     /* a fluid_backend */
  const char *source;  /* the model file it was compiled from */
  const char *options; /* the training options it was built with */
  int64_t num_params;
  const fluid_program_param *params;
  int64_t num_functions;
  const fluid_program_function *functions;
  int64_t train_function;      /* index of the training step */
  int64_t predict_function;    /* index of @predict, or -1 */
  int64_t learning_rate_param; /* the base learning rate (f64, rank 0), or -1 */
  int64_t step_param;          /* @global_step (i64, rank 0), or -1 */
  int64_t classes;             /* the loss's number of classes */
  /* cuDNN workspace limit the program's memory plan assumes; < 0: none.
     The cuda driver passes it to fluid_cuda_set_workspace_limit before the
     first step; the cpu driver ignores it. (ABI version 2.) */
  int64_t workspace_limit_bytes;
  /* 1: cuda convolutions and products of f32 tensors use TF32 tensor cores
     unless the executable runs with --no-tf32 (fluid-compile --precision
     tf32, the default); 0: full f32 math unless it runs with --tf32
     (--precision fp32). (ABI version 3.) */
  int32_t tf32;
  /* NULL, or the program was imported by fluid-import-onnx, which declared
     its parameters with all-zero placeholder initializers and wrote their
     values to this safetensors file (the path as the importer was given
     it): the driver warns when trainable placeholders are trained without
     --init-from or --load. (ABI version 5.) */
  const char *params_file;
  /* 1: the training step averages its gradients over the ranks
     (fluid-compile --data-parallel), and main() is
     fluid_mpi_driver_main; 0: one process trains alone. (ABI version 6.) */
  int32_t data_parallel;
} fluid_program_info;

/// Runs the training executable's command line (--help lists it) on
/// `program`; returns the process exit code. Emitted programs' main().
int fluid_driver_main(int argc, char **argv, const fluid_program_info *program);

/// fluid_driver_main as one rank of a data-parallel run: `communicator`
/// (created by fluid_mpi_driver_main, libfluid_mpi) gives this process's
/// rank and reaches the others. Each rank trains on its own share of every
/// batch; rank 0 alone logs and writes checkpoints.
/// The main() of a data-parallel program (libfluid_mpi): initializes MPI,
/// runs fluid_driver_main_ranked as this process's rank of MPI_COMM_WORLD,
/// finalizes MPI; returns the process exit code.
int fluid_mpi_driver_main(int argc, char **argv,
                          const fluid_program_info *program);

int fluid_driver_main_ranked(int argc, char **argv,
                             const fluid_program_info *program,
                             fluid_communicator *communicator);

#ifdef __cplusplus
} // extern "C"
#endif

#endif // FLUID_RUNTIME_PROGRAM_H
