#!/usr/bin/env bash
# The cuda path of the driver, checked on a GPU machine without lit or
# FileCheck (cuda.test runs it under lit where those exist). Needs
# fluid-driver-test and fluid-driver-test-cuda on PATH, and python3 with
# NumPy. Prints PASS or FAIL per check; exits non-zero if any failed.
#
#   usage: gpu-check.sh WORK_DIR
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$1"
mkdir -p "$work"
python="${PYTHON:-python3}"
failed=0

check() {
  local name="$1"
  shift
  if "$@" > "$work/$name.check" 2>&1; then
    echo "PASS: $name"
  else
    echo "FAIL: $name"
    cat "$work/$name.check"
    failed=1
  fi
}

"$python" "$here/make-idx.py" "$work/train" 320 1
"$python" "$here/make-idx.py" "$work/test" 100 2
data=(--data "$work/train-images.idx,$work/train-labels.idx"
      --test-data "$work/test-images.idx,$work/test-labels.idx"
      --epochs 3 --log-every 5 --lr 0.01)
cuda=(--no-tf32 --algorithm-cache none)

# The cuda program learns what the cpu program learns; a graph replays the
# launches it captured (the same losses as separate launches).
fluid-driver-test "${data[@]}" > "$work/cpu.log" 2>&1
fluid-driver-test-cuda "${data[@]}" "${cuda[@]}" \
  --stats-json "$work/graph.json" > "$work/graph.log" 2>&1
fluid-driver-test-cuda "${data[@]}" "${cuda[@]}" --no-graph \
  --stats-json "$work/nograph.json" > "$work/nograph.log" 2>&1
check learns "$python" "$here/check-log.py" "$work/graph.log" \
  --like "$work/cpu.log" --tolerance 1e-3 --accuracy-at-least 95
check graph-equals-launches "$python" "$here/check-log.py" \
  "$work/nograph.log" --like "$work/graph.log" --tolerance 1e-6
check start-line grep -q "^fluid-driver-test-cuda: cuda backend, 320 examples, batch 16, 20 steps per epoch; steps 0 to 60$" "$work/graph.log"
check summary-line grep -Eq "^summary: 58 timed steps  images/s median [0-9.]+ \(min [0-9.]+, max [0-9.]+\)  step ms median [0-9.]+  peak memory [0-9.]+ MiB$" "$work/graph.log"
check stats-json "$python" -c "
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a['graph'] is True and b['graph'] is False, (a, b)
assert a['backend'] == 'cuda' and a['tf32'] is False and a['timed_steps'] == 58
assert a['peak_memory_bytes'] >= a['param_bytes'] + a['buffer_bytes'] > 0
" "$work/graph.json" "$work/nograph.json"

# Temporaries from fluid_cuda_allocate (variant temporaries): the losses of
# the buffer program, replayed as a CUDA graph (the allocation and release
# become the graph's memory nodes) and as launches, poisoned or not. A
# buffer read before it is written shows when poisoned (variant
# unwritten-rate: lr nan). A workspace limit (variant workspace-limit, 1 MiB)
# changes nothing here (no convolution).
FLUID_DRIVER_TEST_VARIANT=temporaries fluid-driver-test-cuda "${data[@]}" \
  "${cuda[@]}" --stats-json "$work/temporaries.json" \
  > "$work/temporaries.log" 2>&1
FLUID_DRIVER_TEST_VARIANT=temporaries FLUID_POISON_MEMORY=1 \
  fluid-driver-test-cuda "${data[@]}" "${cuda[@]}" --no-graph \
  > "$work/temporaries-launches.log" 2>&1
check temporaries-graph "$python" "$here/check-log.py" \
  "$work/temporaries.log" --like "$work/graph.log" --tolerance 1e-6
check temporaries-launches "$python" "$here/check-log.py" \
  "$work/temporaries-launches.log" --like "$work/graph.log" --tolerance 1e-6
check temporaries-captured "$python" -c "
import json, sys
s = json.load(open(sys.argv[1]))
assert s['graph'] is True, s
assert 'warning' not in open(sys.argv[2]).read()
" "$work/temporaries.json" "$work/temporaries.log"
FLUID_DRIVER_TEST_VARIANT=unwritten-rate FLUID_POISON_MEMORY=1 \
  fluid-driver-test-cuda --synthetic-size 64 --steps 2 --log-every 1 \
  --test-data none --algorithm-cache none > "$work/unwritten.log" 2>&1
check poisoned-buffers grep -Eq "^step 2  epoch 0  loss [0-9.]+  lr -?nan  " \
  "$work/unwritten.log"
FLUID_DRIVER_TEST_VARIANT=workspace-limit fluid-driver-test-cuda \
  "${data[@]}" "${cuda[@]}" > "$work/limit.log" 2>&1
check workspace-limit "$python" "$here/check-log.py" "$work/limit.log" \
  --like "$work/graph.log" --tolerance 1e-6

# A resumed run continues the loss curve.
fluid-driver-test-cuda --synthetic-size 80 --steps 12 --log-every 1 \
  --algorithm-cache none > "$work/straight.log" 2>&1
fluid-driver-test-cuda --synthetic-size 80 --steps 5 --log-every 1 \
  --algorithm-cache none --save "$work/ckpt.safetensors" > "$work/first.log" 2>&1
fluid-driver-test-cuda --synthetic-size 80 --steps 7 --log-every 1 \
  --algorithm-cache none --load "$work/ckpt.safetensors" > "$work/second.log" 2>&1
cat "$work/first.log" "$work/second.log" > "$work/resumed.log"
check resumes "$python" "$here/check-log.py" "$work/resumed.log" \
  --like "$work/straight.log" --tolerance 1e-5

# --profile times each launch; the table has every launch.
fluid-driver-test-cuda --synthetic-size 64 --steps 8 --profile 4 \
  --algorithm-cache none > "$work/profile.log" 2>&1
check profile grep -Eq "^total +\| +[0-9.]+ \| 100.0% \| +10$" "$work/profile.log"

# Long windows and many steps: collected in rounds, no hang.
fluid-driver-test-cuda --synthetic-size 4096 --steps 3000 --log-every 1500 \
  --test-data none --algorithm-cache none > "$work/long.log" 2>&1
check long-run grep -q "^step 3000  epoch 11 " "$work/long.log"

# A device that does not exist: a clear error.
fluid-driver-test-cuda --device 99 --steps 1 > "$work/device.log" 2>&1
check bad-device grep -q "error: cannot create the CUDA context: .*device 99" "$work/device.log"

exit $failed
