// The folders of the elementwise math ops (FluidFolders.cpp): rank-0
// constants fold where every backend rounds alike, exact identities go, and
// what is not exact stays (x + 0.0 for floats, transcendental functions,
// reassociation, anything that broadcasts or is not rank 0).
// RUN: fluid-opt %s -split-input-file -canonicalize | FileCheck %s --enable-var-scope

// CHECK-LABEL: func.func @scalar_constants
// CHECK-DAG: %[[A:.*]] = fluid.constant dense<0.30000000000000004> : tensor<f64>
// CHECK-DAG: %[[B:.*]] = fluid.constant dense<3.000000e-01> : tensor<f32>
// CHECK-DAG: %[[C:.*]] = fluid.constant dense<7> : tensor<i64>
// CHECK-DAG: %[[D:.*]] = fluid.constant dense<-1.000000e+00> : tensor<f64>
// CHECK-DAG: %[[E:.*]] = fluid.constant dense<2.000000e+00> : tensor<f64>
// CHECK-NOT: fluid.mul
// CHECK-NOT: fluid.add
// CHECK-NOT: fluid.cast
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
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

// -----

// f32 arithmetic is folded in float, not in double.
// CHECK-LABEL: func.func @f32_rounding
// CHECK: %[[R:.*]] = fluid.constant dense<1.000000e+00> : tensor<f32>
// CHECK: return %[[R]]
func.func @f32_rounding() -> tensor<f32> {
  // 1 + 2^-24 rounds to 1 in float (in double it would not).
  %one = fluid.constant dense<1.0> : tensor<f32>
  %tiny = fluid.constant dense<5.96046448e-08> : tensor<f32>
  %0 = fluid.add %one, %tiny : tensor<f32>, tensor<f32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:[^:]*]]: tensor<f32>, %[[Y:[^:]*]]: tensor<4xf32>, %[[N:[^:]*]]: tensor<i64>)
// CHECK-NOT: fluid.mul
// CHECK-NOT: fluid.div
// CHECK-NOT: fluid.sub
// CHECK-NOT: fluid.cast
// CHECK: return %[[X]], %[[X]], %[[Y]], %[[Y]], %[[N]], %[[N]], %[[X]]
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

// -----

// Not exact, so not folded: x + 0.0 (-0 + 0 is +0), x * -0.0, a product
// that broadcasts x, cos and pow of constants (libm differs between
// backends), reassociated products, constants that are not rank 0, and a
// cast out of range (a run-time error the runtime reports).
// CHECK-LABEL: func.func @not_folded
// CHECK: fluid.add %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>
// CHECK: fluid.mul %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>
// CHECK: fluid.mul %{{.*}}, %{{.*}} : tensor<f32>, tensor<4xf32>
// CHECK: fluid.cos
// CHECK: fluid.pow
// CHECK: %[[P:.*]] = fluid.mul %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>
// CHECK: fluid.mul %[[P]], %{{.*}} : tensor<f32>, tensor<f32>
// CHECK: fluid.add %{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xf32>
// CHECK: fluid.cast %{{.*}} : tensor<f64> -> tensor<i32>
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

// -----

// A cast back of an exact widening is the value itself (bf16 and f16 to f32,
// f32 to f64, i32 to i64); rounding first and widening after is not
// (f32 -> bf16 -> f32 loses bits), nor is a middle type that does not hold
// every value (f16 -> bf16 -> f16: bf16 has fewer fraction bits; f32 -> f16
// -> f32; i64 -> i32 -> i64).
// CHECK-LABEL: func.func @cast_round_trips
// CHECK-SAME: (%[[B:[^:]*]]: tensor<4xbf16>, %[[H:[^:]*]]: tensor<4xf16>, %[[F:[^:]*]]: tensor<4xf32>, %[[I:[^:]*]]: tensor<4xi32>, %[[L:[^:]*]]: tensor<4xi64>)
// CHECK-DAG: %[[R1:.*]] = fluid.cast %[[F]] : tensor<4xf32> -> tensor<4xbf16>
// CHECK-DAG: %[[W1:.*]] = fluid.cast %[[R1]] : tensor<4xbf16> -> tensor<4xf32>
// CHECK-DAG: %[[R2:.*]] = fluid.cast %[[H]] : tensor<4xf16> -> tensor<4xbf16>
// CHECK-DAG: %[[W2:.*]] = fluid.cast %[[R2]] : tensor<4xbf16> -> tensor<4xf16>
// CHECK-DAG: %[[R3:.*]] = fluid.cast %[[F]] : tensor<4xf32> -> tensor<4xf16>
// CHECK-DAG: %[[W3:.*]] = fluid.cast %[[R3]] : tensor<4xf16> -> tensor<4xf32>
// CHECK-DAG: %[[R4:.*]] = fluid.cast %[[L]] : tensor<4xi64> -> tensor<4xi32>
// CHECK-DAG: %[[W4:.*]] = fluid.cast %[[R4]] : tensor<4xi32> -> tensor<4xi64>
// CHECK: return %[[B]], %[[H]], %[[F]], %[[I]], %[[W1]], %[[W2]], %[[W3]], %[[W4]]
func.func @cast_round_trips(%b: tensor<4xbf16>, %h: tensor<4xf16>, %f: tensor<4xf32>, %i: tensor<4xi32>, %l: tensor<4xi64>) -> (tensor<4xbf16>, tensor<4xf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xi64>) {
  %0 = fluid.cast %b : tensor<4xbf16> -> tensor<4xf32>
  %1 = fluid.cast %0 : tensor<4xf32> -> tensor<4xbf16>
  %2 = fluid.cast %h : tensor<4xf16> -> tensor<4xf32>
  %3 = fluid.cast %2 : tensor<4xf32> -> tensor<4xf16>
  %4 = fluid.cast %f : tensor<4xf32> -> tensor<4xf64>
  %5 = fluid.cast %4 : tensor<4xf64> -> tensor<4xf32>
  %6 = fluid.cast %i : tensor<4xi32> -> tensor<4xi64>
  %7 = fluid.cast %6 : tensor<4xi64> -> tensor<4xi32>
  %8 = fluid.cast %f : tensor<4xf32> -> tensor<4xbf16>
  %9 = fluid.cast %8 : tensor<4xbf16> -> tensor<4xf32>
  %10 = fluid.cast %h : tensor<4xf16> -> tensor<4xbf16>
  %11 = fluid.cast %10 : tensor<4xbf16> -> tensor<4xf16>
  %12 = fluid.cast %f : tensor<4xf32> -> tensor<4xf16>
  %13 = fluid.cast %12 : tensor<4xf16> -> tensor<4xf32>
  %14 = fluid.cast %l : tensor<4xi64> -> tensor<4xi32>
  %15 = fluid.cast %14 : tensor<4xi32> -> tensor<4xi64>
  return %1, %3, %5, %7, %9, %11, %13, %15 : tensor<4xbf16>, tensor<4xf16>, tensor<4xf32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xi64>
}
