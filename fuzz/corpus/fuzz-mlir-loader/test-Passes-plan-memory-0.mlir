// --fluid-plan-memory: temporaries become views of one arena at offsets
// from their lifetimes; elementwise launches write over dead inputs where
// the kernel allows it and the types match exactly.
// Planning twice changes nothing.

// Three 4096-byte buffers in a chain: %a and %b meet at the second relu,
// %b and %c at the third; %c can take %a's place. A 100-byte buffer is
// rounded up to 256. Without in-place reuse: %a at 0, %b at 4096, %c at 0,
// %d (live with %c) at 4096; 8192 bytes, which is also the most bytes live
// at one launch (the lower bound).
// OFFSETS-SAME: fluid_rt.arena_bytes = 8192 : i64, fluid_rt.arena_lower_bound = 8192 : i64
// OFFSETS: %[[ARENA:.+]] = memref.alloc() {alignment = 256 : i64} : memref<8192xi8>
// OFFSETS: %[[O0:.+]] = arith.constant 0 : index
// OFFSETS: %[[A:.+]] = memref.view %[[ARENA]][%[[O0]]][] : memref<8192xi8> to memref<1024xf32>
// OFFSETS: %[[O1:.+]] = arith.constant 4096 : index
// OFFSETS: %[[B:.+]] = memref.view %[[ARENA]][%[[O1]]][] : memref<8192xi8> to memref<1024xf32>
// OFFSETS: %[[O2:.+]] = arith.constant 0 : index
// OFFSETS: %[[C:.+]] = memref.view %[[ARENA]][%[[O2]]][] : memref<8192xi8> to memref<1024xf32>
// OFFSETS: %[[O3:.+]] = arith.constant 4096 : index
// OFFSETS: %[[D:.+]] = memref.view %[[ARENA]][%[[O3]]][] : memref<8192xi8> to memref<25xf32>
// OFFSETS: fluid_rt.launch "slice" ins(%[[C]] : memref<1024xf32>) outs(%[[D]] : memref<25xf32>)
// OFFSETS-NOT: memref.dealloc
// The result keeps a buffer of its own.
// OFFSETS: %[[L:.+]] = memref.alloc() : memref<f32>
// OFFSETS: return %[[L]]
// With in-place reuse every relu writes over its dead input: one buffer
// (and %d beside it).
// INPLACE-SAME: fluid_rt.arena_bytes = 4352 : i64, fluid_rt.arena_lower_bound = 4352 : i64
// INPLACE: %[[ARENA:.+]] = memref.alloc() {alignment = 256 : i64} : memref<4352xi8>
// INPLACE: %[[A:.+]] = memref.view %[[ARENA]]
// INPLACE: fluid_rt.launch "relu" ins(%{{.+}} : memref<1024xf32>) outs(%[[A]] : memref<1024xf32>)
// INPLACE: fluid_rt.launch "relu" ins(%[[A]] : memref<1024xf32>) outs(%[[A]] : memref<1024xf32>)
// INPLACE: fluid_rt.launch "relu" ins(%[[A]] : memref<1024xf32>) outs(%[[A]] : memref<1024xf32>)
func.func @offsets(%x: memref<1024xf32>) -> memref<f32> {
  %a = memref.alloc() : memref<1024xf32>
  fluid_rt.launch "relu" ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>) params {}
  %b = memref.alloc() : memref<1024xf32>
  fluid_rt.launch "relu" ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>) params {}
  %c = memref.alloc() : memref<1024xf32>
  fluid_rt.launch "relu" ins(%b : memref<1024xf32>) outs(%c : memref<1024xf32>) params {}
  %d = memref.alloc() : memref<25xf32>
  fluid_rt.launch "slice" ins(%c : memref<1024xf32>) outs(%d : memref<25xf32>) params {axis = 0 : i64, offset = 0 : i64}
  memref.dealloc %c : memref<1024xf32>
  %l = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%d : memref<25xf32>) outs(%l : memref<f32>) params {}
  return %l : memref<f32>
}
