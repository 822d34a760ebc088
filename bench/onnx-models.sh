#!/usr/bin/env bash
# Imported models on the GPU (issue 15): torchvision's vit_b_16 and
# convnext_tiny, exported to ONNX and imported with fluid-import-onnx
# --batch 64 --loss softmax_cross_entropy, compiled for the cuda backend
# (TF32, channels-last, momentum SGD lr 0.1 momentum 0.9) by
# scripts/gpu-prepare.sh into build/bench/MODEL-onnx-cuda, trained on
# synthetic data at batch 64 against PyTorch eager (TF32, the same
# optimizer; convnext_tiny also channels_last) and torch.compile in the
# same call. One
# command on the GPU machine from the repository root:
#
#   bash bench/onnx-models.sh               (OUT=/tmp/fluid-onnx by default)
#
# The weights (330 MB for vit_b_16) stay on the build machine; the imported
# programs start (--init-from) from random weights of the same per-tensor
# mean and deviation, drawn here by bench/random_weights.py from
# build/bench/MODEL-onnx-weights.json, so that their losses are those of a
# freshly initialized model; PyTorch starts from its random initialization.
# FLUID_ONNX_PRECISIONS (default "tf32 bf16": the bf16 programs with and
# without --fluid-narrow-data-movement, `fluid-bf16` and `fluid-bf16-nodm`,
# against PyTorch under autocast bf16),
# FLUID_ONNX_CONFIGS (default "vit_b_16 convnext_tiny"), FLUID_BENCH_STEPS
# (20) timed steps after FLUID_BENCH_WARMUP (5), torch.compile rows unless
# FLUID_BENCH_TORCH_COMPILE=0, one deadline
# (FLUID_BENCH_DEADLINE_S, 400 s). Prints bench/table.py's table.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-/tmp/fluid-onnx}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
configs="${FLUID_ONNX_CONFIGS:-vit_b_16 convnext_tiny}"
precisions="${FLUID_ONNX_PRECISIONS:-tf32 bf16}"
steps="${FLUID_BENCH_STEPS:-20}"
warmup="${FLUID_BENCH_WARMUP:-5}"
deadline="${FLUID_BENCH_DEADLINE_S:-400}"
python="${FLUID_BENCH_PYTHON:-/opt/torch/.venv/bin/python}"
reserve=10

# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
log_environment

for model in $configs; do
  init=()
  if "$python" "$root/bench/random_weights.py" make \
    "$root/build/bench/$model-onnx-weights.json" "$out/$model.safetensors"; then
    init=(--init-from "$out/$model.safetensors")
  else
    note "no stand-in weights for $model: it starts from zero placeholders"
  fi
  for precision in $precisions; do
    case "$precision" in
    tf32) variants="onnx" suffix="" ;;
    bf16) variants="onnx-bf16 onnx-bf16-nodm" suffix="-bf16" ;;
    *)
      note "FAIL: unknown precision '$precision' in FLUID_ONNX_PRECISIONS"
      failed=$((failed + 1))
      continue
      ;;
    esac
    for variant in $variants; do
      fluid "$model" "$model" "$variant" "fluid${variant#onnx}" 150 \
        --warmup "$warmup" --steps $((warmup + steps)) "${init[@]}"
    done
    torch "$model" "torch-nchw$suffix" 150 --batch 64 \
      --precision "$precision"
    if [ "${FLUID_BENCH_TORCH_COMPILE:-1}" != 0 ]; then
      torch "$model" "torch-compile-nchw$suffix" 300 --batch 64 --compile \
        --precision "$precision"
    fi
    if [ "$model" = convnext_tiny ]; then
      torch "$model" "torch-channels_last$suffix" 150 --batch 64 \
        --memory-format channels_last --precision "$precision"
    fi
  done
  rm -f "$out/$model.safetensors"
done

write_table bench/onnx-models.sh
[ "$failed" -eq 0 ]
