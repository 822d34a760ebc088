fluid.param @w : tensor<4xf32> init zeros
func.func @f(%v: tensor<4xf64>) {
  fluid.set_param @w, %v : tensor<4xf64>
  return
}
