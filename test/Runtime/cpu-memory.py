# RUN: %python %s %fluid_runtime_lib
"""Host memory for a program's temporaries (CpuMemory.h): fluid_cpu_allocate
gives 256-byte aligned, writable memory, NULL for 0 bytes, clean errors
for negative, absurd and unsatisfiable sizes; fluid_cpu_release accepts
NULL and refuses (with a message, no crash) pointers it did not hand out;
the process-wide counters rise and fall by the requested bytes, the peak
stays. FLUID_POISON_MEMORY=1 (read once per process, so checked in child
processes) fills new memory with 0xFF bytes: NaN as f32 and f64, -1 as
integers; any other value leaves it alone.
"""

import ctypes
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import cases  # noqa: E402
import fluidrt  # noqa: E402

HEADER = os.path.join(HERE, "..", "..", "runtime", "include", "fluid",
                      "runtime", "CpuMemory.h")
I64, VOID_P = ctypes.c_int64, ctypes.c_void_p


class Stats(ctypes.Structure):
    _fields_ = [("allocated_bytes", I64), ("peak_allocated_bytes", I64)]


def load(path):
    lib = fluidrt.load(path)
    lib.fluid_cpu_allocate.argtypes = [I64, ctypes.POINTER(VOID_P)]
    lib.fluid_cpu_allocate.restype = ctypes.c_int
    lib.fluid_cpu_release.argtypes = [VOID_P]
    lib.fluid_cpu_release.restype = None
    lib.fluid_cpu_get_memory_stats.argtypes = [ctypes.POINTER(Stats)]
    lib.fluid_cpu_get_memory_stats.restype = ctypes.c_int
    return lib


def allocate(lib, nbytes):
    """(status, pointer or None)."""
    out = VOID_P(12345)  # must be overwritten, also on failure
    status = lib.fluid_cpu_allocate(nbytes, ctypes.byref(out))
    return status, out.value


def stats(lib):
    s = Stats()
    fluidrt.check(lib, lib.fluid_cpu_get_memory_stats(ctypes.byref(s)))
    return s.allocated_bytes, s.peak_allocated_bytes


def child(path, nbytes):
    """Run with FLUID_POISON_MEMORY set by the parent: prints the bytes of
    fresh memory as hex, and its first elements as f32, f64 and i32."""
    lib = load(path)
    status, pointer = allocate(lib, nbytes)
    fluidrt.check(lib, status)
    data = ctypes.string_at(pointer, nbytes)
    print("distinct", sorted(set(data))[:4], "count", len(set(data)))
    print("f32", np.frombuffer(data[:16], np.float32).tolist())
    print("f64", np.frombuffer(data[:16], np.float64).tolist())
    print("i32", np.frombuffer(data[:16], np.int32).tolist())
    lib.fluid_cpu_release(pointer)
    assert lib.fluid_last_error() == b"", lib.fluid_last_error()


