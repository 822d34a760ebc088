#!/usr/bin/env bash
# The main job: installs what is needed, builds, then writes LeNet-5 with
# fluid-models, builds its training step (autodiff + momentum SGD) with
# fluid-opt, and trains it on Fashion-MNIST on the cpu backend with
# fluid-train for one epoch (about 40 s on 2 cores), printing the loss, the
# speed and the test accuracy. FLUID_EPOCHS=N trains longer.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FLUID_BUILD_DIR:-$root/build}"
work="${FLUID_WORK_DIR:-$build/main-job}"

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
mkdir -p "$work"
bin="$build/bin"

echo
echo "== fluid-models lenet5 --batch 64"
"$bin/fluid-models" lenet5 --batch 64 -o "$work/lenet5.mlir"
"$bin/fluid-opt" "$work/lenet5.mlir" --fluid-param-summary -o /dev/null
echo
echo "== fluid-opt --fluid-build-training (momentum SGD, lr 0.05, weight decay 5e-4)"
"$bin/fluid-opt" "$work/lenet5.mlir" \
  "--fluid-build-training=optimizer=momentum lr=0.05 momentum=0.9 weight-decay=5e-4" \
  -o "$work/lenet5-train.mlir"
echo "training step written to $work/lenet5-train.mlir"
echo
echo "== fluid-train on Fashion-MNIST (cpu backend)"
"$bin/fluid-train" "$work/lenet5-train.mlir" --data fashion-mnist \
  --epochs "${FLUID_EPOCHS:-1}" --log-every 200 --save "$work/lenet5.safetensors"
