//===- KernelsMath.cu - Elementwise math, select and cast -----------------===//
//
// The arithmetic of learning-rate schedules (exp, cos, pow, floor, minimum,
// comparisons, select, casts of the step counter) with PyTorch's NaN
// behaviour, through the elementwise engine (Elementwise.cuh).
//
// cast from a float to an integer type (or from i64 to i32) must refuse
// NaN, infinities and values out of range, naming the first bad element,
// and write nothing then. The values are in device memory, so a first
// kernel finds the first bad element and a second converts only if there
// is none; otherwise it flags the error for fluid_cuda_check_errors and the
// output keeps its previous contents.
//
// Casts between the float types include f16 and bf16 (CUDA's __half and
// __nv_bfloat16), rounded to nearest even from the exact value as the cpu
// backend rounds them (runtime/include/fluid/runtime/Float16.h): from f32 and
// f64 directly, between the two 16-bit types through f32, which holds either
// exactly. Casts between a 16-bit type and an integer type are not supported.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.cuh"
#include "Elementwise.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

struct Neg {
  template <typename T> __device__ T operator()(T x) const { return -x; }
};
struct Exp {
  template <typename T> __device__ T operator()(T x) const {
    return math::exp(x);
  }
};
struct Log {
  template <typename T> __device__ T operator()(T x) const {
    return math::log(x);
  }
};
struct Cos {
  template <typename T> __device__ T operator()(T x) const {
    return math::cos(x);
  }
};
struct Sqrt {
  template <typename T> __device__ T operator()(T x) const {
    return math::sqrt(x);
  }
};
struct Floor {
  template <typename T> __device__ T operator()(T x) const {
    return math::floor(x);
  }
};
struct Erf {
  template <typename T> __device__ T operator()(T x) const {
    return math::erf(x);
  }
};
struct Pow {
  template <typename T> __device__ T operator()(T a, T b) const {
    return math::pow(a, b);
  }
};
// `a != a` picks a NaN lhs; a NaN rhs fails the comparison and is picked.
struct Minimum {
  template <typename T> __device__ T operator()(T a, T b) const {
    return a < b || a != a ? a : b;
  }
};
struct Maximum {
  template <typename T> __device__ T operator()(T a, T b) const {
    return a > b || a != a ? a : b;
  }
};
struct GreaterEqual {
  template <typename T> __device__ T operator()(T a, T b) const {
    return a >= b ? T(1) : T(0);
  }
};
struct Select {
  template <typename T> __device__ T operator()(T c, T a, T b) const {
    return c != 0 ? a : b;
  }
};

template <typename To> struct Convert {
  template <typename From> __device__ To operator()(From x) const {
    return static_cast<To>(x);
  }
};

//===----------------------------------------------------------------------===//
// cast
//===----------------------------------------------------------------------===//

/// Calls `body(T{})` with T the C++ type of a dtype cast converts between.
template <typename Fn>
void dispatchCastable(const CheckedTensor &t, Fn &&body) {
  switch (t.dtype()) {
  case FLUID_F32:
    return body(float{});
  case FLUID_F64:
    return body(double{});
  case FLUID_I32:
    return body(int32_t{});
  case FLUID_I64:
    return body(int64_t{});
  case FLUID_F16:
    return body(__half{});
  case FLUID_BF16:
    return body(__nv_bfloat16{});
  default:
    throw Error(FLUID_ERROR_UNSUPPORTED,
                t.name + " has dtype " + cpu::dtypeName(t.dtype()) +
                    "; cast supports f16, bf16, f32, f64, i32 and i64");
  }
}

/// Whether every From value converts to To without a range check.
template <typename To, typename From>
constexpr bool kAlwaysCastable = std::is_floating_point_v<To> ||
                                 (!std::is_floating_point_v<From> &&
                                  sizeof(From) <= sizeof(To));

/// Whether static_cast<To>(x) is defined, as the cpu backend decides it.
template <typename To, typename From> __device__ bool castable(From x) {
  if constexpr (kAlwaysCastable<To, From>) {
    return true;
  } else if constexpr (std::is_floating_point_v<From>) {
    // -2^digits and 2^digits are exact in every float type; NaN fails.
    const From limit = From(uint64_t(1) << std::numeric_limits<To>::digits);
    const From truncated = math::trunc(x);
    return truncated >= -limit && truncated < limit;
  } else {
    // Only i64 -> i32 narrows.
    static_assert(sizeof(To) == 4 && sizeof(From) == 8);
    return x >= From(INT32_MIN) && x <= From(INT32_MAX);
  }
}

/// No bad element: the value of the first-bad-element word.
constexpr unsigned long long kNoBadElement = ~0ull;

template <typename To, typename From>
__global__ void __launch_bounds__(kBlockSize)
    findFirstUncastable(const From *in, int64_t n,
                        unsigned long long *firstBad) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    if (!castable<To>(in[i]))
      atomicMin(firstBad, static_cast<unsigned long long>(i));
}

