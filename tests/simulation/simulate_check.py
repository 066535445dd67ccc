#!/usr/bin/env python3
"""simulate_check.py CHECK: runs scripts/simulate (the simulation build of transit under SimGrid's
SMPI, docs/simulation.md) and judges its JSON records. Fails, never skips, when SimGrid or the
simulation build is missing: `make test` builds both.

  modelled  a verified 64-rank histogram on a 4x4 torus of 4-PE nodes, twice in modelled mode: the
            simulated times are identical; then with 100x the link latency: simulated time grows
  measured  the same kernel in measured mode (this host's CPU time): runs and verifies
  kernels   every bench kernel scripts/simulate accepts runs verified at 8 ranks; the ones it
            refuses are refused with a one-line error, status 2; a --json of the user's is passed once
  progress  on a terminal, rank 0's progress line with simulated and real time, erased at the end;
            none with --quiet
  make_sim  `make sim` alone builds both transit commands scripts/simulate runs (make's dry run)
  fair      a baseline's message (MPI_Alltoallv inside SMPI; mpi_neighbor's point-to-point messages)
            pays the overheads a transit message pays; so do the flat hot spot's blocking replies,
            the flat lock server's grants and MPI RMA's gets; MPI_Alltoallv is the machine's MPI's
            (MPICH's skips empty counts, Open MPI's does not); a node's NIC message rate bounds what
            its PEs inject together
  census    every message of a run pays its sender's overhead, for every kind of sender (transit's
            streamer and exchanges, the baselines' MPI_Alltoallv, neighbour exchange, NBX and
            flat servers, MPI RMA, transit's global arrays) and every collective of the set-up,
            at rank counts that are no power of two: the message census counts them all
  anchor    the calibration of the emulated cluster (bench/sim/anchor.sh) on its machine, 4 hosts x 2
            on one switch: a verified histogram, the same simulated time twice
  deadlock  a stuck program (PE 1 never ends its step): without a watchdog the simulated job ends
            with transit's report of what every PE waits in (SimGrid's own deadlock ends with status
            0), and with TRANSIT_WATCHDOG the watchdog fires in simulated time
"""
import json
import os
import re
import subprocess
import sys

SIMULATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "simulate")
ADDED = {"simulated_seconds": float, "wall_seconds": float, "platform": str, "ranks": int, "calibration": str,
         "mode": str}


def simulate(*arguments, expect_status=0, env=None):
    run = subprocess.run([sys.executable, SIMULATE, *arguments], capture_output=True, text=True, timeout=600,
                         env=env)
    if run.returncode != expect_status:
        sys.exit(f"simulate_check: {' '.join(arguments)}: exit status {run.returncode}, expected {expect_status}\n"
                 f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}")
    return run


def records(*arguments):
    run = simulate(*arguments)
    out = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    if not out:
        sys.exit(f"simulate_check: {' '.join(arguments)}: no JSON record\n{run.stdout}\n{run.stderr}")
    for r in out:
        for field, kind in ADDED.items():
            if not isinstance(r.get(field), kind):
                sys.exit(f"simulate_check: record without {field} ({kind.__name__}): {r}")
        if r["verified"] is not True:
            sys.exit(f"simulate_check: {' '.join(arguments)}: not verified: {r}")
        if not r["simulated_seconds"] > 0:
            sys.exit(f"simulate_check: simulated_seconds {r['simulated_seconds']}, expected > 0")
    return out