def run_child(path, environment, nbytes):
    env = dict(os.environ)
    env.pop("FLUID_POISON_MEMORY", None)
    env.update(environment)
    result = subprocess.run(
        # The suite's Python (scripts/test-sanitized.sh: a wrapper that
        # preloads ASan for the sanitized runtime), not necessarily this one.
        [os.environ.get("FLUID_TEST_PYTHON", sys.executable), __file__,
         "--child", path, str(nbytes)], env=env,
        capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} path/to/libfluid_runtime.so")
    path = sys.argv[1]
    lib = load(path)
    def header_matches_exports():
        with open(HEADER) as f:
            declared = set(re.findall(r"\b(fluid_cpu_\w+)\s*\(", f.read()))
        assert declared == {"fluid_cpu_allocate", "fluid_cpu_release",
                            "fluid_cpu_get_memory_stats"}, declared
        missing = sorted(n for n in declared if not hasattr(lib, n))
        assert not missing, f"declared but not exported: {missing}"
    cases.named("CpuMemory.h's entry points are exported", header_matches_exports)

    def aligned_and_writable():
        before = stats(lib)
        sizes = [1, 3, 255, 256, 257, 1000, 1 << 20]
        pointers = []
        for nbytes in sizes:
            status, pointer = allocate(lib, nbytes)
            fluidrt.expect_status(lib, status, fluidrt.OK)
            assert pointer and pointer % 256 == 0, (nbytes, hex(pointer))
            ctypes.memset(pointer, 0x5A, nbytes)
            assert ctypes.string_at(pointer, nbytes) == b"\x5a" * nbytes
            pointers.append(pointer)
        assert len(set(pointers)) == len(pointers), pointers
        during = stats(lib)
        assert during[0] == before[0] + sum(sizes), (before, during)
        assert during[1] >= during[0], during
        for pointer in pointers:
            lib.fluid_cpu_release(pointer)
            assert lib.fluid_last_error() == b"", lib.fluid_last_error()
        after = stats(lib)
        assert after[0] == before[0], (before, after)
        assert after[1] == during[1], (during, after)
        return f"peak {after[1]} bytes"
    cases.named("allocations are 256-byte aligned, writable and counted",
                aligned_and_writable)

    def zero_bytes_is_null():
        before = stats(lib)
        status, pointer = allocate(lib, 0)
        fluidrt.expect_status(lib, status, fluidrt.OK)
        assert pointer is None, hex(pointer)
        assert stats(lib) == before
    cases.named("zero bytes give NULL", zero_bytes_is_null)

    def bad_sizes_are_errors():
        for nbytes, expected, fragment in [
                (-1, fluidrt.INVALID_ARGUMENT, "bytes must be >= 0, got -1"),
                (-(1 << 62), fluidrt.INVALID_ARGUMENT, "bytes must be >= 0"),
                ((1 << 63) - 1, fluidrt.INVALID_ARGUMENT,
                 "more than any address space holds"),
                ((1 << 47) + 1, fluidrt.INVALID_ARGUMENT,
                 "more than any address space holds"),
                (1 << 46, fluidrt.OUT_OF_MEMORY, "out of host memory")]:
            status, pointer = allocate(lib, nbytes)
            fluidrt.expect_status(lib, status, expected,
                                  ["fluid_cpu_allocate: ", fragment])
            assert pointer is None, (nbytes, pointer)
        status = lib.fluid_cpu_allocate(16, None)
        fluidrt.expect_status(lib, status, fluidrt.INVALID_ARGUMENT,
                              ["out is null"])
        status = lib.fluid_cpu_get_memory_stats(None)
        fluidrt.expect_status(lib, status, fluidrt.INVALID_ARGUMENT,
                              ["out is null"])
    cases.named("negative, absurd and unsatisfiable sizes are clean errors",
                bad_sizes_are_errors)

    def release_checks_its_argument():
        allocate(lib, -1)  # leaves an error message
        lib.fluid_cpu_release(None)
        assert lib.fluid_last_error() == b"", lib.fluid_last_error()
        before = stats(lib)
        foreign = np.zeros(64, np.uint8)
        lib.fluid_cpu_release(foreign.ctypes.data)
        message = lib.fluid_last_error().decode()
        assert "fluid_cpu_release: pointer" in message and \
            "was not allocated by fluid_cpu_allocate" in message, message
        status, pointer = allocate(lib, 64)
        fluidrt.check(lib, status)
        lib.fluid_cpu_release(pointer)
        lib.fluid_cpu_release(pointer)
        message = lib.fluid_last_error().decode()
        assert "already released" in message, message
        assert stats(lib)[0] == before[0]
        assert not foreign.any()
        return message
    cases.named("release takes NULL and refuses pointers it did not hand out",
                release_checks_its_argument)

    def poisoning():
        nbytes = 1 << 20  # fresh pages: zeros unless poisoned
        poisoned = run_child(path, {"FLUID_POISON_MEMORY": "1"}, nbytes)
        expected = ["distinct [255] count 1",
                    "f32 [nan, nan, nan, nan]", "f64 [nan, nan]",
                    "i32 [-1, -1, -1, -1]"]
        assert poisoned.split("\n")[:4] == expected, poisoned
        for value in [None, "0", "yes"]:
            environment = {} if value is None else {
                "FLUID_POISON_MEMORY": value}
            plain = run_child(path, environment, nbytes)
            assert not plain.startswith("distinct [255] count 1"), \
                (value, plain)
        small = run_child(path, {"FLUID_POISON_MEMORY": "1"}, 24)
        assert small.startswith("distinct [255] count 1"), small
    cases.named("FLUID_POISON_MEMORY=1 fills new memory with 0xFF", poisoning)

    sys.exit(cases.main())


if __name__ == "__main__":
    main()
