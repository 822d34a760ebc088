#!/usr/bin/env bash
# Runs on the build machine (it has MLIR): compiles the training
# executables the GPU machine runs, since that machine has no MLIR.
#   build/gpu-programs/: lenet5-{cuda,cpu} (batch 64; cuda in its default
#     layout, channels-last), resnet18-{cuda,cpu} (batch 4, 64x64 images, 10
#     classes; both NCHW) and Fashion-MNIST's four files, for
#     scripts/gpu-run.sh;
#   build/bench/: resnet50-cuda and resnet34-cuda (batch 128, 224x224, 1000
#     classes, momentum SGD lr 0.1 momentum 0.9; the default layout,
#     channels-last), for bench/resnet.sh, and
#     NAME-{base,freed,planned,recompute}-cuda with their memory reports,
#     for bench/memory.sh, and NAME-opt-{both,nofold,nogroup,neither}-cuda
#     (the optimizer passes on and off), for bench/optimizer.sh, and
#     NAME-{fused,unfused}-cuda (fusion and batch norm's expansion on and
#     off; NCHW), for bench/fusion.sh, and NAME-bf16-cuda (--precision bf16,
#     NCHW), and NAME-nhwc-cuda, NAME-nhwc-bf16-cuda (--layout nhwc) and
#     their -atomic1 twins (--gpu-column-partials atomic --gpu-column-unroll
#     1, the column sums before session 26) and nhwc-bf16-4k
#     (--gpu-column-min-elements 4096), for bench/precision.sh (NAME:
#     resnet50, resnet34, se_resnext50 unless FLUID_FUSION_CONFIGS says
#     otherwise); lenet5-{cuda,cpu}-{bf16,fp16,fp16-overflow} in
#     build/gpu-programs, resnet18-bf16-{cuda,cpu,cuda-unfused} and
#     resnet18-nhwc-{cuda,cuda-atomic1,cuda-vec1,cuda-atomic4,cuda-4k,
#     cuda-unfused,bf16-cuda},
#     se-resnext50-{cpu,nhwc-cuda}
#     (batch 4, 64x64, 10 classes), vit-small-bf16-{cuda,cpu,cuda-nodm}
#     with vit-small.safetensors (a small ViT through ONNX) for
#     test/Runtime/compiled-gpu.py; resnet50-dp{,-bf16}-cuda (--data-parallel)
#     for bench/data-parallel.sh; vit_b_16-onnx{,-bf16,-bf16-nodm}-cuda and
#     convnext_tiny-onnx{,-bf16,-bf16-nodm}-cuda (torchvision through ONNX,
#     batch 64) for bench/onnx-models.sh.
# Then run on the GPU machine (the device tool), carrying build/lib,
# build/bin/fluid-gpu-info, build/gpu-programs and build/bench:
#   bash scripts/gpu-run.sh   and/or   bash bench/resnet.sh   and/or
#   bash bench/memory.sh   and/or   bash bench/optimizer.sh
#
#   usage: scripts/gpu-prepare.sh [BUILD-DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
bin="$build/bin"
programs="$build/gpu-programs"
bench="$build/bench"
# Start empty: a program an earlier run built (another variant, an older
# compiler) must not travel to the GPU and be run as if it were current.
rm -rf "$programs" "$bench"
mkdir -p "$programs" "$bench"

compile() { # OUTPUT BACKEND TRAINING MODEL-OPTIONS... (fluid-compile's
  # further flags in the array compile_flags)
  local out="$1" backend="$2" training="$3"
  shift 3
  "$bin/fluid-models" "$@" -o "$out.mlir"
  "$bin/fluid-compile" "$out.mlir" --backend "$backend" --training "$training" \
    ${compile_flags[@]+"${compile_flags[@]}"} -o "$out" --quiet
  echo "compiled $out"
}

# Two epochs of Fashion-MNIST at batch 64 are 1874 steps; the cosine schedule
# ends there, so the last epoch's accuracy does not depend on where the
# noise of a constant rate happened to leave the weights.
lenet="optimizer=momentum lr=0.05 momentum=0.9 weight-decay=5e-4 schedule=cosine total-steps=1874"
compile "$programs/lenet5-cuda" cuda "$lenet" lenet5 --batch 64
compile "$programs/lenet5-cpu" cpu "$lenet" lenet5 --batch 64
# Mixed precision (--precision bf16 and fp16): cuda against cpu, and
# Fashion-MNIST's accuracy on cuda.
for precision in bf16 fp16; do
  for backend in cuda cpu; do
    "$bin/fluid-compile" "$programs/lenet5-cuda.mlir" --backend "$backend" \
      --training "$lenet" --precision "$precision" \
      -o "$programs/lenet5-$backend-$precision" --quiet
  done
