// fluid has no op named frobnicate.
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fluid.frobnicate %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
