#!/usr/bin/env bash
# bench/sim/exchange.sh [PARTS]: the crystal router against MPI_Alltoallv on a simulated Cray
# XE6-like torus (issue "transit at scale, part 2", item 6; crystal router paper, Schliephake and
# Laure, figs 1-5, ../shared/papers/crystal-router-nek5000-cresta.txt section 4). Every PE sends one
# parcel of B bytes to each of 26 partners (r +- S*i) mod P, i = 1..13 (`bench exchange --pattern
# nek26`), under scripts/simulate, modelled mode, xe6 calibration, 24 PEs per node (Lindgren's two
# 12-core Magny-Cours per node), on 3-D tori that hold the ranks:
#   256 ranks torus:2x2x3:24, 512 torus:2x3x4:24, 1024 torus:3x3x5:24 (hostfile: rank r on the node
#   of PE slot r, so the last node is partly filled).
# One job per method (crystal_router, mpi_alltoallv; `automatic` in PART auto), --samples 1: the
# simulated clock is deterministic, so more samples repeat the same number (and cost real time).
# One JSON line per run on stdout: the bench record (method, chosen, bytes, stride, pes,
# seconds_per_exchange, candidates for automatic, verified ...) plus simulated_seconds,
# wall_seconds, platform, label and rss_mb (the simulator's peak resident set).
#
# PARTS (default "p256 s24 p512"):
#   p256  = 256 ranks, stride 1, B = 8 B, 512 B, 4 KiB, 32 KiB, 128 KiB
#   s24   = 256 ranks, stride 24, B = 8 B, 512 B, 4 KiB
#   p512  = 512 ranks, B = 8 B and 4 KiB at stride 1, 8 B at stride 24
#   p1024 = 1024 ranks, B = 8 B at stride 1 (not run here: see below)
#   auto  = `--method automatic` at 64 ranks (torus:1x1x3:24), B = 8 B, 4 KiB, 128 KiB, stride 1
#           (not run here)
# Parts added for the missing points (2026-11-26, second sitting):
#   p1024s  = 1024 ranks, B = 4 KiB at stride 1 and 8 B at stride 24 (with p1024: 8 B, stride 1)
#   a256    = `--method automatic` at 256 ranks, B = 8 B and 4 KiB, strides 1 and 24: its record
#             gives its choice (`chosen`), its time once settled, and its candidates' times
#             (`candidates`: direct, crystal_router, grid, mpi_alltoallv, each timed by automatic
#             itself), so automatic / best fixed method = seconds_per_exchange / the least of them
#   a256x   = a256's other sizes: 512 B and 128 KiB at stride 1, 512 B at stride 24
#   a512    = `--method automatic` at 512 ranks, 8 B and 4 KiB, stride 1
#   a1024   = `--method automatic` at 1024 ranks, 8 B, stride 1
#   v1024   = MPI_Alltoallv alone at 1024 ranks, 8 B and 4 KiB, stride 1: the runs SimGrid aborted on
#             its maxmin precision in p1024 and p1024s, to be run with EXCHANGE_CFG (below)
# EXCHANGE_CFG=KEY:VALUE passes one more SimGrid configuration item to every run (for v1024:
# maxmin/precision:1e-4, SimGrid's own advice when it aborts).
# EXCHANGE_TIMEOUT=SECONDS puts a timeout on every run (default none, as before); a run stopped by
# it prints no record, and the script stops there (it says which).
# Needs `make build sim`. Real time here (2 shared cores, loaded by other simulations): a 256-rank
# crystal router run 7 to 50 s, MPI_Alltoallv 20 to 95 s (transit counts P - 1 count messages
# and 26 data messages per PE: 72k messages per exchange at 256 ranks); 512 ranks 47 to 82 s and 216 to 271 s (275k);
# p256 + s24 about 13 minutes, p512 about 12. p1024's MPI_Alltoallv (1M messages per exchange)
# would take an estimated 20 minutes. automatic at 256 ranks did not finish in 400 s (its choice
# times up to ~1300 exchanges of the candidates), hence 64 ranks in PART auto.
# Usage: bench/sim/exchange.sh [PARTS] > sim-exchange.jsonl
set -euo pipefail
source "$(dirname "$0")/lib.sh"
parts=" ${1:-p256 s24 p512} "

# run LABEL SPEC RANKS METHOD BYTES STRIDE
run() {
  local label=$1 spec=$2 ranks=$3 method=$4 bytes=$5 stride=$6
  sim_run --timeout "${EXCHANGE_TIMEOUT:-}" -- --platform "$spec" --ranks "$ranks" --calibration xe6 --mode modelled \
    ${EXCHANGE_CFG:+--cfg "$EXCHANGE_CFG"} -- bench exchange --pattern nek26 --neighbors 26 --stride "$stride" \
    --bytes "$bytes" --method "$method" --samples 1
  sim_record --all label="$label" | with_us_per_exchange
}

# point LABEL SPEC RANKS BYTES STRIDE: the crystal router and MPI_Alltoallv at one point
point() {
  for method in crystal_router mpi_alltoallv; do run "$1.$method" "$2" "$3" "$method" "$4" "$5"; done
}

if part p256; then
  for b in 8 512 4096 32768 131072; do point p256.s1.b$b torus:2x2x3:24 256 $b 1; done
fi
if part s24; then
  for b in 8 512 4096; do point p256.s24.b$b torus:2x2x3:24 256 $b 24; done
fi
if part p512; then
  point p512.s1.b8 torus:2x3x4:24 512 8 1
  point p512.s1.b4096 torus:2x3x4:24 512 4096 1
  point p512.s24.b8 torus:2x3x4:24 512 8 24
fi
if part p1024; then
  point p1024.s1.b8 torus:3x3x5:24 1024 8 1
fi
if part auto; then
  for b in 8 4096 131072; do run p64.s1.b$b.automatic torus:1x1x3:24 64 automatic $b 1; done
fi
if part v1024; then  # MPI_Alltoallv alone at 1024 ranks: with EXCHANGE_CFG=maxmin/precision:1e-4
  for b in 8 4096; do run p1024.s1.b$b.mpi_alltoallv torus:3x3x5:24 1024 mpi_alltoallv $b 1; done
fi
if part p1024s; then
  point p1024.s1.b4096 torus:3x3x5:24 1024 4096 1
  point p1024.s24.b8 torus:3x3x5:24 1024 8 24
fi
if part a256; then
  for b in 8 4096; do
    for st in 1 24; do run p256.s$st.b$b.automatic torus:2x2x3:24 256 automatic $b $st; done
  done
fi
if part a256x; then
  for b in 512 131072; do run p256.s1.b$b.automatic torus:2x2x3:24 256 automatic $b 1; done
  run p256.s24.b512.automatic torus:2x2x3:24 256 automatic 512 24
fi
if part a512; then
  for b in 8 4096; do run p512.s1.b$b.automatic torus:2x3x4:24 512 automatic $b 1; done
fi
if part a1024; then
  run p1024.s1.b8.automatic torus:3x3x5:24 1024 automatic 8 1
fi
