fluid.param @w : tensor<4xf32> init zeros

// Two reads around a write must both stay: the write changes the value.
// An unused pure op goes away; the write stays.
func.func @param_effects(%v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fluid.get_param @w : tensor<4xf32>
  %dead = fluid.relu %0 : tensor<4xf32>
  fluid.set_param @w, %v : tensor<4xf32>
  %1 = fluid.get_param @w : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
