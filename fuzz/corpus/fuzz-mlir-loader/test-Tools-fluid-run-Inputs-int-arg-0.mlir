func.func @f(%x: tensor<4xf32>, %n: tensor<4xi64>) -> tensor<4xi64> {
  return %n : tensor<4xi64>
}
