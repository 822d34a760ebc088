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
# resnet50:resnet50): needs build/bench/NAME-{fused,bf16}-cuda from
# scripts/gpu-prepare.sh (its FLUID_FUSION_CONFIGS: batch 128, 224x224,
# momentum SGD lr 0.1 momentum 0.9), build/lib, and PyTorch in
# /opt/torch/.venv. FLUID_BENCH_STEPS (30) timed steps after
# FLUID_BENCH_WARMUP (5); one deadline (FLUID_BENCH_DEADLINE_S, 540 s);
# FLUID_BENCH_TORCH_COMPILE=0 skips torch.compile. Last, bench/table.py
# writes $OUT/table.md.
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
python="${FLUID_BENCH_PYTHON:-/opt/torch/.venv/bin/python}"
reserve=20

# Library paths, note() and run(): bench/lib.sh.
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

{
  date -u '+%Y-%m-%d %H:%M:%S UTC'
  echo "programs: $(cat "$root/build/bench/BUILD-INFO" 2>/dev/null || echo 'no build/bench/BUILD-INFO')"
  nvidia-smi -L
  echo "configs: $configs; steps $steps, warm-up $warmup"
} 2>&1 | tee "$out/env.log"

fluid() { # NAME TORCH-MODEL VARIANT(fused|bf16) SUFFIX CAP ARGS...
  local name="$1" model="$2" variant="$3" suffix="$4" cap="$5"
  shift 5
  local exe="$root/build/bench/$name-$variant-cuda"
  local file="$out/$model-$suffix"
  rm -f "$file.json"
  if [ ! -x "$exe" ]; then
    echo "missing build/bench/$name-$variant-cuda" > "$file.log"
    failed=$((failed + 1))
    note "FAIL: $name $variant: missing build/bench/$name-$variant-cuda"
    return 1
  fi
  run "$name $suffix" "$cap" "$file.log" env LD_LIBRARY_PATH="$fluid_ld" \
    "$exe" --data synthetic --synthetic-size 1024 --log-every 10 \
    --test-data none --algorithm-cache "$out/conv-algorithms.cache" \
    --stats-json "$file.json" "$@"
}

torch() { # TORCH-MODEL SUFFIX CAP ARGS...
  local model="$1" suffix="$2" cap="$3"
  shift 3
  rm -f "$out/$model-$suffix.json"
  run "$model $suffix" "$cap" "$out/$model-$suffix.log" \
    env LD_LIBRARY_PATH="$torch_ld" "$python" "$root/bench/torch_resnet.py" \
    --model "$model" --batch 128 --image-size 224 --classes 1000 \
    --steps "$steps" --warmup "$warmup" --json "$out/$model-$suffix.json" "$@"
}

for config in $configs; do
  IFS=: read -r name model <<< "$config"
  fluid "$name" "$model" fused fluid 150 --warmup "$warmup" --steps "$steps"
  fluid "$name" "$model" bf16 fluid-bf16 150 --warmup "$warmup" --steps "$steps"
  fluid "$name" "$model" bf16 fluid-bf16-profile 90 --steps 6 --profile 5 --no-graph
  torch "$model" torch-channels_last 120 --memory-format channels_last
  torch "$model" torch-channels_last-bf16 120 --memory-format channels_last \
    --precision bf16
done
if [ "$torch_compile" = "1" ]; then
  for config in $configs; do
    IFS=: read -r name model <<< "$config"
    torch "$model" torch-compile-channels_last-bf16 240 --compile \
      --memory-format channels_last --precision bf16
  done
fi

table_py=python3
command -v python3 > /dev/null 2>&1 || table_py="$python"
if ! timeout 60 "$table_py" "$root/bench/table.py" "$out" > "$out/table.md"; then
  echo "bench/table.py failed" | tee -a "$out/table.md"
fi
cat "$out/table.md"
elapsed=$(($(date +%s) - start_s))
echo "bench/precision.sh: $passed passed, $failed failed in ${elapsed} s"
[ "$failed" -eq 0 ]
