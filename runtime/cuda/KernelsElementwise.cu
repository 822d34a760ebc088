//===- KernelsElementwise.cu - Activations, arithmetic, gradients ---------===//
//
// relu, sigmoid, tanh and their gradients, and the broadcasting add, sub,
// mul and div, all through the elementwise engine (Elementwise.cuh): the
// same-shape case runs 16-byte vector loads, scalars and per-channel
// operands stay on the flat path. Gradients compute in double and round
// once, as the cpu backend does; f16 and bf16 compute in f32 and round once
// more to their type.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.cuh"
#include "Elementwise.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <type_traits>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

struct Relu {
  // `x < 0 ? 0 : x` rather than max(x, 0) so that NaN propagates.
  template <typename T> __device__ T operator()(T x) const {
    return x < 0 ? T(0) : x;
  }
};

struct Sigmoid {
  template <typename T> __device__ T operator()(T x) const {
    return T(1) / (T(1) + math::exp(-x));
  }
};

struct Tanh {
  template <typename T> __device__ T operator()(T x) const {
    return math::tanh(x);
  }
};

/// Integer overflow wraps (unsigned arithmetic), as on the cpu backend.
template <typename T, typename Fn> __device__ T wrapping(T a, T b, Fn fn) {
  if constexpr (std::is_integral_v<T>) {
    using Wide = std::make_unsigned_t<T>;
    return T(fn(Wide(a), Wide(b)));
  } else {
    return fn(a, b);
  }
}

struct Add {
  template <typename T> __device__ T operator()(T a, T b) const {
    return wrapping(a, b, [](auto x, auto y) { return x + y; });
  }
};
struct Sub {
  template <typename T> __device__ T operator()(T a, T b) const {
    return wrapping(a, b, [](auto x, auto y) { return x - y; });
  }
};
struct Mul {
  template <typename T> __device__ T operator()(T a, T b) const {
    return wrapping(a, b, [](auto x, auto y) { return x * y; });
  }
};
struct Div {
  template <typename T> __device__ T operator()(T a, T b) const {
    return a / b;
  }
};

/// grad_input from (grad_output, output), computed in double.
struct ReluGrad {
  // PyTorch's threshold_backward: `y <= 0`, so a NaN output passes g.
  template <typename T> __device__ T operator()(T g, T y) const {
    return y <= 0 ? T(0) : g;
  }
};
struct SigmoidGrad {
  template <typename T> __device__ T operator()(T g, T y) const {
    const double yd = y;
    return T(__dmul_rn(__dmul_rn(double(g), yd), __dsub_rn(1.0, yd)));
  }
};
struct TanhGrad {
  template <typename T> __device__ T operator()(T g, T y) const {
    const double yd = y;
    return T(__dmul_rn(double(g), __dsub_rn(1.0, __dmul_rn(yd, yd))));
  }
};

/// Like binary(), but i32 and i64 operands (step counters) are allowed too.
template <typename Op>
fluid_status arithmetic(const char *entryPoint, fluid_cuda_context *context,
                        const fluid_tensor *lhsDesc,
                        const fluid_tensor *rhsDesc, fluid_tensor *outputDesc,
                        Op op) {
  return guard(entryPoint, [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor lhs = checkTensor(context, lhsDesc, "lhs");
    CheckedTensor rhs = checkTensor(context, rhsDesc, "rhs");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    if (lhs.dtype() != FLUID_I32 && lhs.dtype() != FLUID_I64) {
      checkFloatBroadcast<2>({&lhs, &rhs}, output);
      launchFloatElementwise<2>(stream, {&lhs, &rhs}, output, op);
      return;
    }
    cpu::requireDtype(rhs, lhs);
    cpu::requireDtype(output, lhs);
    cpu::requireShape(output, cpu::broadcastShapes<2>({&lhs, &rhs}));
    auto run = [&](auto zero) {
      using T = decltype(zero);
      launchElementwise<T, T, 2>(stream, output.data<T>(), output.shape,
                                 {lhs.data<T>(), rhs.data<T>()},
                                 {lhs.shape, rhs.shape}, op);
    };
    if (lhs.dtype() == FLUID_I32)
      run(int32_t{});
    else
      run(int64_t{});
  });
}

