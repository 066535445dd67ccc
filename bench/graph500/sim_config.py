#!/usr/bin/env python3
"""The simulated machine of bench/graph500/sim.sh, from scripts/simulate's own calibrations.

    sim_config.py CALIBRATION RANKS PLATFORM MODE TEST_COST

Prints three lines: the platform spec (PLATFORM, or for 'auto' a torus of the calibration's PEs
per node, as near a cube as the nodes allow); the `transit platform` options of the calibration's
links and cores; and SMPI's settings (--cfg=...), each as scripts/simulate sets it for transit and
why, except where the reference needs otherwise (docs/simulation.md, "Graph500's reference"):
  smpi/privatization:dlopen  the reference and AML keep each rank's state in globals;
  smpi/test:0  AML polls with MPI_Testany and MPI_Test; SMPI's cost of a failed one grows with
      every failed call of any rank (100 us times a counter): the build's smpi_compat.c charges
      TEST_COST per failed call instead (sim.sh passes it as GRAPH500_SIM_TEST_COST);
  smpi/send-is-detached-thresh:65536  sends below 64 KiB eager (SMPI's default), as MPI libraries
      send small messages: AML acknowledges with a blocking MPI_Send of 0 bytes from inside its
      poll, and two ranks acknowledging each other with their receive slots full wait forever when
      a send must meet its receive. SMPI then charges smpi/or at the receiver of each (transit's
      simulation build charges it itself, its sends not detached: the same cost either way).
The fourth line is what the transit build (the reference over transit_aml, built against the
simulation build) runs with instead: its SMPI settings, the same but for
  smpi/send-is-detached-thresh:0  no detached send, as scripts/simulate runs transit: transit's
      simulation build charges each message's receive overhead itself (the same smpi/or);
and its environment, as scripts/simulate sets it, but for
  TRANSIT_SIM_SECONDS_PER_ITEM=0, TRANSIT_SIM_SECONDS_PER_BYTE=0  modelled mode charges AML's
      build nothing for the work of a message on the CPU (SMPI does not time it), so transit's
      build is charged nothing for it either: the two are charged the same per MPI message, the
      network's time, and nothing else.
The fourth line is the settings, a tab, then the environment (NAME=VALUE words).
Bad input: one line 'bench/graph500/sim.sh: WHAT: got 'VALUE', expected ...' on stderr and exit status 2.
"""
import importlib.machinery
import importlib.util
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def simulate_module():
    """scripts/simulate, loaded as a module (it has no .py suffix) for its calibrations."""
    loader = importlib.machinery.SourceFileLoader("simulate", str(ROOT / "scripts" / "simulate"))
    spec = importlib.util.spec_from_loader("simulate", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def bad(what, value, expected):
    print(f"bench/graph500/sim.sh: {what}: got '{value}', expected {expected}", file=sys.stderr)
    sys.exit(2)


def torus(ranks, per_node):
    """A torus of ranks/per_node nodes, the doublings dealt round robin over three dimensions."""
    nodes = ranks // per_node
    dims = [1, 1, 1]
    for i in range(int(math.log2(nodes))):
        dims[i % 3] *= 2
    dims = [d for d in dims if d > 1] or [1]
    return f"torus:{'x'.join(str(d) for d in sorted(dims, reverse=True))}:{per_node}"


def main(argv):
    if len(argv) != 5:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    name, ranks, platform, mode, test_cost = argv
    simulate = simulate_module()
    simulate.fail = lambda message: (print(f"bench/graph500/sim.sh: {message}", file=sys.stderr), sys.exit(2))
    calibration = simulate.load_calibration(name)
    ranks = int(ranks)
    if mode not in ("modelled", "measured"):
        bad("--mode", mode, "modelled or measured")
    try:
        cost = float(test_cost)
    except ValueError:
        cost = -1.0
    if not math.isfinite(cost) or cost <= 0 or cost >= 1:
        bad("--test-cost", test_cost, "seconds per MPI_Test call, above 0 and below 1 (0 stops simulated time while AML polls)")
    if platform == "auto":
        per_node = min(int(calibration["pes_per_node"]), ranks)
        if per_node & (per_node - 1) or ranks % per_node:
            bad("--calibration", name, f"a calibration whose PEs per node ({per_node}) divide {ranks} ranks in a power "
                "of two (AML needs one per node); or give --platform")
        platform = torus(ranks, per_node)
    print(platform)
    print(" ".join(["--link-bandwidth", repr(calibration["link_bytes_per_second"]),
                    "--link-latency", repr(calibration["link_latency_seconds"]),
                    "--loopback-bandwidth", repr(calibration["loopback_bytes_per_second"]),
                    "--loopback-latency", repr(calibration["loopback_latency_seconds"]),
                    "--core-speed", repr(calibration["core_flops"]),
                    "--nic-bandwidth", repr(float(calibration["nic_bytes_per_second"]))]))
    cfg = ["smpi/privatization:dlopen", "smpi/display-timing:yes",
           "smpi/bw-factor:0:1", "smpi/lat-factor:0:1", "network/crosstraffic:0",
           "smpi/test:0", "smpi/iprobe:0",
           "smpi/coll-selector:ompi", "smpi/bcast:binomial_tree",
           "smpi/async-small-thresh:0", "smpi/send-is-detached-thresh:65536",
           "smpi/wtime:0", f"smpi/host-speed:{calibration['core_flops']!r}f"]
    latencies = [calibration[k] for k in ("link_latency_seconds", "loopback_latency_seconds") if calibration[k] > 0]
    if latencies:
        cfg.append(f"surf/precision:{max(1e-9, min(min(latencies), 1e-7))!r}")
    if mode == "modelled":
        send, receive = simulate.message_overheads(calibration)
        cfg += ["smpi/simulate-computation:no", f"smpi/os:{send}", f"smpi/ois:{send}", f"smpi/or:{receive}"]
    print(" ".join(f"--cfg={c}" for c in cfg))
    transit_cfg = [c if not c.startswith("smpi/send-is-detached-thresh:") else "smpi/send-is-detached-thresh:0"
                   for c in cfg]
    env = [f"TRANSIT_SIM_MODE={mode}",
           f"TRANSIT_SIM_NIC_MESSAGES_PER_SECOND={float(calibration['nic_messages_per_second'])!r}"]
    if mode == "modelled":
        env += ["TRANSIT_SIM_SECONDS_PER_ITEM=0", "TRANSIT_SIM_SECONDS_PER_BYTE=0",
                f"TRANSIT_SIM_SEND_OVERHEAD={send}", f"TRANSIT_SIM_RECEIVE_OVERHEAD={receive}"]
    print(" ".join(f"--cfg={c}" for c in transit_cfg) + "\t" + " ".join(env))


if __name__ == "__main__":
    main(sys.argv[1:])
