func.func @f(%x: tensor<4xf32>) -> tensor<4xf64> {
  %0 = "fluid.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}
