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

#include <algorithm>
#include <cstdio>
#include <string>

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
  int code = fluid_driver_main_ranked(argc, argv, program, &communicator);
  MPI_Finalize();
  return code;
}
