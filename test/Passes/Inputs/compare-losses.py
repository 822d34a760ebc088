"""usage: compare-losses.py TOLERANCE COUNT REFERENCE OTHER...

Each file holds fluid-run --repeat output ('run K: output #0: [] f32
values: L') or an executable's log ('step K ... loss L'); the first COUNT
losses of every OTHER must be within TOLERANCE (relative) of REFERENCE's.
Exits non-zero, naming the step, otherwise."""

import re
import sys


def losses(path):
    text = open(path).read()
    found = re.findall(r"^(?:run \d+: )?output #0: \[\] f32  values: "
                       r"([-0-9.eE+]+)", text, re.M)
    if not found:
        found = re.findall(r"^step \d+ .*?loss ([-0-9.eE+]+|nan)", text, re.M)
    return [float(v) for v in found]


def main():
    tolerance, count = float(sys.argv[1]), int(sys.argv[2])
    reference = losses(sys.argv[3])
    if len(reference) < count:
        sys.exit(f"{sys.argv[3]}: {len(reference)} losses, need {count}")
    for path in sys.argv[4:]:
        other = losses(path)
        if len(other) < count:
            sys.exit(f"{path}: {len(other)} losses, need {count}")
        for k in range(count):
            a, b = reference[k], other[k]
            if not abs(a - b) <= tolerance * abs(a):
                sys.exit(f"{path}: step {k + 1}: loss {b} against {a}, "
                         f"tolerance {tolerance} relative")
        print(f"{path}: {count} losses within {tolerance} of {sys.argv[3]}")


if __name__ == "__main__":
    main()
