"""Runs a command, prints its stdout and stderr (in that order), and fails
unless it exited with the given code.

usage: expect-exit.py CODE COMMAND [ARG]...
"""
import subprocess
import sys

code = int(sys.argv[1])
result = subprocess.run(sys.argv[2:], capture_output=True, text=True)
sys.stdout.write(result.stdout)
sys.stdout.write(result.stderr)
if result.returncode != code:
    sys.exit("expected exit code %d, got %d" % (code, result.returncode))
