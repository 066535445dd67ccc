#!/usr/bin/env python3
"""Turns `transit bench --json` output into PNG plots, as thesis figures 4.2 to 4.5 do: the rate
(items per second per PE) against the number of items per PE, one line per scheme and grid.

Usage: tools/plot.py [--out DIR] [--x FIELD] [FILE ...]    (no FILE: read standard input)

One plot per (kernel, item size, backend, PE count), named KERNEL-<B>B-<backend>-<P>pes.png; records
of an emulated network (bench/cluster.sh adds "network") get their own plots, named
KERNEL-<B>B-<backend>-<P>pes-<network>.png and titled with it. Records with a "kind" (the
network's measurements, reference figures) are not runs and are left out.
Repeated runs of one configuration are drawn as their median, with the spread as a band. Lines
that are not JSON objects (text output, notes) are skipped, so whole logs can be piped in.
"""
import argparse
import json
import os
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


def read_records(paths):
    streams = [open(p, encoding="utf-8") for p in paths] if paths else [sys.stdin]
    records = []
    for stream in streams:
        for line in stream:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "kernel" in record and "items_per_second_per_pe" in record and "kind" not in record:
                records.append(record)
    return records


def label_of(record):
    scheme, grid = record.get("scheme", "?"), record.get("grid", "?")
    if scheme == "none":
        return "none (one message per item)"
    if scheme == "grid":
        return f"grid {grid}"
    return f"{scheme} {grid}"


def plot_group(key, records, x_field, out_dir):
    kernel, item_bytes, backend, pes, network = key
    series = defaultdict(lambda: defaultdict(list))
    for r in records:
        series[label_of(r)][r[x_field]].append(r["items_per_second_per_pe"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label in sorted(series, key=lambda s: (not s.startswith("none"), s)):
        points = sorted(series[label].items())
        xs = [x for x, _ in points]
        ax.plot(xs, [statistics.median(v) for _, v in points], marker="o", label=label)
        ax.fill_between(xs, [min(v) for _, v in points], [max(v) for _, v in points], alpha=0.2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(x_field.replace("_", " "))
    ax.set_ylabel("items per second per PE")
    title = f"{kernel}, {item_bytes}-byte items, {backend} backend, {pes} PEs"
    ax.set_title(title + (f"\n{network}" if network else ""), fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    suffix = ("-" + "".join(c if c.isalnum() else "-" for c in network).strip("-")) if network else ""
    path = os.path.join(out_dir, f"{kernel}-{item_bytes}B-{backend}-{pes}pes{suffix}.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="files of bench --json output (default: stdin)")
    parser.add_argument("--out", default=".", help="directory for the PNG files (default: .)")
    parser.add_argument("--x", default="items_per_pe", help="field for the x axis (default: items_per_pe)")
    args = parser.parse_args()

    records = read_records(args.files)
    if not records:
        print("plot.py: no bench JSON records in the input", file=sys.stderr)
        return 1
    missing = [r for r in records if args.x not in r]
    if missing:
        print(f"plot.py: --x {args.x}: {len(missing)} records lack that field", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    groups = defaultdict(list)
    for r in records:
        groups[(r["kernel"], r["item_bytes"], r["backend"], r["pes"], r.get("network", ""))].append(r)
    for key in sorted(groups):
        print("wrote", plot_group(key, groups[key], args.x, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
