"""Runs the cases of a test file through two commands and checks that both
reject each case with the same message.

usage: same-rules.py CASES -- COMMAND1 [ARG]... -- COMMAND2 [ARG]...

Each line "CASE: [as=BYTES] FLAGS" of the file CASES is run as COMMAND1
FLAGS and as COMMAND2 FLAGS (FLAGS split as a shell would; as=BYTES limits
the address space, RLIMIT_AS, to BYTES). Each command must fail with an
exit status of 1 or 2 (not a crash) and print exactly one line on stderr,
"<program>: error: <message>", and both messages must be the same (host
memory figures, which differ between two processes, aside). Prints
"FLAGS: <message>" for each case, for FileCheck.
"""
import os
import re
import resource
import shlex
import subprocess
import sys


def run(command, limit):
    def restrict():
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    result = subprocess.run(command, capture_output=True, text=True,
                            preexec_fn=restrict, timeout=120)
    lines = result.stderr.splitlines()
    program = os.path.basename(command[0])
    if result.returncode not in (1, 2) or len(lines) != 1 or \
            not lines[0].startswith(program + ": error: "):
        sys.exit(f"{shlex.join(command)}: exit status {result.returncode}, "
                 f"stderr:\n{result.stderr}")
    return lines[0][len(program + ": error: "):]


def same(message):
    return re.sub(r"but \d+ bytes are available",
                  "but N bytes are available", message)


cases_file = sys.argv[1]
rest = sys.argv[2:]
if not rest or rest[0] != "--" or rest[1:].count("--") != 1:
    sys.exit(__doc__)
split = rest.index("--", 1)
first, second = rest[1:split], rest[split + 1:]

with open(cases_file) as f:
    cases = [line.split("CASE:", 1)[1].strip() for line in f
             if "CASE:" in line and "RUN:" not in line]
for case in cases:
    flags = shlex.split(case)
    limit = 0
    if flags and flags[0].startswith("as="):
        limit = int(flags.pop(0)[3:])
    one = run(first + flags, limit)
    two = run(second + flags, limit)
    if same(one) != same(two):
        sys.exit(f"{case}: the messages differ:\n  {one}\n  {two}")
    print(f"{case}: {one}")
