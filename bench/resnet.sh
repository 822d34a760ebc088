#!/usr/bin/env bash
# ResNet-50 and ResNet-34 training steps, Fluid (cuda) against PyTorch eager
# (NCHW and channels_last), batch 128, 224x224, 1000 classes. One command on
# the GPU machine, from the repository root:
#
#   bash bench/resnet.sh                     (OUT=/tmp/fluid-bench by default)
#
# Needs, built on the build machine and carried over:
#   build/bench/resnet50-cuda, build/bench/resnet34-cuda (fluid-compile'd:
#   batch 128, 224x224, 1000 classes, momentum SGD lr 0.1 momentum 0.9)
#   build/lib/libfluid_runtime.so
# and PyTorch in /opt/torch/.venv (FLUID_BENCH_PYTHON to change).
#
# Per model: the Fluid executable (CUDA graph, 30 timed steps after 5), the
# same with --profile 5 --no-graph (per-op-class split), then
# bench/torch_resnet.py eager NCHW and channels_last; each run has a timeout,
# a failed one is reported and the script goes on. All runs share one
# deadline (FLUID_BENCH_DEADLINE_S, default 540 s) so the whole call ends
# inside the device tool's 10 minutes; a run that would start too late is
# skipped. Last, bench/table.py writes $OUT/table.md.
#
# Env: OUT, FLUID_BENCH_MODELS ("resnet50 resnet34"), FLUID_BENCH_STEPS (30),
# FLUID_BENCH_WARMUP (5), FLUID_BENCH_BATCH (128, PyTorch only: the Fluid
# executables have theirs compiled in), FLUID_BENCH_DEADLINE_S (540),
# FLUID_BENCH_TORCH_COMPILE=1 (optional torch.compile rows, after all the
# other runs; FLUID_BENCH_TORCH_COMPILE_FORMATS, default "nchw"),
# FLUID_BENCH_PYTHON (/opt/torch/.venv/bin/python).
# Exit status: 0 when every run that was asked for succeeded.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-/tmp/fluid-bench}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

models="${FLUID_BENCH_MODELS:-resnet50 resnet34}"
steps="${FLUID_BENCH_STEPS:-30}"
warmup="${FLUID_BENCH_WARMUP:-5}"
batch="${FLUID_BENCH_BATCH:-128}"
deadline="${FLUID_BENCH_DEADLINE_S:-540}"
torch_compile="${FLUID_BENCH_TORCH_COMPILE:-0}"
compile_formats="${FLUID_BENCH_TORCH_COMPILE_FORMATS:-nchw}"
python="${FLUID_BENCH_PYTHON:-/opt/torch/.venv/bin/python}"
reserve=20 # seconds kept for the table at the end

# Library paths, note() and run(): bench/lib.sh.
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

fluid_run() { # MODEL VARIANT CAP ARGS...
  local model="$1" variant="$2" cap="$3"
  shift 3
  local exe="$root/build/bench/$model-cuda"
  local json="$out/$model-$variant.json" log="$out/$model-$variant.log"
  rm -f "$json"
  if [ ! -x "$exe" ]; then
    echo "missing executable build/bench/$model-cuda" > "$log"
    failed=$((failed + 1))
    note "FAIL: $model $variant: missing build/bench/$model-cuda"
    return 1
  fi
  run "$model $variant" "$cap" "$log" env LD_LIBRARY_PATH="$fluid_ld" \
    "$exe" --data synthetic --synthetic-size 1024 --warmup "$warmup" \
    --log-every 10 --test-data none \
    --algorithm-cache "$out/conv-algorithms.cache" \
    --stats-json "$json" "$@"
}

torch_run() { # MODEL VARIANT CAP ARGS...
  local model="$1" variant="$2" cap="$3"
  shift 3
  local json="$out/$model-$variant.json" log="$out/$model-$variant.log"
  rm -f "$json"
  run "$model $variant" "$cap" "$log" env LD_LIBRARY_PATH="$torch_ld" \
    "$python" "$root/bench/torch_resnet.py" --model "$model" \
    --batch "$batch" --image-size 224 --classes 1000 --steps "$steps" \
    --warmup "$warmup" --json "$json" "$@"
}

{
  date -u '+%Y-%m-%d %H:%M:%S UTC'
  # The commit the executables were compiled from (scripts/gpu-prepare.sh
  # records it on the build machine; the GPU machine's copy of .git may be
  # older than its working tree).
  echo "programs: $(cat "$root/build/bench/BUILD-INFO" 2>/dev/null || echo 'no build/bench/BUILD-INFO')"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv 2>/dev/null
  ls -l "$root"/build/bench/*-cuda "$root/build/lib/libfluid_runtime.so" 2>&1
  echo "models: $models; steps $steps, warm-up $warmup, torch batch $batch"
  echo "deadline ${deadline} s; output $out"
} 2>&1 | tee "$out/env.log"
timeout 60 env LD_LIBRARY_PATH="$torch_ld" "$python" -c \
  'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
try:
    import torchvision; print("torchvision", torchvision.__version__)
except ImportError:
    print("torchvision: absent (bench/torch_resnet.py uses its own definition)")' \
  2>&1 | tee -a "$out/env.log"

for model in $models; do
  fluid_run "$model" fluid 180 --steps "$steps"
  fluid_run "$model" fluid-profile 120 --steps 6 --profile 5 --no-graph
  torch_run "$model" torch-nchw 180 --memory-format nchw
  torch_run "$model" torch-channels_last 180 --memory-format channels_last
done

if [ "$torch_compile" = "1" ]; then
  for model in $models; do
    for format in $compile_formats; do
      torch_run "$model" "torch-compile-$format" 300 --compile \
        --memory-format "$format"
    done
  done
fi

table_py=python3
command -v python3 > /dev/null 2>&1 || table_py="$python"
echo
if ! timeout 60 "$table_py" "$root/bench/table.py" "$out" > "$out/table.md"; then
  echo "bench/table.py failed" | tee -a "$out/table.md"
fi
cat "$out/table.md"
echo
elapsed=$(($(date +%s) - start_s))
note "runs: $passed passed, $failed failed or skipped; ${elapsed} s wall; results in $out"
[ "$failed" -eq 0 ]