done
"$bin/fluid-compile" "$programs/lenet5-cuda.mlir" --backend cuda \
  --training "$lenet" --precision fp32 -o "$programs/lenet5-cuda-fp32" --quiet
# fp16 with a loss scale that overflows every step: each step is skipped.
for backend in cuda cpu; do
  "$bin/fluid-compile" "$programs/lenet5-cuda.mlir" --backend "$backend" \
    --training "$lenet loss-scale=3e38 max-loss-scale=3.4e38" \
    --precision fp16 -o "$programs/lenet5-$backend-fp16-overflow" --quiet
done
echo "compiled lenet5-{cuda,cpu}-{bf16,fp16,fp16-overflow}, lenet5-cuda-fp32"
resnet18="optimizer=momentum lr=0.1 momentum=0.9"
compile_flags=(--layout nchw)
compile "$programs/resnet18-cuda" cuda "$resnet18" resnet18 --batch 4 \
  --image-size 64 --classes 10
compile_flags=()
compile "$programs/resnet18-cpu" cpu "$resnet18" resnet18 --batch 4 \
  --image-size 64 --classes 10
# ResNet-18 in bf16 (activations stored 16-bit, so gradient sums of 16-bit
# values run the runtime's 16-bit add), fused and not, against the cpu.
for variant in "cuda:cuda" "cpu:cpu" "cuda-unfused:cuda --no-fuse-elementwise"; do
  read -r -a flags <<< "${variant#*:}"
  "$bin/fluid-compile" "$programs/resnet18-cuda.mlir" --backend "${flags[@]}" \
    --layout nchw --training "$resnet18" --precision bf16 \
    -o "$programs/resnet18-bf16-${variant%%:*}" --quiet
done
echo "compiled resnet18-bf16-{cuda,cpu,cuda-unfused}"
# A small torchvision ViT through ONNX in bf16 (its head split and merge,
# q/k/v slices: --fluid-narrow-data-movement's 16-bit reshapes, transposes
# and slices), on cuda with and without the pass and on the cpu; the
# exported weights travel with the programs (vit-small.safetensors).
PYTHONPATH="$root/test/lib" /usr/bin/python3 -c '
import sys, torch, onnx_training
net = onnx_training.small_transformer("vit", 32, 10)
images = torch.randn(4, 3, 32, 32, generator=torch.Generator().manual_seed(1))
onnx_training.export_as_readme(net, images, sys.argv[1], 17)
' "$programs/vit-small.onnx"
"$bin/fluid-import-onnx" "$programs/vit-small.onnx" --batch 4 \
  --loss softmax_cross_entropy -o "$programs/vit-small.mlir"
for variant in "cuda:cuda" "cpu:cpu" "cuda-nodm:cuda --no-narrow-data-movement"; do
  read -r -a flags <<< "${variant#*:}"
  "$bin/fluid-compile" "$programs/vit-small.mlir" --backend "${flags[@]}" \
    --training "optimizer=momentum lr=0.01 momentum=0.9" --precision bf16 \
    -o "$programs/vit-small-bf16-${variant%%:*}" --quiet
