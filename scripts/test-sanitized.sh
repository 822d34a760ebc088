#!/usr/bin/env bash
# Builds all of Fluid with AddressSanitizer and UndefinedBehaviorSanitizer
# (gcc) in ./build-asan and runs the whole lit suite there. Ends with lit's
# summary, then every sanitizer report any process of any test wrote; exits
# non-zero when a test failed or any report was written (docs/FUZZING.md).
#
#   scripts/test-sanitized.sh [LIT ARGUMENTS...]   e.g. --filter Runtime
#
# How everything runs sanitized:
# - The compiler is a wrapper adding the sanitizer flags (and
#   fuzz/LlvmAsanCompat.h, which says why), not a CMake flag: fluid-compile
#   builds its executables with the compiler Fluid was built with, and they
#   must be instrumented too, so that ASan's runtime comes first in their
#   libraries, ahead of the sanitized libfluid_runtime.so.
# - UBSan's vptr check is off: Debian's libLLVM.so holds objects whose
#   vtables carry no type information (Polly's command-line options, built
#   without RTTI), so it reports code that walks LLVM's option registry.
# - Python tests load libfluid_runtime.so with ctypes into python3, which is
#   not instrumented, so lit's Python (FLUID_TEST_PYTHON) is a wrapper that
#   preloads libasan (and libstdc++, for ASan's exception interceptor) and
#   turns leak checking off in python3 itself: CPython, NumPy and PyTorch
#   keep memory until exit. Its sitecustomize.py restores the environment,
#   so the programs a Python test starts (tools, compiled programs, the C++
#   compiler) are neither preloaded nor exempt from the leak check.
# - Every report aborts the program (abort_on_error), so a test expecting a
#   tool to fail (`not fluid-opt ...`) still fails on a report. ASan and LSan
#   also write each report to build-asan/sanitizer-reports/ (log_path),
#   named after the program; gcc's UBSan, linked beside ASan, ignores
#   log_path and writes to the test's output, which is kept in
#   build-asan/lit.log. The script prints every report found in either.
# - Tests that cap the address space (ulimit -v, RLIMIT_AS) are skipped, and
#   named: ASan reserves terabytes of address space for its shadow memory
#   when a program starts, so no sanitized program starts under such a cap.
# - The cuda backend is built when nvcc is found, as by scripts/build.sh (the
#   tests expect the same configuration); its code is not instrumented, and
#   no test runs it without a GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-asan"
sanitize=(-fsanitize=address,undefined -fno-sanitize=vptr
  -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1
  "-include$root/fuzz/LlvmAsanCompat.h")

"$root/scripts/setup.sh"

toolchain="$build/toolchain"
mkdir -p "$toolchain/python"
changed=0
for tool in gcc:cc g++:c++; do
  compiler="${tool%%:*}" wrapper="$toolchain/${tool#*:}"
  cat >"$wrapper.new" <<EOF
#!/bin/sh
# $compiler with ASan and UBSan (scripts/test-sanitized.sh).
exec /usr/bin/$compiler ${sanitize[*]} "\$@"
EOF
  chmod +x "$wrapper.new"
  if cmp -s "$wrapper.new" "$wrapper"; then
    rm "$wrapper.new"
  else
    mv "$wrapper.new" "$wrapper"
    changed=1
  fi
done
# Ninja cannot see that the compiler behind an unchanged command changed.
if [ "$changed" = 1 ] && [ -f "$build/build.ninja" ]; then
  ninja -C "$build" -t clean >/dev/null
fi

preload="$(/usr/bin/g++ -print-file-name=libasan.so):$(/usr/bin/g++ -print-file-name=libstdc++.so)"
cat >"$toolchain/python3" <<EOF
#!/bin/sh
# python3 for the tests (FLUID_TEST_PYTHON): libasan preloaded for the
# sanitized libfluid_runtime.so, no leak check of python3 itself;
# python/sitecustomize.py restores the environment for its children.
export FLUID_SAVED_ASAN_OPTIONS="\${ASAN_OPTIONS-}"
export PYTHONPATH="$toolchain/python\${PYTHONPATH:+:\$PYTHONPATH}"
export ASAN_OPTIONS="\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0"
LD_PRELOAD="$preload" exec /usr/bin/python3 "\$@"
EOF
chmod +x "$toolchain/python3"
cat >"$toolchain/python/sitecustomize.py" <<'EOF'
# Run at python3's start-up (scripts/test-sanitized.sh): the programs this
# python3 starts get the environment the wrapper was given, so they are not
# preloaded with libasan and are checked for leaks.
import os

if "FLUID_SAVED_ASAN_OPTIONS" in os.environ:
    os.environ["ASAN_OPTIONS"] = os.environ.pop("FLUID_SAVED_ASAN_OPTIONS")
    os.environ.pop("LD_PRELOAD", None)
EOF

# As scripts/build.sh: the cuda backend is built when nvcc is found (so the
# tests see the configuration CI has); nvcc compiles its host code with the
# plain g++, uninstrumented.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
cmake -G Ninja -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER="$toolchain/cc" -DCMAKE_CXX_COMPILER="$toolchain/c++" \
  -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++ \
  -DFLUID_TEST_PYTHON="$toolchain/python3" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
  -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
ninja -C "$build" -j"${FLUID_BUILD_JOBS:-2}"

reports="$build/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$reports/asan:log_exe_name=1:strict_string_checks=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"

helpers=$(grep -rlE 'RLIMIT_AS' "$root/test" --include='*.py' |
  grep '/Inputs/' | xargs -r -n1 basename | paste -sd'|' -)
capped=$(grep -rlE "ulimit -v${helpers:+|$helpers}" "$root/test" \
  --include='*.test' --include='*.mlir' --include='*.py' |
  grep -vE '/(Inputs|lib)/' | sed "s|^$root/test/||" | sort)
filter=()
if [ -n "$capped" ]; then
  echo "test-sanitized.sh: skipping tests that cap the address space:" $capped
  filter=(--filter-out "^Fluid :: ($(echo "$capped" | sed 's/[.]/[.]/g' |
    paste -sd'|' -))\$")
fi

status=0
/usr/lib/llvm-22/bin/lit -sv -j"${FLUID_LIT_JOBS:-2}" "${filter[@]}" "$@" \
  "$build/test" 2>&1 | tee "$build/lit.log" || status=$?

files=$(find "$reports" -type f | sort)
ubsan=$(grep -E '^[^ ]+:[0-9]+:[0-9]+: runtime error: ' "$build/lit.log" |
  sort | uniq -c || true)
echo
echo "test-sanitized.sh: $(echo -n "$files" | grep -c . || true) ASan/LSan" \
  "report(s) in $reports; UBSan reports in $build/lit.log:" \
  "$(echo -n "$ubsan" | grep -c . || true) distinct"
for report in $files; do
  echo "=== $report"
  grep -m1 -E 'ERROR: ' "$report" || true
  grep -m1 '^SUMMARY: ' "$report" || true
done
[ -z "$ubsan" ] || echo "$ubsan"
[ -z "$files$ubsan" ] || status=1
exit $status
