#!/usr/bin/env python3
"""Turns `transit bench --json`, `transit calibrate --json` and `transit map --json` output into PNG plots.

Usage: tools/plot.py [--out DIR] [--x FIELD] [FILE ...]    (no FILE: read standard input)
       tools/plot.py --protocols [--out DIR] FILE          (a profile file, or calibrate protocols --json)

bench: as thesis figures 4.2 to 4.5 do, the rate (items per second per PE) against the number of
items per PE, one line per scheme and grid. One plot per (kernel, item size, backend, PE count),
named KERNEL-<B>B-<backend>-<P>pes.png; records of an emulated network (bench/cluster.sh adds
"network") get their own plots, named KERNEL-<B>B-<backend>-<P>pes-<network>.png and titled with
it. Records with a "kind" (the network's measurements, reference figures) are not runs and are
left out. Repeated runs of one configuration are drawn as their median, with the spread as a band.

calibrate: the streaming bandwidth curve of thesis figure 2.5b, bandwidth against message size, a
line per kind of link, with the 50%, 75% and 90% marks of the peak that buffer sizes come from;
one plot per calibration, named calibration-<backend>-<P>pes.png.

map: the link loads per dimension of the physical topology, one group of bars per dimension and
one bar per mapper (the busiest link; a dot marks the mean link); one plot per (pattern, physical
topology, instances), named map-<pattern>-<physical>-<K>inst.png.

xy (--xy X Y --series F[,F...] --name NAME): any records, Y against X, one line per distinct value
of the series fields (e.g. the simulated sweeps of docs/simulation.md: simulated_seconds against
bytes_per_destination, a line per grid). --where FIELD=VALUE keeps matching records (repeatable),
--logx/--logy choose log axes, --title sets the title; repeated points are drawn as their median.
Writes NAME.png into --out.

timeline (--timeline TRACE --name NAME): a trace of --transit-trace (a PE's file, the merged file
of `transit trace merge`, or the directory: every file in it) drawn as a timeline, one row per PE
(and per communication thread), as a trace viewer shows it: the PE's waits and streamer steps as
bars, its idle time grey, each message sent and received a tick, termination waves as red marks,
the sampled send-to-receive arrows as lines. --from/--to (ms from the first event) cut a window.
This is transit's own rendering, not Perfetto's. Writes NAME.png into --out.

Lines that are not JSON objects (text output, notes) are skipped, so whole logs can be piped in.
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


def read_objects(paths):
    """Every JSON object line of the files (or stdin)."""
    streams = [open(p, encoding="utf-8") for p in paths] if paths else [sys.stdin]
    objects = []
    for stream in streams:
        for line in stream:
            line = line.strip()
            if line.startswith("{"):
                try:
                    objects.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return objects


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
            elif "mapper" in record and "link_bytes_max_per_dimension" in record:
                records.append(record)
            elif record.get("kind") == "calibration" and "links" in record:
                records.append(record)
    return records


def file_part(text):
    return "".join(c if c.isalnum() or c in "-." else "_" for c in str(text))


def finish(fig, ax, title, path):
    """Titles the plot, adds the legend and writes it to `path`."""
    ax.set_title(title, fontsize="medium")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def log_axes(ax, x_label, y_label):
    """Log-log axes (base 2 along x) with labels and a grid."""
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.grid(True, which="both", alpha=0.3)


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
    sizes = record.get("buffer_bytes", {})
    for share, style in (("50", ":"), ("75", "--"), ("90", ":")):
        if peak > 0:
            ax.axhline(peak * int(share) / 100, color="gray", linestyle=style, linewidth=0.8)
        if sizes.get(share):
            ax.axvline(sizes[share], color="gray", linestyle=style, linewidth=0.8)
    log_axes(ax, "message payload (bytes)", "MB/s, each way")
    title = (f"streaming bandwidth, {record['backend']} backend, {record['pes']} PEs ({record.get('host', '?')})\n"
             f"75% of the peak at {sizes.get('75', '?')} B")
    return finish(fig, ax, title, os.path.join(out_dir, f"calibration-{record['backend']}-{record['pes']}pes.png"))


def plot_map_group(key, records, out_dir):
    pattern, physical, instances = key
    mappers = []
    for r in records:  # the order of the input, each mapper once (its last record)
        if r["mapper"] in mappers:
            mappers.remove(r["mapper"])
        mappers.append(r["mapper"])
    latest = {r["mapper"]: r for r in records}
    dims = max(len(r["link_bytes_max_per_dimension"]) for r in records)
    width = 0.8 / len(mappers)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, name in enumerate(mappers):
        r = latest[name]
        xs = [d - 0.4 + width * (i + 0.5) for d in range(len(r["link_bytes_max_per_dimension"]))]
        ax.bar(xs, r["link_bytes_max_per_dimension"], width, label=f"{name} (busiest link)")
        ax.plot(xs, r["link_bytes_mean_per_dimension"], "k.", markersize=6)
    ax.plot([], [], "k.", label="mean link")
    ax.set_xticks(range(dims))
    ax.set_xticklabels([f"dimension {d}" for d in range(dims)])
    values = [v for r in latest.values() for v in r["link_bytes_max_per_dimension"]]
    if min(values) > 0 and max(values) > 20 * min(values):
        ax.set_yscale("log")  # block's busiest link is often 10x the others'
    ax.set_ylabel("bytes over one link")
    ax.grid(True, axis="y", alpha=0.3)
    suffix = f", {instances} instances" if instances > 1 else ""
    return finish(fig, ax, f"{pattern} on {physical}{suffix}: link loads",
                  os.path.join(out_dir, f"map-{file_part(pattern)}-{file_part(physical)}-{instances}inst.png"))


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
    log_axes(ax, x_field.replace("_", " "), "items per second per PE")
    title = f"{kernel}, {item_bytes}-byte items, {backend} backend, {pes} PEs"
    suffix = ("-" + "".join(c if c.isalnum() else "-" for c in network).strip("-")) if network else ""
    return finish(fig, ax, title + (f"\n{network}" if network else ""),
                  os.path.join(out_dir, f"{kernel}-{item_bytes}B-{backend}-{pes}pes{suffix}.png"))


PROTOCOL_COLOURS = {"blocking": "#d62728", "pipelined": "#1f77b4", "packed": "#2ca02c"}


def plot_protocols(path, out_dir):
    """The winner maps of protocol profiles (Iancu and Hofmeyr's fig. 3): per entry, one panel
    per table, S across, N up, each cell coloured by the fastest protocol, one PNG per entry."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    text = open(path, encoding="utf-8").read()
    try:
        documents = [json.loads(text)]
    except json.JSONDecodeError:
        documents = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
    entries = []
    for d in documents:
        entries.extend(d.get("protocols", [d] if "intra" in d else []))
    if not entries:
        print(f"plot.py: {path}: no protocol profile entries", file=sys.stderr)
        return 1
    names = list(PROTOCOL_COLOURS)
    os.makedirs(out_dir, exist_ok=True)
    for e in entries:
        fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
        for ax, kind in zip(axes, ("intra", "inter")):
            points = e[kind]["points"] if e[kind]["measured"] else []
            sizes = sorted({p["region_bytes"] for p in points})
            counts = sorted({p["regions"] for p in points})
            grid = [[float("nan")] * len(sizes) for _ in counts]
            for p in points:
                seconds = p["seconds"]
                fastest = min(names, key=lambda n: seconds[n])
                grid[counts.index(p["regions"])][sizes.index(p["region_bytes"])] = names.index(fastest)
            ax.set_title(f"{kind}-node" + ("" if points else " (not measured)"))
            if points:
                ax.imshow(grid, origin="lower", aspect="auto", vmin=0, vmax=len(names) - 1,
                          cmap=ListedColormap([PROTOCOL_COLOURS[n] for n in names]))
                ax.set_xticks(range(len(sizes)), [str(s) for s in sizes], rotation=60)
                ax.set_yticks(range(len(counts)), [str(n) for n in counts])
            ax.set_xlabel("region bytes S")
            ax.set_ylabel("regions N")
        fig.legend(handles=[Patch(color=PROTOCOL_COLOURS[n], label=n) for n in names], loc="upper right")
        fig.suptitle(f"fastest protocol, {e['backend']} backend, {e['pes']} PEs, {e['pes_per_node']} per node")
        fig.tight_layout(rect=(0, 0, 0.9, 0.95))
        out = os.path.join(out_dir, f"protocols-{e['backend']}-{e['pes']}pes-{e['pes_per_node']}ppn.png")
        fig.savefig(out, dpi=100)
        plt.close(fig)
        print("wrote", out)
    return 0


def plot_xy(records, args):
    """Y against X, a line per series; the median of repeated points."""
    for cond in args.where:
        field, _, value = cond.partition("=")
        records = [r for r in records if str(r.get(field)) == value]
    series_fields = [f for f in args.series.split(",") if f] if args.series else []
    points = defaultdict(lambda: defaultdict(list))
    for r in records:
        if args.xy[0] not in r or args.xy[1] not in r:
            continue
        label = ", ".join(f"{f}={r.get(f)}" for f in series_fields) or args.xy[1]
        points[label][r[args.xy[0]]].append(r[args.xy[1]])
    if not points:
        print(f"plot.py: no record has both {args.xy[0]} and {args.xy[1]}", file=sys.stderr)
        return 1
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label in sorted(points):
        xs = sorted(points[label])
        ax.plot(xs, [statistics.median(points[label][x]) for x in xs], marker="o", label=label)
    if args.logx:
        ax.set_xscale("log", base=2)
    if args.logy:
        ax.set_yscale("log")
    ax.set_xlabel(args.xy[0])
    ax.set_ylabel(args.xy[1])
    ax.grid(True, which="both", alpha=0.3)
    os.makedirs(args.out, exist_ok=True)
    print("wrote", finish(fig, ax, args.title or f"{args.xy[1]} against {args.xy[0]}",
                          os.path.join(args.out, file_part(args.name) + ".png")))
    return 0


def read_trace_events(path):
    """The traceEvents of a trace file, or of every transit-trace-*.json in a directory (not a merged
    file there, whose events the others already hold)."""
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.startswith("transit-trace-") and n.endswith(".json")
                       and n != "transit-trace-merged.json")
        paths = [os.path.join(path, n) for n in names]
    else:
        paths = [path]
    events = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            events += json.load(f).get("traceEvents", [])
    return events


