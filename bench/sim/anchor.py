#!/usr/bin/env python3
"""bench/sim/anchor.py: the parts of bench/sim/anchor.sh (issue 39, item 4) that are not shell.

  anchor.py calibration --inter CAL.json [CAL.json ...] --intra CAL.json [...] --network MEASURED.json
                        --base MEASURED.json --pes-per-node K [--date YYYY-MM-DD]
      prints the calibration `anchor` (scripts/calibrations/anchor.json): transit's own costs from
      `transit calibrate streamer --json` run on the emulated cluster with no latency or rate set
      (--inter: two ranks on two hosts; --intra: two ranks on one host; several runs of each are
      merged point by point, medians), and the cluster's network as `scripts/cluster measure` gave
      it with the latency and rate set (--network) and with none (--base).
  anchor.py scale FACTOR
      prints `--set PARAMETER=VALUE` pairs, one word a line, that multiply the anchor calibration's
      CPU costs (per item, per byte copied, the overheads at both ends) by FACTOR
  anchor.py table RECORDS.jsonl
      prints the table: bench, measured on the cluster (median, min-max, samples), and each
      simulated side with its ratio simulated / measured
  anchor.py verdicts RECORDS.jsonl
      prints the head-to-heads (aggregation on/off, grid against direct, crystal router against the
      neighbour exchange and MPI_Alltoallv, mfcg against flat) as ratios on the cluster and on each
      simulated side, and whether each simulated side names the cluster's winner
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measured_calibration import calibration_text, fail, link_costs, streamer_record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent.parent
# scripts/cluster's hosts are joined by one switch: SimGrid's flat cluster routes a message over the
# sender's link and the receiver's, so each link carries half the one-way latency.
LINKS_PER_ROUTE = 2
# Not measured: the handoff through shared memory inside a host (its CPU costs are in the
# overheads, which SimGrid charges every message alike).
LOOPBACK_LATENCY = 1e-6


def median_record(records, kind):
    """One streamer record whose `kind` link is the medians of the records' (the curve point by
    point): a shared machine's load moves single runs."""
    merged = json.loads(json.dumps(records[0]))
    links = [r["links"][kind] for r in records]
    if not all(link["measured"] for link in links):
        fail(f"a calibration record without a measured {kind}-node link (hosts: {[r['host'] for r in records]})")
    link = merged["links"][kind]
    for field in ("alpha_seconds", "beta_seconds_per_byte", "per_item_seconds"):
        link[field] = statistics.median(x[field] for x in links)
    for curve in ("curve", "raw_curve"):
        if curve == "raw_curve" and not all(x.get(curve) for x in links):
            link.pop(curve, None)  # not measured by every run (before 2026-11-30): none
            continue
        by_size = {}
        for x in links:
            for point in x[curve]:
                by_size.setdefault(point["message_bytes"], []).append(point["seconds_per_message"])
        link[curve] = [{"message_bytes": size, "seconds_per_message": statistics.median(times),
                        "bytes_per_second": size / statistics.median(times)}
                       for size, times in sorted(by_size.items()) if len(times) == len(links)]
    return merged


