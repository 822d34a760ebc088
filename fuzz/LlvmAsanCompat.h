//===- LlvmAsanCompat.h - ASan builds against uninstrumented LLVM ---------===//
//
// Force-included (-include) into every file of a sanitized build: the fuzz
// build (FLUID_SANITIZE) and scripts/test-sanitized.sh. Debian's LLVM and
// MLIR libraries are not built with ASan, but their headers poison and
// unpoison the memory of BumpPtrAllocator and the recyclers whenever the
// file including them is (llvm/Support/Compiler.h tests for ASan). Their
// templates are then instantiated both ways, the linker keeps one copy of
// each, and a slab poisoned by an instrumented copy is handed out by the
// library's uninstrumented inline code, which never unpoisons it: the next
// access is reported as use-after-poison, although nothing is wrong. With
// the two calls defined away every copy behaves as the library's does; ASan
// still checks each slab as the heap block it is.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_FUZZ_LLVMASANCOMPAT_H
#define FLUID_FUZZ_LLVMASANCOMPAT_H

// Declared first, so that Compiler.h's own include of it is a no-op.
#include <sanitizer/asan_interface.h>

#define __asan_poison_memory_region(addr, size) ((void)(addr), (void)(size))
#define __asan_unpoison_memory_region(addr, size) ((void)(addr), (void)(size))

#endif // FLUID_FUZZ_LLVMASANCOMPAT_H
