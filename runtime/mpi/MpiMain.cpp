//===- MpiMain.cpp - fluid_mpi_driver_main: one rank of a data-parallel run
//===//
//
// The main() of programs compiled with `fluid-compile --data-parallel`.
// MPI starts the processes (mpirun -np N, srun) and gives each its rank;
// this file turns MPI_COMM_WORLD into the fluid_communicator the program's
// all-reduces and the driver use (Collective.h), runs the driver as that
// rank, and finalizes MPI. Only this library links MPI: programs trained
// by one process never load it.
//
// On the cuda backend (a build with NCCL) the communicator also holds an
// NCCL communicator over the same ranks, created once when the driver has
// chosen the rank's GPU (its unique id sent from rank 0 over MPI), and a
// stream of its own: a bucket's all-reduce waits there for an event the
// compute stream records, runs ncclAllReduce (ncclAvg) in place for each
// tensor in one group, and records an event the compute stream waits for
// before the update reads the bucket; inside a CUDA graph these are the
// graph's fork and join.
//
// Failures: a rank whose run fails calls the communicator's abort, which
// is MPI_Abort on MPI_COMM_WORLD, so the other ranks end too instead of
// waiting in their next all-reduce; a rank killed by a signal is noticed by
// mpirun, which ends the others.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Collective.h"
#include "fluid/runtime/Error.h"
#include "fluid/runtime/Program.h"

#include <mpi.h>

#ifdef FLUID_MPI_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

fluid_status mpiFailure(int code, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  fluid::rt::setLastError(std::string(what) + " failed: " +
                          std::string(text, static_cast<size_t>(length)));
  return FLUID_ERROR_INVALID_ARGUMENT;
}

fluid_status allReduceSumHost(fluid_communicator *, void *data,
                              int64_t elements, int32_t dtype) {
  MPI_Datatype type = dtype == FLUID_F32   ? MPI_FLOAT
                      : dtype == FLUID_F64 ? MPI_DOUBLE
                      : dtype == FLUID_I64 ? MPI_INT64_T
                                           : MPI_DATATYPE_NULL;
  if (type == MPI_DATATYPE_NULL)
    return mpiFailure(MPI_ERR_TYPE, "all-reduce (element type)");
  // MPI counts are int: large tensors go in pieces.
  const int64_t piece = int64_t(1) << 30;
  int size = 0;
  MPI_Type_size(type, &size);
  for (int64_t done = 0; done < elements; done += piece) {
    int count = static_cast<int>(std::min(piece, elements - done));
    int code =
        MPI_Allreduce(MPI_IN_PLACE, static_cast<char *>(data) + done * size,
                      count, type, MPI_SUM, MPI_COMM_WORLD);
    if (code != MPI_SUCCESS)
      return mpiFailure(code, "MPI_Allreduce");
  }
  return FLUID_OK;
}

fluid_status broadcastHost(fluid_communicator *, void *data, int64_t bytes,
                           int32_t root) {
  const int64_t piece = int64_t(1) << 30;
  for (int64_t done = 0; done < bytes; done += piece) {
    int count = static_cast<int>(std::min(piece, bytes - done));
    int code = MPI_Bcast(static_cast<char *>(data) + done, count, MPI_BYTE,
                         root, MPI_COMM_WORLD);
    if (code != MPI_SUCCESS)
      return mpiFailure(code, "MPI_Bcast");
  }
  return FLUID_OK;
}

void abortAll(fluid_communicator *, int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
}

#ifdef FLUID_MPI_NCCL

/// The device side of the communicator.
struct NcclState {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  // Per bucket: recorded on the compute stream before the all-reduce
  // (ready) and on the communicator's stream after it (done).
  std::vector<cudaEvent_t> ready, done;
};

NcclState &ncclState() {
  static NcclState state;
  return state;
}

fluid_status cudaFailure(cudaError_t error, const char *what) {
  fluid::rt::setLastError(std::string(what) +
                          " failed: " + cudaGetErrorString(error));
  return FLUID_ERROR_INVALID_ARGUMENT;
}

fluid_status ncclFailure(ncclResult_t result, const char *what) {
  fluid::rt::setLastError(std::string(what) +
                          " failed: " + ncclGetErrorString(result));
  return FLUID_ERROR_INVALID_ARGUMENT;
}

fluid_status initDevice(fluid_communicator *self, int32_t device) {
  NcclState &state = ncclState();
  if (state.comm)
    return FLUID_OK;
  if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess)
    return cudaFailure(error, "cudaSetDevice");
  ncclUniqueId id = {};
  if (self->rank == 0)
    if (ncclResult_t result = ncclGetUniqueId(&id); result != ncclSuccess)
      return ncclFailure(result, "ncclGetUniqueId");
  if (fluid_status status = self->broadcast_host(self, &id, sizeof(id), 0);
      status != FLUID_OK)
    return status;
  if (ncclResult_t result =
          ncclCommInitRank(&state.comm, self->size, id, self->rank);
      result != ncclSuccess)
    return ncclFailure(result, "ncclCommInitRank");
  if (cudaError_t error =
          cudaStreamCreateWithFlags(&state.stream, cudaStreamNonBlocking);
      error != cudaSuccess)
    return cudaFailure(error, "cudaStreamCreateWithFlags");
  return FLUID_OK;
}

