#!/usr/bin/env bash
# bench/hotspot.sh [--cluster [--latency L] [--rate R]] [TRANSIT] [REPEAT]: the one-sided bar of
# issue 11 in one sitting, `transit bench hotspot --ops 10 --iterations 100`, 16 MPI ranks in nodes
# of 4 PEs.
#
# Default (one host): 16 ranks oversubscribed here, emulated nodes of 4 (--transit-pes-per-node=4),
#   every rank on shared memory (mpi-rma is then Open MPI's shared-memory osc component):
#   fetch-add at 100% contention: mfcg (combining; polling and helper progress), mfcg --no-combine,
#     mpi-rma (Open MPI's default one-sided component) and --scheme mpi-raw (a plain MPI program,
#     one message to PE 0 and one back: the floor of any message-based design); the bar:
#     mpi-rma/mfcg >= 3 on the mean time per operation and >= 5 on the max, and with combining
#     fewer request messages at PE 0 than requests aimed at it;
#   fetch-add at 0% contention: fcg, mfcg and cfcg; the forwarding penalty mfcg/fcg and cfcg/fcg
#     (HiCOO figs. 10a, 11a).
#   Each configuration runs --repeat REPEAT times in one job.
#
# --cluster: the issue's setting on the emulated cluster (scripts/cluster, docs/cluster.md): 4 hosts
#   x 4 ranks (mpirun --map-by node; transit's machine() sees the 4 hosts as its nodes), Open MPI
#   over TCP between hosts and shared memory within one, --latency one way (default 20us, the
#   cluster's default, about 26 us in effect here) and --rate per host link (default 10gbit).
#   Fetch-add at 100% and 0% contention with mfcg, cfcg and fcg, each in polling and helper
#   progress, mfcg --no-combine at 100%, and mpi-rma over osc pt2pt (Open MPI's default selection
#   fails between hosts here: see below; the script prints what it finds). REPEAT rounds (default 5), every configuration once per round, interleaved; each
#   job runs the kernel twice and keeps the second (the first pays for Open MPI's lazy TCP
#   connections). Ratios are taken per round (the same round's mfcg and mpi-rma) and their median
#   is quoted, beside the ratio of the medians. Brings the cluster up and down (needs root).
#
# The table quotes medians over the runs of the mean, median and max over PEs of each PE's time per
# operation, request messages at PE 0's endpoint per request aimed at PE 0 (the bar's ratio; "-"
# for mpi-rma, whose messages are MPI's own) and request messages between nodes per run. JSON
# records go to $HOTSPOT_LOG (default /tmp/transit-hotspot.jsonl).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
cluster_mode="" latency=20us rate=10gbit positional=()
while [ $# -gt 0 ]; do
  case $1 in
    --cluster) cluster_mode=yes; shift ;;
    --latency) latency=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    -*) echo "bench/hotspot.sh: unknown option '$1'" >&2; exit 2 ;;
    *) positional+=("$1"); shift ;;
  esac
done
transit=${positional[0]:-build-bench/bin/transit}
repeat=${positional[1]:-5}
[ -x "$transit" ] || { echo "bench/hotspot.sh: no transit command at $transit (build first)" >&2; exit 1; }
transit=$(cd "$(dirname "$transit")" && pwd)/$(basename "$transit")
log=${HOTSPOT_LOG:-/tmp/transit-hotspot.jsonl}
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
common=(bench hotspot --ops 10 --iterations 100 --json)

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "$(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -z "$cluster_mode" ]; then
  mpi=(mpirun -n 16 --oversubscribe --mca mpi_yield_when_idle 1)
  common+=(--repeat "$repeat" --transit-pes-per-node=4)
  echo "command: ${mpi[*]} $transit ${common[*]} --contention C (--topology T [--progress P] [--no-combine] | --scheme mpi-raw)"
  for contention in 100 0; do
    if [ "$contention" = 100 ]; then
      configs=("--topology mfcg" "--topology mfcg --progress helper" "--topology mfcg --no-combine"
               "--topology mpi-rma" "--scheme mpi-raw")
    else
      configs=("--topology fcg" "--topology mfcg" "--topology cfcg")
    fi
    for config in "${configs[@]}"; do
      # shellcheck disable=SC2086  # config is several flags
      "${mpi[@]}" "$transit" "${common[@]}" --contention "$contention" $config | grep '^{' >>"$log"
    done
  done
