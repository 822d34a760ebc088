#!/usr/bin/env bash
# Real training data (issue 16), one command on the GPU machine from the
# repository root:
#
#   bash bench/data.sh                     (OUT=/tmp/fluid-data by default)
#
# 1. bench/loader.py writes a folder of FLUID_DATA_COUNT (5,000) JPEGs of
#    500 x 375 pixels in 10 class folders (under FLUID_DATA_DIR, default
#    /tmp/fluid-jpegs) and measures the image loader alone: images/s by
#    host thread count (RandomResizedCrop to 224, flip, normalize,
#    channels-last f32, batch 128).
# 2. The compiled ResNet-50 at batch 128 (build/bench/resnet50-V-cuda of
#    scripts/gpu-prepare.sh, V in FLUID_DATA_VARIANTS, default "nhwc
#    nhwc-bf16") training on that folder with --prefetch-threads T (each T
#    of FLUID_DATA_THREADS, default "8 16") against the same executable on
#    synthetic data, FLUID_BENCH_STEPS (40) timed steps after
#    FLUID_BENCH_WARMUP (5). A folder of 5,000 images is 39 steps an epoch,
#    so the timed steps cross an epoch's end (a reshuffle).
# 3. bench/nvjpeg.py: GPU decoding with nvJPEG (torchvision's decode_jpeg on
#    the GPU) on the same folder, decode alone and with the training
#    transform on the GPU: images/s and the GPU time per batch.
# Prints a table: variant, data, images/s median (min-max), step ms, and
# the folder run's slowdown against synthetic data.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-/tmp/fluid-data}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
folder="${FLUID_DATA_DIR:-/tmp/fluid-jpegs}"
count="${FLUID_DATA_COUNT:-5000}"
variants="${FLUID_DATA_VARIANTS:-nhwc nhwc-bf16}"
thread_counts="${FLUID_DATA_THREADS:-8 16}"
steps="${FLUID_BENCH_STEPS:-40}"
warmup="${FLUID_BENCH_WARMUP:-5}"
deadline="${FLUID_BENCH_DEADLINE_S:-540}"
python="${FLUID_BENCH_PYTHON:-/opt/torch/.venv/bin/python}"
reserve=10

# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

{
  date -u '+%Y-%m-%d %H:%M:%S UTC'
  echo "programs: $(cat "$root/build/bench/BUILD-INFO" 2>/dev/null || echo 'no build/bench/BUILD-INFO')"
  nvidia-smi -L
  echo "host threads: $(nproc)"
} 2>&1 | tee "$out/env.log"

run loader 240 "$out/loader.log" env LD_LIBRARY_PATH="$fluid_ld" "$python" \
  "$root/bench/loader.py" "$root/build/lib/libfluid_runtime.so" "$folder" \
  --count "$count"
cat "$out/loader.log"
run nvjpeg 120 "$out/nvjpeg.log" env LD_LIBRARY_PATH="$torch_ld" "$python" \
  "$root/bench/nvjpeg.py" "$folder"
cat "$out/nvjpeg.log"

train() { # VARIANT SUFFIX ARGS...
  local variant="$1" suffix="$2"
  shift 2
  local exe="$root/build/bench/resnet50-$variant-cuda"
  if [ ! -x "$exe" ]; then
    note "FAIL: missing build/bench/resnet50-$variant-cuda"
    failed=$((failed + 1))
    return 1
  fi
  rm -f "$out/$variant-$suffix.json"
  run "resnet50 $variant $suffix" 150 "$out/$variant-$suffix.log" \
    env LD_LIBRARY_PATH="$fluid_ld" "$exe" --test-data none --log-every 10 \
    --warmup "$warmup" --steps $((warmup + steps)) \
    --algorithm-cache "$out/conv-algorithms.cache" \
    --stats-json "$out/$variant-$suffix.json" "$@"
}

for variant in $variants; do
  train "$variant" synthetic --data synthetic --synthetic-size 1024
  for threads in $thread_counts; do
    train "$variant" "folder-t$threads" --data "$folder" \
      --prefetch-threads "$threads"
  done
done

python3 - "$out" $variants <<'EOF' | tee "$out/table.md"
import json, os, sys
out, variants = sys.argv[1], sys.argv[2:]
print("| program | data | images/s median (min-max) | step ms | against synthetic |")
print("| --- | --- | --- | ---: | ---: |")
for variant in variants:
    base = None
    runs = [f for f in os.listdir(out) if f.startswith(variant + "-")
            and f.endswith(".json") and (f[len(variant) + 1:-5] == "synthetic"
            or f[len(variant) + 1:-5].startswith("folder-"))]
    runs.sort(key=lambda f: (not f.endswith("synthetic.json"), f))
    for name in runs:
        with open(os.path.join(out, name)) as f:
            stats = json.load(f)
        ips = stats["images_per_s"]
        data = name[len(variant) + 1:-5]
        if data == "synthetic":
            base = ips["median"]
        ratio = "" if base is None or data == "synthetic" else \
            "%+.1f%%" % (100.0 * (ips["median"] / base - 1.0))
        print("| resnet50-%s | %s | %.1f (%.1f-%.1f) | %.2f | %s |" % (
            variant, data, ips["median"], ips["min"], ips["max"],
            stats["step_ms"]["median"], ratio))
EOF
echo "bench/data.sh: $passed passed, $failed failed in $(($(date +%s) - start_s)) s"
[ "$failed" -eq 0 ]