def check_modelled():
    job = ["--platform", "torus:4x4:4", "--ranks", "64", "--calibration", "bgq", "--mode", "modelled"]
    kernel = ["--", "bench", "histogram", "--items-per-pe", "4096"]
    first, second = records(*job, *kernel)[0], records(*job, *kernel)[0]
    print("first: ", json.dumps(first))
    print("second:", json.dumps(second))
    for r in (first, second):
        if (r["pes"], r["nodes"], r["platform"], r["mode"]) != (64, 16, "torus:4x4:4", "modelled"):
            sys.exit(f"simulate_check: expected 64 PEs on 16 nodes of torus:4x4:4, modelled: {r}")
        if not 0 < r["inter_node_messages"] <= r["messages_sent"]:
            sys.exit("simulate_check: a 16-node job without inter-node messages")
    for field in ("simulated_seconds", "seconds", "messages_sent", "inter_node_messages", "bytes_sent"):
        if first[field] != second[field]:
            sys.exit(f"simulate_check: modelled runs differ in {field}: {first[field]} then {second[field]}")
    slow = records(*job, "--set", "link_latency_seconds=5e-6", *kernel)[0]
    print("slow links:", json.dumps(slow))
    if not slow["simulated_seconds"] > first["simulated_seconds"]:
        sys.exit(f"simulate_check: 100x the link latency, simulated time {slow['simulated_seconds']} "
                 f"not above {first['simulated_seconds']}")
    print(f"simulate_check: modelled time identical across runs ({first['simulated_seconds']} s) and "
          f"{slow['simulated_seconds'] / first['simulated_seconds']:.2f}x with 100x the link latency")
    # Item hops are charged in every layer: exchange records and one-sided requests too, not only
    # streamer items. 100x the cost per item hop must show in each kernel's simulated time.
    for kernel in (["exchange", "--samples", "2", "--method", "crystal_router"], ["atomics", "--ops", "100"]):
        small = records("--platform", "torus:2x2:2", "--ranks", "8", "--", "bench", *kernel)[0]
        large = records("--platform", "torus:2x2:2", "--ranks", "8", "--set", "seconds_per_item=2.96e-5", "--",
                        "bench", *kernel)[0]
        ratio = large["simulated_seconds"] / small["simulated_seconds"]
        print(f"{kernel[0]}: {ratio:.2f}x the simulated time with 100x the cost per item hop")
        if not ratio > 1.5:
            sys.exit(f"simulate_check: bench {kernel[0]}: 100x the cost per item hop moved simulated time only "
                     f"{ratio:.2f}x: its records are not charged")


def check_measured():
    r = records("--platform", "torus:2x2:4", "--ranks", "16", "--mode", "measured", "--",
                "bench", "histogram", "--items-per-pe", "4096")[0]
    print(json.dumps(r))
    if r["mode"] != "measured":
        sys.exit("simulate_check: the record does not say measured")


KERNELS = {  # small runs of every kernel scripts/simulate accepts
    "alltoall": ["--items-per-pe", "1024"], "atomics": ["--ops", "100", "--warmup", "10"],
    "exchange": ["--samples", "2"], "histogram": ["--items-per-pe", "1024"], "hotspot": ["--iterations", "10"],
    "index-gather": ["--items-per-pe", "1024"], "phold": ["--items-per-pe", "1024"],
    "randomaccess": ["--items-per-pe", "1024"], "route-step": ["--items-per-pe", "65536"], "vector": [],
    "payload": ["--payload-bytes", "1048576"], "halo": ["--steps", "2"], "bipartite": ["--persons", "4096"],
}
# Kernels run a second way: captureless active-message handlers find their PE's state without
# per-rank copies of globals (scripts/simulate runs SMPI without privatization).
# And a kernel option the runner adds itself (--json), given by the user too: passed once.
VARIANTS = [("histogram", ["--items-per-pe", "1024", "--api", "active"]),
            ("phold", ["--items-per-pe", "1024", "--api", "active"]),
            ("histogram", ["--items-per-pe", "1024", "--json"]),
            # Every PE locks PE 0's mutex, PE 0 too, where nodes share no memory: PE 0's own lock
            # needs no message, the others' requests arrive while PE 0 waits in another endpoint
            # (its array's sync). Deadlocked in simulation until 2026-11-28.
            ("hotspot", ["--op", "lock", "--contention", "100", "--ops", "2", "--iterations", "2", "--topology", "fcg"])]


