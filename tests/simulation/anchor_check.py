#!/usr/bin/env python3
"""anchor_check.py CHECK: bench/sim/anchor.py, which turns measurements on the emulated cluster into
the calibration `anchor` (issue 39, item 4; docs/simulation-results.md, "An anchor against
reality"), and the machine it describes.

  calibration  from synthetic `transit calibrate` records and `scripts/cluster measure` results:
               the link's rate and latency, the loopback, PEs per node and the costs, the records
               merged point by point (medians); bad input is one line naming it, status 2
  platform     the committed anchor calibration's machine as `transit platform` writes it
               (TRANSIT_TOOL): switch:4:2 is one flat cluster of 4 hosts of 2 cores with the
               calibration's link, ranks dealt in blocks (the cluster's `--map-by ppr:2:node`); and
               `anchor.py scale` multiplies every CPU cost by the factor and nothing else
"""
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
ANCHOR = ROOT / "bench" / "sim" / "anchor.py"


def fail(message):
    sys.exit(f"anchor_check: {message}")


def run(*arguments, expect_status=0):
    done = subprocess.run([sys.executable, str(ANCHOR), *arguments], capture_output=True, text=True, timeout=60)
    if done.returncode != expect_status:
        fail(f"anchor.py {' '.join(arguments)}: status {done.returncode}, expected {expect_status}\n{done.stderr}")
    return done


def streamer(kind, scale, raw=False):
    """A `transit calibrate streamer --json` record whose `kind` link costs `scale` times the base;
    with `raw`, also plain MPI's curve (4 us per message where transit's costs 10)."""
    curve = [{"message_bytes": b, "seconds_per_message": scale * (10e-6 + b * 1e-9), "bytes_per_second": 0}
             for b in (16, 1024, 65536)]
    link = {"measured": True, "from_pe": 0, "to_pe": 1, "alpha_seconds": scale * 10e-6,
            "beta_seconds_per_byte": scale * 1e-9, "per_item_seconds": scale * 50e-9, "curve": curve}
    if raw:
        link["raw_curve"] = [{"message_bytes": b, "seconds_per_message": scale * (4e-6 + b * 1e-9),
                              "bytes_per_second": 0} for b in (0, 8, 16, 1024, 65536)]
    unmeasured = {"measured": False}
    return {"kind": "calibration", "section": "streamer", "backend": "mpi", "host": "t-h0", "pes": 2,
            "pes_per_node": 1 if kind == "inter" else 2, "hardware_threads": 2, "created": "2026-11-28T00:00:00Z",
            "links": {kind: link, ("intra" if kind == "inter" else "inter"): unmeasured}}


