//===- Collective.cpp - fluid_cpu_all_reduce_mean -------------------------===//
//
// The cpu backend's all-reduce: each tensor is summed over the ranks by the
// communicator (MPI) and divided by their number, as NCCL's ncclAvg does.
//
//===----------------------------------------------------------------------===//

#include "fluid/runtime/Collective.h"
#include "fluid/runtime/Error.h"

#include <cstring>
#include <string>

using namespace fluid::rt;

namespace {

template <typename T> void divide(void *data, int64_t elements, int32_t size) {
  T *values = static_cast<T *>(data);
  for (int64_t i = 0; i < elements; ++i)
    values[i] /= static_cast<T>(size);
}

} // namespace

extern "C" fluid_status
fluid_cpu_all_reduce_mean(fluid_communicator *communicator, int64_t count,
                          const fluid_tensor *inputs, fluid_tensor *outputs) {
  return guard("fluid_cpu_all_reduce_mean", [&] {
    if (count < 1 || !inputs || !outputs)
      fail("needs at least one tensor");
    for (int64_t i = 0; i < count; ++i) {
      const fluid_tensor &in = inputs[i];
      fluid_tensor &out = outputs[i];
      std::string entry = "tensor " + std::to_string(i);
      if (in.dtype != FLUID_F32 && in.dtype != FLUID_F64)
        fail(entry + ": only f32 and f64 tensors are averaged");
      if (out.dtype != in.dtype || out.rank != in.rank ||
          fluid_tensor_numel(&out) != fluid_tensor_numel(&in))
        fail(entry + ": the output differs from the input in type or size");
      int64_t elements = fluid_tensor_numel(&in);
      if (out.data != in.data)
        std::memcpy(out.data, in.data,
                    static_cast<size_t>(elements * fluid_dtype_size(in.dtype)));
      if (!communicator || communicator->size <= 1)
        continue;
      if (communicator->all_reduce_sum_host(communicator, out.data, elements,
                                            in.dtype) != FLUID_OK)
        throw Error(FLUID_ERROR_INVALID_ARGUMENT,
                    entry + ": " + fluid_last_error());
      if (in.dtype == FLUID_F32)
        divide<float>(out.data, elements, communicator->size);
      else
        divide<double>(out.data, elements, communicator->size);
    }
  });
}
