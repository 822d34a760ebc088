#!/usr/bin/env bash
# Mixed precision against PyTorch (issue 14): per configuration, the
# training step compiled in TF32 (the default) and with --precision bf16,
# each run with its CUDA graph (step time) and the bf16 one with --profile
# (launches and time per op class), then PyTorch eager channels_last in
# TF32 and under torch.autocast(bfloat16), and torch.compile channels_last
# under autocast, in the same call. One command on the GPU machine, from
# the repository root:
#
#   bash bench/precision.sh                  (OUT=/tmp/fluid-precision by default)
#
# Configurations (FLUID_PRECISION_CONFIGS, NAME:TORCH-MODEL, default
# resnet50:resnet50): needs build/bench/NAME-{fused,bf16,nhwc,nhwc-bf16}-cuda from
# scripts/gpu-prepare.sh (its FLUID_FUSION_CONFIGS: batch 128, 224x224,
# momentum SGD lr 0.1 momentum 0.9), build/lib, and PyTorch in
# /opt/torch/.venv. FLUID_BENCH_STEPS (30) timed steps after
# FLUID_BENCH_WARMUP (5); one deadline (FLUID_BENCH_DEADLINE_S, 540 s);
# FLUID_BENCH_TORCH_COMPILE=0 skips torch.compile (channels_last, TF32
# and bf16); the channels-last programs NAME-{nhwc,nhwc-bf16}-cuda (the
# cuda default) run, and the NCHW ones NAME-{fused,bf16}-cuda unless
# FLUID_BENCH_NCHW=0; each fluid program is also profiled (--profile, no
# CUDA graph) unless FLUID_BENCH_PROFILE=0. FLUID_BENCH_EXTRA_VARIANTS
# (space-separated VARIANT names) runs build/bench/NAME-VARIANT-cuda too,
# as fluid-VARIANT (programs compiled by hand with other flags, e.g.
# nhwc-bf16-norecompute with --no-recompute-elementwise).
# FLUID_BENCH_TORCH_PREWARM=N (0 by default) first compiles every
# torch.compile configuration, N processes at a time, each one untimed
# step, so that the timed runs find Inductor's caches warm (compiling
# SE-ResNeXt-50 alone takes minutes); the compiled programs are the same,
# only the timed runs' start is shorter; with FLUID_BENCH_PREWARM_ONLY=1
# the script stops there (to warm the caches while other work runs). Last,
# bench/table.py writes $out/table.md.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-/tmp/fluid-precision}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
configs="${FLUID_PRECISION_CONFIGS:-resnet50:resnet50}"
steps="${FLUID_BENCH_STEPS:-30}"
warmup="${FLUID_BENCH_WARMUP:-5}"
deadline="${FLUID_BENCH_DEADLINE_S:-540}"
torch_compile="${FLUID_BENCH_TORCH_COMPILE:-1}"
nchw="${FLUID_BENCH_NCHW:-1}"
profile="${FLUID_BENCH_PROFILE:-1}"
extra="${FLUID_BENCH_EXTRA_VARIANTS:-}"
prewarm="${FLUID_BENCH_TORCH_PREWARM:-0}"
if ! [[ "$prewarm" =~ ^[0-9]+$ ]]; then
  echo "bench/precision.sh: FLUID_BENCH_TORCH_PREWARM must be a number of processes (0: no prewarm), got '$prewarm'" >&2
  exit 2
fi
python="${FLUID_BENCH_PYTHON:-/opt/torch/.venv/bin/python}"
reserve=20

# Library paths, note(), run(), fluid(), torch(), write_table: bench/lib.sh.
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

log_environment

# prewarm_torch_compile: every torch.compile configuration, $prewarm at a
# time, one untimed step each (logs in $out/prewarm/); each gets what is
# left of the deadline, and a failure here only costs the timed run its
# warm cache.
prewarm_torch_compile() {
  mkdir -p "$out/prewarm"
  local t0 pids=() config name model precision left
  t0=$(date +%s)
  for config in $configs; do
    IFS=: read -r name model <<< "$config"
    for precision in tf32 bf16; do
      while [ "$(jobs -rp | wc -l)" -ge "$prewarm" ]; do wait -n; done
      left=$((deadline - $(date +%s) + start_s - reserve))
      if [ "$left" -lt 15 ]; then
        note "prewarm: out of the time budget before $model $precision"
        break 2
      fi
      echo "== prewarm torch.compile $model $precision"
      timeout --kill-after=10 "$left" \
        env LD_LIBRARY_PATH="$torch_ld" TORCHINDUCTOR_COMPILE_THREADS=4 \
        "$python" "$root/bench/torch_resnet.py" --model "$model" --batch 128 \
        --image-size 224 --classes 1000 --steps 1 --warmup 1 --compile \
        --memory-format channels_last --precision "$precision" \
        > "$out/prewarm/$model-$precision.log" 2>&1 &
      pids+=($!)
    done
  done
  local pid failures=0
  for pid in "${pids[@]}"; do wait "$pid" || failures=$((failures + 1)); done
  note "prewarm: ${#pids[@]} torch.compile configurations in $(($(date +%s) - t0)) s, $failures failed (logs in $out/prewarm)"
}
if [ "$torch_compile" = "1" ] && [ "$prewarm" -gt 0 ]; then
  prewarm_torch_compile
  if [ "${FLUID_BENCH_PREWARM_ONLY:-0}" = "1" ]; then exit 0; fi
fi

# fluid_variant NAME MODEL VARIANT SUFFIX: the timed run and, unless
# FLUID_BENCH_PROFILE=0, the profiled one.
fluid_variant() {
  fluid "$1" "$2" "$3" "$4" 150 --warmup "$warmup" --steps "$steps"
  if [ "$profile" = "1" ]; then
    fluid "$1" "$2" "$3" "$4-profile" 90 --steps 6 --profile 5 --no-graph
  fi
}

for config in $configs; do
  IFS=: read -r name model <<< "$config"
  fluid_variant "$name" "$model" nhwc fluid-nhwc
  fluid_variant "$name" "$model" nhwc-bf16 fluid-nhwc-bf16
  for variant in $extra; do
    fluid_variant "$name" "$model" "$variant" "fluid-$variant"
  done
  if [ "$nchw" = "1" ]; then
    fluid_variant "$name" "$model" fused fluid
    fluid_variant "$name" "$model" bf16 fluid-bf16
  fi
  torch "$model" torch-channels_last 120 --memory-format channels_last
  torch "$model" torch-channels_last-bf16 120 --memory-format channels_last \
    --precision bf16
done
if [ "$torch_compile" = "1" ]; then
  for config in $configs; do
    IFS=: read -r name model <<< "$config"
    torch "$model" torch-compile-channels_last 240 --compile \
      --memory-format channels_last
    torch "$model" torch-compile-channels_last-bf16 240 --compile \
      --memory-format channels_last --precision bf16
  done
fi

write_table bench/precision.sh
[ "$failed" -eq 0 ]