def check_calibration():
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        # Three runs, the middle one at 2x: the medians are its figures, point by point.
        for kind in ("inter", "intra"):
            files[kind] = []
            for i, scale in enumerate((1, 2, 5)):
                path = Path(tmp) / f"{kind}-{i}.json"
                path.write_text(json.dumps(streamer(kind, scale)) + "\n")
                files[kind].append(str(path))
        network = {"cluster": "t", "hosts": 4, "latency_set_ns": 50000, "rate_set_bps": 1000000000,
                   "rtt_avg_ms": 0.12, "rtt_min_ms": 0.1, "tcp_mbit_s": 940}
        base = {**network, "latency_set_ns": 0, "rate_set_bps": 0, "rtt_avg_ms": 0.02, "tcp_mbit_s": 5000}
        (Path(tmp) / "network.json").write_text(json.dumps(network))
        (Path(tmp) / "base.json").write_text(json.dumps(base))
        common = ["--inter", *files["inter"], "--intra", *files["intra"], "--network", f"{tmp}/network.json",
                  "--base", f"{tmp}/base.json"]
        calibration = json.loads(run("calibration", *common, "--pes-per-node", "2").stdout)
        values = {k: v["value"] for k, v in calibration["parameters"].items()}
        print(json.dumps(values, indent=1))
        expected = {
            "link_bytes_per_second": 940e6 / 8,              # the TCP payload rate
            "link_latency_seconds": (0.12 - 0.02) / 2 * 1e-3 / 2,  # added one way, over 2 links
            "pes_per_node": 2,
            "loopback_bytes_per_second": 65536 / (2 * (10e-6 + 65536e-9)),  # the intra curve's peak (median)
            "seconds_per_item": 2 * 50e-9,
            "seconds_per_byte_copied": 2 * 1e-9 / 2,
            "nic_bytes_per_second": 0.0,
        }
        for key, value in expected.items():
            if abs(values[key] - value) > 1e-9 * abs(value):
                fail(f"{key}: {values[key]!r}, expected {value!r}")
        # The overhead at 16 B: half the median curve's time less the bytes copied at 1 ns per byte
        # (each PE of the curve sends a message and receives one in that time: half at each end).
        first = float(values["send_overhead"].split(";")[0].split(":")[1])
        expected_first = (2 * (10e-6 + 16e-9) - 16e-9) / 2
        if abs(first - expected_first) > 1e-15:
            fail(f"send_overhead at 16 B: {first!r}, expected {expected_first!r}")
        if values["receive_overhead"] != values["send_overhead"]:
            fail("receive_overhead differs from send_overhead")
        if not all(v["source"] for v in calibration["parameters"].values()):
            fail("a parameter without its source")
        for bad, message in ((["--pes-per-node", "0"], "--pes-per-node: got '0', expected a positive integer"),
                             ([], "--pes-per-node missing")):
            done = run("calibration", *common, *bad, expect_status=2)
            if done.stdout or len(done.stderr.splitlines()) != 1 or message not in done.stderr:
                fail(f"bad input {bad}: expected one line with '{message}', got {done.stderr!r}")
            print(f"refused {bad}: {done.stderr.strip()}")
        if "transit_overhead" in values:
            fail("a transit_overhead without a raw curve")
        # With plain MPI's curve measured too: the overheads are MPI's (half its time per message
        # less the bytes copied) and transit_overhead is transit's own above them (half the
        # difference of the curves), at the median run's scale, 2.
        for kind in ("inter", "intra"):
            for i, scale in enumerate((1, 2, 5)):
                Path(files[kind][i]).write_text(json.dumps(streamer(kind, scale, raw=True)) + "\n")
        split = {k: v["value"] for k, v in
                 json.loads(run("calibration", *common, "--pes-per-node", "2").stdout)["parameters"].items()}
        mpi_first = float(split["send_overhead"].split(";")[0].split(":")[1])
        own_first = float(split["transit_overhead"].split(";")[0].split(":")[1])
        if abs(mpi_first - 2 * 4e-6 / 2) > 1e-15 or abs(own_first - 2 * 6e-6 / 2) > 1e-15:
            fail(f"with a raw curve: MPI's overhead {mpi_first!r} (expected 4e-06) and transit's own "
                 f"{own_first!r} (expected 6e-06) at the smallest size")
        if abs(split["seconds_per_message"] - values["seconds_per_message"]) > 1e-15:
            fail("seconds_per_message (transit's whole, for transit model) moved with the raw curve")
        done = run("calibration", "--inter", files["intra"][0], *common[1 + len(files["inter"]):],
                   "--pes-per-node", "2", expect_status=2)
        if "without a measured inter-node link" not in done.stderr:
            fail(f"an intra-only record taken for the inter link: {done.stderr!r}")
        print(f"refused an intra-only record as --inter: {done.stderr.strip()}")


