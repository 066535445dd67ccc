#!/usr/bin/env python3
"""expect_json.py [--records N] [--positive FIELD]... [--per-protocol] [--map] COMMAND...: runs a `transit bench ... --json` command and
passes when it exits with status 0, every line of its standard output is a JSON object (parsed by
Python's json module, which refuses NaN/Infinity only when told to: so are we), each has the
fields API.md requires with the right types (inter_node_messages never above messages_sent, and 0
on a single node), and each says verified: true. --records N also requires exactly N lines.
--positive FIELD requires a kernel's own field on every line, a number above 0.
--per-protocol (bench vector, halo) also requires API.md's one object per measured configuration:
`protocol` and `chosen` strings on every line, no `results` array, and no configuration (protocol,
region_bytes, regions) twice; a sweep's summary line says "summary": true.
--map checks `transit map --json` instead: API.md's map fields, at most ceil(objects / pes)
objects on a PE, and with instances, shared_links 0 (the instances share no link). Standard error
is shown but not judged (notes, progress).
"""
import json
import subprocess
import sys

REQUIRED = {
    "kernel": str, "backend": str, "pes": int, "scheme": str, "grid": str, "item_bytes": int,
    "items_per_pe": (int, float), "buffer_items": int, "seconds": (int, float),
    "items_per_second_per_pe": (int, float), "messages_sent": int, "bytes_sent": int, "verified": bool,
    "nodes": int, "inter_node_messages": int,
}
REQUIRED_MAP = {
    "mapper": str, "pattern": str, "objects": int, "physical": str, "pes": int, "instances": int,
    "hop_bytes": int, "average_hops": (int, float), "dilation": int, "max_link_bytes": int,
    "max_objects_per_pe": int, "seconds": (int, float),
}


def bench_verdicts(record):
    """What a bench record must say beyond its fields' types."""
    failures = []
    inter, sent, nodes = record.get("inter_node_messages"), record.get("messages_sent"), record.get("nodes")
    if isinstance(inter, int) and isinstance(sent, int) and inter > sent:
        failures.append(f"inter_node_messages {inter} > messages_sent {sent}")
    if nodes == 1 and inter not in (0, None):
        failures.append(f"inter_node_messages {inter} on a single node")
    if record.get("verified") is not True:
        failures.append(f"verified is {record.get('verified')!r}")
    return failures


def map_verdicts(record):
    """What a map record must say beyond its fields' types (which must be right first)."""
    failures = []
    cap = -(-record["objects"] // record["pes"])
    if record["max_objects_per_pe"] > cap:
        failures.append(f"max_objects_per_pe {record['max_objects_per_pe']} above ceil(objects/pes) = {cap}")
    if record["instances"] > 1 and record.get("shared_links") != 0:
        failures.append(f"shared_links is {record.get('shared_links')!r}, expected 0")
    return failures


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def main():
    args = sys.argv[1:]
    records = None
    if args[:1] == ["--records"]:
        records, args = int(args[1]), args[2:]
    positive = []
    while args[:1] == ["--positive"]:
        positive, args = positive + [args[1]], args[2:]
    per_protocol = args[:1] == ["--per-protocol"]
    if per_protocol:
        args = args[1:]
    required, verdicts = REQUIRED, bench_verdicts
    if args[:1] == ["--map"]:
        required, verdicts, args = REQUIRED_MAP, map_verdicts, args[1:]
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
    configurations = set()
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line, parse_constant=refuse_constant)
        except ValueError as e:
            failures.append(f"line {number} is not JSON ({e}): {line}")
            continue
        if not isinstance(record, dict):
            failures.append(f"line {number} is not a JSON object")
            continue
        typed = True
        for field, kind in required.items():
            if field not in record:
                failures.append(f"line {number}: no field {field}")
                typed = False
            elif isinstance(record[field], bool) != (kind is bool) or not isinstance(record[field], kind):
                failures.append(f"line {number}: {field} = {record[field]!r} is not of type {kind}")
                typed = False
        if typed or verdicts is bench_verdicts:
            failures.extend(f"line {number}: {f}" for f in verdicts(record))
        for field in positive:
            value = record.get(field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                failures.append(f"line {number}: {field} = {value!r}, expected a number above 0")
        if per_protocol:
            for field in ("protocol", "chosen"):
                if not isinstance(record.get(field), str):
                    failures.append(f"line {number}: {field} = {record.get(field)!r}, expected a string")
            if "results" in record:
                failures.append(f"line {number}: a results array, expected one object per configuration")
            key = (record.get("protocol"), record.get("region_bytes"), record.get("regions"), record.get("summary"))
            if key in configurations:
                failures.append(f"line {number}: configuration {key} printed twice")
            configurations.add(key)
    for failure in failures:
        print(f"expect_json: {failure}")
    if failures:
        sys.exit(1)
    print(f"expect_json: {len(lines)} {'map' if verdicts is map_verdicts else 'verified'} JSON records")


if __name__ == "__main__":
    main()
