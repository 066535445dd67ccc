#!/usr/bin/env bash
# bench/same_node_cluster.sh BEFORE AFTER [ROUNDS]: issue 41's "no regression between nodes", in one
# sitting on the emulated cluster (scripts/cluster, docs/cluster.md; needs root): 4 hosts x 2 ranks
# (mpirun --map-by node: transit's nodes are the hosts), 20 us one way, 10 gbit per host link,
# Open MPI over TCP between hosts. Polling mode (the default, mfcg) of two transit builds:
#   bench hotspot --op fetch-add --ops 10 --iterations 100 --contention C, C = 100 and 0 (mean_us);
#   bench atomics --ops 200 (first PE to the last, on another host: fetch_add_us, lock_us).
# Each job runs its kernel twice (--repeat 2) and keeps the second (the first pays for Open MPI's
# lazy TCP connections). ROUNDS rounds (default 5), before and after alternating; medians over
# rounds and after/before as a ratio of medians. Records go to $SAME_NODE_LOG (default
# /tmp/transit-same-node-cluster.jsonl).
set -euo pipefail
before=$1 after=$2 rounds=${3:-5}
log=${SAME_NODE_LOG:-/tmp/transit-same-node-cluster.jsonl}
: >"$log"
cluster=("$(dirname "${BASH_SOURCE[0]}")/../scripts/cluster" --name "${TRANSIT_CLUSTER_NAME:-samenode}")
"${cluster[@]}" up --hosts 4 --latency 20us --rate 10gbit >/dev/null
trap '"${cluster[@]}" down >/dev/null' EXIT
echo "machine: $(nproc) cores; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg); 4 hosts x 2 ranks, 20us, 10gbit"

# run VARIANT BINARY ARGS...: one job; its last record, tagged, into the log.
run() {
  local variant=$1 binary=$2; shift 2
  local out
  if ! out=$(OMPI_MCA_btl=self,vader,tcp "${cluster[@]}" run -- mpirun -np 8 --map-by node \
      "$binary" "$@" --repeat 2 --json 2>/tmp/transit-same-node-cluster.err); then
    echo "bench/same_node_cluster.sh: FAILED: $variant $*" >&2
    cat /tmp/transit-same-node-cluster.err >&2
    exit 1
  fi
  grep '^{' <<<"$out" | tail -n 1 | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
r["variant"], r["round"] = sys.argv[1], int(sys.argv[2])
print(json.dumps(r))' "$variant" "$round" >>"$log"
  printf '.' >&2
}

for round in $(seq 1 "$rounds"); do
  for contention in 100 0; do
    for variant in before after; do
      binary=$before; [ "$variant" = after ] && binary=$after
      run "$variant" "$binary" bench hotspot --op fetch-add --ops 10 --iterations 100 --contention "$contention"
    done
  done
  run before "$before" bench atomics --ops 200
  run after "$after" bench atomics --ops 200
done
echo >&2

python3 - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(variant, kernel, field, contention=None):
    v = [r[field] for r in rows if r["variant"] == variant and r["kernel"] == kernel
         and (contention is None or r.get("contention") == contention) and r.get(field) is not None]
    return statistics.median(v) if v else None
print("| measure | before, us | after, us | after / before |")
print("|---|---|---|---|")
lines = [("hot spot 100%%, mean", "hotspot", "mean_us", 100), ("hot spot 0%%, mean", "hotspot", "mean_us", 0),
         ("fetch-add latency", "atomics", "fetch_add_us", None), ("lock", "atomics", "lock_us", None)]
for label, kernel, field, c in lines:
    b, a = med("before", kernel, field, c), med("after", kernel, field, c)
    print("| %s | %.4g | %.4g | %.2fx |" % (label % () if "%%" in label else label, b, a, a / b))
bad = sorted({(r["variant"], r["kernel"]) for r in rows if not r["verified"]})
print("runs: %d, all verified" % len(rows) if not bad else "NOT VERIFIED: %s" % bad)
PY
