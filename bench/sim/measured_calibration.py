#!/usr/bin/env python3
"""bench/sim/measured_calibration.py CALIBRATE.json [--date YYYY-MM-DD] > scripts/calibrations/measured.json

Turns the record of `transit calibrate streamer --json` (mpi backend, two ranks on two nodes of
one PE each, so that the inter-node link is MPI's) into the calibration `measured`: transit's own
costs on the host that ran it, not Charm++'s on BG/Q or XE6 (docs/simulation.md, "Calibrations").

  seconds_per_item         the fitted per-item cost (thesis table 2.3's o_a: routing step, copy
                           into a buffer, delivery of an 8-byte item)
  seconds_per_byte_copied  half the fitted cost per byte of a message (beta): a byte is copied
                           twice on its way, into transit's buffer at the sender and by MPI; the
                           two copies are taken to cost alike (an assumption)
  send_overhead,           per end, at each size of the streaming curve: half the time per message
  receive_overhead         of two PEs streaming to each other (the busier PE's time per message
                           less transit's copy of its bytes), cut to the curve's lower monotone
                           envelope (load on a shared machine only adds), as SimGrid's
                           piecewise-linear sections between the curve's sizes. In that time each PE
                           sends a message and receives one, so it holds both ends' overheads;
                           calibrate does not tell them apart, so each end gets half (an
                           assumption). Until 2026-11-30 each end got the whole: 2x per message.
  seconds_per_message      the overhead of the curve's smallest message (what `transit model` reads)

With the raw curve (the same streaming of plain MPI messages, which calibrate measures since
2026-11-30), send_overhead and receive_overhead are MPI's, every MPI message's in a simulation,
transit's and the baselines' alike: half the raw curve's time per message less the bytes copied.
transit_overhead is transit's own cost above it, at each end of transit's messages only: half the
difference of the two curves at each of the curve's sizes (both copy the same bytes). Without it
(older records), the overheads are transit's whole cost, charged to every MPI message.

The machine's figures (links, loopback, cores, PEs per node, NIC) are not this host's to give:
they are BG/Q's (scripts/calibrations/bgq.json), so that `measured` and `bgq` differ only in
transit's own costs and the per-message overheads.
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def fail(message):
    # Named after the script run (anchor.py uses these functions too).
    print(f"{Path(sys.argv[0]).stem}: {message}", file=sys.stderr)
    sys.exit(2)


def overhead_sections(curve, per_byte_copied, share, minus=None):
    """SimGrid's sections "BYTES:SECONDS:SECONDS_PER_BYTE" through the curve's points, each `share`
    of the time per message less the bytes transit copied (or, with `minus`, less the time per
    message of that curve at the same size, where it has one, at least 0: a difference of two
    curves has no monotone envelope); flat below the first point."""
    less = {p["message_bytes"]: p["seconds_per_message"] for p in minus or []}
    points = [(p["message_bytes"],
               share * max(0.0, p["seconds_per_message"] -
                           (less[p["message_bytes"]] if minus else per_byte_copied * p["message_bytes"])))
              for p in curve if p["seconds_per_message"] > 0 and (not minus or p["message_bytes"] in less)]
    if len(points) < 2:
        fail("the calibration's curve has fewer than two points")
    points.sort()
    # A larger message costs no less than a smaller one: the curve's bumps (a shared machine's
    # load) are cut to the lower monotone envelope, each point at most every larger one's.
    for i in range(len(points) - 2, -1, -1) if not minus else ():
        points[i] = (points[i][0], min(points[i][1], points[i + 1][1]))
    sections = [f"0:{points[0][1]!r}:0"] if points[0][0] > 0 else []  # flat below the first point
    for (b0, o0), (b1, o1) in zip(points, points[1:]):
        slope = max(0.0, (o1 - o0) / (b1 - b0))
        sections.append(f"{b0}:{max(0.0, o0 - slope * b0)!r}:{slope!r}")
    return ";".join(sections), points[0][1]


def link_costs(record, date=None):
    """transit's own costs from a `transit calibrate streamer --json` record: where they come from
    (one line), and the calibration parameters seconds_per_item, seconds_per_message,
    send_overhead, receive_overhead and seconds_per_byte_copied, each with its source. The
    inter-node link's when it was measured, else the intra-node one's."""
    links = record["links"]
    kind = "inter" if links["inter"]["measured"] else "intra"
    link = links[kind]
    date = date or record.get("created", "")[:10]
    where = (f"transit calibrate streamer on {record['host']} ({record['backend']} backend, {record['pes']} PEs, "
             f"{record['pes_per_node']} per node, {kind}-node link, {date})")
    per_byte_copied = link["beta_seconds_per_byte"] / 2
    # Each PE of the curve sends one message and receives one per time per message: half at each end.
    raw = link.get("raw_curve") or []
    overhead, _ = overhead_sections(raw or link["curve"], per_byte_copied, 0.5)
    _, smallest = overhead_sections(link["curve"], per_byte_copied, 0.5)  # transit's whole, as `transit model` reads it
    own = {
        "seconds_per_item": {"value": link["per_item_seconds"],
                             "source": f"{where}: per_item_seconds, the fitted cost per item and hop"},
        "seconds_per_message": {"value": smallest,
                                "source": f"{where}: transit's whole cost per message and end at the curve's "
                                          f"smallest size, as the overheads below without a raw curve (alpha, fitted with "
                                          f"every PE sending and receiving, is {link['alpha_seconds']!r} s for "
                                          f"both ends together)"},
        "send_overhead": {"value": overhead,
                          "source": f"{where}: half the curve's time per message less seconds_per_byte_copied "
                                    f"per byte (each PE of the curve sends one message and receives one in that "
                                    f"time), piecewise linear between its sizes; half at each end (assumed)"},
        "receive_overhead": {"value": overhead, "source": "as send_overhead"},
    }
    if raw:
        own["send_overhead"]["source"] = (
            f"{where}: MPI's own, half the raw curve's time per message (plain MPI_Isend and MPI_Irecv "
            f"between the same PEs, the same bytes written and read) less seconds_per_byte_copied per byte, "
            f"piecewise linear between its sizes; half at each end (assumed)")
        extra, _ = overhead_sections(link["curve"], per_byte_copied, 0.5, minus=raw)
        own["transit_overhead"] = {
            "value": extra,
            "source": f"{where}: transit's own cost above MPI's, half the difference of the curve and the raw "
                      f"curve's times per message at each of the curve's sizes; charged at each end of "
                      f"transit's messages only"}
    own = {**own, **{
        "seconds_per_byte_copied": {"value": per_byte_copied,
                                    "source": f"{where}: half of beta_seconds_per_byte "
                                              f"({link['beta_seconds_per_byte']!r}): transit's copy and MPI's, "
                                              f"taken to cost alike (assumed)"},
    }}
    return where, own


def calibration_text(calibration):
    """A calibration file's text: its header fields one a line, then one line per parameter."""
    lines = ["{"] + [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in calibration.items() if k != "parameters"]
    lines.append('  "parameters": {')
    items = list(calibration["parameters"].items())
    for i, (k, v) in enumerate(items):
        lines.append(f'    {json.dumps(k)}: {{"value": {json.dumps(v["value"])}, "source": {json.dumps(v["source"])}}}'
                     + ("," if i + 1 < len(items) else ""))
    lines += ["  }", "}"]
    return "\n".join(lines)


