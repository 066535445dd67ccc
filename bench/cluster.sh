#!/usr/bin/env bash
# bench/cluster.sh: the thesis's streaming all-to-all (section 4.6) and histogram on the emulated
# cluster (scripts/cluster, docs/cluster.md): 4 hosts x 2 ranks, 50 us one-way latency, 1 gbit/s
# per host link, Open MPI over TCP between hosts (mpirun --map-by node).
#
#   bench/cluster.sh [--transit PATH] [--repeat R] [--out FILE.jsonl] [--plot DIR] [--quick]
#
# Schemes: --scheme none (one message per item), direct, 2-D (2x4, 4x2) and 3-D (2x2x2) grids, and
# node-aware (nodes x PEs), each at several items per PE (none at the smaller sizes only: it sends
# a message per item). Then histogram (2^20 updates per PE, the issue's setting) with the grid and
# node-aware schemes; and histogram in the settings of the conveyors figures quoted in issue 9
# (4 ranks on one host over TCP; 2 hosts x 2 ranks). Prints a table (medians of R runs, ratio to none at the same size) and
# writes every record as a JSON line to FILE (default /tmp/transit-bench-cluster.jsonl) with the
# emulated network's parameters as set and as measured; --plot DIR draws them with tools/plot.py
# (thesis figs 4.2-4.5). --quick: fewer sizes, for a check that it works. About 2 minutes at R=3.
# The conveyors-over-MPI figures quoted in issue 9 are written as reference records: they were
# measured by hand, not by this script (bale is not vendored).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
transit=$repo/build/bin/transit
repeat=3
out=${TMPDIR:-/tmp}/transit-bench-cluster.jsonl
plot_dir=""
quick=""
while [ $# -gt 0 ]; do
  case $1 in
    --transit) transit=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --plot) plot_dir=$2; shift 2 ;;
    --quick) quick=yes; shift ;;
    *) echo "bench/cluster.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -x "$transit" ] || { echo "bench/cluster.sh: no transit command at $transit (build first, or --transit PATH)" >&2; exit 1; }

hosts=4 ranks_per_host=2 latency=50us rate=1gbit
name=${TRANSIT_CLUSTER_NAME:-bench}
cluster=("$repo/scripts/cluster" --name "$name")
"${cluster[@]}" up --hosts "$hosts" --latency "$latency" --rate "$rate"
trap '"${cluster[@]}" down >/dev/null' EXIT
"${cluster[@]}" measure | tee /tmp/transit-cluster-measure.txt
measured=$(tail -n +1 "/run/transit-cluster/$name/measured.json")

