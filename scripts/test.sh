#!/usr/bin/env bash
# Installs what is needed, builds, and runs every test (lit: dialect, passes,
# tools, runtime kernels against PyTorch). Ends with lit's summary; exits
# non-zero when any test fails. GPU tests run on the GPU machine instead
# (scripts/gpu-run.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FLUID_BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
status=0
/usr/lib/llvm-22/bin/lit -sv "$build/test" || status=$?

# Then every fuzzer for 15 s on its seeds (docs/FUZZING.md): a crash fails.
"$root/scripts/fuzz.sh" 15 || status=$((status ? status : 1))
exit "$status"
