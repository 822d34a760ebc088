//===- CudaDeviceUnavailable.cpp - createCudaDevice without CUDA ----------===//
//
// Compiled instead of CudaDevice.cpp where nvcc was not found, so that a
// program compiled for the cuda backend fails with a clear message.
//
//===----------------------------------------------------------------------===//

#include "Device.h"
#include "fluid/runtime/Error.h"

using namespace fluid::rt;
using namespace fluid::rt::driver;

std::unique_ptr<Device> driver::createCudaDevice(const CudaDeviceOptions &) {
  fail("the program runs on the cuda backend, but this runtime library was "
       "built without CUDA (rebuild it where nvcc is found)");
}
