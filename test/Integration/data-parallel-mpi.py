# Data-parallel training on the cpu backend, started by mpirun (issue 17's
# CI check). LeNet-5 compiled with `fluid-compile --data-parallel` at batch
# B = 8 a rank, run on 2 ranks for 4 steps of Fashion-MNIST (or synthetic
# data where the dataset is not installed), must end with the parameters,
# momentum buffers and step of one process training the same program at
# batch 2B = 16: the same examples per step (rank r takes the r-th half of
# each global batch) and the same mean gradient, summed in another order,
# so to 1e-6 of each tensor's largest value + 1e-7. (LeNet-5 has no batch
# norm, whose statistics stay per rank.) The test also checks that it
# could fail: one process at batch B ends elsewhere (by more than 1e-4).
# Then: one bucket or one all-reduce per gradient give the same result;
# only rank 0 logs and writes the checkpoint, the loss it logs is the
# batch-2B run's; a rank that fails (a missing --load file) or is killed
# ends the whole run with an error within a bounded time, never a hang; a
# program compiled without --data-parallel refuses to run under mpirun.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import safetensors_io  # noqa: E402

work = sys.argv[1]
B, RANKS, STEPS = 8, 2, 4
TRAINING = "optimizer=momentum lr=0.05 momentum=0.9 weight-decay=1e-4"
DATA = ("fashion-mnist" if os.path.exists(
    "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz") else
        "synthetic")
# mpirun: root needs permission; two ranks may exceed this machine's cores.
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
          str(RANKS)]
TIMEOUT = 120  # seconds: a hang fails the test instead of stalling CI


# Containers often forbid the cross-memory attach OpenMPI's shared-memory
# transport tries first.
ENV = dict(os.environ, OMPI_MCA_btl_vader_single_copy_mechanism="none")


def run(args, expect_ok=True, timeout=TIMEOUT):
    start = time.monotonic()
    done = subprocess.run(args, cwd=work, capture_output=True, text=True,
                          timeout=timeout, env=ENV)
    elapsed = time.monotonic() - start
    if expect_ok and done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}):\n"
                 f"{done.stdout}\n{done.stderr}")
    return done, elapsed


def compile_lenet(batch, name, *extra):
    run(["fluid-models", "lenet5", "--batch", str(batch), "-o",
         f"lenet{batch}.mlir"])
    run(["fluid-compile", f"lenet{batch}.mlir", "--backend", "cpu",
         "--training", TRAINING, "-o", name, "--quiet", *extra])


def train(program, save, mpi=False, extra=()):
    args = [f"./{program}", "--data", DATA, "--test-data", "none", "--steps",
            str(STEPS), "--log-every", "1", "--save", save, *extra]
    done, _ = run((MPIRUN if mpi else []) + args)
    return done


def compare(a_path, b_path, rel, abs_):
    """The largest |a - b| / (rel * max|b| + abs) over every tensor; the
    names must agree."""
    a = safetensors_io.load(os.path.join(work, a_path))
    b = safetensors_io.load(os.path.join(work, b_path))
    if sorted(a) != sorted(b):
        sys.exit(f"{a_path} and {b_path} hold different tensors")
    worst = 0.0
    for name in b:
        x, y = a[name].astype(np.float64), b[name].astype(np.float64)
        scale = rel * float(np.abs(y).max()) + abs_
        worst = max(worst, float(np.abs(x - y).max()) / scale)
    return worst


compile_lenet(B, "dp", "--data-parallel")
compile_lenet(B, "dp-each", "--data-parallel", "--bucket-mib", "0")
compile_lenet(2 * B, "one")
compile_lenet(B, "half")

parallel = train("dp", "parallel.safetensors", mpi=True)
each = train("dp-each", "each.safetensors", mpi=True)
single = train("one", "single.safetensors")
half = train("half", "half.safetensors")

worst = compare("parallel.safetensors", "single.safetensors", 1e-6, 1e-7)
print(f"2 ranks x batch {B} vs 1 process x batch {2 * B}: worst "
      f"{worst:.3g} of the tolerance")
assert worst <= 1.0, "the data-parallel run differs from batch 2B"
assert compare("each.safetensors", "parallel.safetensors", 1e-6, 1e-7) <= 1.0
# The check can fail: batch B alone trains elsewhere.
assert compare("half.safetensors", "single.safetensors", 1e-4, 0) > 1.0, \
    "batch B and batch 2B agree: the comparison cannot tell"

# Rank 0 alone logs: one header, one summary, STEPS loss lines; the loss of
# each step is the mean over both ranks' halves, the batch-2B run's.
def losses(text):
    return [float(x) for x in re.findall(r"^step \d+ .*?loss ([0-9.]+)",
                                         text, re.M)]


assert parallel.stdout.count("summary:") == 1, parallel.stdout
assert "data parallel over 2 ranks: batch 8 a rank, 16 a step" in \
    parallel.stdout, parallel.stdout
assert len(losses(parallel.stdout)) == STEPS, parallel.stdout
assert np.allclose(losses(parallel.stdout), losses(single.stdout),
                   rtol=0, atol=2e-4), (parallel.stdout, single.stdout)

# A rank that fails before its first all-reduce (rank 1 given a missing
# checkpoint) ends every rank, with rank 1's error.
failing = ["sh", "-c",
           'extra=""; [ "$OMPI_COMM_WORLD_RANK" = 1 ] && '
           'extra="--load missing.safetensors"; '
           f'exec ./dp --data {DATA} --test-data none --steps 100000 $extra']
done, elapsed = run(MPIRUN + failing, expect_ok=False)
print(f"failing rank: exit {done.returncode} after {elapsed:.1f} s")
assert done.returncode != 0
assert "dp[1]: error:" in done.stderr and "missing.safetensors" in \
    done.stderr, done.stderr

# A rank killed during training (SIGKILL after a second): mpirun ends the
# others, which would otherwise wait in their next all-reduce.
killed = ["sh", "-c",
          f'./dp --data synthetic --test-data none --steps 10000000 & '
          'pid=$!; if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then sleep 1; '
          'kill -9 $pid; fi; wait $pid']
done, elapsed = run(MPIRUN + killed, expect_ok=False)
print(f"killed rank: exit {done.returncode} after {elapsed:.1f} s")
assert done.returncode != 0

# A program compiled for one process refuses to run as several ranks.
done, _ = run(MPIRUN + ["./one", "--data", DATA, "--steps", "1"],
              expect_ok=False)
assert done.returncode != 0
assert "compiled without --data-parallel" in done.stderr, done.stderr
print("ok")