def calibration(argv):
    options = {"--inter": [], "--intra": [], "--network": [], "--base": [], "--pes-per-node": [], "--date": []}
    current = None
    for arg in argv:
        if arg in options:
            current = arg
        elif current is None:
            fail(f"calibration: got '{arg}', expected one of {', '.join(options)} first")
        else:
            options[current].append(arg)
    for required in ("--inter", "--intra", "--network", "--base", "--pes-per-node"):
        if not options[required]:
            fail(f"calibration: {required} missing")
    try:
        pes_per_node = int(options["--pes-per-node"][0])
    except ValueError:
        pes_per_node = 0
    if pes_per_node < 1:
        fail(f"calibration: --pes-per-node: got '{options['--pes-per-node'][0]}', expected a positive integer")
    inter = median_record([streamer_record(p) for p in options["--inter"]], "inter")
    intra = median_record([streamer_record(p) for p in options["--intra"]], "intra")
    network, base = (json.loads(Path(options[k][0]).read_text()) for k in ("--network", "--base"))
    date = options["--date"][0] if options["--date"] else None
    where, own = link_costs(inter, date)
    runs = f"median of {len(options['--inter'])} runs"
    for value in own.values():
        value["source"] = value["source"].replace(f"{inter['host']} (", f"{inter['host']} ({runs}, ", 1)
    added_one_way = max(0.0, (network["rtt_avg_ms"] - base["rtt_avg_ms"]) / 2 * 1e-3)
    cluster = (f"scripts/cluster measure on cluster {network['cluster']} ({network['hosts']} hosts, latency set "
               f"{network['latency_set_ns'] / 1000:g} us, rate set {network['rate_set_bps'] / 1e9:g} Gbit/s)")
    intra_peak = max(p["bytes_per_second"] for p in intra["links"]["intra"]["curve"])
    machine = {
        "link_bytes_per_second": {
            "value": network["tcp_mbit_s"] * 1e6 / 8,
            "source": f"{cluster}: TCP payload rate {network['tcp_mbit_s']} Mbit/s, host 0 to host 1; each "
                      f"host link, each direction (tbf at both ends of a host link)"},
        "link_latency_seconds": {
            "value": added_one_way / LINKS_PER_ROUTE,
            "source": f"{cluster}: half the average ping RTT, {network['rtt_avg_ms']} ms, less half of it with no "
                      f"latency or rate set, {base['rtt_avg_ms']} ms (the namespaces' own path, whose CPU time the "
                      f"overheads hold): {added_one_way * 1e6:.1f} us one way, over the {LINKS_PER_ROUTE} links "
                      f"of a route (the sender's host link and the receiver's)"},
        "loopback_bytes_per_second": {
            "value": intra_peak,
            "source": f"transit calibrate streamer on {intra['host']} (median of {len(options['--intra'])} runs, "
                      f"{intra['pes']} PEs on one host): the intra-node curve's peak, Open MPI's shared memory"},
        "loopback_latency_seconds": {"value": LOOPBACK_LATENCY, "source": "assumed: not measured"},
        "core_flops": {"value": 1e9, "source": "assumed: measured mode only, which runs this host's CPU time 1:1"},
        "pes_per_node": {"value": pes_per_node, "source": "the cluster's ranks per host"},
        "nic_bytes_per_second": {"value": 0.0, "source": "none: the host link is the interface (tbf at both ends)"},
        "nic_messages_per_second": {"value": 0.0, "source": "no limit"},
    }
    out = {
        "name": "anchor",
        "machine": f"the emulated cluster (scripts/cluster, docs/cluster.md) of {network['hosts']} hosts on one "
                   f"machine of {inter['hardware_threads']} hardware threads: transit's own costs over Open MPI's "
                   f"TCP between its hosts",
        "network": f"{network['hosts']} hosts on one switch (SimGrid flat cluster: switch:N:{pes_per_node})",
        "example_platform": f"switch:{network['hosts']}:{pes_per_node}",
        "sources": f"bench/sim/anchor.sh (issue 39, item 4): bench/sim/anchor.py from {where} and {cluster}",
        "parameters": {**machine, **own},
    }
    print(calibration_text(out))


def scale(argv):
    try:
        factor = float(argv[0]) if len(argv) == 1 else -1
    except ValueError:
        factor = -1
    if not factor > 0:
        fail(f"scale: got '{' '.join(argv)}', expected one positive FACTOR")
    values = {k: v["value"] for k, v in
              json.loads((ROOT / "scripts" / "calibrations" / "anchor.json").read_text())["parameters"].items()}
    for key in ("seconds_per_item", "seconds_per_byte_copied"):
        print("--set", f"{key}={values[key] * factor!r}", sep="\n")
    for key in ("send_overhead", "receive_overhead", "transit_overhead"):
        if key not in values:
            continue  # transit_overhead: a calibration from records with a raw curve only
        sections = []
        for section in values[key].split(";"):
            size, seconds, per_byte = section.split(":")
            sections.append(f"{size}:{float(seconds) * factor!r}:{float(per_byte) * factor!r}")
        print("--set", f"{key}={';'.join(sections)}", sep="\n")


# What each kernel's record is compared by: its field, and the scale to milliseconds.
METRIC = {"exchange": ("seconds_per_exchange", 1e3), "hotspot": ("mean_us", 1e-3)}
SIDES = ("modelled", "contended", "measured")


def label(record):
    kernel = record["kernel"]
    if kernel == "exchange":
        return f"exchange {record['method']}, {record['bytes']} B"
    if kernel == "hotspot":
        return f"hotspot {record['topology']}, mean per op"
    if kernel == "histogram":
        return f"histogram, {int(record['items_per_pe'])} items{', no aggregation' if record['scheme'] == 'none' else ''}"
    return kernel


# The head-to-heads of the simulated results that the cluster can run (issue 54, point 4): each a
# ratio of two benches' times, below 1 when the first wins.
VERDICTS = [
    # aggregation on / off: the histogram of as many items as the one without aggregation (verdicts)
    ("grid / direct, 8 B", "exchange grid, 8 B", "exchange direct, 8 B"),
    ("grid / direct, 64 KiB", "exchange grid, 65536 B", "exchange direct, 65536 B"),
    ("crystal router / neighbour, 8 B", "exchange crystal_router, 8 B", "exchange mpi_neighbor, 8 B"),
    ("crystal router / neighbour, 64 KiB", "exchange crystal_router, 65536 B", "exchange mpi_neighbor, 65536 B"),
    ("crystal router / MPI_Alltoallv, 8 B", "exchange crystal_router, 8 B", "exchange mpi_alltoallv, 8 B"),
    ("crystal router / MPI_Alltoallv, 64 KiB", "exchange crystal_router, 65536 B", "exchange mpi_alltoallv, 65536 B"),
    ("mfcg / flat (hot spot)", "hotspot mfcg, mean per op", "hotspot mpi-raw, mean per op"),
]


