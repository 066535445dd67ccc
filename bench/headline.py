#!/usr/bin/env python3
"""The headline figures of BENCHMARKS.md, measured in one sitting and written as one screen.

    bench/headline.py [--transit BIN] [--bale PREFIX] [--runs N] [--items-per-pe N] [--steps S] [--write FILE]

Each figure is a pair measured side by side: transit and its baseline, alternating, RUNS times
(default 5), on the same machine in the same minutes; the table gives the medians and their ratio.
Every run must verify itself (transit's records say "verified": true; bale's applications exit 0
after their own checks), or the script fails. The pairs:

- histogram, 8-byte updates, 2 ranks, --items-per-pe N (default 2^24): transit's streamer
  against the no-message limit (the same draws into a local table, reported by the same run:
  `fraction_of_limit`) and against one MPI_Isend per update (`--scheme mpi-raw`, 2^20 updates per
  PE: at about 1 M/s it reaches its rate long before);
- the per-message path: `--scheme none` (one message per item through transit) against
  `--scheme mpi-raw`;
- the end of a small step (1 update per PE, --steps S, default 20000): transit's `finish()` against the plain
  MPI program's NBX (MPI_Issend, then MPI_Ibarrier), medians of the step times;
- these two pairs run 3 x RUNS times: a run takes a fraction of a second, and on a VM whose MPI
  alternates between a fast and a slow state from one run to the next (rates 1.5x apart, for the
  baseline as for transit), 5 runs of each let the median fall on either state;
- when the Debian hpcc package is installed (`hpcc` on PATH): RandomAccess, 2 ranks, 2^16 words per
  PE, transit's `bench randomaccess` (HPCC's stream and look-ahead of 1024) against HPCC's own
  MPIRandomAccess (its hpccinf.txt at N=500 gives 2^16 words per PE; its own check must pass);
- with --bale PREFIX (bench/bale/build.sh's install): the histogram against bale's conveyors over
  plain MPI (PREFIX/bin/convey_histogram: the same kernel, draws and item, --items-per-pe N) and
  bale's histo over its conveyors over OpenSHMEM against `transit app histo` (same -n -T -s, -M 8:
  conveyor against streamer), each at 2, 4 and 8 ranks (4 and 8 oversubscribed on 2 cores, every
  program with Open MPI's mpi_yield_when_idle).

Without --write the table goes to standard output; with it, the text between the markers
`<!-- headline:begin -->` and `<!-- headline:end -->` of FILE is replaced. Exit status: 0, 1 a run
failed or did not verify, 2 bad usage.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

BEGIN, END = "<!-- headline:begin -->", "<!-- headline:end -->"
RAW_ITEMS = 1 << 20  # per PE, for one MPI_Isend per update
BALE_UPDATES = 5000000  # bale's histo -n default
BALE_TABLE = 1000
HPCC_EXAMPLE = "/usr/share/doc/hpcc/examples/_hpccinf.txt"  # the Debian hpcc package's input


def fail(status, message):
    print(f"headline: {message}", file=sys.stderr)
    sys.exit(status)


def mpi_env(ranks):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if ranks > (os.cpu_count() or 1):
        env["OMPI_MCA_mpi_yield_when_idle"] = "1"
    return env


def run(command, ranks, what):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=mpi_env(ranks))
    if result.returncode != 0:
        fail(1, f"{what} failed (exit status {result.returncode}): {' '.join(command)}\n{result.stderr[-2000:]}")
    return result.stdout


def verified_record(command, ranks, what):
    """A run that prints one JSON record, which must say verified: the record."""
    lines = [l for l in run(command, ranks, what).splitlines() if l.startswith("{")]
    if len(lines) != 1:
        fail(1, f"expected one JSON record from {' '.join(command)}, got {len(lines)}")
    record = json.loads(lines[0])
    if record.get("verified") is not True:
        fail(1, f"a run did not verify: {' '.join(command)}")
    return record


def bench_record(transit, ranks, args):
    """One `transit bench` run under mpirun: its JSON record."""
    command = ["mpirun", "--oversubscribe", "-n", str(ranks), transit, "bench", *args, "--json"]
    return verified_record(command, ranks, "transit bench")


def convey_record(bale, ranks, items):
    """One run of bale's conveyors over MPI on the histogram (convey_histogram): its JSON record."""
    command = ["mpirun", "--oversubscribe", "-n", str(ranks), os.path.join(bale, "bin", "convey_histogram"),
               "--items-per-pe", str(items)]
    return verified_record(command, ranks, "convey_histogram")