template <typename To, typename From>
__global__ void __launch_bounds__(kBlockSize)
    convertIfCastable(const From *in, To *out, int64_t n,
                      const unsigned long long *firstBad,
                      DeviceErrorRecord *errors, int32_t fromDtype,
                      int32_t toDtype) {
  const unsigned long long bad = *firstBad;
  if (bad != kNoBadElement) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      DeviceErrorRecord error{};
      const From x = in[bad];
      error.source = kFromCast;
      error.index = int64_t(bad);
      error.fromDtype = fromDtype;
      error.toDtype = toDtype;
      error.kind = kCastOutOfRange;
      if constexpr (std::is_floating_point_v<From>) {
        if (x != x)
          error.kind = kCastNaN;
        error.real = double(x);
      } else {
        error.value = int64_t(x);
      }
      raiseDeviceError(errors, error);
    }
    return;
  }
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    out[i] = static_cast<To>(in[i]);
}

/// f16 or bf16.
template <typename T>
constexpr bool kSixteenBit =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

/// `x` rounded to nearest even in To; 16-bit sources widen to f32 first
/// (exact).
template <typename To, typename From> __device__ To convertFloat(From x) {
  if constexpr (std::is_same_v<From, __half>)
    return convertFloat<To>(__half2float(x));
  else if constexpr (std::is_same_v<From, __nv_bfloat16>)
    return convertFloat<To>(__bfloat162float(x));
  else if constexpr (std::is_same_v<To, __half>)
    return std::is_same_v<From, double> ? __double2half(double(x))
                                        : __float2half_rn(float(x));
  else if constexpr (std::is_same_v<To, __nv_bfloat16>)
    return std::is_same_v<From, double> ? __double2bfloat16(double(x))
                                        : __float2bfloat16_rn(float(x));
  else
    return To(x);
}

/// Elements per thread of a 16-bit cast: 16 bytes of the narrower type.
template <typename To, typename From>
constexpr int kCastVector = int(16 / std::min(sizeof(To), sizeof(From)));

/// Converts `n` elements: with `kVector`, kCastVector elements per
/// iteration as vector loads and stores (both pointers aligned for them),
/// the last n % kCastVector one by one.
template <typename To, typename From, bool kVector>
__global__ void __launch_bounds__(kBlockSize)
    castFloatKernel(const From *__restrict__ in, To *__restrict__ out,
                    int64_t n) {
  constexpr int kWidth = kCastVector<To, From>;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t done = 0;
  if constexpr (kVector) {
    const int64_t vectors = n / kWidth;
    for (int64_t i = first; i < vectors; i += stride) {
      const Vector<From, kWidth> x =
          reinterpret_cast<const Vector<From, kWidth> *>(in)[i];
      Vector<To, kWidth> y;
#pragma unroll
      for (int k = 0; k < kWidth; ++k)
        y.v[k] = convertFloat<To>(x.v[k]);
      reinterpret_cast<Vector<To, kWidth> *>(out)[i] = y;
    }
    done = vectors * kWidth;
  }
  for (int64_t i = done + first; i < n; i += stride)
    out[i] = convertFloat<To>(in[i]);
}

template <typename To, typename From>
void launchCast(fluid_cuda_context *context, cudaStream_t stream,
                const CheckedTensor &input, const CheckedTensor &output) {
  const From *in = input.data<From>();
  To *out = output.data<To>();
  const int64_t n = input.numel;
  if (n == 0)
    return;
  if constexpr (std::is_same_v<To, From>) {
    if (in != out)
      FLUID_CUDA_CHECK(cudaMemcpyAsync(out, in, sizeof(To) * n,
                                       cudaMemcpyDeviceToDevice, stream));
  } else if constexpr (kSixteenBit<To> || kSixteenBit<From>) {
    if constexpr (std::is_integral_v<To> || std::is_integral_v<From>) {
      throw Error(FLUID_ERROR_UNSUPPORTED,
                  "cast between " + std::string(cpu::dtypeName(input.dtype())) +
                      " and " + cpu::dtypeName(output.dtype()) +
                      " is not supported on cuda (16-bit floats convert to "
                      "and from f32 and f64 only)");
    } else {
      constexpr int kWidth = kCastVector<To, From>;
      if (isVectorAligned<From, kWidth>(in) && isVectorAligned<To, kWidth>(out))
        castFloatKernel<To, From, true>
            <<<gridSizeFor(std::max<int64_t>(n / kWidth, 1)), kBlockSize, 0,
               stream>>>(in, out, n);
      else
        castFloatKernel<To, From, false>
            <<<gridSizeFor(n), kBlockSize, 0, stream>>>(in, out, n);
      checkLaunch();
    }
  } else if constexpr (kAlwaysCastable<To, From>) {
    launchElementwise<To, From, 1>(stream, out, output.shape, {in},
                                   {input.shape}, Convert<To>{});
  } else {
    auto *firstBad = static_cast<unsigned long long *>(
        workspace(context, sizeof(unsigned long long)));
    DeviceErrorRecord *errors = deviceErrorRecord(context);
    FLUID_CUDA_CHECK(
        cudaMemsetAsync(firstBad, 0xff, sizeof(unsigned long long), stream));
    const int blocks = gridSizeFor(n);
    findFirstUncastable<To><<<blocks, kBlockSize, 0, stream>>>(in, n, firstBad);
    checkLaunch();
    convertIfCastable<<<blocks, kBlockSize, 0, stream>>>(
        in, out, n, firstBad, errors, input.dtype(), output.dtype());
    checkLaunch();
  }
}

} // namespace

