//===- GpuInfo.cpp - fluid-gpu-info: what the cuda backend will run on ----===//
//
// Prints the CUDA runtime and driver, cuDNN and cuBLAS versions (loaded and
// built against: the GPU machine has more than one cuDNN), then one line per
// device, and runs a kernel built by this build on each. Without a usable
// GPU or driver it prints one error line and exits 1.
//
//===----------------------------------------------------------------------===//

#include "SelfTest.h"

#include "fluid/runtime/CudaCheck.h"

#include <cstdio>
#include <string>

namespace {

/// CUDA encodes versions as 1000 * major + 10 * minor.
std::string cudaVersion(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

/// cuDNN 9 encodes versions as 10000 * major + 100 * minor + patch.
std::string cudnnVersion(size_t version) {
  return std::to_string(version / 10000) + "." +
         std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}

std::string cublasVersion() {
  int major = 0, minor = 0, patch = 0;
  FLUID_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
  FLUID_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  FLUID_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  return std::to_string(major) + "." + std::to_string(minor) + "." +
         std::to_string(patch);
}

double gibibytes(size_t bytes) {
  return double(bytes) / (1024.0 * 1024 * 1024);
}

void printGpuInfo() {
  // Query the devices first, so that a machine without a GPU or driver gets
  // exactly one line: the error.
  int deviceCount = 0;
  FLUID_CUDA_CHECK(cudaGetDeviceCount(&deviceCount));
  int runtimeVersion = 0, driverVersion = 0;
  FLUID_CUDA_CHECK(cudaRuntimeGetVersion(&runtimeVersion));
  FLUID_CUDA_CHECK(cudaDriverGetVersion(&driverVersion));

  std::printf("CUDA runtime %s, driver supports CUDA %s\n",
              cudaVersion(runtimeVersion).c_str(),
              cudaVersion(driverVersion).c_str());
  std::printf("cuDNN %s (built against %s), cuBLAS %s (built against "
              "%d.%d.%d)\n",
              cudnnVersion(cudnnGetVersion()).c_str(),
              cudnnVersion(CUDNN_VERSION).c_str(), cublasVersion().c_str(),
              CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
  for (int device = 0; device < deviceCount; ++device) {
    cudaDeviceProp properties;
    FLUID_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    FLUID_CUDA_CHECK(cudaSetDevice(device));
    size_t freeBytes = 0, totalBytes = 0;
    FLUID_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    std::printf("device %d: %s, compute capability %d.%d, %d SMs, memory "
                "%.1f GiB total, %.1f GiB free\n",
                device, properties.name, properties.major, properties.minor,
                properties.multiProcessorCount, gibibytes(totalBytes),
                gibibytes(freeBytes));
    fluid::rt::cuda::runKernelSelfTest(device);
    std::printf("device %d: kernel self-test passed\n", device);
  }
}

} // namespace

int main() {
  try {
    printGpuInfo();
    return 0;
  } catch (const fluid::rt::Error &error) {
    std::fprintf(stderr, "fluid-gpu-info: error: %s\n", error.what());
    return 1;
  }
}
