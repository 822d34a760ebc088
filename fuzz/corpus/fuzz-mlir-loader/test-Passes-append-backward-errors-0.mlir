// What --fluid-append-backward refuses, with the reason.

func.func @not_scalar(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