extern "C" fluid_status fluid_cuda_neg(fluid_cuda_context *context,
                                       const fluid_tensor *input,
                                       fluid_tensor *output) {
  return unary("fluid_cuda_neg", context, input, output, Neg{});
}

extern "C" fluid_status fluid_cuda_exp(fluid_cuda_context *context,
                                       const fluid_tensor *input,
                                       fluid_tensor *output) {
  return unary("fluid_cuda_exp", context, input, output, Exp{});
}

extern "C" fluid_status fluid_cuda_log(fluid_cuda_context *context,
                                       const fluid_tensor *input,
                                       fluid_tensor *output) {
  return unary("fluid_cuda_log", context, input, output, Log{});
}

extern "C" fluid_status fluid_cuda_cos(fluid_cuda_context *context,
                                       const fluid_tensor *input,
                                       fluid_tensor *output) {
  return unary("fluid_cuda_cos", context, input, output, Cos{});
}

extern "C" fluid_status fluid_cuda_sqrt(fluid_cuda_context *context,
                                        const fluid_tensor *input,
                                        fluid_tensor *output) {
  return unary("fluid_cuda_sqrt", context, input, output, Sqrt{});
}

extern "C" fluid_status fluid_cuda_floor(fluid_cuda_context *context,
                                         const fluid_tensor *input,
                                         fluid_tensor *output) {
  return unary("fluid_cuda_floor", context, input, output, Floor{});
}

extern "C" fluid_status fluid_cuda_erf(fluid_cuda_context *context,
                                       const fluid_tensor *input,
                                       fluid_tensor *output) {
  return unary("fluid_cuda_erf", context, input, output, Erf{});
}

extern "C" fluid_status fluid_cuda_pow(fluid_cuda_context *context,
                                       const fluid_tensor *lhs,
                                       const fluid_tensor *rhs,
                                       fluid_tensor *output) {
  return binary("fluid_cuda_pow", context, lhs, rhs, output, Pow{});
}

extern "C" fluid_status fluid_cuda_minimum(fluid_cuda_context *context,
                                           const fluid_tensor *lhs,
                                           const fluid_tensor *rhs,
                                           fluid_tensor *output) {
  return binary("fluid_cuda_minimum", context, lhs, rhs, output, Minimum{});
}

extern "C" fluid_status fluid_cuda_maximum(fluid_cuda_context *context,
                                           const fluid_tensor *lhs,
                                           const fluid_tensor *rhs,
                                           fluid_tensor *output) {
  return binary("fluid_cuda_maximum", context, lhs, rhs, output, Maximum{});
}

extern "C" fluid_status fluid_cuda_greater_equal(fluid_cuda_context *context,
                                                 const fluid_tensor *lhs,
                                                 const fluid_tensor *rhs,
                                                 fluid_tensor *output) {
  return binary("fluid_cuda_greater_equal", context, lhs, rhs, output,
                GreaterEqual{});
}

extern "C" fluid_status fluid_cuda_select(fluid_cuda_context *context,
                                          const fluid_tensor *conditionDesc,
                                          const fluid_tensor *onTrueDesc,
                                          const fluid_tensor *onFalseDesc,
                                          fluid_tensor *outputDesc) {
  return guard("fluid_cuda_select", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor condition = checkTensor(context, conditionDesc, "condition");
    CheckedTensor onTrue = checkTensor(context, onTrueDesc, "on_true");
    CheckedTensor onFalse = checkTensor(context, onFalseDesc, "on_false");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    checkFloatBroadcast<3>({&condition, &onTrue, &onFalse}, output);
    launchFloatElementwise<3>(stream, {&condition, &onTrue, &onFalse}, output,
                              Select{});
  });
}

extern "C" fluid_status fluid_cuda_cast(fluid_cuda_context *context,
                                        const fluid_tensor *inputDesc,
                                        fluid_tensor *outputDesc) {
  return guard("fluid_cuda_cast", [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor input = checkTensor(context, inputDesc, "input");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    cpu::requireShape(output, input.shape);
    dispatchCastable(input, [&](auto from) {
      dispatchCastable(output, [&](auto to) {
        launchCast<decltype(to), decltype(from)>(context, stream, input,
                                                 output);
      });
    });
  });
}