# What the timeline draws, by slice name: (colour, part of the row from the bottom, its height).
WAITS = ("wait", "barrier", "allreduce", "quiesce", "sync", "broadcast", "streamer links")


def slice_style(name):
    if name == "idle":
        return "#b0b0b0", 0.30, 0.40
    if name == "send":
        return "#1f77b4", 0.55, 0.25
    if name == "recv":
        return "#2ca02c", 0.20, 0.25
    if name.startswith("hand-off"):
        return ("#9467bd", 0.55, 0.25) if name.endswith("MPI") else ("#9467bd", 0.20, 0.25)
    if name.endswith(" step"):
        return "#aec7e8", 0.85, 0.12
    if any(w in name for w in WAITS):
        return "#ffbb78", 0.10, 0.72
    return "#dbdb8d", 0.10, 0.72


def plot_timeline(args):
    if not os.path.exists(args.timeline):
        print(f"plot.py: --timeline: got '{args.timeline}', expected a trace file or directory of --transit-trace",
              file=sys.stderr)
        return 2
    try:
        events = read_trace_events(args.timeline)
    except (OSError, json.JSONDecodeError) as e:
        print(f"plot.py: --timeline {args.timeline}: not a readable trace ({e})", file=sys.stderr)
        return 2
    names, order = {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        key = (e.get("pid"), e.get("tid"))
        if e.get("name") == "thread_name":
            names[key] = e["args"]["name"]
        if e.get("name") == "thread_sort_index":
            order[key] = e["args"]["sort_index"]
    timed = [e for e in events if e.get("ph") in ("X", "i", "s", "f", "t") and "ts" in e]
    if not timed:
        print(f"plot.py: --timeline {args.timeline}: no timed events (expected a trace of --transit-trace)",
              file=sys.stderr)
        return 1
    origin = min(e["ts"] for e in timed)
    lo = args.start if args.start is not None else float("-inf")
    hi = args.end if args.end is not None else float("inf")
    ms = lambda us: (us - origin) / 1000.0  # noqa: E731
    rows = sorted({(e.get("pid"), e.get("tid")) for e in timed}, key=lambda k: (order.get(k, k[1]), k))
    row = {k: i for i, k in enumerate(rows)}
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.75 * len(rows)))
    bars = defaultdict(list)  # (colour, bottom, height) -> [(start, width)]
    flow_start, flow_end, marks = {}, {}, []
    for e in timed:
        t = ms(e["ts"])
        k = row[(e.get("pid"), e.get("tid"))]
        if e["ph"] == "X":
            end = t + e.get("dur", 0) / 1000.0
            if end < lo or t > hi:
                continue
            colour, bottom, height = slice_style(e["name"])
            # A message lasts a microsecond or less: at least a hair's width, so that it shows.
            bars[(colour, bottom, height)].append((k, t, max(end - t, 0.0005 if height < 0.3 else 0)))
        elif e["ph"] == "i" and lo <= t <= hi:
            marks.append((t, k, e["name"]))
        elif e["ph"] == "s":
            flow_start[e["id"]] = (t, k)
        elif e["ph"] == "f":
            flow_end[e["id"]] = (t, k)
    # The enclosing slices (waits, steps) first: what happens inside them is drawn over them.
    for (colour, bottom, height), spans in sorted(bars.items(), key=lambda item: -item[0][2]):
        for k in range(len(rows)):
            mine = [(t, w) for r, t, w in spans if r == k]
            if mine:
                ax.broken_barh(mine, (k + bottom - 0.5, height), facecolors=colour, linewidth=0)
    arrows = 0
    for fid, (t0, k0) in flow_start.items():
        if fid not in flow_end or arrows >= args.max_arrows:
            continue
        t1, k1 = flow_end[fid]
        if t1 < lo or t0 > hi or k0 == k1:
            continue
        ax.plot([t0, t1], [k0 + 0.1, k1 - 0.25], color="black", alpha=0.25, linewidth=0.6)
        arrows += 1
    for t, k, name in marks:
        ax.plot([t], [k + 0.45], marker="v", markersize=5,
                color="#d62728" if name == "termination wave" else "black", linestyle="none")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([names.get(k, f"pid {k[0]} tid {k[1]}") for k in rows])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    if args.start is not None or args.end is not None:
        ax.set_xlim(args.start if args.start is not None else None, args.end if args.end is not None else None)
    ax.set_xlabel("ms from the first event")
    ax.grid(True, axis="x", alpha=0.3)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    legend = [Patch(color=c, label=l) for c, l in (
        ("#ffbb78", "wait (named by what it waits for)"), ("#aec7e8", "streamer step"), ("#b0b0b0", "idle"),
        ("#1f77b4", "send"), ("#2ca02c", "recv"), ("#9467bd", "hand-off (comm thread)"))]
    legend += [Line2D([], [], color="black", alpha=0.4, label="send -> recv (sampled)"),
               Line2D([], [], color="#d62728", marker="v", linestyle="none", label="termination wave")]
    ax.legend(handles=legend, fontsize="x-small", ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.6 / len(rows)))
    ax.set_title(args.title or f"transit trace {os.path.basename(os.path.normpath(args.timeline))} "
                 "(transit's own rendering)", fontsize="medium")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, file_part(args.name) + ".png")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print("wrote", path)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="files of bench --json output (default: stdin)")
    parser.add_argument("--out", default=".", help="directory for the PNG files (default: .)")
    parser.add_argument("--x", default="items_per_pe", help="field for the x axis (default: items_per_pe)")
    parser.add_argument("--protocols", action="store_true", help="winner maps of a protocol profile file")
    parser.add_argument("--xy", nargs=2, metavar=("X", "Y"), help="Y against X for any records (see above)")
    parser.add_argument("--series", default="", help="with --xy: fields whose values name the lines, comma-separated")
    parser.add_argument("--where", action="append", default=[], metavar="FIELD=VALUE", help="with --xy: keep matching records")
    parser.add_argument("--name", default="xy", help="with --xy: the file name, without .png")
    parser.add_argument("--title", default="", help="with --xy: the title")
    parser.add_argument("--logx", action="store_true", help="with --xy: log2 x axis")
    parser.add_argument("--logy", action="store_true", help="with --xy: log y axis")
    parser.add_argument("--timeline", metavar="TRACE", help="a trace file or directory of --transit-trace (see above)")
    parser.add_argument("--from", dest="start", type=float, metavar="MS", help="with --timeline: the window's start")
    parser.add_argument("--to", dest="end", type=float, metavar="MS", help="with --timeline: the window's end")
    parser.add_argument("--max-arrows", type=int, default=400, help="with --timeline: arrows drawn at most (400)")
    args = parser.parse_args()
    if args.timeline:
        return plot_timeline(args)
    if args.xy:
        return plot_xy(read_objects(args.files), args)
    if args.protocols:
        if len(args.files) != 1:
            print("plot.py: --protocols takes one file", file=sys.stderr)
            return 2
        return plot_protocols(args.files[0], args.out)

    records = read_records(args.files)
    if not records:
        print("plot.py: no bench, calibration or map JSON records in the input", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    for r in records:
        if r.get("kind") == "calibration":
            print("wrote", plot_calibration(r, args.out))
    bench = [r for r in records if "kernel" in r]
    maps = [r for r in records if "mapper" in r]
    missing = [r for r in bench if args.x not in r]
    if missing:
        print(f"plot.py: --x {args.x}: {len(missing)} records lack that field", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    groups = defaultdict(list)
    for r in bench:
        groups[(r["kernel"], r["item_bytes"], r["backend"], r["pes"], r.get("network", ""))].append(r)
    for key in sorted(groups):
        print("wrote", plot_group(key, groups[key], args.x, args.out))
    map_groups = defaultdict(list)
    for r in maps:
        map_groups[(r["pattern"], r["physical"], r.get("instances", 1))].append(r)
    for key in sorted(map_groups):
        print("wrote", plot_map_group(key, map_groups[key], args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