def conveyor_seconds(command, ranks, work, what):
    """A bale-style histo run (bale's or transit app's) writing JSON: its "Conveyor" time."""
    path = os.path.join(work, "histo.json")
    if os.path.exists(path):
        os.remove(path)
    run(command + ["-j", path], ranks, what)
    with open(path) as f:
        return float(json.load(f)["Conveyor"])


def hpcc_rate(hpcc, work):
    """One 2-rank run of the Debian hpcc package in WORK (its hpccinf.txt): MPIRandomAccess's
    updates per second per PE. HPCC checks its own table (at most 1% errors) and says so."""
    out = os.path.join(work, "hpccoutf.txt")
    if os.path.exists(out):
        os.remove(out)
    subprocess.run(["mpirun", "-n", "2", hpcc], cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=mpi_env(2), check=False)
    try:
        text = open(out).read()
    except OSError:
        fail(1, f"hpcc wrote no {out}")
    section = text.split("Begin of MPIRandomAccess section", 1)[-1]
    gups = re.search(r"^\s*([0-9.eE+-]+) Billion\(10\^9\) Updates\s+per second", section, re.M)
    if "Begin of MPIRandomAccess section" not in text or gups is None or "(passed)" not in section.split("End of", 1)[0]:
        fail(1, "hpcc's MPIRandomAccess did not report a passed run")
    return float(gups.group(1)) * 1e9 / 2


def alternate(runs, first, second):
    """RUNS alternating measurements of two callables: the two lists of values."""
    a, b = [], []
    for _ in range(runs):
        a.append(first())
        b.append(second())
    return a, b


def pair(transit, runs, first, second, field):
    """Medians of a record field over RUNS alternating 2-rank runs of two bench command lines."""
    a, b = alternate(runs, lambda: bench_record(transit, 2, first), lambda: bench_record(transit, 2, second))
    return statistics.median(r[field] for r in a), statistics.median(r[field] for r in b)


def machine():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, {platform.node()}"


