#!/usr/bin/env bash
# bench/hybrid_helper.sh [TRANSIT] [REPEATS]: who serves one-sided requests with PE threads in MPI
# ranks (docs/hybrid.md, "One-sided requests"), in one sitting. 4 PEs as 2 nodes of 2 PEs, so that
# requests cross nodes: 2 ranks x 2 threads with a communication thread ("ct") or every thread
# calling MPI ("mt"), and 4 ranks x 1; each with polling progress (the target PE serves when it
# polls) and helper progress (ct: the communication thread serves; mt and 4x1: a helper thread per
# node). Kernel: hotspot, every PE's fetch-and-adds aimed at PE 0 (HiCOO), REPEATS times (default
# 7) with the configurations interleaved. Prints the median over the repeats of each run's median
# fetch-and-add latency, its ratio to polling in the same shape (> 1: helper faster), and the
# request messages between nodes (helper mode aggregates a node's requests). Every JSON
# record goes to $HYBRID_HELPER_LOG (default /tmp/transit-hybrid-helper.jsonl).
set -euo pipefail
transit=${1:-build/bin/transit}
repeats=${2:-7}
log=${HYBRID_HELPER_LOG:-/tmp/transit-hybrid-helper.jsonl}
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none

configs=("2 2 ct polling" "2 2 ct helper" "2 2 mt polling" "2 2 mt helper" "4 1 - polling" "4 1 - helper")
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "$(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u '+%F %H:%M') UTC; load $(cut -d' ' -f1 /proc/loadavg)"
for ((rep = 0; rep < repeats; rep++)); do
  for config in "${configs[@]}"; do
    read -r ranks threads design progress <<<"$config"
    mpi=(mpirun -n "$ranks" --oversubscribe --bind-to none)
    if [ "$ranks" -gt "$(nproc)" ]; then mpi+=(--mca mpi_yield_when_idle 1); fi
    launch=(--transit-backend=mpi --transit-pes-per-node=2)
    if [ "$threads" -gt 1 ]; then
      launch+=(--transit-threads-per-rank="$threads" --transit-comm-thread="$([ "$design" = ct ] && echo 1 || echo 0)")
    fi
    out=$(timeout 600 "${mpi[@]}" "$transit" bench hotspot --progress "$progress" --iterations 200 --json "${launch[@]}")
    printf '%s\n' "$out" | python3 -c '
import json, sys
for line in sys.stdin:
    if line.startswith("{"):
        r = json.loads(line)
        r.update(ranks=int(sys.argv[1]), threads=int(sys.argv[2]), design=sys.argv[3], repeat=int(sys.argv[4]))
        print(json.dumps(r))' "$ranks" "$threads" "$design" "$rep" >>"$log"
  done
done
python3 - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    if not r.get("verified", False):
        print("NOT VERIFIED:", r["ranks"], r["threads"], r["design"], r["progress"])
    groups.setdefault((r["ranks"], r["threads"], r["design"], r["progress"]), []).append(r)
print("%-8s %-8s %14s %12s %14s" % ("shape", "progress", "median us", "vs polling", "msgs b/w nodes"))
for key in sorted(groups, key=lambda k: (-k[0], k[2], k[3] != "polling")):
    ranks, threads, design, progress = key
    runs = groups[key]
    value = statistics.median(r["median_us"] for r in runs)
    base = statistics.median(r["median_us"] for r in groups.get((ranks, threads, design, "polling"), runs))
    shape = "%dx%d%s" % (ranks, threads, "" if design == "-" else " " + design)
    print("%-8s %-8s %14.1f %12.2f %14.0f" % (shape, progress, value, base / value,
          statistics.median(r["request_messages_between_nodes"] for r in runs)))
PY
