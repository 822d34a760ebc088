# Shared by bench/resnet.sh and bench/memory.sh (sourced, not run): the
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