def check_platform():
    calibration = json.loads((ROOT / "scripts" / "calibrations" / "anchor.json").read_text())
    values = {k: v["value"] for k, v in calibration["parameters"].items()}
    tool = os.environ.get("TRANSIT_TOOL", str(ROOT / "build" / "bin" / "transit"))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([tool, "platform", "--physical", calibration["example_platform"], "--pes", "8",
                        "--platform", f"{tmp}/p.xml", "--hostfile", f"{tmp}/hosts",
                        "--link-bandwidth", repr(values["link_bytes_per_second"]),
                        "--link-latency", repr(values["link_latency_seconds"]),
                        "--nic-bandwidth", repr(values["nic_bytes_per_second"])], check=True, timeout=60)
        clusters = ET.parse(f"{tmp}/p.xml").getroot().findall(".//cluster")
        hosts = Path(f"{tmp}/hosts").read_text().split()
    if len(clusters) != 1:
        fail(f"{len(clusters)} clusters in the platform, expected one flat cluster")
    c = clusters[0].attrib
    print(c, hosts)
    for key, value in {"radical": "0-3", "core": "2"}.items():
        if c.get(key) != value:
            fail(f"cluster {key}={c.get(key)!r}, expected {value!r}")
    for key, unit, value in (("bw", "Bps", values["link_bytes_per_second"]), ("lat", "s", values["link_latency_seconds"])):
        if not c.get(key, "").endswith(unit) or abs(float(c[key][:-len(unit)]) - value) > 1e-6 * value:
            fail(f"cluster {key}={c.get(key)!r}, expected {value!r}{unit}")
    if "bb_bw" in c or "limiter_link" in c:
        fail("the flat cluster has a backbone or limiter: a route would cross more than the two host links")
    if hosts != [f"node-{r // 2}" for r in range(8)]:
        fail(f"hostfile {hosts}, expected ranks in blocks of 2 (the cluster's --map-by ppr:2:node)")
    scaled = run("scale", "4").stdout.splitlines()
    sets = dict(s.split("=", 1) for s in scaled[1::2])
    scaled_keys = {"seconds_per_item", "seconds_per_byte_copied", "send_overhead", "receive_overhead"}
    if "transit_overhead" in values:  # a calibration with MPI's cost apart from transit's
        scaled_keys.add("transit_overhead")
    if scaled[0::2] != ["--set"] * len(sets) or set(sets) != scaled_keys:
        fail(f"scale 4: {scaled}")
    if abs(float(sets["seconds_per_item"]) - 4 * values["seconds_per_item"]) > 1e-20:
        fail(f"scale 4: seconds_per_item {sets['seconds_per_item']}, expected 4 x {values['seconds_per_item']}")
    for was, now in zip(values["send_overhead"].split(";"), sets["send_overhead"].split(";")):
        w, n = was.split(":"), now.split(":")
        if w[0] != n[0] or any(abs(float(b) - 4 * float(a)) > 1e-12 * max(1e-30, float(a)) for a, b in zip(w[1:], n[1:])):
            fail(f"scale 4: section {was} became {now}")
    done = run("scale", "0", expect_status=2)
    print(f"refused scale 0: {done.stderr.strip()}")


def check_verdicts():
    """anchor.py verdicts: a head-to-head holds where the simulated side names the cluster's winner."""
    records = []
    for side, crystal, alltoallv, mfcg in (("cluster", 1.0, 2.0, 100.0), ("modelled", 1.0, 0.5, 40.0)):
        records += [{"side": side, "kernel": "exchange", "method": "crystal_router", "bytes": 8, "verified": True,
                     "seconds_per_exchange": crystal * 1e-3},
                    {"side": side, "kernel": "exchange", "method": "mpi_alltoallv", "bytes": 8, "verified": True,
                     "seconds_per_exchange": alltoallv * 1e-3},
                    {"side": side, "kernel": "hotspot", "topology": "mfcg", "run": 1, "verified": True, "mean_us": mfcg},
                    {"side": side, "kernel": "hotspot", "topology": "mpi-raw", "run": 1, "verified": True,
                     "mean_us": 50.0},
                    {"side": side, "kernel": "histogram", "items_per_pe": 1024.0, "scheme": "grid", "run": 1,
                     "verified": True, "seconds": 0.01},
                    {"side": side, "kernel": "histogram", "items_per_pe": 1024.0, "scheme": "none", "run": 1,
                     "verified": True, "seconds": 0.1 if side == "cluster" else 0.02}]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "records.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
        out = run("verdicts", str(path)).stdout
    print(out)
    rows = {line[:40].strip(): line[40:].split() for line in out.splitlines()[1:-1]}
    if rows.get("crystal router / MPI_Alltoallv, 8 B") != ["0.50", "2.00", "FLIPS"]:
        fail(f"crystal router / MPI_Alltoallv: {rows.get('crystal router / MPI_Alltoallv, 8 B')}, expected 0.50 on the "
             f"cluster, 2.00 simulated, FLIPS")
    if rows.get("mfcg / flat (hot spot)") != ["2.00", "0.80", "FLIPS"]:
        fail(f"mfcg / flat: {rows.get('mfcg / flat (hot spot)')}, expected 2.00, 0.80, FLIPS")
    if rows.get("aggregation on / off (histogram)") != ["0.10", "0.50", "holds"]:
        fail(f"aggregation on / off: {rows.get('aggregation on / off (histogram)')}, expected 0.10, 0.50, holds")
    if rows.get("grid / direct, 8 B") != ["not", "run"]:
        fail(f"grid / direct without records: {rows.get('grid / direct, 8 B')}, expected 'not run'")


CHECKS = {"calibration": check_calibration, "platform": check_platform, "verdicts": check_verdicts}
if len(sys.argv) != 2 or sys.argv[1] not in CHECKS:
    sys.exit(f"usage: anchor_check.py {'|'.join(CHECKS)}")
CHECKS[sys.argv[1]]()