def check_kernels():
    sys.path.insert(0, os.path.dirname(SIMULATE))
    accepted = set(json.loads(subprocess.run([sys.executable, SIMULATE, "--list-kernels"], capture_output=True,
                                             text=True, check=True).stdout))
    for kernel, options in sorted(KERNELS.items()):
        job = ["--platform", "torus:2x2:2", "--ranks", "8", "--", "bench", kernel, *options]
        if kernel in accepted:
            out = records(*job)
            print(f"{kernel}: {len(out)} records, verified, simulated {out[0]['simulated_seconds']} s")
        else:
            run = simulate(*job, expect_status=2)
            lines = run.stderr.strip().splitlines()
            if len(lines) != 1 or not lines[0].startswith(f"transit: error: kernel: got '{kernel}'"):
                sys.exit(f"simulate_check: {kernel} refused without the one-line error: {run.stderr}")
            print(f"{kernel}: refused: {lines[0]}")
    for kernel, options in VARIANTS:
        out = records("--platform", "torus:2x2:2", "--ranks", "8", "--", "bench", kernel, *options)
        print(f"{kernel} {' '.join(options)}: {len(out)} records, verified")
    missing = accepted - set(KERNELS)
    if missing:
        sys.exit(f"simulate_check: kernels accepted but not run here: {sorted(missing)}")


def check_deadlock():
    transit = os.environ.get("TRANSIT_SIM", os.path.join(os.path.dirname(SIMULATE), "..", "build-sim", "bin", "transit"))
    stuck = os.path.join(os.path.dirname(transit), "transit_stuck")
    job = ["--platform", "torus:2x2:2", "--ranks", "8", "--program", stuck, "--"]
    run = simulate(*job, expect_status=1)
    reports = [line for line in run.stderr.splitlines() if " deadlock at simulated time " in line]
    print("\n".join(reports))
    if len(reports) != 8 or not all(f"transit: PE {pe}: deadlock" in reports[pe] for pe in range(8)):
        sys.exit(f"simulate_check: expected one deadlock line per PE, in rank order:\n{run.stderr}")
    if not reports[1].endswith("this one in barrier") or "in streamer wait" not in reports[0]:
        sys.exit(f"simulate_check: the report does not say where PEs wait:\n{run.stderr}")
    if "streamer<int64> step 0" not in run.stderr:
        sys.exit(f"simulate_check: the report lacks the streamers' state:\n{run.stderr}")
    watched = simulate(*job, expect_status=1, env=dict(os.environ, TRANSIT_WATCHDOG="0.001"))
    if "watchdog: no progress for 0.001" not in watched.stderr:
        sys.exit(f"simulate_check: with TRANSIT_WATCHDOG=0.001 no watchdog report:\n{watched.stderr}")
    print("with the watchdog:", next(l for l in watched.stderr.splitlines() if "watchdog:" in l))


def exchange(platform, method, *settings):
    """One method of `bench exchange` (8 ranks, every PE sends a parcel to every other) with the
    calibration changed by settings: its record (the method's fields merged in), verified."""
    record = records("--platform", platform, "--ranks", "8", *settings, "--", "bench", "exchange",
                     "--pattern", "dense", "--samples", "3", "--method", method)[0]  # verified
    if record.get("method") != method:
        sys.exit(f"simulate_check: exchange --method {method} gave a record of {record.get('method')}")
    return record


