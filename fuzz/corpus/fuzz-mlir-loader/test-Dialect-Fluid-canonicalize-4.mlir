fluid.param @w : tensor<4xf32> init zeros

// Without a write in between, two reads are the same value.
func.func @repeated_reads() -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fluid.get_param @w : tensor<4xf32>
  %1 = fluid.get_param @w : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
