// The folders of the elementwise math ops (FluidFolders.cpp): rank-0
// constants fold where every backend rounds alike, exact identities go, and
// what is not exact stays (x + 0.0 for floats, transcendental functions,
// reassociation, anything that broadcasts or is not rank 0).

func.func @scalar_constants() -> (tensor<f64>, tensor<f32>, tensor<i64>, tensor<f64>, tensor<f64>) {
  %a = fluid.constant dense<0.1> : tensor<f64>
  %three = fluid.constant dense<3.0> : tensor<f64>
  // 0.1 * 3 in double is 0.30000000000000004.
  %0 = fluid.mul %a, %three : tensor<f64>, tensor<f64> -> tensor<f64>
  // Rounded to f32 once.
  %1 = fluid.cast %0 : tensor<f64> -> tensor<f32>
  %i = fluid.constant dense<3> : tensor<i64>
  %j = fluid.constant dense<4> : tensor<i64>
  %2 = fluid.add %i, %j : tensor<i64>, tensor<i64> -> tensor<i64>
  %f = fluid.constant dense<-1.5> : tensor<f64>
  %3 = fluid.floor %f : tensor<f64>
  %4 = fluid.neg %3 : tensor<f64>
  %5 = fluid.maximum %4, %f : tensor<f64>, tensor<f64> -> tensor<f64>
  %6 = fluid.div %5, %f : tensor<f64>, tensor<f64> -> tensor<f64>
  %7 = fluid.sqrt %5 : tensor<f64>
  %8 = fluid.mul %7, %7 : tensor<f64>, tensor<f64> -> tensor<f64>
  // floor(-1.5) = -2, neg 2, max(2, -1.5) = 2, 2 / -1.5, sqrt(2)^2 = 2.0000000000000004
  %9 = fluid.greater_equal %8, %5 : tensor<f64>, tensor<f64> -> tensor<f64>
  %10 = fluid.sub %9, %9 : tensor<f64>, tensor<f64> -> tensor<f64>
  %11 = fluid.sub %10, %9 : tensor<f64>, tensor<f64> -> tensor<f64>
  %12 = fluid.select %9, %5, %6 : tensor<f64>, tensor<f64>, tensor<f64> -> tensor<f64>
  return %0, %1, %2, %11, %12 : tensor<f64>, tensor<f32>, tensor<i64>, tensor<f64>, tensor<f64>
}
