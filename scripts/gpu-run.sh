#!/usr/bin/env bash
# Runs on the GPU machine (an H200 lent through the device tool), over a
# checkout that carries the runtime built on the build machine with CUDA:
#   build/lib/libfluid_runtime.so and build/bin/fluid-gpu-info
# (the GPU machine has no MLIR; its Ubuntu is newer than Debian 12, so the
# binaries run there). Prints the device, then runs every GPU test
# (test/Runtime/gpu-*.py: each cuda kernel against the cpu oracle), then
# the compiled training executables of scripts/gpu-prepare.sh
# (test/Runtime/compiled-gpu.py: a ResNet-18 step on cuda against cpu,
# LeNet-5 to 85% on Fashion-MNIST; carry build/gpu-programs), and writes
# logs under $OUT. Exits non-zero if any test fails.
#
#   usage: scripts/gpu-run.sh [TEST-NAME-SUBSTRING]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-/tmp/fluid-gpu-out}"
mkdir -p "$out"
lib="${FLUID_RUNTIME_LIB:-$root/build/lib/libfluid_runtime.so}"

# cuDNN 9.19 and NCCL of PyTorch's wheels: the versions the runtime was
# built against (the system's cuDNN is older).
wheels=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH="$root/build/lib:$wheels/cudnn/lib:$wheels/cublas/lib:$wheels/nccl/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export PYTHONUNBUFFERED=1
# Never use NVLink multicast on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

{
  nvidia-smi -L
  "$root/build/bin/fluid-gpu-info"
} 2>&1 | tee "$out/gpu-info.log"

failed=0
passed=0
for test in "$root"/test/Runtime/gpu-*.py "$root"/test/Runtime/compiled-gpu.py; do
  name="$(basename "$test" .py)"
  if [ $# -gt 0 ] && [[ "$name" != *"$1"* ]]; then
    continue
  fi
  echo "== $name"
  start=$(date +%s%N)
  if python3 "$test" "$lib" > "$out/$name.log" 2>&1; then
    passed=$((passed + 1))
    status=PASS
  else
    failed=$((failed + 1))
    status=FAIL
    tail -20 "$out/$name.log"
  fi
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  printf '%s: %s (%s cases passed, %d ms)\n' "$status" "$name" \
    "$(grep -c '^PASS' "$out/$name.log")" "$elapsed_ms"
  if [ "$name" = compiled-gpu ]; then
    grep -E '^(PASS|FAIL)' "$out/$name.log" | sed 's/^/  /'
  fi
done 2>&1 | tee "$out/summary.log"
# The training executables' driver on cuda (its own test program; carry
# build/bin/fluid-driver-test and fluid-driver-test-cuda).
if [ $# -eq 0 ] || [[ "driver" == *"$1"* ]]; then
  echo "== driver"
  PATH="$root/build/bin:$PATH" bash "$root/test/Runtime/driver/Inputs/gpu-check.sh" \
    "$out/driver" > "$out/driver.log" 2>&1
  grep -E '^(PASS|FAIL)' "$out/driver.log" | sed 's/^/  /'
  if grep -q '^FAIL' "$out/driver.log"; then
    echo "FAIL: driver ($(grep -c '^PASS' "$out/driver.log") checks passed)"
  else
    echo "PASS: driver ($(grep -c '^PASS' "$out/driver.log") checks passed)"
  fi
fi 2>&1 | tee -a "$out/summary.log"
failed=$(grep -c '^FAIL:' "$out/summary.log")
echo "GPU tests: $(grep -c '^PASS:' "$out/summary.log") passed, $failed failed"
[ "$failed" -eq 0 ]
