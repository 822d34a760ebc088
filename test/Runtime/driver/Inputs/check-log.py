"""Checks a training log of the driver.

usage: check-log.py LOG [--falls FACTOR] [--accuracy-at-least PCT]
                        [--like OTHER_LOG --tolerance T]
--falls: the last logged loss is at most the first divided by FACTOR.
--accuracy-at-least: the last test accuracy is at least PCT.
--like: the same step lines as OTHER_LOG, losses within a relative T.
"""
import argparse
import re
import sys

STEP = re.compile(r"^step (\d+)  epoch (\d+)  loss (\S+)  lr (\S+)  "
                  r"\d+ images/s  peak [0-9.]+ MiB$")
ACCURACY = re.compile(r"^epoch (\d+)  test accuracy ([0-9.]+)%$")


def read(path):
    steps, accuracies = [], []
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("step "):
            match = STEP.match(line)
            if not match:
                sys.exit("malformed step line: " + line)
            steps.append((int(match[1]), int(match[2]), float(match[3]),
                          float(match[4])))
        elif ACCURACY.match(line):
            accuracies.append(float(ACCURACY.match(line)[2]))
    return steps, accuracies


parser = argparse.ArgumentParser()
parser.add_argument("log")
parser.add_argument("--falls", type=float)
parser.add_argument("--accuracy-at-least", type=float)
parser.add_argument("--like")
parser.add_argument("--tolerance", type=float, default=0.0)
args = parser.parse_args()

steps, accuracies = read(args.log)
if not steps:
    sys.exit("no step lines in " + args.log)
if args.falls is not None:
    first, last = steps[0][2], steps[-1][2]
    if not last * args.falls <= first:
        sys.exit("the loss went from %g to %g, not down %gx" %
                 (first, last, args.falls))
if args.accuracy_at_least is not None:
    if not accuracies or accuracies[-1] < args.accuracy_at_least:
        sys.exit("test accuracies %s, want at least %g at the end" %
                 (accuracies, args.accuracy_at_least))
if args.like:
    other, _ = read(args.like)
    if [s[:2] for s in steps] != [s[:2] for s in other]:
        sys.exit("the logs have different steps")
    for mine, theirs in zip(steps, other):
        for a, b in ((mine[2], theirs[2]), (mine[3], theirs[3])):
            if abs(a - b) > args.tolerance * max(abs(a), abs(b), 1e-12):
                sys.exit("step %d: %g vs %g" % (mine[0], a, b))
print("ok: %d step lines, accuracies %s" % (len(steps), accuracies))
