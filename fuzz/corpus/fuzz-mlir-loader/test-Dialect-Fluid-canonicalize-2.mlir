// Equal constants merge, unused ones go, and then so do equal pure ops.
func.func @constants(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = fluid.constant dense<2.0> : tensor<f32>
  %b = fluid.constant dense<2.0> : tensor<f32>
  %unused = fluid.constant dense<3.0> : tensor<f32>
  %0 = fluid.mul %x, %a : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %1 = fluid.mul %x, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
