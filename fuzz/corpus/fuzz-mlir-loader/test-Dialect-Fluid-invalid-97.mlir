func.func @unknown_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fluid.relu %x {inplace} : tensor<4xf32>
  return %y : tensor<4xf32>
}
