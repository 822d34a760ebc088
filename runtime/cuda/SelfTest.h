//===- SelfTest.h - Can this device run code built for it? ----------------===//

#ifndef FLUID_RUNTIME_CUDA_SELFTEST_H
#define FLUID_RUNTIME_CUDA_SELFTEST_H

namespace fluid::rt::cuda {

/// Launches a small kernel on `device` and checks its result; throws
/// fluid::rt::Error naming the failure otherwise.
void runKernelSelfTest(int device);

} // namespace fluid::rt::cuda

#endif // FLUID_RUNTIME_CUDA_SELFTEST_H
