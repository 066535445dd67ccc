#!/usr/bin/env python3
"""check_output.py KEYS COMMAND...: runs COMMAND (transit app bfs) and checks that its stdout has
the reference's result lines: the labels of KEYS (recorded from graph500_reference_bfs's stdout,
its first 32 columns), in that order, each value starting at column 32 as the reference prints it,
and a numeric value on each, so that a parser of the reference's output reads transit's."""
import subprocess
import sys

keys = [line.rstrip("\n") for line in open(sys.argv[1]) if line.strip()]
run = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
print(run.stdout, end="")
if run.returncode != 0:
    sys.exit(f"check_output: exit status {run.returncode}\n{run.stderr}")
lines = [line for line in run.stdout.splitlines() if line.strip()]
if len(lines) != len(keys):
    sys.exit(f"check_output: {len(lines)} result lines, the reference prints {len(keys)}")
for line, key in zip(lines, keys):
    if line[:32].rstrip() != key or line[32:33] in ("", " "):
        sys.exit(f"check_output: line {line!r}, expected the label {key!r} and a value from column 32")
    float(line[32:])  # every value a number
print(f"check_output: the reference's {len(keys)} result lines, labels and columns alike")
