func.func @f(%lr: tensor<f32>) {
  "fluid.sgd_group"(%lr) : (tensor<f32>) -> ()
  return
}
