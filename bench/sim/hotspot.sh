#!/usr/bin/env bash
# bench/sim/hotspot.sh [PARTS]: HiCOO's hot spot through forwarding (Yu et al. 2012, section 4.2,
# fig. 12; issue "transit at scale, part 2", item 5), simulated: every rank runs `bench hotspot
# --op fetch-add --ops 10` (10 blocking fetch-and-adds between two sync()s, per iteration) at 100%
# contention (every rank aims at PE 0) and at 0% contention (each rank at a partner PE), over the
# request topologies fcg (direct), mfcg, cfcg, hypercube and mpi-rma (MPI-3 RMA, SMPI's own), plus
# fcg and mfcg without combining at 100%. Modelled mode, xe6 calibration (Cray XE6: the thesis's
# Cray with a 3-D torus, the nearest calibrated machine to HiCOO's XT5), on a 3-D torus of 16-PE
# nodes (torus:4x4x4:16; the XT5 has 12 cores per node, but hypercube needs a power-of-two node
# count, which 1024 ranks in nodes of 12 is not).
#
# PARTS (default "r256"): r64 / r256 = every configuration at 64 / 256 ranks; r1024 = fcg and mfcg
# at 100% contention at 1024 ranks (the paper's scale; about 15 minutes of real time and
# 6 GB per transit topology here; R1024_TOPOLOGIES picks which, default "fcg mfcg"; add mpi-rma to try it). ITERATIONS (default 3): rounds of 10 operations. HiCOO runs
# 100; here the mean per operation over 3 rounds is within 1% of 10 rounds (256 ranks, mfcg) and
# 10 rounds within 0.05% of 100 (64 ranks), while SimGrid's real time grows faster than linearly
# with the rounds (64 ranks: 5 s for 10, 105 s for 100).
#
# Prints one JSON line per run on stdout: the bench hotspot record (mean_us, median_us, max_us: the
# mean, median and max over PEs of each PE's time per operation; requests_combined,
# request_messages_at_target, links_max, request_buffer_bytes_per_pe, ...), with simulated_seconds,
# wall_seconds, and added: label (topology, "-nocombine" when so), rss_mb (the simulator's peak
# resident set). Run from anywhere; needs `make build sim`. Cost here (2-core VM, shared with other
# simulations): 64 ranks 3-5 s per run (probes only; r64 was not run as a whole), 256 ranks 22-43 s
# per run (r256: 7 minutes), 1024 ranks 880 s and 6.1 GB (fcg), 954 s and 6.5 GB (mfcg); mpi-rma
# at 1024 ranks had not finished after 15 minutes (4.2 GB) and was stopped.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
parts=" ${1:-r256} "
iterations=${ITERATIONS:-3}
platform=${HOTSPOT_PLATFORM:-torus:4x4x4:16}
calibration=${HOTSPOT_CALIBRATION:-xe6}

# run RANKS CONTENTION TOPOLOGY [extra bench options...]
run() {
  local ranks=$1 contention=$2 topology=$3
  shift 3
  sim_run -- --platform "$platform" --ranks "$ranks" --calibration "$calibration" --mode modelled -- bench hotspot \
    --op fetch-add --ops 10 --iterations "$iterations" --contention "$contention" --topology "$topology" "$@"
  sim_record label="$topology$([[ " $* " == *" --no-combine "* ]] && echo -nocombine)"
}

for ranks in 64 256; do
  part r$ranks || continue
  for contention in 100 0; do
    for topology in fcg mfcg cfcg hypercube mpi-rma; do run $ranks $contention $topology; done
  done
  run $ranks 100 fcg --no-combine
  run $ranks 100 mfcg --no-combine
done
if part r1024; then
  for topology in ${R1024_TOPOLOGIES:-fcg mfcg}; do run 1024 100 "$topology"; done
fi
