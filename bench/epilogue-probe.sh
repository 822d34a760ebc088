#!/usr/bin/env bash
# Builds bench/epilogue-probe.cu with nvcc and runs it (issue 13, item 4:
# cuDNN backend-graph fusion and cuBLASLt epilogues against a separate
# elementwise kernel). For the GPU machine (CUDA 13 in /usr/local/cuda,
# cuDNN 9.19 in PyTorch's wheel); installs nothing. Prints the Markdown
# table on stdout and, when OUT is set, writes it to $OUT/epilogue.md and
# the probe's per-engine log to $OUT/epilogue-log.txt.
#
#   usage: bench/epilogue-probe.sh [PROBE-OPTIONS]
#     PROBE-OPTIONS (passed through; `--help` lists them): --configs=LIST
#     (nchw-fp32,nhwc-fp32,nhwc-fp16,nhwc-bf16), --patterns=LIST
#     (P0,P1,P2,P3), --budget=SECONDS (default 150), --max-try=N, --iters=N.
#     E.g. P2 in NHWC bf16 and fp16 at the ResNet-50 shapes, with its summary
#     per forward pass (the probe ran 6 s of it on an H100):
#       bench/epilogue-probe.sh --configs=nhwc-bf16,nhwc-fp16 --patterns=P2
#     P0 (plain convolutions, fprop, dgrad and wgrad, backend graph against
#     the legacy API) with its summary per ResNet-50 training step, bounded
#     to about 2 minutes (cases not started after 110 s are skipped rows):
#       bench/epilogue-probe.sh --configs=nhwc-bf16,nhwc-fp16,nhwc-fp32 \
#         --patterns=P0 --max-try=4 --iters=10 --budget=110
#
# The probe stops starting cuDNN cases after --budget seconds; the run is
# killed after EPILOGUE_PROBE_TIMEOUT seconds, by default the budget + 60
# (210 with the default budget).
#
# CUDNN_ROOT (a folder with include/cudnn.h and lib/libcudnn.so.9) overrides
# where cuDNN is looked for. If the build fails and EPILOGUE_PROBE_BIN names
# an executable (one built elsewhere), that one runs instead.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${OUT:-}"
work="$(mktemp -d "${TMPDIR:-/tmp}/epilogue-probe.XXXXXX")"
wheels=/opt/torch/.venv/lib/python3.12/site-packages/nvidia
cuda="${CUDA_HOME:-/usr/local/cuda}"

nvcc="$cuda/bin/nvcc"
[ -x "$nvcc" ] || nvcc="$(command -v nvcc || true)"

first_with() {  # first_with FILE DIR...: the first DIR that holds FILE
  local file="$1" d
  shift
  for d in "$@"; do
    if [ -n "$d" ] && [ -e "$d/$file" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}
root_inc="" root_lib=""
if [ -n "${CUDNN_ROOT:-}" ]; then
  root_inc="$CUDNN_ROOT/include"
  root_lib="$CUDNN_ROOT/lib"
fi
cudnn_inc="$(first_with cudnn.h "$root_inc" "$wheels/cudnn/include" /usr/local/include \
  "$cuda/include" /usr/include /usr/include/x86_64-linux-gnu)"
cudnn_lib="$(first_with libcudnn.so.9 "$root_lib" "$wheels/cudnn/lib" "$cuda/lib64" \
  "$cuda/lib" /usr/lib/x86_64-linux-gnu)"
blas_lib="$(first_with libcublasLt.so "$cuda/lib64" "$cuda/lib" /usr/lib/x86_64-linux-gnu)"
export LD_LIBRARY_PATH="${cudnn_lib:+$cudnn_lib:}$wheels/cublas/lib:$wheels/cuda_nvrtc/lib:$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

bin="$work/epilogue-probe"
built=0
if [ -n "$nvcc" ] && [ -n "$cudnn_inc" ] && [ -n "$cudnn_lib" ] && [ -n "$blas_lib" ]; then
  echo "build: $nvcc, cuDNN headers $cudnn_inc, library $cudnn_lib, cuBLAS $blas_lib" >&2
  if "$nvcc" -std=c++17 -O2 -arch=sm_90 -Xcompiler=-Wall,-Wextra -I"$cudnn_inc" \
      "$root/bench/epilogue-probe.cu" -o "$bin" \
      -L"$cudnn_lib" -l:libcudnn.so.9 -L"$blas_lib" -lcublasLt -lcublas \
      -Xlinker --enable-new-dtags -Xlinker -rpath="$cudnn_lib" > "$work/build.log" 2>&1; then
    built=1
  else
    echo "epilogue-probe.sh: the build failed:" >&2
    tail -30 "$work/build.log" >&2
  fi
else
  echo "epilogue-probe.sh: missing nvcc ('$nvcc'), cudnn.h ('$cudnn_inc')," \
    "libcudnn.so.9 ('$cudnn_lib') or libcublasLt ('$blas_lib')" >&2
fi
if [ "$built" = 0 ]; then
  if [ -n "${EPILOGUE_PROBE_BIN:-}" ] && [ -x "$EPILOGUE_PROBE_BIN" ]; then
    echo "epilogue-probe.sh: running the prebuilt $EPILOGUE_PROBE_BIN instead" >&2
    bin="$EPILOGUE_PROBE_BIN"
  else
    exit 2
  fi
fi

# Never use NVLink multicast on the shared machines (nothing here uses NCCL;
# kept for the habit).
export NCCL_NVLS_ENABLE=0
log="$work/epilogue-log.txt"
budget=150  # the probe's default --budget
for a in "$@"; do
  case "$a" in
    --budget=*) budget="${a#--budget=}" ;;
  esac
done
case "$budget" in
  '' | *[!0-9.]*) budget=150 ;;  # not a number: the probe decides, keep 210
esac
limit="${EPILOGUE_PROBE_TIMEOUT:-$(awk -v b="$budget" 'BEGIN { printf "%d", b + 60.999 }')}"
timeout --kill-after=10 "$limit" "$bin" "$@" > "$work/epilogue.md" 2> "$log"
rc=$?
cat "$work/epilogue.md"
if [ -n "$out" ]; then
  mkdir -p "$out"
  cp "$work/epilogue.md" "$out/epilogue.md"
  cp "$log" "$out/epilogue-log.txt"
fi
if [ "$rc" -ne 0 ]; then
  echo "epilogue-probe.sh: the probe exited with status $rc; the end of its log:" >&2
  tail -25 "$log" >&2
fi
rm -rf "$work"
exit "$rc"