def check_fair():
    """One cost model for everything that sends: a baseline's message (MPI_Alltoallv inside SMPI)
    pays the MPI library's share of the per-message overheads (the calibration's mpi_share; bgq's
    0.47) and a transit message the whole, at both ends; a node's message rate limits what its PEs
    inject together."""
    # Every cost as bgq's but the overhead at each end, cheap then dear (never 0: a sample repeats
    # exchanges until it lasts 2 ms of simulated time, thousands of them when they cost nothing).
    cheap, dear = 1e-6, 1e-4
    paid = {}
    # mpi_neighbor_fixed: point-to-point messages posted by transit's emulation of Open MPI's
    # neighbourhood collective (SMPI has none), charged as a baseline's.
    for method in ("direct", "mpi_alltoallv", "mpi_neighbor_fixed"):
        low = exchange("torus:2x2:2", method, "--set", f"seconds_per_message={cheap!r}")
        high = exchange("torus:2x2:2", method, "--set", f"seconds_per_message={dear!r}")
        per_pe = high["messages_sent"] / 8  # per exchange (summed over PEs in the record)
        paid[method] = (high["seconds_per_exchange"] - low["seconds_per_exchange"]) / per_pe / (dear - cheap)
        share = high["mpi_share"]
        print(f"{method}: {per_pe:g} messages per PE per exchange; {low['seconds_per_exchange']:.3e} s per exchange "
              f"at {cheap:g} s per message and end, {high['seconds_per_exchange']:.3e} s at {dear:g}: "
              f"{paid[method]:.2f} overheads per message counted")
        # A PE receives about as many messages as it sends: two overheads per message counted
        # (MPI's share of them for a baseline's). Neither count is exact (transit's consensus
        # allreduce and SMPI's own algorithms send messages the records do not count), but a
        # message charged at one end only pays one.
        whole = 1.0 if method == "direct" else share
        if not 1.3 * whole <= paid[method] <= 4 * whole:
            sys.exit(f"simulate_check: exchange {method}: {paid[method]:.2f} overheads per message and PE, expected "
                     f"about {2 * whole:.2f} (one at the sender, one at the receiver, times {whole:g})")
    if not 0 < share < 1:
        sys.exit(f"simulate_check: the runs recorded mpi_share {share}, expected bgq's share below 1")
    for baseline in ("mpi_alltoallv", "mpi_neighbor_fixed"):
        ratio = paid[baseline] / paid["direct"]
        print(f"a {baseline} message pays {ratio:.2f}x what a transit message pays (mpi_share {share:g})")
        if not 0.6 * share <= ratio <= 1.4 * share:
            sys.exit(f"simulate_check: {baseline}'s messages pay {ratio:.2f}x what transit's pay, expected MPI's "
                     f"share of them, {share:g}x")

    # MPI_Alltoallv as the machine's MPI runs it: with 6 partners of 63, MPICH's (mpi_library
    # mpich: the paper calibrations') sends only the 6 messages, as the neighbour exchange does;
    # Open MPI's (3.1 and later, this host's) sends all 63, empty ones included.
    sparse = ["--platform", "torus:4x4:4", "--ranks", "64", "--calibration", "xe6"]
    per_exchange = {}
    for library in ("mpich", "open-mpi"):
        for method in ("mpi_alltoallv_fixed", "mpi_neighbor_fixed"):
            record = records(*sparse, "--set", f"mpi_library={library}", "--", "bench", "exchange", "--neighbors", "6",
                             "--samples", "3", "--method", method)[0]  # verified
            if record.get("mpi_library") != library:
                sys.exit(f"simulate_check: a run with mpi_library={library} recorded {record.get('mpi_library')}")
            per_exchange[library, method] = record["seconds_per_exchange"]
        ratio = per_exchange[library, "mpi_alltoallv_fixed"] / per_exchange[library, "mpi_neighbor_fixed"]
        print(f"{library}: MPI_Alltoallv takes {ratio:.2f}x the neighbour exchange's time, 6 partners of 63")
        if library == "mpich" and not 0.8 <= ratio <= 1.3:
            sys.exit(f"simulate_check: MPICH's MPI_Alltoallv took {ratio:.2f}x the neighbour exchange, expected about 1x "
                     f"(it skips empty counts)")
        if library == "open-mpi" and not ratio >= 3:
            sys.exit(f"simulate_check: Open MPI's MPI_Alltoallv took {ratio:.2f}x the neighbour exchange, expected at "
                     f"least 3x (a message to each of 63 peers)")

    # Senders of every kind pay too: the flat hot spot's PE 0 answers each request with a blocking
    # MPI_Send (which SMPI 3.32 charges nothing: src/core/simulation.cpp), the flat lock server
    # grants with one, and MPI RMA's messages are SMPI's own. 7 PEs aim 50 x 3 operations each at
    # PE 0, which serves them one at a time, so the measured time grows by the overheads each
    # request costs PE 0 in turn:
    # - fetch-add and get: 2 (the request's receipt, the reply's send);
    # - lock: 4 (the critical section holds the lock through the grant's send and receipt, and the
    #   release's send and receipt);
    # - MPI_Get (mpi-rma): 2, both at the origin (SMPI starts the target's reply itself, as RDMA
    #   hardware serves a get without the target's CPU), so per operation of one PE, not of PE 0.
    remote = 7 * 50 * 3
    for op, route, expected, per in (("fetch-add", ("--scheme", "mpi-raw"), (1.7, 2.6), remote),
                                     ("get", ("--scheme", "mpi-raw"), (1.7, 2.6), remote),
                                     ("lock", ("--scheme", "mpi-raw"), (3.4, 4.6), remote),
                                     ("get", ("--topology", "mpi-rma"), (1.5, 3.0), 50 * 3)):
        seconds = []
        for overhead in (cheap, dear):
            record = records("--platform", "torus:2x2:2", "--ranks", "8", "--set", f"seconds_per_message={overhead!r}",
                             "--", "bench", "hotspot", "--op", op, "--contention", "100", "--ops", "50",
                             "--iterations", "3", *route, "--json")[0]  # verified
            seconds.append(record["seconds"])
        # In MPI's share of an overhead: every message of these baselines is a plain MPI message.
        counted = (seconds[1] - seconds[0]) / per / (dear - cheap) / record["mpi_share"]
        print(f"hot spot {op} {' '.join(route)}: {seconds[0]:.3e} s at {cheap:g} s per message and end, "
              f"{seconds[1]:.3e} s at {dear:g}: {counted:.2f} of MPI's overheads per operation")
        if not expected[0] <= counted <= expected[1]:
            sys.exit(f"simulate_check: hot spot {op} {' '.join(route)}: {counted:.2f} overheads per operation, expected "
                     f"{expected[0]}-{expected[1]}: a message of the baseline goes uncharged or is charged twice")

    # The NIC: 100 us per message a node injects. MPI_Alltoallv's counts and data are P - 1
    # messages each per PE, P - (PEs per node) of them to other nodes.
    rate = 1e4
    limited = ["--set", f"nic_messages_per_second={rate!r}"]
    times = {}
    for platform, per_node in (("torus:2x2:2", 2), ("torus:2x2x2:1", 1)):
        free = exchange(platform, "mpi_alltoallv")
        slow = exchange(platform, "mpi_alltoallv", *limited)
        injected = per_node * (8 - per_node) * 2
        bound = injected / rate
        times[per_node] = slow["seconds_per_exchange"]
        print(f"{platform}: {free['seconds_per_exchange']:.3e} s per exchange without a message rate, "
              f"{slow['seconds_per_exchange']:.3e} s at {rate:g} messages per second per node: {injected} "
              f"messages leave each node, at least {bound:.3e} s")
        if not slow["seconds_per_exchange"] >= 0.95 * bound:
            sys.exit(f"simulate_check: {platform}: an exchange took {slow['seconds_per_exchange']:.3e} s, below "
                     f"the {bound:.3e} s its nodes need to inject {injected} messages at {rate:g} per second")
    expected = (2 * 6) / (1 * 7)
    if not times[2] / times[1] > 0.8 * expected:
        sys.exit(f"simulate_check: two PEs per node took {times[2] / times[1]:.2f}x the time of one, expected about "
                 f"{expected:.2f}x: the PEs of a node share its interface")

    # A baseline's barrier is the one MPI libraries run (a dissemination barrier: log2 P rounds),
    # not SMPI's MPI_Ibarrier through rank 0 (P - 1 messages there). The NBX end of a one-update
    # step (bench/mpi_raw.cpp) then costs about twice at 64 ranks what it costs at 8 (6 rounds
    # against 3); through rank 0 it cost 6.2x.
    steps = {}
    for platform, ranks in (("torus:2x2:2", 8), ("torus:2x2:16", 64)):
        out = records("--platform", platform, "--ranks", str(ranks), "--", "bench", "histogram", "--items-per-pe",
                      "1", "--steps", "5", "--scheme", "mpi-raw", "--json")
        steps[ranks] = out[0]["median_step_seconds"]
        print(f"NBX step at {ranks} ranks ({platform}): {steps[ranks]:.3e} s")
    if not steps[64] <= 3 * steps[8]:
        sys.exit(f"simulate_check: the NBX step took {steps[64] / steps[8]:.2f}x as long at 64 ranks as at 8, "
                 f"expected at most 3x (a barrier of log2 P rounds)")


