#!/usr/bin/env bash
# bench/sim/anchor.sh: an anchor against reality (issue 39, item 4). One small configuration, 8
# ranks on 4 hosts x 2, run on the emulated cluster (scripts/cluster, docs/cluster.md: Open MPI over
# TCP between hosts, shared memory within; 50 us one way, 1 gbit/s per host link) and simulated
# (scripts/simulate) on the same machine as SimGrid sees it, with costs measured on the cluster;
# prints simulated against measured for the histogram, the all-to-all, the exchange and the hot spot.
#
#   bench/sim/anchor.sh [--hosts H] [--ranks-per-host K] [--repeat R] [--sim-repeat S] [--calibrations C]
#                       [--out FILE.jsonl] [--quick] [--transit PATH] [--sim PATH] [--netdelay PATH]
#
# 1. The calibration `anchor` (written to scripts/calibrations/anchor.json by bench/sim/anchor.py):
#    `transit calibrate streamer` C times (default 3) on the cluster with no latency or rate set, two
#    ranks on two hosts (the costs of a message over TCP between hosts: the per-message overheads by
#    size, per byte, per item) and two ranks on one host (shared memory's bandwidth); the network's
#    latency and rate from `scripts/cluster measure` with them set. Without the latency and the rate
#    because the platform adds both: calibrated through them, the streaming curve's time per message
#    holds the wire (55-100 us per small message at 50 us) and the simulation would pay it twice.
#    --calibrations 0: none, the simulations take scripts/calibrations/anchor.json as it is.
# 2. On the cluster, R rounds (default 5), each running every bench once (rounds alternate the
#    benches, so a burst of load from other jobs lands on one sample of several benches): ranks
#    dealt in blocks (`--map-by ppr:2:node`, ranks 2h and 2h+1 on host h), as scripts/simulate's
#    hostfile places them (PE slot s on node s / 2), so that both run the same grids.
# 3. The same benches simulated on `switch:4:2` (SimGrid's flat cluster: each host a link of the
#    measured rate and half the measured latency to one switch) with the anchor calibration:
#    modelled (deterministic, once); "contended", modelled with the CPU costs x ranks / cores (8
#    ranks share this machine's cores on the cluster, not in the simulation; left out when the
#    ranks fit the cores); and measured mode (SMPI times this host's CPU 1:1) S times (default 3).
# 4. The table (bench/sim/anchor.py table): cluster median, min-max and samples; each simulated
#    side's median and its ratio to the cluster's. Every record goes to FILE (default
#    /tmp/transit-anchor.jsonl) with `side` (cluster, modelled, contended, measured) and `round`.
# --hosts H --ranks-per-host K (default 4 and 2) run another shape, on switch:H:K (2 and 1: no
# core shared, H x K at most the cores).
# --quick: 2 rounds, smaller benches, one calibration, for a check that it works. Needs root (the
# cluster), `make build sim` (or --transit / --sim) and tools/netdelay. About 20 minutes at the
# defaults on this 2-core machine (3 at 2 hosts x 1). The cluster is called "anchor"
# (TRANSIT_CLUSTER_NAME overrides); it is taken down at the end.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
transit=$root/build/bin/transit
sim=$root/build-sim/bin/transit
hosts=4 ranks_per_host=2 repeat=5 sim_repeat=3 calibrations=3 quick="" netdelay=()
out=${TMPDIR:-/tmp}/transit-anchor.jsonl
while [ $# -gt 0 ]; do
  case $1 in
    --hosts) hosts=$2; shift 2 ;;
    --ranks-per-host) ranks_per_host=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --sim-repeat) sim_repeat=$2; shift 2 ;;
    --calibrations) calibrations=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick=yes; shift ;;
    --transit) transit=$2; shift 2 ;;
    --sim) sim=$2; shift 2 ;;
    --netdelay) netdelay=(--netdelay "$2"); shift 2 ;;
    *) echo "bench/sim/anchor.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
for count in "$hosts" "$ranks_per_host" "$repeat" "$sim_repeat"; do
  [[ $count =~ ^[1-9][0-9]*$ ]] || { echo "bench/sim/anchor.sh: got '$count', expected a positive count" >&2; exit 2; }
done
[[ $calibrations =~ ^[0-9]+$ ]] || { echo "bench/sim/anchor.sh: --calibrations: got '$calibrations', expected a count (0: none)" >&2; exit 2; }
[ -x "$transit" ] || { echo "bench/sim/anchor.sh: no transit command at $transit (make build, or --transit PATH)" >&2; exit 1; }
[ -x "$sim" ] || { echo "bench/sim/anchor.sh: no simulation build at $sim (make sim, or --sim PATH)" >&2; exit 1; }
export TRANSIT_TOOL=$transit TRANSIT_SIM=$sim

[ "$hosts" -ge 2 ] || { echo "bench/sim/anchor.sh: --hosts: got '$hosts', expected at least 2 (TCP between hosts)" >&2; exit 2; }
latency=50us rate=1gbit
ranks=$((hosts * ranks_per_host)) platform=switch:$hosts:$ranks_per_host
name=${TRANSIT_CLUSTER_NAME:-anchor}
cluster=("$root/scripts/cluster" --name "$name")
trap '"${cluster[@]}" down >/dev/null 2>&1 || true; rm -rf "$workdir"' EXIT
# A profile of the script's own: calibrate writes one, and nothing here should read the user's.
export TRANSIT_PROFILE=$workdir/profile.json