else
  name=${TRANSIT_CLUSTER_NAME:-hotspot}
  cluster=("$repo/scripts/cluster" --name "$name")
  "${cluster[@]}" up --hosts 4 --latency "$latency" --rate "$rate"
  trap '"${cluster[@]}" down >/dev/null' EXIT
  "${cluster[@]}" measure
  mpi=("${cluster[@]}" run -- mpirun -np 16 --map-by node)
  common+=(--repeat 2)
  echo "network: 4 hosts x 4 ranks, latency $latency one way, $rate per host link (as set; measured above)"
  echo "command: ${mpi[*]} $transit ${common[*]} --contention C --topology T --progress P [--no-combine]"
  # Which osc component Open MPI picks for mpi-rma here. With Debian's openmpi-mca-params.conf
  # (osc = ^ucx,pt2pt) only osc rdma and sm are left; rdma needs RDMA and atomics from a btl (tcp
  # has neither) and sm one host, so MPI_Win_allocate fails. Upstream Open MPI 4.1 without UCX
  # falls back to osc pt2pt (point-to-point messages over ob1/tcp, served by the target's MPI
  # progress), which refuses MPI_THREAD_MULTIPLE: the baseline runs it at funneled.
  rma_mpi=(--mca osc pt2pt) rma_transit=(--transit-mpi-threads=funneled)
  probe=(bench hotspot --ops 1 --iterations 1 --topology mpi-rma)
  if "${mpi[@]}" "$transit" "${probe[@]}" >/tmp/transit-hotspot-osc.txt 2>&1; then
    echo "mpi-rma with Open MPI's default osc selection: works here"
  else
    echo "mpi-rma with Open MPI's default osc selection: fails here:" \
         "$(grep -m1 -o 'MPI_Win_allocate.*' /tmp/transit-hotspot-osc.txt || echo '(see /tmp/transit-hotspot-osc.txt)')"
  fi
  used=$("${mpi[@]}" "${rma_mpi[@]}" --mca osc_base_verbose 100 "$transit" "${probe[@]}" "${rma_transit[@]}" 2>&1 |
         grep -o '[a-z0-9]* component destroying window' | sort | uniq -c | xargs || true)
  echo "mpi-rma runs with: ${rma_mpi[*]} ${rma_transit[*]} (osc_base_verbose 100: ${used:-no window messages seen})"
  configs=("mfcg polling" "mfcg helper" "cfcg polling" "cfcg helper" "fcg polling" "fcg helper" "mpi-rma polling")
  for round in $(seq 1 "$repeat"); do
    for contention in 100 0; do
      extra=("${configs[@]}")
      [ "$contention" = 100 ] && extra+=("mfcg polling --no-combine")
      for config in "${extra[@]}"; do
        read -r topology progress flag <<<"$config"
        run_mpi=() run_transit=()
        [ "$topology" = mpi-rma ] && run_mpi=("${rma_mpi[@]}") run_transit=("${rma_transit[@]}")
        # shellcheck disable=SC2086  # flag is empty or --no-combine
        if ! out=$("${mpi[@]}" "${run_mpi[@]}" "$transit" "${common[@]}" --contention "$contention" \
                   --topology "$topology" --progress "$progress" $flag "${run_transit[@]}" 2>/tmp/transit-hotspot.err); then
          echo "bench/hotspot.sh: FAILED: --contention $contention $config" >&2
          cat /tmp/transit-hotspot.err >&2
          exit 1
        fi
        grep '^{' <<<"$out" | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["run"] == 1: r["round"] = int(sys.argv[1]); print(json.dumps(r))' "$round" >>"$log"
        printf '.' >&2
      done
    done
  done
  echo >&2
fi

python3 - "$log" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def key(r):
    return (r["contention"], r["topology"] + ("/" + r["progress"] if r["topology"] not in ("mpi-rma", "mpi-raw") else "")
            + ("" if r["combine"] or r["topology"] == "mpi-raw" else " no-combine"))
groups = {}
for r in rows: groups.setdefault(key(r), []).append(r)
def med(k, f):
    values = [r[f] for r in groups[k] if r.get(f) is not None]
    return statistics.median(values) if values else None
fmt = lambda v, spec: "-" if v is None else spec % v
print("%-4s %-24s | %9s %9s %9s | %12s %13s %6s | %s" % ("C%", "topology", "mean_us", "median_us", "max_us",
      "msgs@PE0/req", "between-nodes", "links", "verified (runs)"))
for k in sorted(groups, key=lambda k: (-k[0], k[1])):
    print("%-4s %-24s | %9.1f %9.1f %9.1f | %12s %13s %6d | %s (%d)" % (k[0], k[1], med(k, "mean_us"), med(k, "median_us"),
          med(k, "max_us"), fmt(med(k, "target_messages_per_request"), "%.3f"),
          fmt(med(k, "request_messages_between_nodes"), "%d"), max(r["links_max"] for r in groups[k]),
          all(r["verified"] for r in groups[k]), len(groups[k])))
    print("     %-24s   request-buffer bytes per PE %d (bound), peak %d" % ("", max(r["request_buffer_bytes_per_pe"]
          for r in groups[k]), max(r["request_buffer_bytes_peak"] for r in groups[k])))

def by_round(k):
    return {r.get("round", i): r for i, r in enumerate(groups[k])}
def ratio_line(label, num, den, field):
    a, b = by_round(num), by_round(den)
    per_round = [a[i][field] / b[i][field] for i in a if i in b and b[i][field] > 0]
    of_medians = med(num, field) / med(den, field)
    rounds = ", ".join("%.2f" % x for x in per_round)
    return "%s %.2fx (median of per-run ratios; ratio of medians %.2fx; runs: %s)" % (
        label, statistics.median(per_round) if per_round else float("nan"), of_medians, rounds)

rma = (100, "mpi-rma")
for progress in ("polling", "helper"):
    hot = (100, "mfcg/" + progress)
    if hot not in groups or rma not in groups: continue
    print("bar, 100%%, mfcg %s:" % progress)
    print("  " + ratio_line("mpi-rma/mfcg mean", rma, hot, "mean_us") + "  (bar >= 3)")
    print("  " + ratio_line("mpi-rma/mfcg max ", rma, hot, "max_us") + "  (bar >= 5)")
    print("  combining: %.3f request messages at PE 0's endpoint per request aimed at PE 0 (bar < 1)" %
          med(hot, "target_messages_per_request"))
raw = (100, "mpi-raw")
if raw in groups and rma in groups:
    print("floor, 100%: " + ratio_line("mpi-rma/mpi-raw mean", rma, raw, "mean_us") +
          "  (one MPI message to PE 0 and one back, no forwarding: no design that sends requests does better)")
for progress in ("polling", "helper"):
    fcg = (0, "fcg/" + progress)
    if fcg not in groups: continue
    print("0%%, %s: forwarding penalty (mean) mfcg/fcg %.2fx, cfcg/fcg %.2fx" % (
          progress, med((0, "mfcg/" + progress), "mean_us") / med(fcg, "mean_us"),
          med((0, "cfcg/" + progress), "mean_us") / med(fcg, "mean_us")))
PY
