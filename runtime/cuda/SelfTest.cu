//===- SelfTest.cu - Can this device run code built for it? ---------------===//
//
// A device that the driver lists may still be unable to run this build's
// kernels (a GPU older than CMAKE_CUDA_ARCHITECTURES gives "no kernel image
// is available"). Launching one small kernel and checking its result answers
// that before any training starts.
//
//===----------------------------------------------------------------------===//

#include "SelfTest.h"

#include "fluid/runtime/CudaCheck.h"

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace {

__global__ void writeSquares(int *out, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count)
    out[i] = i * i;
}

/// Frees a device buffer on every path out of the self-test.
struct DeviceBuffer {
  int *data = nullptr;
  ~DeviceBuffer() { cudaFree(data); }
};

} // namespace

void fluid::rt::cuda::runKernelSelfTest(int device) {
  constexpr int count = 1000;
  FLUID_CUDA_CHECK(cudaSetDevice(device));
  DeviceBuffer buffer;
  FLUID_CUDA_CHECK(cudaMalloc(&buffer.data, count * sizeof(int)));
  writeSquares<<<(count + 255) / 256, 256>>>(buffer.data, count);
  FLUID_CUDA_CHECK(cudaGetLastError());
  std::vector<int> host(count);
  FLUID_CUDA_CHECK(cudaMemcpy(host.data(), buffer.data, count * sizeof(int),
                              cudaMemcpyDeviceToHost));
  for (int i = 0; i < count; ++i)
    if (host[i] != i * i)
      throw Error(FLUID_ERROR_DEVICE,
                  "kernel self-test on device " + std::to_string(device) +
                      " computed " + std::to_string(host[i]) + " at index " +
                      std::to_string(i) + ", expected " +
                      std::to_string(i * i));
}