items=1048576 iterations=30
[ -n "$quick" ] && { repeat=2 sim_repeat=1 calibrations=1 items=65536 iterations=10; }
benches=(
  "histogram --items-per-pe $items --repeat 3"
  "alltoall --items-per-pe $items --repeat 3"
  "exchange --method all --samples 7"
  "exchange --method all --samples 7 --bytes 65536"
  "hotspot --iterations $iterations --repeat 3"
  "hotspot --scheme mpi-raw --iterations $iterations --repeat 3"
  # Aggregation on and off, for the verdicts (anchor.py verdicts): a message per item costs the
  # cluster tens of microseconds, so fewer items.
  "histogram --items-per-pe $((items / 64)) --repeat 3"
  "histogram --items-per-pe $((items / 64)) --repeat 3 --scheme none"
)

# 1. The calibration, on the cluster with nothing set on its links.
"${cluster[@]}" up --hosts "$hosts" --latency 0 --rate 0 "${netdelay[@]}" >&2
"${cluster[@]}" measure >&2
cp "/run/transit-cluster/$name/measured.json" "$workdir/base.json"
inter=() intra=()
for ((c = 0; c < calibrations; c++)); do
  "${cluster[@]}" run -- mpirun -np 2 --map-by node "$transit" calibrate streamer --json --quiet >"$workdir/inter-$c.json"
  "${cluster[@]}" run -- mpirun -np 2 --host "$name-h0:2" "$transit" calibrate streamer --json --quiet >"$workdir/intra-$c.json"
  inter+=("$workdir/inter-$c.json") intra+=("$workdir/intra-$c.json")
done
"${cluster[@]}" up --hosts "$hosts" --latency "$latency" --rate "$rate" "${netdelay[@]}" >&2
"${cluster[@]}" measure >&2
cp "/run/transit-cluster/$name/measured.json" "$workdir/network.json"
if [ "$calibrations" -gt 0 ]; then
  python3 "$root/bench/sim/anchor.py" calibration --inter "${inter[@]}" --intra "${intra[@]}" \
    --network "$workdir/network.json" --base "$workdir/base.json" --pes-per-node "$ranks_per_host" \
    >"$root/scripts/calibrations/anchor.json"
  echo "anchor: calibration written to scripts/calibrations/anchor.json" >&2
fi

: >"$out"
python3 - "$out" "$workdir/network.json" "$hosts hosts x $ranks_per_host ranks, latency $latency, $rate per host" <<'EOF'
import datetime, json, os, sys
out, measured, description = sys.argv[1:]
machine = f"{os.cpu_count()} cores, " + next(
    (l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
with open(out, "a") as f:
    f.write(json.dumps({"kind": "network", "description": description, "machine": machine,
                        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%FT%TZ"),
                        **json.load(open(measured))}) + "\n")
EOF

# tag SIDE ROUND: the JSON lines of stdin, each with side and round added, appended to $out.
tag() {
  grep '^{' | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line); r["side"] = sys.argv[1]; r["round"] = int(sys.argv[2]); print(json.dumps(r))' "$1" "$2" >>"$out"
}

# load WHEN: the machine's load average (other developers' jobs share it), as a record.
load() {
  python3 -c 'import json, sys; print(json.dumps({"kind": "load", "when": sys.argv[1], "loadavg": " ".join(open("/proc/loadavg").read().split()[:3])}))' "$1" >>"$out"
}

# 2. The cluster: rounds over the benches.
load "before the cluster's rounds"
for ((round = 0; round < repeat; round++)); do
  for bench in "${benches[@]}"; do
    read -ra args <<<"$bench"
    if ! "${cluster[@]}" run -- mpirun -np "$ranks" --map-by "ppr:$ranks_per_host:node" "$transit" bench "${args[@]}" --json \
      >"$workdir/cluster.out" 2>"$workdir/cluster.err"; then
      echo "anchor: FAILED on the cluster: transit bench $bench" >&2
      cat "$workdir/cluster.err" >&2
      exit 1
    fi
    tag cluster "$round" <"$workdir/cluster.out"
    printf '.' >&2
  done
done
echo >&2
load "after the cluster's rounds"
"${cluster[@]}" down >&2

# 3. The simulations, one at a time and niced: other developers share the machine.
renice -n 5 -p $$ >/dev/null
contended=()
[ "$ranks" -gt "$(nproc)" ] && mapfile -t contended < <(python3 "$root/bench/sim/anchor.py" scale "$((ranks / $(nproc)))")
# simulate SIDE ROUND BENCH [SIMULATE-OPTIONS...]: one simulated run, its records tagged.
simulate() {
  local side=$1 round=$2 bench=$3
  shift 3
  read -ra args <<<"$bench"
  sim_run --timeout 900 -- --platform "$platform" --ranks "$ranks" --calibration anchor --quiet "$@" -- bench "${args[@]}"
  sim_record --all >"$workdir/sim.out" || exit 1
  tag "$side" "$round" <"$workdir/sim.out"
  printf '.' >&2
}
for bench in "${benches[@]}"; do
  simulate modelled 0 "$bench" --mode modelled
  [ ${#contended[@]} -gt 0 ] && simulate contended 0 "$bench" --mode modelled "${contended[@]}"
  for ((round = 0; round < sim_repeat; round++)); do simulate measured "$round" "$bench" --mode measured; done
done
echo >&2

# 4. The table.
python3 "$root/bench/sim/anchor.py" table "$out"
python3 "$root/bench/sim/anchor.py" verdicts "$out"
echo "records: $out"
