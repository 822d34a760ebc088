#!/usr/bin/env bash
# The ablation of elementwise fusion and batch norm's expansion (issue 13):
# per configuration, the training step compiled with both (the default) and
# with neither (--no-expand-batch-norm --no-fuse-elementwise: cuDNN batch
# norm, the runtime's elementwise kernels), each run with its CUDA graph
# (step time) and with --profile (launches and time per op class), then
# PyTorch eager NCHW and channels_last and torch.compile on the same model,
# in the same call. One command on the GPU machine, from the repository
# root:
#
#   bash bench/fusion.sh                     (OUT=/tmp/fluid-fusion by default)
#
# Configurations (FLUID_FUSION_CONFIGS, NAME:TORCH-MODEL): resnet50:resnet50
# se_resnext50:se_resnext50_32x4d; needs build/bench/NAME-{fused,unfused}-cuda
# from scripts/gpu-prepare.sh (batch 128, 224x224, momentum SGD lr 0.1
# momentum 0.9, TF32), build/lib, and PyTorch in /opt/torch/.venv.
# FLUID_BENCH_STEPS (30) timed steps after FLUID_BENCH_WARMUP (5); one
# deadline (FLUID_BENCH_DEADLINE_S, 540 s); FLUID_BENCH_TORCH_COMPILE=0
# skips torch.compile. Last, bench/table.py writes $OUT/table.md.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-/tmp/fluid-fusion}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
configs="${FLUID_FUSION_CONFIGS:-resnet50:resnet50 se_resnext50:se_resnext50_32x4d}"
steps="${FLUID_BENCH_STEPS:-30}"
warmup="${FLUID_BENCH_WARMUP:-5}"
deadline="${FLUID_BENCH_DEADLINE_S:-540}"
torch_compile="${FLUID_BENCH_TORCH_COMPILE:-1}"
python="${FLUID_BENCH_PYTHON:-/opt/torch/.venv/bin/python}"
reserve=20

# Library paths, note(), run(), fluid(), torch(), write_table: bench/lib.sh.
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

log_environment

for config in $configs; do
  IFS=: read -r name model <<< "$config"
  fluid "$name" "$model" fused fluid 150 --warmup "$warmup" --steps "$steps"
  fluid "$name" "$model" fused fluid-profile 90 --steps 6 --profile 5 --no-graph
  fluid "$name" "$model" unfused fluid-unfused 150 --warmup "$warmup" --steps "$steps"
  fluid "$name" "$model" unfused fluid-unfused-profile 90 --steps 6 --profile 5 --no-graph
  torch "$model" torch-nchw 120 --memory-format nchw
  torch "$model" torch-channels_last 120 --memory-format channels_last
done
if [ "$torch_compile" = "1" ]; then
  for config in $configs; do
    IFS=: read -r name model <<< "$config"
    torch "$model" torch-compile-nchw 240 --compile --memory-format nchw
  done
fi

write_table bench/fusion.sh
[ "$failed" -eq 0 ]
