"""The case registry and runner of the runtime's Python tests.

A test script decorates each check with `@case` (or registers it with
`named(name, function)`; a case may return a note for its PASS line) and
ends with
`sys.exit(cases.main())`: every case runs, even after one fails, with a
PASS or FAIL line each and "N of M cases passed" last; the exit status is 1
if any case failed (or none was registered), else 0.
"""

import threading
import time

CASES = []


def case(function):
    CASES.append(function)
    return function


def named(name, function):
    """Registers `function` as a case called `name` (for cases made in a
    loop, or named by a sentence)."""
    function.case_name = name
    CASES.append(function)
    return function


def main(cleanup=None):
    """Run every registered case; `cleanup()`, if given, runs afterwards
    however the cases end."""
    failures = 0
    start = time.monotonic()
    try:
        for function in CASES:
            case_start = time.monotonic()
            name = getattr(function, "case_name", function.__name__)
            try:
                note = function()
                note = f"{note}; " if note else ""
                print(f"PASS {name} "
                      f"({note}{time.monotonic() - case_start:.2f} s)")
            except Exception as error:  # report every case, then fail
                failures += 1
                print(f"FAIL {name}: {type(error).__name__}: {error}")
    finally:
        if cleanup is not None:
            cleanup()
    print(f"{len(CASES) - failures} of {len(CASES)} cases passed in "
          f"{time.monotonic() - start:.1f} s")
    if not CASES:
        print("FAIL: no cases registered")
        return 1
    return 1 if failures else 0


def in_threads(worker, count=8):
    """Run worker(0), ..., worker(count - 1) at once; re-raise their errors."""
    failures = []

    def run(number):
        try:
            worker(number)
        except Exception as error:  # reported by the calling thread
            failures.append(error)

    threads = [threading.Thread(target=run, args=(number,))
               for number in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