def streamer_record(path):
    """The first JSON line of PATH, which must be a `transit calibrate streamer --json` record."""
    record = next((json.loads(line) for line in Path(path).read_text().splitlines() if line.startswith("{")), None)
    if record is None or record.get("section") != "streamer":
        fail(f"{path}: no record of `transit calibrate streamer --json`")
    return record


def main(argv):
    if len(argv) not in (1, 3) or (len(argv) == 3 and argv[1] != "--date"):
        fail("usage: measured_calibration.py CALIBRATE.json [--date YYYY-MM-DD]")
    record = streamer_record(argv[0])
    where, own = link_costs(record, argv[2] if len(argv) == 3 else None)
    bgq = json.loads((ROOT / "scripts" / "calibrations" / "bgq.json").read_text())
    machine = {k: v for k, v in bgq["parameters"].items()
               if k in ("link_bytes_per_second", "link_latency_seconds", "loopback_bytes_per_second",
                        "loopback_latency_seconds", "core_flops", "pes_per_node", "nic_bytes_per_second",
                        "nic_messages_per_second")}
    for value in machine.values():
        value["source"] = "bgq's: " + value["source"]
    out = {
        "name": "measured",
        "machine": f"transit's own costs measured on {record['host']}, on BG/Q's network and nodes",
        "network": bgq["network"],
        "example_platform": bgq["example_platform"],
        "sources": f"bench/sim/measured_calibration.py from {where}; the machine's figures are bgq's "
                   f"(scripts/calibrations/bgq.json)",
        "parameters": {**machine, **own},
    }
    print(calibration_text(out))

if __name__ == "__main__":
    main(sys.argv[1:])
