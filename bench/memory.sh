#!/usr/bin/env bash
# The seed's memory table: per configuration, Fluid's training step with no
# memory optimization (--no-insert-frees), freeing at last use
# (--no-plan-memory), the planned arena, and the planned arena with
# activations recomputed in the backward pass (--recompute), each with its
# speed, next to PyTorch eager in the same run. One command on the GPU
# machine, from the repository root:
#
#   bash bench/memory.sh                     (OUT=/tmp/fluid-memory by default)
#
# Configurations (FLUID_MEMORY_CONFIGS, NAME:MODEL:BATCH:PRECISION):
#   resnet50-b128:resnet50:128:tf32
#   se_resnext50-b128:se_resnext50_32x4d:128:tf32
#   se_resnext152-b25:se_resnext152_32x4d:25:fp32
# Needs build/bench/NAME-VARIANT-cuda (and NAME-VARIANT.report.json, the
# compile-time memory report) from scripts/gpu-prepare.sh, build/lib, and
# PyTorch in /opt/torch/.venv. Synthetic data, momentum SGD (lr 0.1,
# momentum 0.9), FLUID_BENCH_STEPS (20) timed steps after FLUID_BENCH_WARMUP
# (5); one shared deadline (FLUID_BENCH_DEADLINE_S, 560 s). Last,
# bench/memory_table.py writes $OUT/memory.md. Exit status 0 when every run
# succeeded.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-/tmp/fluid-memory}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
configs="${FLUID_MEMORY_CONFIGS:-resnet50-b128:resnet50:128:tf32 se_resnext50-b128:se_resnext50_32x4d:128:tf32 se_resnext152-b25:se_resnext152_32x4d:25:fp32}"
variants="${FLUID_MEMORY_VARIANTS:-base freed planned recompute}"
steps="${FLUID_BENCH_STEPS:-20}"
warmup="${FLUID_BENCH_WARMUP:-5}"
deadline="${FLUID_BENCH_DEADLINE_S:-560}"
python="${FLUID_BENCH_PYTHON:-/opt/torch/.venv/bin/python}"
reserve=20

# Library paths, note() and run(): bench/lib.sh.
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

{
  date -u '+%Y-%m-%d %H:%M:%S UTC'
  echo "programs: $(cat "$root/build/bench/BUILD-INFO" 2>/dev/null || echo 'no build/bench/BUILD-INFO')"
  nvidia-smi -L
  echo "configs: $configs; variants: $variants; steps $steps, warm-up $warmup"
} 2>&1 | tee "$out/env.log"

for config in $configs; do
  IFS=: read -r name model batch precision <<< "$config"
  tf32=()
  torch_tf32=()
  if [ "$precision" = "fp32" ]; then
    tf32=(--no-tf32)
    torch_tf32=(--no-tf32)
  fi
  for variant in $variants; do
    exe="$root/build/bench/$name-$variant-cuda"
    log="$out/$name-fluid-$variant.log"
    if [ ! -x "$exe" ]; then
      echo "missing $exe" > "$log"
      failed=$((failed + 1))
      note "FAIL: $name $variant: missing build/bench/$name-$variant-cuda"
      continue
    fi
    cp "$root/build/bench/$name-$variant.report.json" "$out/" 2>/dev/null
    run "$name fluid $variant" 150 "$log" env LD_LIBRARY_PATH="$fluid_ld" \
      "$exe" --data synthetic --synthetic-size $((batch * 8)) \
      --warmup "$warmup" --steps "$steps" --log-every 10 --test-data none \
      --algorithm-cache "$out/conv-algorithms.cache" "${tf32[@]}" \
      --stats-json "$out/$name-fluid-$variant.json"
  done
  run "$name torch eager" 180 "$out/$name-torch-eager.log" \
    env LD_LIBRARY_PATH="$torch_ld" "$python" "$root/bench/torch_resnet.py" \
    --model "$model" --batch "$batch" --image-size 224 --classes 1000 \
    --steps "$steps" --warmup "$warmup" "${torch_tf32[@]}" \
    --json "$out/$name-torch-eager.json"
done

table_py=python3
command -v python3 > /dev/null 2>&1 || table_py="$python"
if ! timeout 60 "$table_py" "$root/bench/memory_table.py" "$out" > "$out/memory.md"; then
  echo "bench/memory_table.py failed" | tee -a "$out/memory.md"
fi
cat "$out/memory.md"
elapsed=$(($(date +%s) - start_s))
note "runs: $passed passed, $failed failed or skipped; ${elapsed} s wall; results in $out"
[ "$failed" -eq 0 ]
