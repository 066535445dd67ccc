#!/usr/bin/env bash
# bench/hotspot.sh [TRANSIT] [REPEAT]: the one-sided bar of issue 11 in one sitting. 16 MPI ranks
# (oversubscribed here) in emulated nodes of 4 PEs, `transit bench hotspot --ops 10 --iterations 100`:
#   fetch-add at 100% contention: mfcg (combining), mfcg --no-combine and mpi-rma (Open MPI's default
#     one-sided component); the bar: mpi-rma/mfcg >= 3 on the mean time per operation and >= 5 on the
#     max, and with combining fewer request messages at PE 0 than requests aimed at it;
#   fetch-add at 0% contention: fcg, mfcg and cfcg; the forwarding penalty mfcg/fcg and cfcg/fcg
#     (HiCOO figs. 10a, 11a).
# Each configuration runs --repeat REPEAT times in one job; the table quotes medians over the runs of
# the mean, median and max over PEs of each PE's time per operation. JSON records go to
# $HOTSPOT_LOG (default /tmp/transit-hotspot.jsonl).
set -euo pipefail
transit=${1:-build-bench/bin/transit}
repeat=${2:-5}
log=${HOTSPOT_LOG:-/tmp/transit-hotspot.jsonl}
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -n 16 --oversubscribe --mca mpi_yield_when_idle 1)
common=(bench hotspot --ops 10 --iterations 100 --repeat "$repeat" --json --transit-pes-per-node=4)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "$(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%F)"
echo "command: ${mpi[*]} $transit ${common[*]} --contention C --topology T [--no-combine]"
for contention in 100 0; do
  if [ "$contention" = 100 ]; then configs=("mfcg" "mfcg --no-combine" "mpi-rma"); else configs=("fcg" "mfcg" "cfcg"); fi
  for config in "${configs[@]}"; do
    # shellcheck disable=SC2086  # config is a topology and maybe a flag
    "${mpi[@]}" "$transit" "${common[@]}" --contention "$contention" --topology $config | grep '^{' >>"$log"
  done
done

python3 - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def key(r): return (r["contention"], r["topology"] + ("" if r["combine"] else " no-combine"))
groups = {}
for r in rows: groups.setdefault(key(r), []).append(r)
med = lambda k, f: statistics.median(r[f] for r in groups[k])
print("%-4s %-18s | %9s %9s %9s | %13s %9s | %s" % ("C%", "topology", "mean_us", "median_us", "max_us",
      "msgs@PE0/req", "links", "verified"))
for k in groups:
    print("%-4s %-18s | %9.1f %9.1f %9.1f | %13.3f %9d | %s" % (k[0], k[1], med(k, "mean_us"), med(k, "median_us"),
          med(k, "max_us"), med(k, "target_messages_per_request"), max(r["links_max"] for r in groups[k]),
          all(r["verified"] for r in groups[k])))
    print("     %-18s   request-buffer bytes per PE %d (bound), peak %d" % ("", max(r["request_buffer_bytes_per_pe"]
          for r in groups[k]), max(r["request_buffer_bytes_peak"] for r in groups[k])))
hot, rma = (100, "mfcg"), (100, "mpi-rma")
print("bar, 100%%: mpi-rma/mfcg mean %.2fx (>= 3), max %.2fx (>= 5); combining: %.3f request messages at PE 0 "
      "per request aimed at it (< 1)" % (med(rma, "mean_us") / med(hot, "mean_us"), med(rma, "max_us") / med(hot, "max_us"),
      med(hot, "target_messages_per_request")))
fcg = (0, "fcg")
print("0%%: forwarding penalty (mean) mfcg/fcg %.2fx, cfcg/fcg %.2fx" % (med((0, "mfcg"), "mean_us") / med(fcg, "mean_us"),
      med((0, "cfcg"), "mean_us") / med(fcg, "mean_us")))
PY
