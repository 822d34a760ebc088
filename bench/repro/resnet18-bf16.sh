#!/usr/bin/env bash
# ResNet-18 NCHW bf16 unfused: its first loss was 7.7% off the cpu's in session 27 and
# right in session 28 with the same algorithm cache (bench/NOTES.md); compute-sanitizer
# initcheck found cuDNN's nhwcToNchwKernel (inside cudnnConvolutionForward) reading
# memory nobody wrote. On the GPU machine, from the repository root, after
# scripts/gpu-prepare.sh here and build/carry.tgz carried as bench/NOTES.md says:
#   bash bench/repro/resnet18-bf16.sh            (OUT: logs, a few files)
# 1. Each ResNet-18 program three steps with and without FLUID_POISON_MEMORY=1 (function
#    buffers and, before each convolution, the algorithm's workspace filled with NaN):
#    NaN losses only with poison, and only in the NCHW bf16 programs, would mean a cuDNN
#    engine reads workspace it did not write.
# 2. initcheck on the unfused and the fused NCHW bf16 step: which kernels read unwritten
#    memory, and how often.
# 3. bench/fused-kernels.py on ResNet-50's channels-last bf16 and TF32 programs (graph
#    timing, same-size copies).
cd "$(dirname "$0")/../.." || exit 1
OUT="${OUT:-/tmp/fluid-repro}"; mkdir -p "$OUT"
date; nvidia-smi -L
[ -d build/gpu-programs ] || tar xzf build/carry.tgz
W=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$PWD/build/lib:$W/cudnn/lib:$W/cublas/lib:$W/nccl/lib:/usr/local/cuda/lib64
P=build/gpu-programs
common="--data synthetic --synthetic-size 16 --test-data none --log-every 1 --seed 3"
echo "cpu reference (bf16 programs): [2.1792, 9.0815, 23.4217]"
for p in resnet18-bf16-cuda-unfused resnet18-bf16-cuda resnet18-nhwc-bf16-cuda resnet18-cuda-unfused; do
  for poison in 0 1; do
    cp bench/repro/resnet18-bf16-failing.cache /tmp/repro.cache
    losses=$(FLUID_POISON_MEMORY=$poison timeout 60 $P/$p $common --steps 3 \
      --algorithm-cache /tmp/repro.cache 2>&1 | grep -oE 'loss [0-9.naninf-]+' | awk '{print $2}' | tr '\n' ' ')
    echo "$p poison=$poison: $losses"
  done
done
date
CS=$(ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
echo "compute-sanitizer: ${CS:-none}"
for p in resnet18-bf16-cuda-unfused resnet18-bf16-cuda; do
  [ -n "$CS" ] || break
  cp bench/repro/resnet18-bf16-failing.cache /tmp/repro.cache
  timeout 90 $CS --tool initcheck --print-limit 200 $P/$p $common --steps 1 --no-graph \
    --algorithm-cache /tmp/repro.cache > $OUT/initcheck-$p.log 2>&1
  echo "== initcheck $p rc=$?: $(grep 'ERROR SUMMARY' $OUT/initcheck-$p.log | head -1)"
  grep -E "^=========     at" $OUT/initcheck-$p.log | sed 's/(.*//' | sort | uniq -c
done
date
for v in nhwc-bf16 nhwc; do
  echo "== resnet50-$v (graphs, rotated, with same-size copies)"
  timeout 150 python3 bench/fused-kernels.py build/lib/libfluid_runtime.so build/bench/resnet50-$v.cpp.gz \
    --top 300 > $OUT/graph-$v.log 2>&1
  grep -v "^| fused" $OUT/graph-$v.log | tail -4
  date
done
