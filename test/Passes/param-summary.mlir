// RUN: fluid-opt %s --fluid-param-summary -o /dev/null 2>&1 | FileCheck %s
// RUN: fluid-opt %s --fluid-param-summary=output=%t.txt | FileCheck %s --check-prefix=IR
// RUN: FileCheck %s --input-file=%t.txt
// RUN: not fluid-opt %s --fluid-param-summary=output=%t.missing/dir/table.txt 2>&1 | FileCheck %s --check-prefix=BADPATH

// The element counts are worked out by hand: 8*4*3*3 = 288, 10*288 = 2880
// (f64, 8 bytes each), and a scalar counts as one element.
fluid.param @conv.weight : tensor<8x4x3x3xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @conv.bias : tensor<8xf32> init zeros
fluid.param @bn.running_mean : tensor<8xf32> init zeros {trainable = false}
fluid.param @big : tensor<10x288xf64> init uniform(-1.0, 1.0)
fluid.param @step : tensor<i64> init zeros {trainable = false}

func.func @f() -> tensor<8xf32> {
 %0 = fluid.get_param @conv.bias : tensor<8xf32>
 return %0 : tensor<8xf32>
}

// CHECK: name shape elements bytes trainable init
// CHECK-NEXT: conv.weight [8,4,3,3] f32 288 1,152 yes kaiming_normal(fan_out, gain = 1.4142135623730951)
// CHECK-NEXT: conv.bias [8] f32 8 32 yes zeros
// CHECK-NEXT: bn.running_mean [8] f32 8 32 no zeros
// CHECK-NEXT: big [10,288] f64 2,880 23,040 yes uniform(-1.000000e+00, 1.000000e+00)
// CHECK-NEXT: step [] i64 1 8 no zeros
// CHECK-NEXT: total: 5 parameters, 3,185 elements (3,176 trainable), 24,264 bytes

// The pass is an analysis: the IR comes out unchanged.
// IR: fluid.param @conv.weight
// IR: fluid.param @step
// IR: func.func @f()
// IR-NEXT: fluid.get_param @conv.bias

// BADPATH: error: cannot open '{{.*}}table.txt' for the parameter summary