: >"$out"
network="$hosts hosts x $ranks_per_host ranks, latency $latency, $rate per host"
started=$(date -u +%FT%TZ)
python3 - "$out" "$measured" "$network" "$started" <<'EOF'
import json, os, subprocess, sys
out, measured, network, started = sys.argv[1:]
m = json.loads(measured)
machine = f"{os.cpu_count()} cores, " + next(
    (l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
with open(out, "a") as f:
    f.write(json.dumps({"kind": "network", "network": network, "date": started, "machine": machine, **m}) + "\n")
    # Issue 9's conveyors-over-MPI figures (histogram, 2^20 updates per PE), for reference only.
    f.write(json.dumps({"kind": "reference", "program": "conveyors over MPI (bale)", "kernel": "histogram",
                        "setting": "4 ranks on one host, OMPI_MCA_btl=self,tcp, oversubscribed",
                        "items_per_second_per_pe": [2.0e6, 2.2e6], "source": "issue 9"}) + "\n")
    f.write(json.dumps({"kind": "reference", "program": "conveyors over MPI (bale)", "kernel": "histogram",
                        "setting": "prototype emulated cluster, 2 hosts x 2 ranks (network parameters not recorded)",
                        "seconds": 2.5, "source": "issue 9"}) + "\n")
EOF

# bench ARGS...: one mpirun of `transit bench ... --json --repeat R` on the cluster, with the job
# shape in np and placement and Open MPI's transports in btl; every record gets the network's
# description.
np=$((hosts * ranks_per_host)) placement=(--map-by node) btl=self,vader,tcp
bench() {
  local records
  if ! records=$(OMPI_MCA_btl=$btl "${cluster[@]}" run -- mpirun -np "$np" "${placement[@]}" \
    "$transit" bench "$@" --json --repeat "$repeat" 2>/tmp/transit-cluster-bench.err); then
    echo "bench/cluster.sh: FAILED: transit bench $*" >&2
    cat /tmp/transit-cluster-bench.err >&2
    return 1
  fi
  grep '^{' <<<"$records" | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line); r["network"] = sys.argv[1]; print(json.dumps(r))' "$network" >>"$out"
  printf '.' >&2
}

if [ -n "$quick" ]; then
  aggregated_sizes=(4096 65536) none_sizes=(4096)
else
  aggregated_sizes=(1024 4096 16384 65536 262144 1048576) none_sizes=(1024 4096 16384)
fi
for n in "${none_sizes[@]}"; do bench alltoall --scheme none --items-per-pe "$n"; done
for n in "${aggregated_sizes[@]}"; do
  bench alltoall --grid direct --items-per-pe "$n"
  # Both 2-D shapes: under --map-by node (rank r on host r mod 4) the columns of 2x4 are hosts, so
  # it routes as node-aware does (one host crossing per item); 4x2 ignores the hosts.
  bench alltoall --grid 2x4 --items-per-pe "$n"
  bench alltoall --grid 4x2 --items-per-pe "$n"
  bench alltoall --grid 2x2x2 --items-per-pe "$n"
  # node-aware on the nodes x PEs grid: under --map-by node a host's ranks are not consecutive, and
  # only that grid places them by node.
  bench alltoall --scheme node-aware --grid node --items-per-pe "$n"
done
bench histogram --items-per-pe 1048576
bench histogram --scheme node-aware --grid node --items-per-pe 1048576

# The settings of the conveyors figures: 4 ranks on one host over Open MPI's TCP (inside host 0,
# so the traffic stays in the cluster's namespaces), and 2 hosts x 2 ranks.
np=4 placement=(--host "$name-h0:4") btl=self,tcp network="1 host x 4 ranks, Open MPI TCP within the host"
bench histogram --items-per-pe 1048576
"${cluster[@]}" up --hosts 2 --latency "$latency" --rate "$rate" >/dev/null
np=4 placement=(--map-by node) btl=self,vader,tcp network="2 hosts x 2 ranks, latency $latency, $rate per host"
bench histogram --items-per-pe 1048576
echo >&2

python3 - "$out" <<'EOF'
import json, statistics, sys
from collections import defaultdict
records = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
net = next(r for r in records if r.get("kind") == "network")
print(f"\nemulated network: {net['network']}; measured: ping rtt avg {net['rtt_avg_ms']} ms "
      f"(min {net['rtt_min_ms']}), tcp {net['tcp_mbit_s']} Mbit/s; {net['machine']}; {net['date']}")
runs = defaultdict(list)
networks = []
for r in records:
    if "kernel" in r and "items_per_second_per_pe" in r and "kind" not in r:
        runs[(r["network"], r["kernel"], r["scheme"], r["grid"], int(r["items_per_pe"]))].append(r)
        if r["network"] not in networks:
            networks.append(r["network"])
def med(rs, field):
    return statistics.median(r[field] for r in rs)
none_rate = {(k[0], k[4]): med(v, "items_per_second_per_pe") for k, v in runs.items() if k[1] == "alltoall" and k[2] == "none"}
has_inter = any("inter_node_messages" in r for rs in runs.values() for r in rs)
head = f"{'kernel':10} {'scheme':11} {'grid':6} {'items/PE':>9} {'median s':>10} {'items/s/PE':>11} {'x none':>7} {'messages':>9}"
head += f" {'inter-node':>10}" if has_inter else ""
for network in networks:
    print(f"\n{network}:\n{head}")
    for key in sorted((k for k in runs if k[0] == network), key=lambda k: (k[1], k[4], k[2] != "none", k[2], k[3])):
        rs = runs[key]
        _, kernel, scheme, grid, items = key
        rate = med(rs, "items_per_second_per_pe")
        none = none_rate.get((network, items)) if kernel == "alltoall" and scheme != "none" else None
        ratio = f"{rate / none:7.0f}" if none else f"{'':7}"
        line = (f"{kernel:10} {scheme:11} {grid:6} {items:9d} {med(rs, 'seconds'):10.4f} "
                f"{rate / 1e6:9.3f} M {ratio} {int(med(rs, 'messages_sent')):9d}")
        if has_inter:
            line += f" {int(med(rs, 'inter_node_messages')) if 'inter_node_messages' in rs[0] else '-':>10}"
        if not all(r.get("verified") for r in rs):
            line += "  NOT VERIFIED"
        print(line)
print()
for r in records:
    if r.get("kind") == "reference":
        figure = (f"{r['items_per_second_per_pe'][0] / 1e6:.1f}-{r['items_per_second_per_pe'][1] / 1e6:.1f} M updates/s/PE"
                  if "items_per_second_per_pe" in r else f"{r['seconds']} s")
        print(f"reference ({r['source']}): {r['program']}, {r['kernel']} 2^20 updates/PE, {r['setting']}: {figure}")
EOF
echo "records: $out"
if [ -n "$plot_dir" ]; then
  # Debian's python3, where scripts/setup installs matplotlib (another python3 may come first on PATH).
  plot_python=/usr/bin/python3
  [ -x "$plot_python" ] || plot_python=python3
  "$plot_python" "$repo/tools/plot.py" --out "$plot_dir" "$out"
fi