def check_census():
    """No message goes uncharged: the census of each run (src/core/simulation.cpp: every message
    SimGrid transferred, and every send that paid its sender's overhead through transit's cost
    callbacks) has as many charged as transferred. Set-up included (communicator duplicates and
    splits, the launch's allreduce and allgather, a window's creation), on 5 ranks of one PE per
    node and on 12 of 2 per node: SMPI's binomial broadcast (MPI_Comm_dup's) and Open MPI's tree
    barrier send with the library's blocking send, which pays nothing, and recursive doubling's
    folds only appear where the rank count is no power of two."""
    kernels = {
        "streamer": ["bench", "histogram", "--items-per-pe", "2000"],
        "NBX step": ["bench", "histogram", "--items-per-pe", "16", "--steps", "3", "--scheme", "mpi-raw"],
        "one MPI_Isend per item": ["bench", "histogram", "--items-per-pe", "200", "--scheme", "none"],
        "flat hot spot fetch-add": ["bench", "hotspot", "--op", "fetch-add", "--contention", "100", "--ops", "20",
                                    "--iterations", "2", "--scheme", "mpi-raw"],
        "flat hot spot get": ["bench", "hotspot", "--op", "get", "--contention", "100", "--ops", "20",
                              "--iterations", "2", "--scheme", "mpi-raw"],
        "flat lock server": ["bench", "hotspot", "--op", "lock", "--contention", "100", "--ops", "20",
                             "--iterations", "2", "--scheme", "mpi-raw"],
        "MPI_Get": ["bench", "hotspot", "--op", "get", "--contention", "100", "--ops", "20", "--iterations", "2",
                    "--topology", "mpi-rma"],
        "global array fetch-add (mfcg)": ["bench", "hotspot", "--op", "fetch-add", "--contention", "100", "--ops",
                                          "20", "--iterations", "2", "--topology", "mfcg"],
    }
    for method in ("direct", "crystal_router", "mpi_alltoallv", "mpi_neighbor"):
        kernels[f"exchange {method}"] = ["bench", "exchange", "--method", method, "--samples", "3"]
    settings = {"exchange mpi_alltoallv_fixed, MPICH's": ["--set", "mpi_library=mpich"]}
    kernels["exchange mpi_alltoallv_fixed, MPICH's"] = ["bench", "exchange", "--method", "mpi_alltoallv_fixed",
                                                       "--neighbors", "2", "--samples", "3"]
    for platform, ranks in (("torus:5:1", "5"), ("torus:2x3:2", "12")):
        for name, kernel in kernels.items():
            record = records("--platform", platform, "--ranks", ranks, *settings.get(name, []), "--",
                             *kernel)[0]  # verified
            messages, charged = record.get("run_messages"), record.get("run_messages_charged")
            if not isinstance(messages, int) or not isinstance(charged, int):
                sys.exit(f"simulate_check: {name} on {ranks} ranks: no message census in the record "
                         f"(run_messages {messages}, run_messages_charged {charged})")
            print(f"{name}, {ranks} ranks: {messages} messages, {charged} charged")
            if messages == 0 or charged != messages:
                sys.exit(f"simulate_check: {name} on {ranks} ranks ({platform}): {charged} of {messages} messages "
                         f"paid their sender's overhead, expected all of them")


