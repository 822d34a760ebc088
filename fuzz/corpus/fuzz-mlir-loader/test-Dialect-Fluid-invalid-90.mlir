fluid.param @w : tensor<4xf32> init zeros
func.func @f() -> tensor<5xf32> {
  %0 = fluid.get_param @w : tensor<5xf32>
  return %0 : tensor<5xf32>
}
