#!/usr/bin/env bash
# bench/sim/hotspot_sweep.sh [RANKS]: HiCOO's hot spot as a range, not a point (issue 39, item 3):
# bench hotspot at 100% contention (every rank aims at PE 0), modelled, xe6 calibration, 16 PEs
# per node, swept over
#   ratio  the overhead per message to cost per item, (o_s + o_r) / o_a: 5.5 (xe6's own, thesis
#          table 4.2), 12 and 25 (BG/Q's is 24), by the per-message overhead at each end
#          (seconds_per_message = ratio x o_a / 2, o_a = 346 ns kept);
#   nic    the message rate of each node's network interface: none, 4 M and 1 M messages/s;
# against each other:
#   mpi-raw  flat: every request one MPI message to the owner, the reply one back (no forwarding,
#            no combining, bench/mpi_raw.cpp);
#   fcg, mfcg  transit's forwarded requests, combining on;
#   mpi-rma  MPI RMA (MPI_Fetch_and_op, SMPI's implementation), charged like everything else;
# fetch-add (10 blocking operations between two sync()s, 3 rounds), and put-v (a non-combinable
# vectored put then fence; HiCOO's figure 10) over fcg, mfcg and mpi-rma at ratio 5.5 without a
# NIC limit. RANKS: 256 (default; torus:4x2x2:16) or 1024 (torus:4x4x4:16). Prints one JSON
# line per run: the bench record with ratio, nic_messages_per_second, label and rss_mb added.
# HOTSPOT_OPS (default "fetch-add put-v", the runs above) chooses the ops: fetch-add, put-v, get
# (a blocking get of PE 0's word) and lock (PE 0's mutex around a get and a put of its counter;
# mpi-raw: a flat lock server), each swept like fetch-add but put-v (one point); HOTSPOT_NICS
# (default "0 4e6 1e6") the NIC rates of the swept ops, HOTSPOT_RATIOS (default "5.5 12 25") their
# ratios (a 1024-rank run takes 10-25 minutes here), HOTSPOT_TOPOLOGIES (default all four)
# the contenders of the swept ops (an mpi-rma lock run took 8 minutes here). Locks run at 99%
# contention (PE 0 does not lock its own mutex), as the published lock rows did: 100% deadlocked in
# simulation until 2026-11-28 (docs/simulation-results.md, "Gets and locks"). Needs `make build sim`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
ranks=${1:-256}
case $ranks in
  256) platform=torus:4x2x2:16 ;;
  1024) platform=torus:4x4x4:16 ;;
  *) echo "hotspot_sweep.sh: RANKS: got '$ranks', expected 256 or 1024" >&2; exit 2 ;;
esac
item=3.46e-7

# run OP TOPOLOGY RATIO NIC: one simulation and its record.
run() {
  local op=$1 topology=$2 ratio=$3 nic=$4 route=(--topology "$2") contention=100
  [ "$topology" = mpi-raw ] && route=(--scheme mpi-raw)
  [ "$op" = lock ] && contention=99
  local per_end
  per_end=$(python3 -c "print(repr($ratio * $item / 2))")
  sim_run -- --platform "$platform" --ranks "$ranks" --calibration xe6 --mode modelled \
    --set "seconds_per_message=$per_end" --set "nic_messages_per_second=$nic" -- \
    bench hotspot --op "$op" --ops 10 --iterations 3 --contention "$contention" "${route[@]}"
  sim_record label="$topology" op="$op" ratio:="$ratio" nic_messages_per_second:="$nic" rss_mb
}

ops=${HOTSPOT_OPS:-fetch-add put-v}
nics=${HOTSPOT_NICS:-0 4e6 1e6}
for op in $ops; do
  case $op in
    fetch-add | get | lock) topologies=${HOTSPOT_TOPOLOGIES:-mpi-raw fcg mfcg mpi-rma} ;;
    put-v) for topology in fcg mfcg mpi-rma; do run put-v "$topology" 5.5 0; done; continue ;;
    *) echo "hotspot_sweep.sh: HOTSPOT_OPS: got '$op', expected fetch-add, put-v, get or lock" >&2; exit 2 ;;
  esac
  for ratio in ${HOTSPOT_RATIOS:-5.5 12 25}; do
    for nic in $nics; do
      for topology in $topologies; do run "$op" "$topology" "$ratio" "$nic"; done
    done
  done
done
