//===- Collective.cpp - The cuda backend's all-reduce
//----------------------===//
//
// fluid_cuda_all_reduce_mean_start / _wait (Collective.h): the context's
// compute stream handed to the communicator (libfluid_mpi's NCCL), which
// orders its own stream after it and back with events.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Collective.h"
#include "fluid/runtime/CudaRuntime.h"
#include "fluid/runtime/Error.h"

#include <string>

using namespace fluid::rt;

namespace {

/// The context's compute stream; fails with the runtime's message.
void *computeStream(fluid_cuda_context *context) {
  void *stream = nullptr;
  if (fluid_cuda_context_stream(context, &stream) != FLUID_OK)
    fail(fluid_last_error());
  return stream;
}

bool singleRank(const fluid_communicator *communicator) {
  return !communicator || communicator->size <= 1;
}

} // namespace

extern "C" fluid_status fluid_cuda_all_reduce_mean_start(
    fluid_cuda_context *context, fluid_communicator *communicator,
    int64_t bucket, int64_t count, const fluid_tensor *tensors) {
  return guard("fluid_cuda_all_reduce_mean_start", [&] {
    if (count < 1 || !tensors || bucket < 0)
      fail("needs at least one tensor and a bucket number >= 0");
    if (singleRank(communicator))
      return;
    if (!communicator->all_reduce_mean_device_start)
      fail("the communicator has no device all-reduce (NCCL)");
    if (communicator->all_reduce_mean_device_start(
            communicator, computeStream(context), bucket, count, tensors) !=
        FLUID_OK)
      fail("bucket " + std::to_string(bucket) + ": " + fluid_last_error());
  });
}

extern "C" fluid_status
fluid_cuda_all_reduce_mean_wait(fluid_cuda_context *context,
                                fluid_communicator *communicator,
                                int64_t bucket) {
  return guard("fluid_cuda_all_reduce_mean_wait", [&] {
    if (singleRank(communicator))
      return;
    if (!communicator->all_reduce_mean_device_wait)
      fail("the communicator has no device all-reduce (NCCL)");
    if (communicator->all_reduce_mean_device_wait(
            communicator, computeStream(context), bucket) != FLUID_OK)
      fail("bucket " + std::to_string(bucket) + ": " + fluid_last_error());
  });
}
