#!/usr/bin/env bash
# ResNet-18 NCHW bf16 unfused: its first loss 7.7% off the cpu's in session 27 (bench/NOTES.md).
# On the GPU machine, from the repository root, after scripts/gpu-prepare.sh here and
# build/carry.tgz carried as bench/NOTES.md says: bash bench/repro/resnet18-bf16.sh (OUT: logs).
# Reruns the unfused and fused programs with the failing run's convolution algorithm cache, with its
# Winograd entry changed, with session 26's passing cache and with fresh searches, then
# compute-sanitizer initcheck on the unfused step, then the rotated graph timing.
cd "$(dirname "$0")/../.." || exit 1
OUT="${OUT:-/tmp/fluid-repro}"; mkdir -p "$OUT"
date; nvidia-smi -L
[ -d build/gpu-programs ] || tar xzf build/carry.tgz
W=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH=$PWD/build/lib:$W/cudnn/lib:$W/cublas/lib:$W/nccl/lib:/usr/local/cuda/lib64
P=build/gpu-programs
common="--data synthetic --synthetic-size 16 --test-data none --log-every 1 --seed 3 --steps 3"
echo "cpu reference: [2.1792, 9.0815, 23.4217]"
t() { # name program cache (failing, passing, noalgo7 or none) extra...
  local name=$1 prog=$2 cache=$3; shift 3
  case $cache in
    none) rm -f /tmp/$name.cache ;;
    # The failing cache with its Winograd entry (forward algorithm 7 for the
    # 8 x 8, 128-channel 3 x 3 convolution) set to algorithm 1.
    noalgo7) sed 's/^\(fwd n=4 c=128 h=8 w=8 k=128 .*dtype=bf16 layout=nchw math=tensor_op\) -> algo=7 algo_math=default/\1 -> algo=1 algo_math=tensor_op/' \
      bench/repro/resnet18-bf16-failing.cache > /tmp/$name.cache ;;
    *) cp bench/repro/resnet18-bf16-$cache.cache /tmp/$name.cache ;;
  esac
  timeout 60 $P/$prog $common --algorithm-cache /tmp/$name.cache "$@" > $OUT/$name.log 2>&1
  echo "$name rc=$? losses: $(grep -oE 'loss [0-9.naninf]+' $OUT/$name.log | awk '{print $2}' | tr '\n' ' ')"
}
t unfused-failing-1 resnet18-bf16-cuda-unfused failing
t unfused-failing-2 resnet18-bf16-cuda-unfused failing
t fused-failing resnet18-bf16-cuda failing
t unfused-noalgo7 resnet18-bf16-cuda-unfused noalgo7
t unfused-passing resnet18-bf16-cuda-unfused passing
t unfused-fresh resnet18-bf16-cuda-unfused none; cp /tmp/unfused-fresh.cache $OUT/
t fused-fresh resnet18-bf16-cuda none
date
CS=$(ls /usr/local/cuda*/bin/compute-sanitizer /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
echo "compute-sanitizer: ${CS:-none}"
if [ -n "$CS" ]; then
  cp bench/repro/resnet18-bf16-failing.cache /tmp/cs.cache
  timeout 70 $CS --tool initcheck --print-limit 20 $P/resnet18-bf16-cuda-unfused $common --steps 1 --no-graph --algorithm-cache /tmp/cs.cache > $OUT/cs-initcheck.log 2>&1
  echo "== initcheck rc=$?"; grep -E "ERROR SUMMARY|Uninitialized|loss" $OUT/cs-initcheck.log | head -8
  tail -5 $OUT/cs-initcheck.log
fi
date
for v in nhwc-bf16 nhwc; do
  echo "== resnet50-$v (graphs, rotated, with same-size copies)"
  timeout 150 python3 bench/fused-kernels.py build/lib/libfluid_runtime.so build/bench/resnet50-$v.cpp.gz --top 300 > $OUT/graph-$v.log 2>&1; grep -v "^|" $OUT/graph-$v.log | tail -6
  date
done
