#!/usr/bin/env python3
"""bench/sim_record.py OUTPUT [FIELD=VALUE ...]: the bench record of one simulated run, for the
bench/sim_*.sh and simulate_scale.sh sweeps. OUTPUT holds what `/usr/bin/time -f "peak_kb %M"
scripts/simulate ...` printed; the last JSON line is the record. Prints it on one line with the
FIELD=VALUE pairs (strings) and rss_mb (the simulator's peak resident set) added; with no record,
exits 1 showing the end of OUTPUT (a run that failed or was stopped)."""
import json
import sys

path, extra = sys.argv[1], sys.argv[2:]
record, peak = None, None
for line in open(path, encoding="utf-8", errors="replace"):
    if line.startswith("{"):
        record = json.loads(line)
    elif line.startswith("peak_kb "):
        peak = int(line.split()[1])
labels = dict(pair.split("=", 1) for pair in extra)
if record is None:
    sys.exit(f"{' '.join(extra)}: no record\n" + open(path, encoding="utf-8", errors="replace").read()[-2000:])
record.update(labels)
record["rss_mb"] = round(peak / 1024) if peak else None
print(json.dumps(record, separators=(",", ":")), flush=True)