def bench_values(path):
    """Per (bench, side): the times in ms; the benches in order; those with an unverified run."""
    records = [json.loads(line) for line in Path(path).read_text().splitlines() if line.startswith("{")]
    values, labels, unverified = {}, [], set()
    for r in records:
        if "kernel" not in r:
            continue
        if r["kernel"] == "exchange" and r["method"] not in ("direct", "crystal_router", "grid", "mpi_alltoallv",
                                                             "mpi_neighbor"):
            continue  # automatic races the others
        if r["kernel"] != "exchange" and r["run"] == 0:
            continue  # the warm-up run: Open MPI's TCP connections are made on first use
        field, to_ms = METRIC.get(r["kernel"], ("seconds", 1e3))
        name = label(r)
        if name not in labels:
            labels.append(name)
        values.setdefault((name, r["side"]), []).append(r[field] * to_ms)
        if not r.get("verified"):
            unverified.add((name, r["side"]))
    return records, values, labels, unverified


def verdicts(argv):
    """Each head-to-head's ratio on the cluster and on each simulated side, and whether the
    simulation's verdict (which one wins) is the cluster's: a verdict survives the anchor where the
    ratios fall on the same side of 1."""
    _, values, _, unverified = bench_values(argv[0])
    sides = [s for s in SIDES if any(k[1] == s for k in values)]
    print(f"{'head-to-head':40} {'cluster':>8}" + "".join(f" {s:>10} {'verdict':>9}" for s in sides))
    unaggregated = sorted({k[0] for k in values if k[0].endswith(", no aggregation")})
    pairs = [("aggregation on / off (histogram)", u.removesuffix(", no aggregation"), u) for u in unaggregated[:1]]
    for name, first, second in pairs + VERDICTS:
        ratio = {}
        for side in ("cluster", *sides):
            a, b = values.get((first, side)), values.get((second, side))
            if a and b and (first, side) not in unverified and (second, side) not in unverified:
                ratio[side] = statistics.median(a) / statistics.median(b)
        if "cluster" not in ratio:
            print(f"{name:40} {'not run':>8}")
            continue
        line = f"{name:40} {ratio['cluster']:8.2f}"
        for side in sides:
            if side not in ratio:
                line += f" {'-':>10} {'':>9}"
                continue
            same = (ratio[side] < 1) == (ratio["cluster"] < 1)
            line += f" {ratio[side]:10.2f} {'holds' if same else 'FLIPS':>9}"
        print(line)
    print("ratio: the first bench's median time over the second's (below 1: the first wins); holds: the "
          "simulated side names the same winner as the cluster")


def table(argv):
    records, values, labels, unverified = bench_values(argv[0])
    network = next((r for r in records if r.get("kind") == "network"), None)
    if network:
        print(f"cluster: {network['description']}; ping rtt avg {network['rtt_avg_ms']} ms, "
              f"tcp {network['tcp_mbit_s']} Mbit/s; {network['machine']}; {network['date']}")
    for r in records:
        if r.get("kind") == "load":
            print(f"load average (1, 5, 15 min) {r['when']}: {r['loadavg']}")
    sides = [s for s in SIDES if any(k[1] == s for k in values)]
    head = f"{'bench':34} {'cluster ms':>10} {'min-max':>15} {'n':>3}"
    for side in sides:
        head += f" {side + ' ms':>14} {'ratio':>6}"
    print(head)
    for name in labels:
        cluster = values.get((name, "cluster"))
        if not cluster:
            continue
        measured = statistics.median(cluster)
        line = f"{name:34} {measured:10.4g} {min(cluster):7.4g}-{max(cluster):<7.4g} {len(cluster):3d}"
        for side in sides:
            sim = values.get((name, side))
            line += f" {statistics.median(sim):14.4g} {statistics.median(sim) / measured:6.2f}" if sim else f" {'-':>14} {'':6}"
        if any((name, s) in unverified for s in ("cluster", *sides)):
            line += "  NOT VERIFIED"
        print(line)
    print("ratio: simulated / measured (median); modelled: the anchor calibration; contended: its CPU costs x "
          "ranks / cores; measured: SMPI timing this host's CPU")


def main(argv):
    commands = {"calibration": calibration, "scale": scale, "table": table, "verdicts": verdicts}
    if not argv or argv[0] not in commands:
        fail(f"command: got '{' '.join(argv[:1])}', expected one of {', '.join(commands)} (see the file's docstring)")
    commands[argv[0]](argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
