// --fluid-bufferize: parameters become their persistent buffers, values
// fresh buffers, ops kernel launches; set_param copies into the parameter;
// a read still used after an overwrite is snapshotted; reshapes are views.

fluid.param @w : tensor<2x3xf32> init ones
fluid.param @m : tensor<3xf32> init zeros {trainable = false}

func.func @step(%x: tensor<4x2xf32>) -> tensor<f32> {
  %w = fluid.get_param @w : tensor<2x3xf32>
  %y = fluid.matmul %x, %w : tensor<4x2xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  // The old value of @m is read after @m is overwritten: it is copied.
  %m = fluid.get_param @m : tensor<3xf32>
  %s = fluid.reduce_sum %y {axes = array<i64: 0>} : tensor<4x3xf32> -> tensor<3xf32>
  fluid.set_param @m, %s : tensor<3xf32>
  %d = fluid.sub %s, %m : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %v = fluid.reshape %d : tensor<3xf32> -> tensor<1x3xf32>
  %l = fluid.mean %v : tensor<1x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
