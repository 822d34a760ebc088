func.func @f() {
  fluid.param @w : tensor<4xf32> init zeros
  return
}