def commit():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.run(["git", "-C", here, "log", "-1", "--format=%h"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt_rate(value):
    return f"{value / 1e6:.1f} M/s/PE"


def fmt_us(value):
    return f"{value * 1e6:.2f} us"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transit", default=None, help="the transit command (default build/bin/transit)")
    parser.add_argument("--bale", default=None, help="bale's install prefix (bench/bale/build.sh)")
    parser.add_argument("--runs", type=int, default=5)
    # 2^24: long enough that a run's start-up is below 5% of it
    parser.add_argument("--items-per-pe", type=int, default=1 << 24, help="histogram updates per PE")
    parser.add_argument("--steps", type=int, default=20000, help="steps of the small-step pair")
    parser.add_argument("--write", default=None, help="the markdown file whose headline block is replaced")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    transit = os.path.abspath(args.transit or os.path.join(root, "build", "bin", "transit"))
    if not os.access(transit, os.X_OK):
        fail(2, f"--transit: got '{transit}', expected the transit command (cmake --build build)")
    for name, value in (("--runs", args.runs), ("--items-per-pe", args.items_per_pe), ("--steps", args.steps)):
        if value < 1:
            fail(2, f"{name}: got {value}, expected a positive integer")
    if shutil.which("mpirun") is None:
        fail(2, "mpirun not found (scripts/setup installs Open MPI)")
    bale = None
    if args.bale is not None:
        bale = os.path.abspath(args.bale)
        for f in ("bin/histo", "bin/bale-oshrun", "bin/convey_histogram"):
            if not os.access(os.path.join(bale, f), os.X_OK):
                fail(2, f"--bale: got '{args.bale}', expected bench/bale/build.sh's install (no {f})")
    if args.write is not None:
        try:
            text = open(args.write).read()
        except OSError as e:
            fail(2, f"--write: got '{args.write}': {e.strerror}")
        if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
            fail(2, f"--write: got '{args.write}', expected one '{BEGIN}' before one '{END}'")

    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = []  # (figure, transit, baseline name, baseline value, ratio text, command)
    n = args.runs

    items = args.items_per_pe
    histogram = ["histogram", "--items-per-pe", str(items)]
    raw_items = ["histogram", "--items-per-pe", str(min(items, RAW_ITEMS)), "--scheme", "mpi-raw"]
    streamer, raw = alternate(n, lambda: bench_record(transit, 2, histogram), lambda: bench_record(transit, 2, raw_items))
    rate = statistics.median(r["items_per_second_per_pe"] for r in streamer)
    limit = statistics.median(r["limit_items_per_second_per_pe"] for r in streamer)
    fraction = statistics.median(r["fraction_of_limit"] for r in streamer)
    raw_rate = statistics.median(r["items_per_second_per_pe"] for r in raw)
    command = f"mpirun -n 2 transit bench histogram --items-per-pe {items}"
    rows.append(("histogram, 8 B, 2 ranks: fraction of the no-message limit", fmt_rate(rate),
                 "same draws into a local table", fmt_rate(limit), f"{fraction:.2f}", command))
    rows.append(("histogram, 8 B, 2 ranks: over one MPI_Isend per update", fmt_rate(rate), "`--scheme mpi-raw`",
                 fmt_rate(raw_rate), f"{rate / raw_rate:.1f}x",
                 f"{command}; --items-per-pe {min(items, RAW_ITEMS)} --scheme mpi-raw"))

    small = ["histogram", "--items-per-pe", str(min(items, 100000))]
    short_runs = 3 * n  # runs of a fraction of a second: see the docstring
    none_rate, raw_small_rate = pair(transit, short_runs, small + ["--scheme", "none"], small + ["--scheme", "mpi-raw"],
                                     "items_per_second_per_pe")
    rows.append(("per-message path (a message per item), 2 ranks", fmt_rate(none_rate), "`--scheme mpi-raw`",
                 fmt_rate(raw_small_rate), f"{none_rate / raw_small_rate:.2f}x",
                 f"mpirun -n 2 transit bench histogram --items-per-pe {min(items, 100000)} --scheme none; --scheme mpi-raw"))

    steps = ["histogram", "--items-per-pe", "1", "--steps", str(args.steps)]
    step_s, nbx_s = pair(transit, short_runs, steps, steps + ["--scheme", "mpi-raw"], "median_step_seconds")
    rows.append(("end of a small step (1 update per PE), 2 ranks", fmt_us(step_s), "NBX (`MPI_Issend`, `MPI_Ibarrier`)",
                 fmt_us(nbx_s), f"{nbx_s / step_s:.2f}x",
                 f"mpirun -n 2 transit bench histogram --items-per-pe 1 --steps {args.steps}; --scheme mpi-raw"))

    hpcc = shutil.which("hpcc")
    if hpcc is not None:
        # HPCC sizes its table from the HPL N of hpccinf.txt: N=500 on 2 ranks gives 2^16 words per
        # PE, the size of transit's default randomaccess (4 x 2^16 updates per PE, look-ahead 1024).
        with tempfile.TemporaryDirectory() as work:
            with open(HPCC_EXAMPLE) as f:
                lines_in = f.read().splitlines()
            lines_in[5] = re.sub(r"^\d+ ", "500  ", lines_in[5])
            lines_in[10] = re.sub(r"^\d+ ", "1 ", lines_in[10])
            with open(os.path.join(work, "hpccinf.txt"), "w") as f:
                f.write("\n".join(lines_in) + "\n")
            ra = ["randomaccess", "--table-log2", "16"]
            t, h = alternate(n, lambda: bench_record(transit, 2, ra), lambda: hpcc_rate(hpcc, work))
            t_rate = statistics.median(r["items_per_second_per_pe"] for r in t)
            h_rate = statistics.median(h)
            rows.append(("RandomAccess, 2 ranks, 2^16 words per PE", fmt_rate(t_rate), "HPCC's MPIRandomAccess",
                         fmt_rate(h_rate), f"{t_rate / h_rate:.2f}x",
                         "mpirun -n 2 transit bench randomaccess --table-log2 16; mpirun -n 2 hpcc (N=500)"))

    if bale is not None:
        for ranks in (2, 4, 8):
            t, b = alternate(n, lambda: bench_record(transit, ranks, histogram), lambda: convey_record(bale, ranks, items))
            t_rate = statistics.median(r["items_per_second_per_pe"] for r in t)
            b_rate = statistics.median(r["items_per_second_per_pe"] for r in b)
            shared = "" if ranks <= (os.cpu_count() or 1) else f", {ranks} on {os.cpu_count()} cores"
            rows.append((f"histogram, 8 B, {ranks} ranks{shared}: streamer over bale's conveyors over MPI",
                         fmt_rate(t_rate), "bale conveyor (MPI)", fmt_rate(b_rate), f"{t_rate / b_rate:.2f}x",
                         f"mpirun -n {ranks} transit bench histogram --items-per-pe {items}; "
                         f"convey_histogram --items-per-pe {items}"))
        with tempfile.TemporaryDirectory() as work:
            options = ["-n", str(BALE_UPDATES), "-T", str(BALE_TABLE), "-s", "122222", "-M", "8"]
            for ranks in (2, 4, 8):
                theirs = [os.path.join(bale, "bin", "bale-oshrun"), "--oversubscribe", "-n", str(ranks),
                          os.path.join(bale, "bin", "histo"), *options]
                ours = ["mpirun", "--oversubscribe", "-n", str(ranks), transit, "app", "histo", *options,
                        "--transit-backend=mpi"]
                b, t = alternate(n, lambda: conveyor_seconds(theirs, ranks, work, "bale's histo"),
                                 lambda: conveyor_seconds(ours, ranks, work, "transit app histo"))
                b_s, t_s = statistics.median(b), statistics.median(t)
                shared = "" if ranks <= (os.cpu_count() or 1) else f", {ranks} on {os.cpu_count()} cores"
                rows.append((f"histo (bale's app), {ranks} ranks{shared}: streamer over bale's conveyor",
                             fmt_rate(BALE_UPDATES / t_s), "bale conveyor (OpenSHMEM)", fmt_rate(BALE_UPDATES / b_s),
                             f"{b_s / t_s:.2f}x",
                             f"bale-oshrun -n {ranks} histo {' '.join(options)}; mpirun -n {ranks} transit app histo (same)"))

    invocation = " ".join(["bench/headline.py"] + (["--bale PREFIX"] if bale else []) + [f"--runs {n}"] +
                          ([f"--items-per-pe {items}"] if items != 1 << 24 else []) +
                          ([f"--steps {args.steps}"] if args.steps != 20000 else []) +
                          ([f"--write {os.path.basename(args.write)}"] if args.write else []))
    lines = [
        f"Measured {started} on {machine()}, transit {commit()}, by `{invocation}`: medians of {n} alternating runs of each pair"
        f" ({3 * n} of the per-message path and of the step), every run verified. Ratios are transit over its baseline (for the step, the baseline's time over transit's):"
        " above 1, transit is ahead.",
        "",
        "| figure | transit | baseline | baseline's | ratio | command |",
        "|---|---:|---|---:|---:|---|",
    ]
    for figure, ours, name, theirs, ratio, command in rows:
        lines.append(f"| {figure} | {ours} | {name} | {theirs} | **{ratio}** | `{command}` |")
    if bale is not None and os.cpu_count() and os.cpu_count() < 8:
        lines += ["", f"Above {os.cpu_count()} ranks the ranks share cores. bale's conveyors over OpenSHMEM wait by"
                  " polling, and a poller holds a core that the rank it waits for needs, so those ratios mostly"
                  " measure that; the conveyors over MPI are the baseline there (issue 53)."]
    block = "\n".join(lines)
    if args.write is None:
        print(block)
        return
    text = open(args.write).read()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(args.write, "w") as f:
        f.write(head + BEGIN + "\n" + block + "\n" + END + tail)
    print(block)


if __name__ == "__main__":
    main()
