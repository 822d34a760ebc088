// f32 arithmetic is folded in float, not in double.
func.func @f32_rounding() -> tensor<f32> {
  // 1 + 2^-24 rounds to 1 in float (in double it would not).
  %one = fluid.constant dense<1.0> : tensor<f32>
  %tiny = fluid.constant dense<5.96046448e-08> : tensor<f32>
  %0 = fluid.add %one, %tiny : tensor<f32>, tensor<f32> -> tensor<f32>
  return %0 : tensor<f32>
}
