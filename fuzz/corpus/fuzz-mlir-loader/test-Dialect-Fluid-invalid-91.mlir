func.func @g() {
  return
}
func.func @f() -> tensor<4xf32> {
  %0 = fluid.get_param @g : tensor<4xf32>
  return %0 : tensor<4xf32>
}
