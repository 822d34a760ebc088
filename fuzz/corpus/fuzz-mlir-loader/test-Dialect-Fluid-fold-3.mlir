// Not exact, so not folded: x + 0.0 (-0 + 0 is +0), x * -0.0, a product
// that broadcasts x, cos and pow of constants (libm differs between
// backends), reassociated products, constants that are not rank 0, and a
// cast out of range (a run-time error the runtime reports).
func.func @not_folded(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<f32>, tensor<2xf32>, tensor<i32>) {
  %zero = fluid.constant dense<0.0> : tensor<f32>
  %negzero = fluid.constant dense<-0.0> : tensor<f32>
  %ones = fluid.constant dense<1.0> : tensor<4xf32>
  %0 = fluid.add %x, %zero : tensor<f32>, tensor<f32> -> tensor<f32>
  %1 = fluid.mul %x, %negzero : tensor<f32>, tensor<f32> -> tensor<f32>
  %2 = fluid.mul %x, %ones : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %c = fluid.constant dense<0.5> : tensor<f64>
  %3 = fluid.cos %c : tensor<f64>
  %4 = fluid.pow %c, %c : tensor<f64>, tensor<f64> -> tensor<f64>
  %a = fluid.constant dense<0.1> : tensor<f32>
  %b = fluid.constant dense<3.0> : tensor<f32>
  %5 = fluid.mul %x, %a : tensor<f32>, tensor<f32> -> tensor<f32>
  %6 = fluid.mul %5, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  %v = fluid.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %7 = fluid.add %v, %v : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %big = fluid.constant dense<3.0e10> : tensor<f64>
  %8 = fluid.cast %big : tensor<f64> -> tensor<i32>
  return %0, %1, %2, %3, %4, %6, %7, %8 : tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<f32>, tensor<2xf32>, tensor<i32>
}
