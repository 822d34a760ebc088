#!/usr/bin/env bash
# Configures and builds Fluid in ./build (Release, ccache). Extra arguments
# go to CMake, e.g. scripts/build.sh -DFLUID_ENABLE_CUDA=OFF.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FLUID_BUILD_DIR:-$root/build}"

# nvcc is often installed off PATH; CMake looks for it through CUDACXX.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi

if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    "$@" >/dev/null
fi
ninja -C "$build"
