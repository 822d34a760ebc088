//===- DeviceMath.cuh - Math functions by element type in device code -----===//
//
// One name per function for float and double, mapped to CUDA's correctly
// rounded or few-ulp library functions (never the fast intrinsics), so a
// template over the element type calls the right one. The *Rn helpers
// round each operation on its own: the compiler never fuses them into a
// multiply-add, which the optimizer kernels rely on to round as the cpu
// backend (and PyTorch) does.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDA_DEVICEMATH_CUH
#define FLUID_RUNTIME_CUDA_DEVICEMATH_CUH

#include <cuda_runtime.h>

namespace fluid::rt::cuda::math {

__device__ inline float exp(float x) { return ::expf(x); }
__device__ inline double exp(double x) { return ::exp(x); }
__device__ inline float log(float x) { return ::logf(x); }
__device__ inline double log(double x) { return ::log(x); }
__device__ inline float cos(float x) { return ::cosf(x); }
__device__ inline double cos(double x) { return ::cos(x); }
__device__ inline float sqrt(float x) { return ::sqrtf(x); }
__device__ inline double sqrt(double x) { return ::sqrt(x); }
__device__ inline float floor(float x) { return ::floorf(x); }
__device__ inline double floor(double x) { return ::floor(x); }
__device__ inline float erf(float x) { return ::erff(x); }
__device__ inline double erf(double x) { return ::erf(x); }
__device__ inline float tanh(float x) { return ::tanhf(x); }
__device__ inline double tanh(double x) { return ::tanh(x); }
__device__ inline float pow(float x, float y) { return ::powf(x, y); }
__device__ inline double pow(double x, double y) { return ::pow(x, y); }
__device__ inline float trunc(float x) { return ::truncf(x); }
__device__ inline double trunc(double x) { return ::trunc(x); }

__device__ inline float addRn(float a, float b) { return __fadd_rn(a, b); }
__device__ inline double addRn(double a, double b) { return __dadd_rn(a, b); }
__device__ inline float subRn(float a, float b) { return __fsub_rn(a, b); }
__device__ inline double subRn(double a, double b) { return __dsub_rn(a, b); }
__device__ inline float mulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double mulRn(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float divRn(float a, float b) { return __fdiv_rn(a, b); }
__device__ inline double divRn(double a, double b) { return __ddiv_rn(a, b); }
__device__ inline float sqrtRn(float a) { return __fsqrt_rn(a); }
__device__ inline double sqrtRn(double a) { return __dsqrt_rn(a); }
/// a * b + c with one rounding.
__device__ inline float fmaRn(float a, float b, float c) {
  return __fmaf_rn(a, b, c);
}
__device__ inline double fmaRn(double a, double b, double c) {
  return __fma_rn(a, b, c);
}

} // namespace fluid::rt::cuda::math

#endif // FLUID_RUNTIME_CUDA_DEVICEMATH_CUH
