#!/usr/bin/env python3
"""Checks bench/fused-kernels.py --bytes against the program's own words.

usage: partial-reads.py PROGRAM.cpp BYTES.txt

BYTES.txt holds two --bytes lines: the program as emitted, then with its
"elements read" comments removed. The difference must be, over every
launch's argument array that has such a comment, (elements - read) x the
element size of each input named there, with the elements and element
sizes taken from the program's tensor table (f0Tensors, through the
training step's references into it), and at least one
input must be read in part. Exit status 1 and a message otherwise.
"""

import re
import sys

SIZES = {"FLUID_F32": 4, "FLUID_F64": 8, "FLUID_F16": 2, "FLUID_BF16": 2,
         "FLUID_I64": 8, "FLUID_I32": 4, "FLUID_U8": 1}


def main():
    program, bytes_file = sys.argv[1:3]
    text = open(program).read()
    table = re.search(r"const TensorSpec f0Tensors\[\] = \{\n(.*?)\n\};",
                      text, re.S).group(1)
    entries = []
    for line in table.splitlines():
        m = re.match(r"\s*\{'\w', \d+, \d+, (FLUID_\w+), \d+, \{([0-9, ]*)\}\},"
                     r"\s*// (\w+)", line)
        if not m:
            sys.exit("partial-reads.py: unexpected tensor table line: " + line)
        elements = 1
        for d in m.group(2).split(","):
            if d.strip():
                elements *= int(d)
        entries.append((elements, SIZES[m.group(1)]))
    # The training step binds its names to table entries:
    # `fluid_tensor &b = T[i];`.
    run = text[text.index("fluid_status f0Run("):]
    run = run[:run.index("\n}\n")]
    refs = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"fluid_tensor &(\w+) = T\[(\d+)\];", run)}
    saved = 0
    partial_inputs = 0
    for m in re.finditer(r"fusedArgs\d+\[\] = \{([^}]*)\};  // elements read:"
                         r"([ 0-9:]*)\n", run):
        args = [a.strip().lstrip("&") for a in m.group(1).split(",")]
        for entry in m.group(2).split():
            index, read = (int(v) for v in entry.split(":"))
            elements, size = entries[refs[args[index]]]
            if not 0 <= read < elements:
                sys.exit("partial-reads.py: %s reads %d of %d elements"
                         % (args[index], read, elements))
            saved += (elements - read) * size
            partial_inputs += 1
    totals = [int(v) for v in re.findall(r"GB \((\d+) bytes\)",
                                         open(bytes_file).read())]
    if len(totals) != 2:
        sys.exit("partial-reads.py: expected two --bytes totals, got %s"
                 % totals)
    if partial_inputs == 0:
        sys.exit("partial-reads.py: no input read in part")
    if totals[1] - totals[0] != saved:
        sys.exit("partial-reads.py: --bytes counts %d and %d (difference %d); "
                 "the comments account for %d" % (totals[0], totals[1],
                                                  totals[1] - totals[0],
                                                  saved))
    print("partial-reads.py: %d inputs read in part, %d bytes fewer, as "
          "counted" % (partial_inputs, saved))


if __name__ == "__main__":
    main()
