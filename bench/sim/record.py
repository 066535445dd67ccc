#!/usr/bin/env python3
"""bench/sim/record.py OUTPUT [--all] [--name NAME] [FIELD=VALUE | FIELD:=JSON | MEASURED ...]:
the bench record of one simulated run, for the sweeps of bench/sim/ (lib.sh's sim_record calls it).

OUTPUT holds the run's standard output and OUTPUT.err, when it exists, its standard error, as
lib.sh's sim_run writes them: `/usr/bin/time -f "peak_kb %M" scripts/simulate ...`. The last JSON
line of OUTPUT is the record (with --all, every JSON line is one, each printed). Each is printed on
one line with the arguments applied in order:
  FIELD=VALUE   a string field
  FIELD:=JSON   a field of that JSON value (a number, true, null ...)
  MEASURED      rss_mb (the simulator's peak resident set, MB, from the peak_kb line), or
                simulated_seconds / wall_seconds (from scripts/simulate --program's line, when the
                record has none), at that place; rss_mb comes last when it is not named.
With no record, exits 1 naming NAME and the fields, and showing the end of the run's output (a run
that failed or was stopped)."""
import json
import os
import sys

MEASURED = ("rss_mb", "simulated_seconds", "wall_seconds")

args = sys.argv[1:]
path = args.pop(0)
every = "--all" in args
args = [a for a in args if a != "--all"]
name = None
if "--name" in args:
    at = args.index("--name")
    name = args[at + 1]
    del args[at:at + 2]


def lines(file):
    return open(file, encoding="utf-8", errors="replace").read().splitlines() if os.path.exists(file) else []


out, err = lines(path), lines(path + ".err")
records = [json.loads(line) for line in out if line.startswith("{")]
measured = {}
for line in out + err:
    words = line.split()
    if line.startswith("peak_kb ") and len(words) == 2:
        measured["rss_mb"] = round(int(words[1]) / 1024) if int(words[1]) else None
    elif line.startswith("simulated_seconds ") and len(words) == 4:
        measured["simulated_seconds"], measured["wall_seconds"] = float(words[1]), float(words[3])

if not records:
    # SMPI's warnings about sleep_for repeat by the thousand: left out of the tail.
    tail = "\n".join(line for line in out + err if "sleep_for" not in line)[-2000:]
    sys.exit(f"{name + ': ' if name else ''}{' '.join(args)}: no record\n{tail}")
for record in records if every else records[-1:]:
    for arg in args:
        if arg in MEASURED:
            if arg == "rss_mb" or arg not in record:
                record[arg] = measured.get(arg)
        elif ":=" in arg and arg.index(":=") + 1 == arg.index("="):
            field, value = arg.split(":=", 1)
            record[field] = json.loads(value)
        else:
            field, value = arg.split("=", 1)
            record[field] = value
    if "rss_mb" not in args:
        record["rss_mb"] = measured.get("rss_mb")
    print(json.dumps(record, separators=(",", ":")), flush=True)
