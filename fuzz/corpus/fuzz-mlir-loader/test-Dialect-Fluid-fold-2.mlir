func.func @identities(%x: tensor<f32>, %y: tensor<4xf32>, %n: tensor<i64>) -> (tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<i64>, tensor<f32>) {
  %one = fluid.constant dense<1.0> : tensor<f32>
  %zero = fluid.constant dense<0.0> : tensor<f32>
  %ones = fluid.constant dense<1.0> : tensor<4xf32>
  %i0 = fluid.constant dense<0> : tensor<i64>
  %i1 = fluid.constant dense<1> : tensor<i64>
  %0 = fluid.mul %x, %one : tensor<f32>, tensor<f32> -> tensor<f32>
  %1 = fluid.mul %one, %x : tensor<f32>, tensor<f32> -> tensor<f32>
  %2 = fluid.div %y, %one : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %3 = fluid.sub %y, %zero : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %4 = fluid.add %n, %i0 : tensor<i64>, tensor<i64> -> tensor<i64>
  %5 = fluid.mul %i1, %n : tensor<i64>, tensor<i64> -> tensor<i64>
  %6 = fluid.cast %x : tensor<f32> -> tensor<f32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<i64>, tensor<f32>
}
