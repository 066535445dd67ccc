#!/usr/bin/env bash
# bench/sim/scale.sh [PARTS]: what a simulated job costs this machine (issue 24, item 5): real
# seconds and peak memory of scripts/simulate running a verified histogram (64 Ki items per PE, a
# 3-D grid, modelled, bgq calibration) on a BG/Q-like torus, as ranks grow, as items grow, and with
# each SMPI setting of scripts/simulate changed back. One JSON line per run on stdout: the bench
# record's fields, simulated_seconds, wall_seconds, and rss_mb (the simulator's peak resident set).
#
# PARTS (default "ranks items settings"): ranks = 64 to 4096 ranks (8192 with SCALE_MAX=8192) on
# torus:4x8x8:16 (256 nodes of 16; torus:8x8x8:16 for 8192); items = 4 Ki to 256 Ki items per PE at
# 1024 ranks; settings = 1024 ranks with one setting reverted each (docs/simulation.md). Needs
# `make build sim`. One run of 4096 ranks takes about five minutes here; all of it, about an hour.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
parts=" ${1:-ranks items settings} "
max=${SCALE_MAX:-4096}

# run LABEL SPEC RANKS GRID ITEMS [VAR=VALUE ...] [-- SMPI_KEY:VALUE ...]
run() {
  local label=$1 spec=$2 ranks=$3 grid=$4 items=$5
  shift 5
  local envs=() cfgs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=(--env "$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  for c in "$@"; do cfgs+=(--cfg "$c"); done
  sim_run "${envs[@]}" -- "${cfgs[@]}" --platform "$spec" --ranks "$ranks" --calibration bgq -- \
    bench histogram --items-per-pe "$items" --grid "$grid"
  sim_record label="$label"
}

torus=torus:4x8x8:16
if part ranks; then
  run ranks.64 $torus 64 4x4x4 65536
  run ranks.256 $torus 256 8x8x4 65536
  run ranks.1024 $torus 1024 16x8x8 65536
  run ranks.2048 $torus 2048 16x16x8 65536
  run ranks.4096 $torus 4096 16x16x16 65536
  if [ "$max" -ge 8192 ]; then run ranks.8192 torus:8x8x8:16 8192 32x16x16 65536; fi
fi
if part items; then
  for items in 4096 16384 262144; do run items.$items $torus 1024 16x8x8 $items; done
fi
if part settings; then
  run settings.none $torus 1024 16x8x8 65536
  run settings.polling $torus 1024 16x8x8 65536 TRANSIT_MPI_RECEIVE=probe
  run settings.dlopen $torus 1024 16x8x8 65536 -- smpi/privatization:dlopen
  run settings.detached $torus 1024 16x8x8 65536 -- smpi/async-small-thresh:65536 smpi/send-is-detached-thresh:65536
  run settings.bcast $torus 1024 16x8x8 65536 -- smpi/bcast:default
  run settings.crosstraffic $torus 1024 16x8x8 65536 -- network/crosstraffic:1
fi
