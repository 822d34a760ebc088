func.func @f(%x: tensor<f32>) -> (tensor<f32> {fluid.los}) {
  return %x : tensor<f32>
}
