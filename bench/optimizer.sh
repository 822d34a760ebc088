#!/usr/bin/env bash
# The ablation of the optimizer passes (issue 12): per configuration, the
# training step compiled with both passes, without --fluid-fold-lr-math,
# without --fluid-group-optimizer, and without either; each run with its
# CUDA graph (step time) and with --profile (launches per step, optimizer
# time per step), then PyTorch's optimizer step on the same model
# (bench/torch_optimizer.py) and the grouped kernel alone against the
# device's copy bandwidth (bench/optimizer-group.py). One command on the
# GPU machine, from the repository root:
#
#   bash bench/optimizer.sh                  (OUT=/tmp/fluid-optimizer by default)
#
# Configurations (FLUID_OPTIMIZER_CONFIGS, NAME:MODEL): resnet50-b128:resnet50
# se_resnext50-b128:se_resnext50_32x4d. Needs build/bench/NAME-opt-VARIANT-cuda
# from scripts/gpu-prepare.sh (momentum SGD, lr 0.1, momentum 0.9, weight
# decay 1e-4, batch 128, TF32), build/lib, and PyTorch in /opt/torch/.venv.
# FLUID_BENCH_STEPS (20) timed steps after FLUID_BENCH_WARMUP (5); one
# deadline (FLUID_BENCH_DEADLINE_S, 420 s). Last, bench/optimizer_table.py
# writes $OUT/optimizer.md. Exit status 0 when every run succeeded.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-/tmp/fluid-optimizer}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
configs="${FLUID_OPTIMIZER_CONFIGS:-resnet50-b128:resnet50 se_resnext50-b128:se_resnext50_32x4d}"
variants="both nofold nogroup neither"
steps="${FLUID_BENCH_STEPS:-20}"
warmup="${FLUID_BENCH_WARMUP:-5}"
deadline="${FLUID_BENCH_DEADLINE_S:-420}"
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

run "grouped kernel vs copy bandwidth" 120 "$out/kernel.log" \
  env LD_LIBRARY_PATH="$fluid_ld" python3 "$root/bench/optimizer-group.py" \
  "$root/build/lib/libfluid_runtime.so"

for config in $configs; do
  IFS=: read -r name model <<< "$config"
  for variant in $variants; do
    exe="$root/build/bench/$name-opt-$variant-cuda"
    if [ ! -x "$exe" ]; then
      echo "missing $exe" > "$out/$name-$variant.log"
      failed=$((failed + 1))
      note "FAIL: $name $variant: missing build/bench/$name-opt-$variant-cuda"
      continue
    fi
    common=(--data synthetic --synthetic-size 1024 --log-every 10
            --test-data none --algorithm-cache "$out/conv-algorithms.cache")
    run "$name $variant" 120 "$out/$name-$variant.log" \
      env LD_LIBRARY_PATH="$fluid_ld" "$exe" "${common[@]}" \
      --warmup "$warmup" --steps "$steps" --stats-json "$out/$name-$variant.json"
    run "$name $variant profile" 90 "$out/$name-$variant-profile.log" \
      env LD_LIBRARY_PATH="$fluid_ld" "$exe" "${common[@]}" \
      --steps 6 --profile 5 --no-graph \
      --stats-json "$out/$name-$variant-profile.json"
  done
  run "$name torch optimizer" 120 "$out/$name-torch-optimizer.log" \
    env LD_LIBRARY_PATH="$torch_ld" "$python" "$root/bench/torch_optimizer.py" \
    --model "$model" --json "$out/$name-torch-optimizer.json"
done

table_py=python3
command -v python3 > /dev/null 2>&1 || table_py="$python"
if ! timeout 60 "$table_py" "$root/bench/optimizer_table.py" "$out" > "$out/optimizer.md"; then
  echo "bench/optimizer_table.py failed" | tee -a "$out/optimizer.md"
fi
cat "$out/optimizer.md" "$out/kernel.log"
elapsed=$(($(date +%s) - start_s))
note "runs: $passed passed, $failed failed or skipped; ${elapsed} s wall; results in $out"
[ "$failed" -eq 0 ]
