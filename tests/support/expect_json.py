#!/usr/bin/env python3
"""expect_json.py [--records N] COMMAND...: runs a `transit bench ... --json` command and passes
when it exits with status 0, every line of its standard output is a JSON object (parsed by
Python's json module, which refuses NaN/Infinity only when told to: so are we), each has the
fields API.md requires with the right types, and each says verified: true. --records N also
requires exactly N lines. Standard error is shown but not judged (notes, progress).
"""
import json
import subprocess
import sys

REQUIRED = {
    "kernel": str, "backend": str, "pes": int, "scheme": str, "grid": str, "item_bytes": int,
    "items_per_pe": (int, float), "buffer_items": int, "seconds": (int, float),
    "items_per_second_per_pe": (int, float), "messages_sent": int, "bytes_sent": int, "verified": bool,
}


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def main():
    args = sys.argv[1:]
    records = None
    if args[:1] == ["--records"]:
        records, args = int(args[1]), args[2:]
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    failures = []
    if run.returncode != 0:
        failures.append(f"exit status {run.returncode}")
    lines = run.stdout.splitlines()
    if not lines:
        failures.append("no output")
    if records is not None and len(lines) != records:
        failures.append(f"{len(lines)} lines, expected {records}")
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line, parse_constant=refuse_constant)
        except ValueError as e:
            failures.append(f"line {number} is not JSON ({e}): {line}")
            continue
        if not isinstance(record, dict):
            failures.append(f"line {number} is not a JSON object")
            continue
        for field, kind in REQUIRED.items():
            if field not in record:
                failures.append(f"line {number}: no field {field}")
            elif isinstance(record[field], bool) != (kind is bool) or not isinstance(record[field], kind):
                failures.append(f"line {number}: {field} = {record[field]!r} is not of type {kind}")
        if record.get("verified") is not True:
            failures.append(f"line {number}: verified is {record.get('verified')!r}")
    for failure in failures:
        print(f"expect_json: {failure}")
    if failures:
        sys.exit(1)
    print(f"expect_json: {len(lines)} verified JSON records")


if __name__ == "__main__":
    main()
