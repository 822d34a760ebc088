# Shared by the bench/*.sh scripts (sourced, not run): the
# library paths of the Fluid executables and of PyTorch, and run(), which
# runs one command under a timeout inside the shared deadline and logs one
# status line. Expects root, out, deadline and reserve to be set.

# PyTorch runs with the environment it was installed for; the Fluid
# executables get the library path of scripts/gpu-run.sh (cuDNN 9.19 and
# cuBLAS of PyTorch's wheels: the versions the runtime was built against),
# with build/lib in front for libfluid_runtime.so.
torch_ld="${LD_LIBRARY_PATH:-}"
wheels=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
export LD_LIBRARY_PATH="$wheels/cudnn/lib:$wheels/cublas/lib:$wheels/nccl/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fluid_ld="$root/build/lib:$LD_LIBRARY_PATH"
export PYTHONUNBUFFERED=1
# Never use NVLink multicast on the shared machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

start_s=$(date +%s)
failed=0
passed=0
summary="$out/summary.log"
: > "$summary"

note() { echo "$*" | tee -a "$summary"; }

# run NAME CAP_S LOG CMD...: runs CMD with a timeout of min(CAP_S, what is
# left before the deadline), output to LOG; prints one status line.
run() {
  local name="$1" cap="$2" log="$3"
  shift 3
  local elapsed=$(($(date +%s) - start_s))
  local left=$((deadline - elapsed - reserve))
  local limit=$cap
  if [ "$left" -lt "$limit" ]; then limit=$left; fi
  if [ "$limit" -lt 15 ]; then
    echo "skipped: out of the time budget (${elapsed} s of ${deadline} s used)" > "$log"
    note "SKIP: $name (out of the time budget, ${elapsed} s used)"
    failed=$((failed + 1))
    return 1
  fi
  echo "== $name (timeout ${limit} s)"
  echo "+ $*" > "$log"
  local t0 rc ms
  t0=$(date +%s%N)
  timeout --kill-after=10 "$limit" "$@" >> "$log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    note "PASS: $name (${ms} ms wall)"
    tail -n 3 "$log" | sed 's/^/    /'
    return 0
  fi
  local why="exit status $rc"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    why="$why (timed out after ${limit} s)"
  fi
  echo "$why" >> "$log"
  failed=$((failed + 1))
  note "FAIL: $name: $why (${ms} ms wall), log $log"
  tail -n 15 "$log" | sed 's/^/    /'
  return "$rc"
}


# The ResNet comparisons' shared steps (bench/fusion.sh, bench/precision.sh),
# which also expect configs, steps, warmup and python to be set:
# log_environment writes $out/env.log; fluid NAME TORCH-MODEL VARIANT SUFFIX
# CAP ARGS... runs build/bench/NAME-VARIANT-cuda on synthetic data into
# $out/TORCH-MODEL-SUFFIX.{log,json}; torch TORCH-MODEL SUFFIX CAP ARGS...
# runs bench/torch_resnet.py at batch 128 likewise; write_table runs
# bench/table.py over $out and prints the table and the pass count.
log_environment() {
  {
    date -u '+%Y-%m-%d %H:%M:%S UTC'
    echo "programs: $(cat "$root/build/bench/BUILD-INFO" 2>/dev/null || echo 'no build/bench/BUILD-INFO')"
    nvidia-smi -L
    echo "configs: $configs; steps $steps, warm-up $warmup"
  } 2>&1 | tee "$out/env.log"
}

fluid() { # NAME TORCH-MODEL VARIANT SUFFIX CAP ARGS...
  local name="$1" model="$2" variant="$3" suffix="$4" cap="$5"
  shift 5
  local exe="$root/build/bench/$name-$variant-cuda"
  local file="$out/$model-$suffix"
  rm -f "$file.json"
  if [ ! -x "$exe" ]; then
    echo "missing build/bench/$name-$variant-cuda" > "$file.log"
    failed=$((failed + 1))
    note "FAIL: $name $variant: missing build/bench/$name-$variant-cuda"
    return 1
  fi
  run "$name $suffix" "$cap" "$file.log" env LD_LIBRARY_PATH="$fluid_ld" \
    "$exe" --data synthetic --synthetic-size 1024 --log-every 10 \
    --test-data none --algorithm-cache "$out/conv-algorithms.cache" \
    --stats-json "$file.json" "$@"
}

torch() { # TORCH-MODEL SUFFIX CAP ARGS...
  local model="$1" suffix="$2" cap="$3"
  shift 3
  rm -f "$out/$model-$suffix.json"
  run "$model $suffix" "$cap" "$out/$model-$suffix.log" \
    env LD_LIBRARY_PATH="$torch_ld" "$python" "$root/bench/torch_resnet.py" \
    --model "$model" --batch 128 --image-size 224 --classes 1000 \
    --steps "$steps" --warmup "$warmup" --json "$out/$model-$suffix.json" "$@"
}

write_table() { # SCRIPT-NAME
  local table_py=python3
  command -v python3 > /dev/null 2>&1 || table_py="$python"
  if ! timeout 60 "$table_py" "$root/bench/table.py" "$out" > "$out/table.md"; then
    echo "bench/table.py failed" | tee -a "$out/table.md"
  fi
  cat "$out/table.md"
  echo "$1: $passed passed, $failed failed in $(($(date +%s) - start_s)) s"
}