done
echo "compiled vit-small-bf16-{cuda,cpu,cuda-nodm}"
# Channels-last (--layout nhwc) on cuda against the NCHW cpu program (the
# cpu backend trains both layouts bitwise alike): f32, fused and not, and
# bf16; the fused ones recompute every batch norm + ReLU output in the
# backward pass (--recompute-min-bytes 0: at this size all are below the
# default 1 MiB), so the sums kernels that write them are checked too.
# The channels-last sums' other forms, bitwise the default's results (vector
# partials, four rows per loop step): nhwc-cuda-atomic1 (atomic partials,
# one row per step: the default before session 26), nhwc-cuda-vec1 (vector,
# one row) and nhwc-cuda-atomic4 (atomic, four rows); nhwc-cuda-4k: blocks
# of at least 4096 elements (--gpu-column-min-elements 4096: four times the
# splits, other sums, so checked against the cpu).
for variant in "nhwc-cuda:--recompute-min-bytes 0" \
  "nhwc-cuda-atomic1:--recompute-min-bytes 0 --gpu-column-partials atomic --gpu-column-unroll 1" \
  "nhwc-cuda-vec1:--recompute-min-bytes 0 --gpu-column-partials vector --gpu-column-unroll 1" \
  "nhwc-cuda-atomic4:--recompute-min-bytes 0 --gpu-column-partials atomic --gpu-column-unroll 4" \
  "nhwc-cuda-4k:--recompute-min-bytes 0 --gpu-column-min-elements 4096" \
  "nhwc-cuda-unfused:--no-fuse-elementwise" \
  "nhwc-bf16-cuda:--precision bf16 --recompute-min-bytes 0"; do
  read -r -a flags <<< "${variant#*:}"
  "$bin/fluid-compile" "$programs/resnet18-cuda.mlir" --backend cuda \
    --training "$resnet18" --layout nhwc "${flags[@]}" \
    -o "$programs/resnet18-${variant%%:*}" --quiet
done
echo "compiled resnet18-nhwc-{cuda,cuda-atomic1,cuda-vec1,cuda-atomic4,cuda-4k,cuda-unfused,bf16-cuda}"
# SE-ResNeXt-50 (grouped convolutions, SE blocks' global pooling) small:
# channels-last cuda against the cpu.
"$bin/fluid-models" se_resnext50_32x4d --batch 4 --image-size 64 --classes 10 \
  -o "$programs/se-resnext50.mlir"
for variant in "cpu:cpu" "nhwc-cuda:cuda --layout nhwc"; do
  read -r -a flags <<< "${variant#*:}"
  "$bin/fluid-compile" "$programs/se-resnext50.mlir" --backend "${flags[@]}" \
    --training "$resnet18" -o "$programs/se-resnext50-${variant%%:*}" --quiet
done
echo "compiled se-resnext50-{cpu,nhwc-cuda}"
# The generated kernels against the library ones (test/Runtime/compiled-gpu.py):
# ResNet-18 without batch norm's expansion and without fusion, and a model of
# every fusible op with gradients (test/Runtime/Inputs/fusion-ops.mlir; its
# cosine schedule, unfolded, adds the scalar ops), fused and not.
"$bin/fluid-compile" "$programs/resnet18-cuda.mlir" --backend cuda \
  --layout nchw --training "$resnet18" --no-expand-batch-norm \
  --no-fuse-elementwise -o "$programs/resnet18-cuda-unfused" --quiet
fusion_ops="optimizer=momentum lr=0.05 momentum=0.9 schedule=cosine total-steps=6 warmup-steps=2"
for variant in "cuda:cuda" "cpu:cpu" "cuda-unfused:cuda --no-fuse-elementwise"; do
  read -r -a flags <<< "${variant#*:}"
  "$bin/fluid-compile" "$root/test/Runtime/Inputs/fusion-ops.mlir" \
    --backend "${flags[@]}" --training "$fusion_ops" --no-fold-lr-math \
    -o "$programs/fusion-ops-${variant%%:*}" --quiet