template <typename Op>
fluid_status unaryGrad(const char *entryPoint, fluid_cuda_context *context,
                       const fluid_tensor *gradOutputDesc,
                       const fluid_tensor *outputDesc,
                       fluid_tensor *gradInputDesc, Op op) {
  return guard(entryPoint, [&] {
    cudaStream_t stream = streamFor(context);
    CheckedTensor gradOutput =
        checkTensor(context, gradOutputDesc, "grad_output");
    CheckedTensor output = checkTensor(context, outputDesc, "output");
    CheckedTensor gradInput = checkTensor(context, gradInputDesc, "grad_input");
    requireElementwiseFloat(output);
    cpu::requireDtype(gradOutput, output);
    cpu::requireDtype(gradInput, output);
    cpu::requireShape(gradOutput, output.shape);
    cpu::requireShape(gradInput, output.shape);
    launchFloatElementwise<2>(stream, {&gradOutput, &output}, gradInput, op);
  });
}

} // namespace

extern "C" fluid_status fluid_cuda_relu(fluid_cuda_context *context,
                                        const fluid_tensor *input,
                                        fluid_tensor *output) {
  return unary("fluid_cuda_relu", context, input, output, Relu{});
}

extern "C" fluid_status fluid_cuda_sigmoid(fluid_cuda_context *context,
                                           const fluid_tensor *input,
                                           fluid_tensor *output) {
  return unary("fluid_cuda_sigmoid", context, input, output, Sigmoid{});
}

extern "C" fluid_status fluid_cuda_tanh(fluid_cuda_context *context,
                                        const fluid_tensor *input,
                                        fluid_tensor *output) {
  return unary("fluid_cuda_tanh", context, input, output, Tanh{});
}

extern "C" fluid_status fluid_cuda_add(fluid_cuda_context *context,
                                       const fluid_tensor *lhs,
                                       const fluid_tensor *rhs,
                                       fluid_tensor *output) {
  return arithmetic("fluid_cuda_add", context, lhs, rhs, output, Add{});
}

extern "C" fluid_status fluid_cuda_sub(fluid_cuda_context *context,
                                       const fluid_tensor *lhs,
                                       const fluid_tensor *rhs,
                                       fluid_tensor *output) {
  return arithmetic("fluid_cuda_sub", context, lhs, rhs, output, Sub{});
}

extern "C" fluid_status fluid_cuda_mul(fluid_cuda_context *context,
                                       const fluid_tensor *lhs,
                                       const fluid_tensor *rhs,
                                       fluid_tensor *output) {
  return arithmetic("fluid_cuda_mul", context, lhs, rhs, output, Mul{});
}

extern "C" fluid_status fluid_cuda_div(fluid_cuda_context *context,
                                       const fluid_tensor *lhs,
                                       const fluid_tensor *rhs,
                                       fluid_tensor *output) {
  return binary("fluid_cuda_div", context, lhs, rhs, output, Div{});
}

extern "C" fluid_status fluid_cuda_relu_grad(fluid_cuda_context *context,
                                             const fluid_tensor *gradOutput,
                                             const fluid_tensor *output,
                                             fluid_tensor *gradInput) {
  return unaryGrad("fluid_cuda_relu_grad", context, gradOutput, output,
                   gradInput, ReluGrad{});
}

extern "C" fluid_status fluid_cuda_sigmoid_grad(fluid_cuda_context *context,
                                                const fluid_tensor *gradOutput,
                                                const fluid_tensor *output,
                                                fluid_tensor *gradInput) {
  return unaryGrad("fluid_cuda_sigmoid_grad", context, gradOutput, output,
                   gradInput, SigmoidGrad{});
}

extern "C" fluid_status fluid_cuda_tanh_grad(fluid_cuda_context *context,
                                             const fluid_tensor *gradOutput,
                                             const fluid_tensor *output,
                                             fluid_tensor *gradInput) {
  return unaryGrad("fluid_cuda_tanh_grad", context, gradOutput, output,
                   gradInput, TanhGrad{});
}
