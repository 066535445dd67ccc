#!/usr/bin/env python3
"""Turns `transit bench --json` output into PNG plots, as thesis figures 4.2 to 4.5 do: the rate
(items per second per PE) against the number of items per PE, one line per scheme and grid. And
`transit calibrate --json` output into the streaming bandwidth curve of thesis figure 2.5b.

Usage: tools/plot.py [--out DIR] [--x FIELD] [FILE ...]    (no FILE: read standard input)

One plot per (kernel, item size, backend, PE count), named KERNEL-<B>B-<backend>-<P>pes.png, and
one per calibration, named calibration-<backend>-<P>pes.png (bandwidth against message size, a
line per kind of link, with the 50%, 75% and 90% marks of the peak that buffer sizes come from).
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
    """Bench run records and calibration records, in input order."""
    streams = [open(p, encoding="utf-8") for p in paths] if paths else [sys.stdin]
    records, calibrations = [], []
    for stream in streams:
        for line in stream:
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if record.get("kind") == "calibration" and "links" in record:
                calibrations.append(record)
            elif "kernel" in record and "items_per_second_per_pe" in record:
                records.append(record)
    return records, calibrations


def plot_calibration(record, out_dir):
    """Thesis figure 2.5b: streaming bandwidth against message size, one line per kind of link."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, link in sorted(record["links"].items()):
        if not link.get("measured") or not link.get("curve"):
            continue
        xs = [p["message_bytes"] for p in link["curve"]]
        ys = [p["bytes_per_second"] / 1e6 for p in link["curve"]]
        ax.plot(xs, ys, marker="o", label=f"{name}-node (PEs {link['from_pe']} and {link['to_pe']})")
    peak = record.get("peak_bytes_per_second", 0) / 1e6
    for share, style in (("50", ":"), ("75", "--"), ("90", ":")):
        if peak > 0:
            ax.axhline(peak * int(share) / 100, color="gray", linestyle=style, linewidth=0.8)
        size = record.get("buffer_bytes", {}).get(share)
        if size:
            ax.axvline(size, color="gray", linestyle=style, linewidth=0.8)
    title = (f"streaming bandwidth, {record['backend']} backend, {record['pes']} PEs ({record.get('host', '?')}); "
             f"75% of peak at {record.get('buffer_bytes', {}).get('75', '?')} B")
    return save_log_plot(fig, ax, "message payload (bytes)", "MB/s, each way", title,
                         os.path.join(out_dir, f"calibration-{record['backend']}-{record['pes']}pes.png"))


def save_log_plot(fig, ax, x_label, y_label, title, path):
    """Log-log axes with labels, grid and legend; writes the PNG and returns its path."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def label_of(record):
    scheme, grid = record.get("scheme", "?"), record.get("grid", "?")
    if scheme == "none":
        return "none (one message per item)"
    if scheme == "grid":
        return f"grid {grid}"
    return f"{scheme} {grid}"


def plot_group(key, records, x_field, out_dir):
    kernel, item_bytes, backend, pes = key
    series = defaultdict(lambda: defaultdict(list))
    for r in records:
        series[label_of(r)][r[x_field]].append(r["items_per_second_per_pe"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label in sorted(series, key=lambda s: (not s.startswith("none"), s)):
        points = sorted(series[label].items())
        xs = [x for x, _ in points]
        ax.plot(xs, [statistics.median(v) for _, v in points], marker="o", label=label)
        ax.fill_between(xs, [min(v) for _, v in points], [max(v) for _, v in points], alpha=0.2)
    return save_log_plot(fig, ax, x_field.replace("_", " "), "items per second per PE",
                         f"{kernel}, {item_bytes}-byte items, {backend} backend, {pes} PEs",
                         os.path.join(out_dir, f"{kernel}-{item_bytes}B-{backend}-{pes}pes.png"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="files of bench --json output (default: stdin)")
    parser.add_argument("--out", default=".", help="directory for the PNG files (default: .)")
    parser.add_argument("--x", default="items_per_pe", help="field for the x axis (default: items_per_pe)")
    args = parser.parse_args()

    records, calibrations = read_records(args.files)
    if not records and not calibrations:
        print("plot.py: no bench or calibration JSON records in the input", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    for record in calibrations:
        print("wrote", plot_calibration(record, args.out))
    if not records:
        return 0
    missing = [r for r in records if args.x not in r]
    if missing:
        print(f"plot.py: --x {args.x}: {len(missing)} records lack that field", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    groups = defaultdict(list)
    for r in records:
        groups[(r["kernel"], r["item_bytes"], r["backend"], r["pes"])].append(r)
    for key in sorted(groups):
        print("wrote", plot_group(key, groups[key], args.x, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
