#!/usr/bin/env python3
"""What bench/graph500/run.sh and sim.sh read from the reference's output.

    report.py check STDOUT STDERR STATUS PROGRAM [--skip-validation]
        Judges one run of graph500_reference_bfs or graph500_reference_bfs_sssp (PROGRAM) as the
        reference does, and stricter: exit status 0, no "Validation failed", results printed
        (the reference prints "No results printed for invalid run." and exits 0 when a root
        failed), NBFS 64, every BFS root (and SSSP root) validated ("Validating BFS k" for each;
        --skip-validation: none, and the validation times -1). Prints one JSON line of what the run
        measured (scale, nbfs, construction_time, bfs_teps, sssp_teps, ...); on failure, the
        reason on stderr and exit status 1.
    report.py table RESULTS.jsonl [--title TEXT]
        The markdown table of a comparison: per rank count, the median over the sittings of each
        build's harmonic-mean TEPS (BFS, SSSP) and construction time, and how much faster transit
        is (TEPS transit/AML, construction time AML/transit: above 1, transit is ahead).
"""
import json
import re
import statistics
import sys

NBFS = 64


def fields(stdout):
    """The reference's result lines, 'name: value' (the harmonic means carry a '!')."""
    found = {}
    for line in stdout.splitlines():
        match = re.match(r"^([A-Za-z_ ]+?):\s+!?\s*(\S+)\s*$", line)
        if match:
            found[" ".join(match.group(1).split())] = match.group(2)  # "bfs  min_time" -> "bfs min_time"
    return found


def check(argv):
    stdout_path, stderr_path, status, program = argv[:4]
    skip_validation = "--skip-validation" in argv[4:]
    stdout = open(stdout_path, errors="replace").read()
    stderr = open(stderr_path, errors="replace").read()
    sssp = program.endswith("bfs_sssp")

    def fail(reason):
        print(f"{program}: {reason}", file=sys.stderr)
        sys.exit(1)

    if status != "0":
        fail(f"exit status {status}" + (" (timed out)" if status == "124" else ""))
    for marker in ("Validation failed", "No results printed for invalid run"):
        if marker in stdout or marker in stderr:
            fail(f"the reference's validation failed: '{marker}'")
    result = fields(stdout)
    if "NBFS" not in result:
        fail("no results printed (no 'NBFS:' line)")
    if int(result["NBFS"]) != NBFS:
        fail(f"NBFS: got {result['NBFS']}, expected {NBFS}")
    kinds = ["bfs", "sssp"] if sssp else ["bfs"]
    for kind in kinds:
        if f"{kind} harmonic_mean_TEPS" not in result:
            fail(f"no '{kind} harmonic_mean_TEPS' line")
        validated = len(re.findall(rf"^Validating {kind.upper()} [0-9]+$", stderr, re.M))
        mean_validate = float(result[f"{kind} mean_validate"])
        if skip_validation:
            if validated or mean_validate != -1:
                fail(f"{kind}: validated {validated} roots with SKIP_VALIDATION set")
        elif validated != NBFS or mean_validate < 0:
            fail(f"{kind}: validated {validated} roots, expected {NBFS}")
    record = {"scale": int(result["SCALE"]), "edgefactor": int(result["edgefactor"]),
              "ranks": int(result["num_mpi_processes"]), "nbfs": int(result["NBFS"]),
              "validated": not skip_validation,
              "graph_generation": float(result["graph_generation"]),
              "construction_time": float(result["construction_time"])}
    for kind in kinds:
        record[f"{kind}_teps"] = float(result[f"{kind} harmonic_mean_TEPS"])
        record[f"{kind}_mean_time"] = float(result[f"{kind} mean_time"])
    print(json.dumps(record, separators=(",", ":")))


def table(argv):
    path = argv[0]
    title = argv[argv.index("--title") + 1] if "--title" in argv else None
    runs = [json.loads(line) for line in open(path) if line.strip()]
    if not runs:
        print(f"report.py table: no runs in {path}", file=sys.stderr)
        sys.exit(1)
    by = {}
    for run in runs:
        by.setdefault((run["ranks"], run["build"]), []).append(run)
    metrics = [("bfs_teps", "BFS TEPS"), ("sssp_teps", "SSSP TEPS"), ("construction_time", "construction s")]
    metrics = [m for m in metrics if all(m[0] in run for run in runs)]
    if title:
        print(title)
        print()
    head = ["ranks", "sittings"]
    for key, name in metrics:
        # Ratios say how much faster transit is: TEPS transit/AML, a time AML/transit.
        head += [f"{name} AML", f"{name} transit", "AML/transit" if key.endswith("_time") else "transit/AML"]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---:" for _ in head) + "|")
    for ranks in sorted({r for r, _ in by}):
        aml, transit = by.get((ranks, "aml"), []), by.get((ranks, "transit"), [])
        row = [str(ranks), f"{len(aml)}+{len(transit)}"]
        for key, _ in metrics:
            a = statistics.median(run[key] for run in aml) if aml else None
            t = statistics.median(run[key] for run in transit) if transit else None
            row += [f"{a:.4g}" if a is not None else "-", f"{t:.4g}" if t is not None else "-"]
            ratio = (a / t if key.endswith("_time") else t / a) if a and t else None
            row.append(f"{ratio:.2f}x" if ratio is not None else "-")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "check":
        check(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "table":
        table(sys.argv[2:])
    else:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