def check_progress():
    """On a terminal (stderr a pty here), scripts/simulate shows rank 0's progress line with the
    simulated and the real time, redrawn with '\\r' and erased; with --quiet, or piped (every other
    check), none: the records on stdout are the same."""
    import pty
    job = ["--platform", "torus:2x2:2", "--ranks", "8", "--", "bench", "histogram", "--items-per-pe", "4096",
           "--repeat", "2"]
    for quiet in (False, True):
        leader, follower = pty.openpty()
        arguments = ["--quiet", *job] if quiet else job
        run = subprocess.Popen([sys.executable, SIMULATE, *arguments], stdout=subprocess.PIPE, stderr=follower,
                               text=True)
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the pty's other end is closed
                break
            if not chunk:
                break
            seen += chunk
        out = run.communicate(timeout=600)[0]
        os.close(leader)
        text = seen.decode(errors="replace")
        records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        if run.returncode != 0 or len(records) != 2 or not all(r["verified"] for r in records):
            sys.exit(f"simulate_check: progress: status {run.returncode}, records:\n{out}\nterminal:\n{text!r}")
        drawn = "\rbench histogram: run 1/2, simulated " in text
        print(f"{'--quiet' if quiet else 'terminal'}: {text!r}")
        if drawn == quiet:
            sys.exit(f"simulate_check: progress: {'a line with --quiet' if quiet else 'no progress line'}: {text!r}")
        if "transit progress:" in text:
            sys.exit(f"simulate_check: progress: a raw progress line reached the terminal: {text!r}")
        # Erased (back, spaces over it, back) after the last one is drawn, before the job's other
        # stderr lines, which the script prints once the job has ended.
        last = text.rfind("bench histogram: run ")
        if not quiet and not re.search(r"\r +\r", text[last:]):
            sys.exit(f"simulate_check: progress: the line was not erased at the end: {text!r}")


