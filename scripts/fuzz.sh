#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/FUZZING.md) with clang, ASan and
# UBSan in ./build-fuzz and runs each for SECONDS (default 60), or until
# --runs N inputs, whichever comes first, on a copy of its seed corpus
# (build-fuzz/corpus/<target>, kept between runs; fuzz/corpus is never
# written). Prints a table of target, seconds, executions and result; exits
# non-zero when any target crashed, leaked, timed out or hit a sanitizer
# report. The input that did it is kept under build-fuzz/crashes/<target>/,
# the log under build-fuzz/logs/<target>.log.
#
#   scripts/fuzz.sh [--runs N] [SECONDS] [TARGET...]
#
# FLUID_FUZZ_NICE=1 runs the fuzzers under nice -n 19.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
all_targets=(fuzz-mlir-loader fuzz-onnx fuzz-safetensors fuzz-npy fuzz-idx
  fuzz-image)

usage() {
  sed -n 's/^#   //p' "$0" >&2
  exit 2
}

runs=""
seconds=60
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
  --runs)
    [ $# -ge 2 ] || usage
    runs="$2"
    shift 2
    ;;
  --runs=*)
    runs="${1#--runs=}"
    shift
    ;;
  -h | --help) usage ;;
  *)
    if [ ${#targets[@]} -eq 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
      seconds="$1"
    elif [[ " ${all_targets[*]} " == *" $1 "* ]]; then
      targets+=("$1")
    else
      echo "fuzz.sh: unknown target '$1' (targets: ${all_targets[*]})" >&2
      exit 2
    fi
    shift
    ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
if [ -n "$runs" ] && ! [[ "$runs" =~ ^[0-9]+$ ]]; then
  echo "fuzz.sh: --runs takes a number, got '$runs'" >&2
  exit 2
fi

# Dependencies: the project's, then clang and its sanitizer runtimes
# (libFuzzer is in libclang-rt-22-dev), matching the installed LLVM 22.
"$root/scripts/setup.sh"
missing=()
for p in clang-22 libclang-rt-22-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "fuzz.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# libstdc++ 12's std::stable_sort calls std::get_temporary_buffer, which it
# marks deprecated; clang then warns at every stable_sort in our code (gcc,
# the main build's compiler, does not). Nothing of ours is deprecated.
quiet_libstdcxx=-Wno-deprecated-declarations
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_FLAGS=-gline-tables-only \
    "-DCMAKE_CXX_FLAGS=-gline-tables-only $quiet_libstdcxx" \
    -DFLUID_ENABLE_FUZZERS=ON -DFLUID_ENABLE_CUDA=OFF \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
fi
ninja -C "$build" -j"${FLUID_BUILD_JOBS:-2}" "${targets[@]}"

nice=()
[ "${FLUID_FUZZ_NICE:-0}" = 0 ] || nice=(nice -n 19)
# A sanitizer report ends the run (and the fuzzer writes the input);
# symbolized stacks name the code.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer

failed=0
rows=()
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target"
  crashes="$build/crashes/$target"
  log="$build/logs/$target.log"
  mkdir -p "$corpus" "$crashes" "$build/logs"
  cp -n "$root/fuzz/corpus/$target/"* "$corpus/"
  # Inputs that once failed (kept by hand, not by make-corpus.py).
  if [ -d "$root/fuzz/regressions/$target" ]; then
    cp -n "$root/fuzz/regressions/$target/"* "$corpus/"
  fi
  args=(-max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048
    -print_final_stats=1 -close_fd_mask=3 -artifact_prefix="$crashes/")
  [ -z "$runs" ] || args+=(-runs="$runs")
  dict="$root/fuzz/dict/$target.dict"
  [ ! -f "$dict" ] || args+=(-dict="$dict")
  echo "fuzz.sh: $target for ${seconds}s${runs:+ or $runs runs}"
  before=$(ls "$crashes" | wc -l)
  start=$(date +%s)
  rc=0
  "${nice[@]}" "$build/bin/$target" "${args[@]}" "$corpus" >"$log" 2>&1 || rc=$?
  elapsed=$(($(date +%s) - start))
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  reports=$(grep -cE '^==[0-9]+==ERROR: |runtime error: |^==[0-9]+== ERROR: libFuzzer' \
    "$log" || true)
  artifacts=$(grep -oE "Test unit written to [^ ]+" "$log" | sed 's/.* //' || true)
  if [ "$rc" -eq 0 ] && [ "$reports" -eq 0 ]; then
    result="ok"
  else
    failed=1
    kind=$(grep -oE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z-]+|runtime error: .{0,40}' \
      "$log" | head -1)
    result="FAILED (exit $rc${kind:+: $kind})"
  fi
  rows+=("$(printf '%-18s %8s %12s %8s  %s' "$target" "$elapsed" \
    "${executions:-?}" "$reports" "$result")")
  if [ "$result" != ok ]; then
    echo "fuzz.sh: $target failed; log: $log"
    grep -E 'SUMMARY|ERROR|runtime error' "$log" | head -5 | sed 's/^/  /'
    for a in $artifacts; do echo "  input: $a"; done
    [ -n "$artifacts" ] || [ "$(ls "$crashes" | wc -l)" -eq "$before" ] ||
      echo "  inputs in: $crashes"
  fi
done

echo
printf '%-18s %8s %12s %8s  %s\n' target seconds executions reports result
for row in "${rows[@]}"; do echo "$row"; done
exit $failed
