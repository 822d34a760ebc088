#!/usr/bin/env bash
# The main job: installs what is needed, builds, then writes LeNet-5 with
# fluid-models and compiles it with fluid-compile into a training
# executable (autodiff + momentum SGD, bufferized, emitted as C++ over the
# runtime), which trains on Fashion-MNIST for one epoch and prints the loss,
# the speed, the peak memory and the test accuracy. The executable runs on
# the GPU (cuda backend) when one is present and the runtime was built with
# CUDA, else on the cpu backend (about 40 s on 2 cores).
#   FLUID_EPOCHS=N trains longer; FLUID_BACKEND=cpu|cuda chooses.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FLUID_BUILD_DIR:-$root/build}"
work="${FLUID_WORK_DIR:-$build/main-job}"

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
mkdir -p "$work"
bin="$build/bin"

backend="${FLUID_BACKEND:-}"
if [ -z "$backend" ]; then
  backend=cpu
  if [ -x "$bin/fluid-gpu-info" ] && "$bin/fluid-gpu-info" > /dev/null 2>&1; then
    backend=cuda
  fi
fi

echo
echo "== fluid-models lenet5 --batch 64"
"$bin/fluid-models" lenet5 --batch 64 -o "$work/lenet5.mlir"
"$bin/fluid-opt" "$work/lenet5.mlir" --fluid-param-summary -o /dev/null
echo
echo "== fluid-compile --backend $backend (momentum SGD, lr 0.05, weight decay 5e-4)"
"$bin/fluid-compile" "$work/lenet5.mlir" --backend "$backend" \
  --training "optimizer=momentum lr=0.05 momentum=0.9 weight-decay=5e-4" \
  --save-temps -o "$work/lenet5-train"
echo "executable $work/lenet5-train (generated C++: $work/lenet5-train.cpp)"
echo
echo "== lenet5-train on Fashion-MNIST ($backend backend)"
"$work/lenet5-train" --data fashion-mnist --epochs "${FLUID_EPOCHS:-1}" \
  --log-every 200 --save "$work/lenet5.safetensors"
