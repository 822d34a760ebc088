//===- ElementwiseGrad.cpp - Gradients of the unary activations on the cpu ===//
//
// Each rule is written in terms of the forward output, which the backward
// pass keeps anyway, so the forward input can be freed early. Element i of
// grad_input is written after element i of both operands was read, so it
// may share its buffer with either.
//
//===----------------------------------------------------------------------===//

#include "TensorChecks.h"
#include "Widen.h"

#include "fluid/runtime/CpuGradKernels.h"

using namespace fluid::rt;
using namespace fluid::rt::cpu;

namespace {

template <typename Fn>
fluid_status unaryGrad(const char *entryPoint,
                       const fluid_tensor *gradOutputDesc,
                       const fluid_tensor *outputDesc,
                       fluid_tensor *gradInputDesc, Fn &&rule) {
  return guard(entryPoint, [&] {
    OutputGradOperands t =
        checkOutputGradOperands(gradOutputDesc, outputDesc, gradInputDesc);
    dispatchFloat(t.output.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T *grad = t.gradOutput.data<T>();
      const T *y = t.output.data<T>();
      T *result = t.gradInput.data<T>();
      for (int64_t i = 0; i < t.output.numel; ++i)
        result[i] = T(rule(double(grad[i]), double(y[i])));
    });
  });
}

} // namespace

extern "C" fluid_status fluid_cpu_relu_grad(const fluid_tensor *gradOutput,
                                            const fluid_tensor *output,
                                            fluid_tensor *gradInput) {
  if (auto status = throughF32("fluid_cpu_relu_grad", fluid_cpu_relu_grad,
                               gradOutput, output, gradInput))
    return *status;
  // PyTorch's threshold_backward on the result: `y <= 0` rather than
  // `!(y > 0)`, so that a NaN output passes its gradient, as in PyTorch.
  return unaryGrad("fluid_cpu_relu_grad", gradOutput, output, gradInput,
                   [](double g, double y) { return y <= 0 ? 0.0 : g; });
}

extern "C" fluid_status fluid_cpu_sigmoid_grad(const fluid_tensor *gradOutput,
                                               const fluid_tensor *output,
                                               fluid_tensor *gradInput) {
  if (auto status = throughF32("fluid_cpu_sigmoid_grad", fluid_cpu_sigmoid_grad,
                               gradOutput, output, gradInput))
    return *status;
  return unaryGrad("fluid_cpu_sigmoid_grad", gradOutput, output, gradInput,
                   [](double g, double y) { return g * y * (1 - y); });
}

extern "C" fluid_status fluid_cpu_tanh_grad(const fluid_tensor *gradOutput,
                                            const fluid_tensor *output,
                                            fluid_tensor *gradInput) {
  if (auto status = throughF32("fluid_cpu_tanh_grad", fluid_cpu_tanh_grad,
                               gradOutput, output, gradInput))
    return *status;
  return unaryGrad("fluid_cpu_tanh_grad", gradOutput, output, gradInput,
                   [](double g, double y) { return g * (1 - y * y); });
}
