#!/usr/bin/env bash
# bench/sim/steps.sh [PARTS]: the end of a small step at scale (issue 53, point 4): `transit bench
# histogram --items-per-pe N --steps 20` (each step N updates per PE, then finish(): its final
# markers along the grid route and a barrier) against NBX (`--scheme mpi-raw`: an MPI_Issend per
# update, then MPI_Ibarrier once a PE's sends are matched; in the simulation build a dissemination
# barrier, as MPI libraries run it, bench/mpi_raw.cpp), N = 1 and 16. Modelled mode, bgq
# calibration, BG/Q-like tori of 16-PE nodes (torus:2x2:2 at 8 ranks); transit's default grid.
#
# PARTS (default "r8 r64 r256"): r8 torus:2x2:2, r64 torus:2x2:16, r256 torus:2x2x2x2:16, r1024
# torus:2x2x4x2x2:16 (not by default: tens of minutes of real time here).
#
# STEPS_GRIDS (default none): more transit series, each with `--grid SPEC` for every SPEC of
# "RANKS:SPEC ..." whose RANKS is the point's (label RANKS.N.grid-SPEC, series grid-SPEC), and
# "RANKS:tune" runs `--tune --steps 60` (series tune). A near-empty step costs transit a final
# marker on each link of its grid, sum(d_i - 1) per PE, so grids of more dimensions end it sooner.
#
# Prints one JSON line per run on stdout: the bench record (median_step_seconds, the median of the
# 20 step times in simulated seconds; marker_messages; termination for NBX...), simulated_seconds,
# wall_seconds, platform, ranks, and added: part, label (RANKS.N.transit or RANKS.N.nbx), series
# (transit or nbx), updates (N), rss_mb. Needs `make build sim`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
parts=" ${1:-r8 r64 r256} "

run() {  # run PART SPEC RANKS UPDATES LABEL [bench options...]
  local part=$1 spec=$2 ranks=$3 updates=$4 name=$5
  shift 5
  sim_run --lock-big --timeout 7200 -- --platform "$spec" --ranks "$ranks" --calibration bgq -- bench histogram \
    --items-per-pe "$updates" --steps "${steps:-20}" --json "$@"
  sim_record part="$part" label="$ranks.$updates.$name" series="$name" updates:="$updates" rss_mb ||
    echo "$sim_script: $ranks ranks, $updates updates $*: no record" >&2
}

for point in "r8 torus:2x2:2 8" "r64 torus:2x2:16 64" "r256 torus:2x2x2x2:16 256" "r1024 torus:2x2x4x2x2:16 1024"; do
  set -- $point
  part "$1" || continue
  for updates in 1 16; do
    run "$1" "$2" "$3" "$updates" transit
    run "$1" "$2" "$3" "$updates" nbx --scheme mpi-raw
    for extra in ${STEPS_GRIDS:-}; do
      [ "${extra%%:*}" = "$3" ] || continue
      case ${extra#*:} in
        tune) steps=60 run "$1" "$2" "$3" "$updates" tune --tune ;;
        *) run "$1" "$2" "$3" "$updates" "grid-${extra#*:}" --grid "${extra#*:}" ;;
      esac
    done
  done
done