/// The events of `bucket`, created at its first use.
fluid_status bucketEvents(int64_t bucket, cudaEvent_t &ready,
                          cudaEvent_t &done) {
  NcclState &state = ncclState();
  while (static_cast<int64_t>(state.ready.size()) <= bucket) {
    cudaEvent_t a = nullptr, b = nullptr;
    if (cudaError_t error =
            cudaEventCreateWithFlags(&a, cudaEventDisableTiming);
        error != cudaSuccess)
      return cudaFailure(error, "cudaEventCreateWithFlags");
    if (cudaError_t error =
            cudaEventCreateWithFlags(&b, cudaEventDisableTiming);
        error != cudaSuccess)
      return cudaFailure(error, "cudaEventCreateWithFlags");
    state.ready.push_back(a);
    state.done.push_back(b);
  }
  ready = state.ready[bucket];
  done = state.done[bucket];
  return FLUID_OK;
}

fluid_status allReduceMeanDeviceStart(fluid_communicator *, void *stream,
                                      int64_t bucket, int64_t count,
                                      const fluid_tensor *tensors) {
  NcclState &state = ncclState();
  if (!state.comm) {
    fluid::rt::setLastError("the NCCL communicator was not set up");
    return FLUID_ERROR_INVALID_ARGUMENT;
  }
  auto compute = static_cast<cudaStream_t>(stream);
  cudaEvent_t ready = nullptr, done = nullptr;
  if (fluid_status status = bucketEvents(bucket, ready, done);
      status != FLUID_OK)
    return status;
  if (cudaError_t error = cudaEventRecord(ready, compute); error != cudaSuccess)
    return cudaFailure(error, "cudaEventRecord");
  if (cudaError_t error = cudaStreamWaitEvent(state.stream, ready, 0);
      error != cudaSuccess)
    return cudaFailure(error, "cudaStreamWaitEvent");
  if (ncclResult_t result = ncclGroupStart(); result != ncclSuccess)
    return ncclFailure(result, "ncclGroupStart");
  for (int64_t i = 0; i < count; ++i) {
    const fluid_tensor &t = tensors[i];
    ncclDataType_t type = t.dtype == FLUID_F32    ? ncclFloat32
                          : t.dtype == FLUID_F64  ? ncclFloat64
                          : t.dtype == FLUID_F16  ? ncclFloat16
                          : t.dtype == FLUID_BF16 ? ncclBfloat16
                                                  : ncclNumTypes;
    if (type == ncclNumTypes) {
      ncclGroupEnd();
      fluid::rt::setLastError("tensor " + std::to_string(i) +
                              ": only floating-point tensors are averaged");
      return FLUID_ERROR_INVALID_ARGUMENT;
    }
    if (ncclResult_t result = ncclAllReduce(
            t.data, t.data, static_cast<size_t>(fluid_tensor_numel(&t)), type,
            ncclAvg, state.comm, state.stream);
        result != ncclSuccess) {
      ncclGroupEnd();
      return ncclFailure(result, "ncclAllReduce");
    }
  }
  if (ncclResult_t result = ncclGroupEnd(); result != ncclSuccess)
    return ncclFailure(result, "ncclGroupEnd");
  if (cudaError_t error = cudaEventRecord(done, state.stream);
      error != cudaSuccess)
    return cudaFailure(error, "cudaEventRecord");
  return FLUID_OK;
}

fluid_status allReduceMeanDeviceWait(fluid_communicator *, void *stream,
                                     int64_t bucket) {
  NcclState &state = ncclState();
  if (bucket < 0 || bucket >= static_cast<int64_t>(state.done.size())) {
    fluid::rt::setLastError("bucket " + std::to_string(bucket) +
                            " was not started");
    return FLUID_ERROR_INVALID_ARGUMENT;
  }
  if (cudaError_t error = cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                                              state.done[bucket], 0);
      error != cudaSuccess)
    return cudaFailure(error, "cudaStreamWaitEvent");
  return FLUID_OK;
}

void destroyDevice() {
  NcclState &state = ncclState();
  if (state.comm)
    ncclCommDestroy(state.comm);
  if (state.stream)
    cudaStreamDestroy(state.stream);
  for (cudaEvent_t event : state.ready)
    cudaEventDestroy(event);
  for (cudaEvent_t event : state.done)
    cudaEventDestroy(event);
  state = NcclState();
}

#endif // FLUID_MPI_NCCL

/// This process's rank among those of its host.
int localRank() {
  MPI_Comm local;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                          MPI_INFO_NULL, &local) != MPI_SUCCESS)
    return 0;
  int rank = 0;
  MPI_Comm_rank(local, &rank);
  MPI_Comm_free(&local);
  return rank;
}

} // namespace

extern "C" int fluid_mpi_driver_main(int argc, char **argv,
                                     const fluid_program_info *program) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    std::fprintf(stderr, "%s: error: cannot initialize MPI\n",
                 argc > 0 ? argv[0] : "fluid-program");
    return 1;
  }
  // Errors are returned, not fatal, so that the driver can say what failed
  // before it ends the run.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  fluid_communicator communicator = {};
  MPI_Comm_rank(MPI_COMM_WORLD, &communicator.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &communicator.size);
  communicator.local_rank = localRank();
  communicator.all_reduce_sum_host = allReduceSumHost;
  communicator.broadcast_host = broadcastHost;
  communicator.abort = abortAll;
#ifdef FLUID_MPI_NCCL
  communicator.init_device = initDevice;
  communicator.all_reduce_mean_device_start = allReduceMeanDeviceStart;
  communicator.all_reduce_mean_device_wait = allReduceMeanDeviceWait;
#endif
  int code = fluid_driver_main_ranked(argc, argv, program, &communicator);
#ifdef FLUID_MPI_NCCL
  destroyDevice();
#endif
  MPI_Finalize();
  return code;
}