def check_anchor():
    job = ["--platform", "switch:4:2", "--ranks", "8", "--calibration", "anchor", "--",
           "bench", "histogram", "--items-per-pe", "4096"]
    first, second = records(*job)[0], records(*job)[0]
    print(json.dumps(first))
    if (first["seconds"], first["simulated_seconds"]) != (second["seconds"], second["simulated_seconds"]):
        sys.exit(f"simulate_check: anchor: simulated times differ between two runs: {first} {second}")


def check_make_sim():
    """`make sim` alone builds what scripts/simulate runs: the simulation build's transit and the
    normal build's, which writes the platform (a dry run of make: nothing is built here)."""
    root = os.path.dirname(os.path.dirname(SIMULATE))
    run = subprocess.run(["make", "-n", "-C", root, "sim", "BUILD=build"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"simulate_check: make -n sim: status {run.returncode}\n{run.stderr}")
    commands = [line.split() for line in run.stdout.splitlines()]
    builds = [c for c in commands if c[:3] == ["cmake", "--build", "build"] and "transit_cli" in c]
    sims = [c for c in commands if c[:3] == ["cmake", "--build", "build-sim"]]
    print("\n".join(" ".join(c) for c in builds + sims))
    if not builds or not sims:
        sys.exit(f"simulate_check: make sim does not build both build/bin/transit (target transit_cli) and "
                 f"build-sim:\n{run.stdout}")


CHECKS = {"make_sim": check_make_sim, "progress": check_progress, "fair": check_fair, "census": check_census, "modelled": check_modelled, "measured": check_measured, "kernels": check_kernels,
          "deadlock": check_deadlock, "anchor": check_anchor}
if len(sys.argv) != 2 or sys.argv[1] not in CHECKS:
    sys.exit(f"usage: simulate_check.py {'|'.join(CHECKS)}")
CHECKS[sys.argv[1]]()