done
echo "compiled resnet18-cuda-unfused, fusion-ops-{cuda,cpu,cuda-unfused}"
cp /usr/share/datasets/fashion-mnist/*.gz "$programs/"

resnet="optimizer=momentum lr=0.1 momentum=0.9"
compile "$bench/resnet50-cuda" cuda "$resnet" resnet50 --batch 128
compile "$bench/resnet34-cuda" cuda "$resnet" resnet34 --batch 128
# bench/fusion.sh: elementwise fusion and batch norm's expansion on and off.
for config in ${FLUID_FUSION_CONFIGS:-resnet50:resnet50 resnet34:resnet34 se_resnext50:se_resnext50_32x4d}; do
  IFS=: read -r name model <<< "$config"
  "$bin/fluid-models" "$model" --batch 128 -o "$bench/$name-fusion.mlir"
  "$bin/fluid-compile" "$bench/$name-fusion.mlir" --training "$resnet" \
    --layout nchw -o "$bench/$name-fused-cuda" --quiet
  # Its C++ (PTX and launches) for bench/fused-kernels.py, compressed
  # (what the device tool carries is limited), and that of the bf16 and
  # channels-last programs below.
  for variant in "fused:--layout nchw" "bf16:--layout nchw --precision bf16" \
    "nhwc:--layout nhwc" \
    "nhwc-bf16:--layout nhwc --precision bf16" \
    "nhwc-bf16-atomic1:--layout nhwc --precision bf16 --gpu-column-partials atomic --gpu-column-unroll 1" \
    "nhwc-bf16-4k:--layout nhwc --precision bf16 --gpu-column-min-elements 4096"; do
    read -r -a flags <<< "${variant#*:}"
    "$bin/fluid-compile" "$bench/$name-fusion.mlir" --training "$resnet" \
      "${flags[@]}" --emit=cpp -o - --quiet |
      gzip -9 > "$bench/$name-${variant%%:*}.cpp.gz"
  done
  "$bin/fluid-compile" "$bench/$name-fusion.mlir" --training "$resnet" \
    --layout nchw --no-expand-batch-norm --no-fuse-elementwise \
    -o "$bench/$name-unfused-cuda" --quiet
  # bench/precision.sh: the same step in bf16.
  "$bin/fluid-compile" "$bench/$name-fusion.mlir" --training "$resnet" \
    --layout nchw --precision bf16 -o "$bench/$name-bf16-cuda" --quiet
  # bench/precision.sh: both precisions channels-last (--layout nhwc).
  "$bin/fluid-compile" "$bench/$name-fusion.mlir" --training "$resnet" \
    --layout nhwc -o "$bench/$name-nhwc-cuda" --quiet
  "$bin/fluid-compile" "$bench/$name-fusion.mlir" --training "$resnet" \
    --layout nhwc --precision bf16 -o "$bench/$name-nhwc-bf16-cuda" --quiet
  # bench/precision.sh FLUID_BENCH_EXTRA_VARIANTS="nhwc-atomic1
  # nhwc-bf16-atomic1": the channels-last sums as before session 26 (atomic
  # partials, one row per loop step) against the default; "nhwc-bf16-4k":
  # blocks of at least 4096 elements instead of 16384
  # (--gpu-column-min-elements), four times the splits, up to the cap.
  for variant in "nhwc-atomic1:tf32 --gpu-column-partials atomic --gpu-column-unroll 1" \
    "nhwc-bf16-atomic1:bf16 --gpu-column-partials atomic --gpu-column-unroll 1" \
    "nhwc-bf16-4k:bf16 --gpu-column-min-elements 4096"; do
    read -r -a flags <<< "${variant#*:}"
    "$bin/fluid-compile" "$bench/$name-fusion.mlir" --training "$resnet" \
      --layout nhwc --precision "${flags[@]}" \
      -o "$bench/$name-${variant%%:*}-cuda" --quiet
  done
  echo "compiled $bench/$name-{fused,unfused,bf16,nhwc,nhwc-bf16}-cuda and the -atomic1 and -4k variants"
done
# bench/memory.sh: each configuration with each memory policy, and the
# compile-time memory report of each (NAME-VARIANT.report.{json,csv,svg}).
memory_configs="${FLUID_MEMORY_CONFIGS:-resnet50-b128:resnet50:128 se_resnext50-b128:se_resnext50_32x4d:128 se_resnext152-b25:se_resnext152_32x4d:25}"
for config in $memory_configs; do
  IFS=: read -r name model batch _ <<< "$config"
  "$bin/fluid-models" "$model" --batch "$batch" -o "$bench/$name.mlir"
  # The seed's policies without recomputation, then with it.
  for variant in "base:--no-insert-frees --no-recompute-elementwise" \
    "freed:--no-plan-memory --no-recompute-elementwise" \
    "planned:--no-recompute-elementwise" "recompute:"; do
    read -r -a flags <<< "${variant#*:}"
    "$bin/fluid-compile" "$bench/$name.mlir" --training "$resnet" "${flags[@]}" \
      --memory-report "$bench/$name-${variant%%:*}.report" \
      -o "$bench/$name-${variant%%:*}-cuda" --quiet
    echo "compiled $bench/$name-${variant%%:*}-cuda"
  done
done
# bench/optimizer.sh: the optimizer passes on and off (momentum with weight
# decay, as the issue's ablation).
optimizer_configs="${FLUID_OPTIMIZER_CONFIGS:-resnet50-b128:resnet50 se_resnext50-b128:se_resnext50_32x4d}"
for config in $optimizer_configs; do
  IFS=: read -r name model <<< "$config"
  "$bin/fluid-models" "$model" --batch 128 -o "$bench/$name.mlir"
  for variant in "both:" "nofold:--no-fold-lr-math" \
    "nogroup:--no-group-optimizer" \
    "neither:--no-fold-lr-math --no-group-optimizer"; do
    read -r -a flags <<< "${variant#*:}"
    "$bin/fluid-compile" "$bench/$name.mlir" --training "$resnet weight-decay=1e-4" \
      "${flags[@]}" -o "$bench/$name-opt-${variant%%:*}-cuda" --quiet
    echo "compiled $bench/$name-opt-${variant%%:*}-cuda"
  done
done
# Data parallelism (bench/data-parallel.sh, on the two-GPU machine):
# ResNet-50 at batch 128 a GPU, TF32 and bf16, with --data-parallel (needs
# build/lib/libfluid_mpi.so, built where MPI and NCCL are found).
# FLUID_DP_CONFIGS=" " skips them.
dp_configs="${FLUID_DP_CONFIGS-resnet50}"
if [ -n "${dp_configs// /}" ] && [ -f "$build/lib/libfluid_mpi.so" ]; then
  "$bin/fluid-models" resnet50 --batch 128 -o "$bench/resnet50-dp.mlir"
  for variant in ":" "-bf16:--precision bf16"; do
    read -r -a flags <<< "${variant#*:}"
    "$bin/fluid-compile" "$bench/resnet50-dp.mlir" --data-parallel \
      --training "$resnet" ${flags[@]+"${flags[@]}"} \
      -o "$bench/resnet50-dp${variant%%:*}-cuda" --quiet
    echo "compiled $bench/resnet50-dp${variant%%:*}-cuda"
  done
fi
# bench/onnx-models.sh (issue 15): torchvision models through ONNX, exported
# by Debian's PyTorch, imported at batch 64 and compiled for cuda (TF32,
# channels-last; also bf16, with and without --fluid-narrow-data-movement). The ONNX files and weights stay in $build/onnx (the
# weights' statistics go to $bench/MODEL-onnx-weights.json);
# FLUID_ONNX_CONFIGS=" " skips them.
onnx_configs="${FLUID_ONNX_CONFIGS-vit_b_16 convnext_tiny}"
mkdir -p "$build/onnx"
for model in $onnx_configs; do
  /usr/bin/python3 "$root/bench/export_torchvision.py" "$model" \
    "$build/onnx/$model.onnx"
  "$bin/fluid-import-onnx" "$build/onnx/$model.onnx" --batch 64 \
    --loss softmax_cross_entropy -o "$build/onnx/$model.mlir"
  "$bin/fluid-compile" "$build/onnx/$model.mlir" --training "$resnet" \
    -o "$bench/$model-onnx-cuda" --quiet
  # bf16, and bf16 without --fluid-narrow-data-movement (its effect).
  "$bin/fluid-compile" "$build/onnx/$model.mlir" --training "$resnet" \
    --precision bf16 -o "$bench/$model-onnx-bf16-cuda" --quiet
  "$bin/fluid-compile" "$build/onnx/$model.mlir" --training "$resnet" \
    --precision bf16 --no-narrow-data-movement \
    -o "$bench/$model-onnx-bf16-nodm-cuda" --quiet
  # The weights stay here; their statistics travel (bench/random_weights.py).
  /usr/bin/python3 "$root/bench/random_weights.py" manifest \
    "$build/onnx/$model.safetensors" "$bench/$model-onnx-weights.json"
  echo "compiled $bench/$model-onnx-cuda"
done
info="compiled $(date -u '+%Y-%m-%d %H:%M UTC') from commit $(git -C "$root" rev-parse --short HEAD)"
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
  info="$info with uncommitted changes"
fi
echo "$info" | tee "$programs/BUILD-INFO" > "$bench/BUILD-INFO"
du -sh "$programs" "$bench" "$build/lib/libfluid_runtime.so"
