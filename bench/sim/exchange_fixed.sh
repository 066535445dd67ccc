#!/usr/bin/env bash
# bench/sim/exchange_fixed.sh [PARTS]: the crystal router against MPI_Alltoallv with its count
# exchange every time and with counts known in advance (issue 39, item 3), 256 to 2048 simulated
# ranks. The pattern of bench/sim/exchange.sh (every PE sends one parcel of B bytes to each of 26
# partners (r +- S*i) mod P, i = 1..13, `bench exchange --pattern nek26`), under scripts/simulate,
# modelled mode, xe6 calibration (every MPI message pays the same overheads, docs/simulation.md),
# 24 PEs per node, on 3-D tori that hold the ranks (the last node partly filled):
#   256 ranks torus:2x2x3:24, 512 torus:2x3x4:24, 1024 torus:3x3x5:24, 2048 torus:3x5x6:24.
# Methods, one job each:
#   crystal_router       transit's crystal router
#   mpi_alltoallv        MPI_Alltoall of the counts, then MPI_Alltoallv, every exchange
#   mpi_alltoallv_fixed  MPI_Alltoallv alone: counts exchanged once, in the first (untimed)
#                        exchange (exchange_options::fixed_pattern)
#   mpi_neighbor_fixed   MPI_Neighbor_alltoallv with counts known: 26 sends and 26 receives per
#                        rank (SMPI runs Open MPI's basic algorithm for it, docs/exchange.md); the
#                        fair point-to-point baseline of a program that knows its partners
# --samples 1 --exchanges E (FIXED_EXCHANGES, default 4): the simulated clock is deterministic, so
# one sample of E exchanges after a barrier gives the steady time per exchange, and every exchange
# of MPI_Alltoallv costs real minutes at 1024 ranks. Every run still checks every byte of its two
# warm-up exchanges and of one after the sample (`verified`).
# One JSON line per run on stdout: the bench record plus label, ranks, us_per_exchange,
# simulated_seconds, wall_seconds and rss_mb; a run stopped by the timeout gives a line with
# "finished": false and its method, ranks, bytes, stride and timeout instead.
#
# PARTS (default "r256 r512"), each at B = 8 B and 4 KiB (FIXED_BYTES), stride 1 unless said:
#   r256, r512, r1024, r2048   that many ranks, the four methods
#   s256, s512                 stride 24 at 256 and 512 ranks, the four methods
#   c1024, c2048               the crystal router alone (when MPI_Alltoallv cannot finish)
#   f1024, f2048               mpi_alltoallv_fixed alone
#   n1024, n2048               mpi_neighbor_fixed alone
#   w256, w512                 the sweep: at 256 (512) ranks, stride 1, the methods of SWEEP_METHODS
#                              (default "crystal_router mpi_neighbor_fixed mpi_alltoallv_fixed") over the overhead per
#                              message to cost per item ratio (o_s + o_r) / o_a = 5.5 (xe6's own), 12
#                              and 25, by seconds_per_message = ratio x 346 ns / 2 at each end, and
#                              the NIC message rate per node: none, 4 M and 1 M messages/s
#                              (SWEEP_RATIOS and SWEEP_NICS replace the lists); records carry ratio
#                              and nic_messages_per_second
# FIXED_BYTES="8 4096" (default) chooses the parcel sizes of every part.
# EXCHANGE_TIMEOUT=SECONDS stops each run after that much real time (default 1200).
# Run one at a time, e.g. `nice -n 5 bench/sim/exchange_fixed.sh "r256 r512" > fixed.jsonl`;
# runs of 2048 ranks or more hold /tmp/transit-sim-big.lock (one such simulation at a time).
# Needs `make build sim`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
parts=" ${1:-r256 r512} "
exchanges=${FIXED_EXCHANGES:-4}
limit=${EXCHANGE_TIMEOUT:-1200}
sizes=${FIXED_BYTES:-8 4096}

platform_of() {
  case $1 in
    256) echo torus:2x2x3:24 ;; 512) echo torus:2x3x4:24 ;; 1024) echo torus:3x3x5:24 ;; 2048) echo torus:3x5x6:24 ;;
    *) echo "exchange_fixed.sh: no platform for $1 ranks" >&2; return 2 ;;
  esac
}

item=3.46e-7  # xe6's seconds_per_item
# run RANKS METHOD BYTES STRIDE [RATIO NIC]: one job; RATIO and NIC (default: xe6's 5.5, no limit)
run() {
  local ranks=$1 method=$2 bytes=$3 stride=$4 ratio=${5:-5.5} nic=${6:-0} label="p$1.s$4.b$3.$2" set=()
  if [ $# -gt 4 ]; then
    label="$label.r$ratio.nic$nic"
    set=(--set "seconds_per_message=$(python3 -c "print(repr($ratio * $item / 2))")" --set "nic_messages_per_second=$nic")
  fi
  sim_run --lock-big --timeout "$limit" -- --platform "$(platform_of "$ranks")" --ranks "$ranks" --calibration xe6 \
    --mode modelled "${set[@]}" -- bench exchange --pattern nek26 --neighbors 26 --stride "$stride" --bytes "$bytes" \
    --method "$method" --samples 1 --exchanges "$exchanges"
  if ! sim_record --all label="$label" ranks:="$ranks" ratio:="$ratio" nic_messages_per_second:="$nic" \
      simulated_seconds wall_seconds 2>/dev/null | with_us_per_exchange; then
    printf '{"label":"%s","method":"%s","ranks":%s,"bytes":%s,"stride":%s,"ratio":%s,"nic_messages_per_second":%s,"finished":false,"timeout_seconds":%s}\n' \
      "$label" "$method" "$ranks" "$bytes" "$stride" "$ratio" "$nic" "$limit"
  fi
}

# methods RANKS STRIDE METHOD...: each method at each size of FIXED_BYTES
methods() {
  local ranks=$1 stride=$2 bytes method
  shift 2
  for bytes in $sizes; do
    for method in "$@"; do run "$ranks" "$method" "$bytes" "$stride"; done
  done
}

all4=(crystal_router mpi_neighbor_fixed mpi_alltoallv_fixed mpi_alltoallv)
for ranks in 256 512 1024 2048; do
  if part "r$ranks"; then methods "$ranks" 1 "${all4[@]}"; fi
done
for ranks in 256 512; do
  if part "s$ranks"; then methods "$ranks" 24 "${all4[@]}"; fi
done
for ranks in 1024 2048; do
  if part "c$ranks"; then methods "$ranks" 1 crystal_router; fi
  if part "f$ranks"; then methods "$ranks" 1 mpi_alltoallv_fixed; fi
  if part "n$ranks"; then methods "$ranks" 1 mpi_neighbor_fixed; fi
done
for ranks in 256 512; do
  if part "w$ranks"; then
    for bytes in $sizes; do
      for ratio in ${SWEEP_RATIOS:-5.5 12 25}; do
        for nic in ${SWEEP_NICS:-0 4e6 1e6}; do
          for method in ${SWEEP_METHODS:-crystal_router mpi_neighbor_fixed mpi_alltoallv_fixed}; do
            run "$ranks" "$method" "$bytes" 1 "$ratio" "$nic"
          done
        done
      done
    done
  fi
done
