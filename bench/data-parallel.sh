#!/usr/bin/env bash
# Data parallelism on two GPUs against PyTorch DDP (issue 17), one command
# on the two-GPU machine (nvidia-h200-x2), from the repository root:
#
#   bash bench/data-parallel.sh              (OUT=/tmp/fluid-dp by default)
#
# For each precision of FLUID_DP_PRECISIONS (default "tf32 bf16"): the
# executable build/bench/resnet50-dp-cuda (tf32) or resnet50-dp-bf16-cuda,
# compiled here with
#
#   fluid-models resnet50 --batch 128 -o build/bench/resnet50.mlir
#   fluid-compile build/bench/resnet50.mlir --data-parallel \
#       --training "optimizer=momentum lr=0.1 momentum=0.9" \
#       [--precision bf16] -o build/bench/resnet50-dp[-bf16]-cuda
#
# runs under `mpirun -np 1` and `mpirun -np 2` (batch 128 a GPU, synthetic
# data, CUDA graph), and bench/torch_resnet.py channels_last runs alone and
# as `torchrun --nproc_per_node 2 ... --ddp`, in the same call. The table
# gives images/s (median of the timed steps, global batch) and the scaling
# efficiency (2-GPU images/s over twice the 1-GPU's); the 2-GPU step's
# extra time over the 1-GPU step is the communication left exposed (not
# overlapped). Needs mpirun (OpenMPI) and build/lib/libfluid_mpi.so with
# NCCL; NVLink multicast stays off (NCCL_NVLS_ENABLE=0, bench/lib.sh).
# FLUID_BENCH_STEPS (30), FLUID_BENCH_WARMUP (5), FLUID_BENCH_DEADLINE_S
# (540).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-/tmp/fluid-dp}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
precisions="${FLUID_DP_PRECISIONS:-tf32 bf16}"
steps="${FLUID_BENCH_STEPS:-30}"
warmup="${FLUID_BENCH_WARMUP:-5}"
deadline="${FLUID_BENCH_DEADLINE_S:-540}"
python="${FLUID_BENCH_PYTHON:-/opt/torch/.venv/bin/python}"
configs="resnet50 data parallel"
reserve=20

# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"
log_environment

if ! command -v mpirun > /dev/null 2>&1; then
  note "FAIL: mpirun not found (OpenMPI): the Fluid runs cannot start"
fi
torchrun="$(dirname "$python")/torchrun"

for precision in $precisions; do
  suffix=""
  [ "$precision" = tf32 ] || suffix="-$precision"
  exe="$root/build/bench/resnet50-dp$suffix-cuda"
  for ranks in 1 2; do
    name="fluid-dp$suffix-x$ranks"
    if [ ! -x "$exe" ]; then
      note "FAIL: $name: missing build/bench/resnet50-dp$suffix-cuda"
      failed=$((failed + 1))
      continue
    fi
    run "$name" 240 "$out/$name.log" \
      mpirun --allow-run-as-root -np "$ranks" \
      -x LD_LIBRARY_PATH="$fluid_ld" -x NCCL_NVLS_ENABLE=0 \
      "$exe" --data synthetic --synthetic-size 2048 --log-every 10 \
      --test-data none --warmup "$warmup" --steps $((warmup + steps)) \
      --algorithm-cache "$out/conv-algorithms.cache" \
      --stats-json "$out/$name.json"
  done
  torch_args=(--model resnet50 --batch 128 --image-size 224 --classes 1000
    --steps "$steps" --warmup "$warmup" --memory-format channels_last
    --precision "$precision")
  run "torch-eager$suffix-x1" 240 "$out/torch-eager$suffix-x1.log" \
    env LD_LIBRARY_PATH="$torch_ld" "$python" bench/torch_resnet.py \
    "${torch_args[@]}" --json "$out/torch-eager$suffix-x1.json"
  run "torch-ddp$suffix-x2" 240 "$out/torch-ddp$suffix-x2.log" \
    env LD_LIBRARY_PATH="$torch_ld" "$torchrun" --nproc_per_node 2 \
    bench/torch_resnet.py "${torch_args[@]}" --ddp \
    --json "$out/torch-ddp$suffix-x2.json"
done

# The table: images/s by system and GPU count, scaling efficiency, and
# the 2-GPU step's extra milliseconds.
"$python" - "$out" "$precisions" <<'PY' | tee "$out/table.md"
import json, os, sys
out, precisions = sys.argv[1], sys.argv[2].split()
def load(name):
    try:
        with open(os.path.join(out, name + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
def ips(r):
    if not r:
        return None
    v = r.get("images_per_s") or r.get("imagesPerSecond") or {}
    return v.get("median") if isinstance(v, dict) else None
def step(r):
    if not r:
        return None
    v = r.get("step_ms") or r.get("stepMs") or {}
    return v.get("median") if isinstance(v, dict) else None
print("| system | precision | 1 GPU img/s | 2 GPUs img/s | scaling | exposed ms/step |")
print("|---|---|---|---|---|---|")
for p in precisions:
    s = "" if p == "tf32" else "-" + p
    for system, one, two in (("Fluid", "fluid-dp%s-x1" % s, "fluid-dp%s-x2" % s),
                             ("PyTorch eager CL / DDP", "torch-eager%s-x1" % s,
                              "torch-ddp%s-x2" % s)):
        a, b = load(one), load(two)
        i1, i2, s1, s2 = ips(a), ips(b), step(a), step(b)
        fmt = lambda x, f="%.1f": f % x if x is not None else "n/a"
        eff = i2 / (2 * i1) if i1 and i2 else None
        extra = s2 - s1 if s1 is not None and s2 is not None else None
        print("| %s | %s | %s | %s | %s | %s |" % (system, p, fmt(i1), fmt(i2),
              fmt(eff, "%.3f"), fmt(extra, "%.2f")))
PY
echo "data-parallel.sh: $passed passed, $failed failed in $(($(date +%s) - start_s)) s"
