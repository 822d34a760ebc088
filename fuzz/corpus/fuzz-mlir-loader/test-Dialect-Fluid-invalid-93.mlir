func.func @f(%v: tensor<4xf32>) {
  fluid.set_param @nothing, %v : tensor<4xf32>
  return
}
