fluid.param @w : tensor<4xf32> init ones
fluid.param @v : tensor<4xf32> init ones
fluid.param @x : tensor<4xf32> init ones
fluid.param @w.momentum_buffer : tensor<4xf32> init zeros {trainable = false}
fluid.param @v.momentum_buffer : tensor<4xf32> init zeros {trainable = false}
fluid.param @x.momentum_buffer : tensor<4xf32> init zeros {trainable = false}
fluid.param @m : tensor<4xf32> init ones
fluid.param @n : tensor<4xf32> init ones
fluid.param @m.exp_avg : tensor<4xf32> init zeros {trainable = false}
fluid.param @n.exp_avg : tensor<4xf32> init zeros {trainable = false}
fluid.param @m.exp_avg_sq : tensor<4xf32> init zeros {trainable = false}
fluid.param @n.exp_avg_sq : tensor<4xf32> init zeros {trainable = false}

// Momentum and Adam in one step: a group each; Nesterov stays apart from
// plain momentum, and so does a rate that is another value.
func.func @rules(%g: tensor<4xf32>, %lr: tensor<f32>, %lr2: tensor<f32>, %step: tensor<i64>) {
  %w = fluid.get_param @w : tensor<4xf32>
  %wv = fluid.get_param @w.momentum_buffer : tensor<4xf32>
  %nw, %nwv = fluid.momentum %w, %g, %wv, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @w, %nw : tensor<4xf32>
  fluid.set_param @w.momentum_buffer, %nwv : tensor<4xf32>
  %m = fluid.get_param @m : tensor<4xf32>
  %m1 = fluid.get_param @m.exp_avg : tensor<4xf32>
  %m2 = fluid.get_param @m.exp_avg_sq : tensor<4xf32>
  %nm, %nm1, %nm2 = fluid.adam %m, %g, %m1, %m2, %lr, %step {decoupled, weight_decay = 1.0e-2 : f64} : tensor<4xf32>, tensor<f32>, tensor<i64>
  fluid.set_param @m, %nm : tensor<4xf32>
  fluid.set_param @m.exp_avg, %nm1 : tensor<4xf32>
  fluid.set_param @m.exp_avg_sq, %nm2 : tensor<4xf32>
  %x = fluid.get_param @x : tensor<4xf32>
  %xv = fluid.get_param @x.momentum_buffer : tensor<4xf32>
  %nx, %nxv = fluid.momentum %x, %g, %xv, %lr {nesterov} : tensor<4xf32>, tensor<f32>
  fluid.set_param @x, %nx : tensor<4xf32>
  fluid.set_param @x.momentum_buffer, %nxv : tensor<4xf32>
  %x2 = fluid.get_param @x : tensor<4xf32>
  %xv2 = fluid.get_param @x.momentum_buffer : tensor<4xf32>
  %nx2, %nxv2 = fluid.momentum %x2, %g, %xv2, %lr2 : tensor<4xf32>, tensor<f32>
  fluid.set_param @x, %nx2 : tensor<4xf32>
  fluid.set_param @x.momentum_buffer, %nxv2 : tensor<4xf32>
  %v = fluid.get_param @v : tensor<4xf32>
  %vv = fluid.get_param @v.momentum_buffer : tensor<4xf32>
  %nv, %nvv = fluid.momentum %v, %g, %vv, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @v, %nv : tensor<4xf32>
  fluid.set_param @v.momentum_buffer, %nvv : tensor<4xf32>
  %n = fluid.get_param @n : tensor<4xf32>
  %n1 = fluid.get_param @n.exp_avg : tensor<4xf32>
  %n2 = fluid.get_param @n.exp_avg_sq : tensor<4xf32>
  %nn, %nn1, %nn2 = fluid.adam %n, %g, %n1, %n2, %lr, %step {decoupled, weight_decay = 1.0e-2 : f64} : tensor<4xf32>, tensor<f32>, tensor<i64>
  fluid.set_param @n, %nn : tensor<4xf32>
  fluid.set_param @n.exp_avg, %nn1 : tensor<4xf32>
  fluid.set_param @n.exp_avg_sq, %nn2 : tensor<4xf32>
  return
}
