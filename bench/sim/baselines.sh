#!/usr/bin/env bash
# bench/sim/baselines.sh [RANKS...]: whether the baselines that send the most messages finish at
# scale (issue 39, item 6), and what they cost the simulator: at each rank count (default 1024),
#   direct  a streaming all-to-all with no grid (--grid direct): one message per pair of PEs, 32 B
#           per destination (bench alltoall, as bench/sim/grids.sh runs it), modelled, bgq;
#   none    the same all-to-all without aggregation (--scheme none): one message per item;
#   mpi-rma HiCOO's hot spot over MPI RMA (bench hotspot --op fetch-add --ops 10 --iterations 3 at
#           100% contention), modelled, xe6, on a 3-D torus of 16-PE nodes (bench/sim/hotspot.sh);
#   fcg     the same hot spot over transit's fcg, for comparison.
# Platforms: 16 PEs per node, a 5-D torus for the all-to-alls (torus:2x2x4x2x2:16 at 1024 ranks,
# torus:2x2x2x2x2:16 at 512, torus:2x2x2x2:16 at 256) and torus:4x4x4:16 (1024), torus:4x4x2:16
# (512), torus:4x2x2:16 (256) for the hot spot. Each run has BASELINES_TIMEOUT seconds of real
# time (default 1200: the issue's 20 minutes); one that does not finish prints a record with
# "finished": false.
#
# Prints one JSON line per run: the bench record with label, rss_mb, wall_seconds and
# simulated_seconds added. Needs `make build sim`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
limit=${BASELINES_TIMEOUT:-1200}
ranks_list=${*:-1024}

alltoall_platform() { case $1 in 256) echo torus:2x2x2x2:16 ;; 512) echo torus:2x2x2x2x2:16 ;; 1024) echo torus:2x2x4x2x2:16 ;; *) echo "baselines.sh: no platform for $1 ranks (256, 512 or 1024)" >&2; exit 2 ;; esac; }
hotspot_platform() { case $1 in 256) echo torus:4x2x2:16 ;; 512) echo torus:4x4x2:16 ;; 1024) echo torus:4x4x4:16 ;; esac; }

# record LABEL RANKS: the last run's record, or one saying it did not finish within the limit.
record() {
  if ! sim_record label="$1" rss_mb 2>/dev/null; then
    printf '{"label":"%s","ranks":%s,"finished":false,"timeout_seconds":%s}\n' "$1" "$2" "$limit"
  fi
}

for ranks in $ranks_list; do
  platform=$(alltoall_platform "$ranks")
  for scheme in direct none; do
    grid_scheme=grid
    [ "$scheme" = none ] && grid_scheme=none
    sim_run --timeout "$limit" -- --platform "$platform" --ranks "$ranks" --calibration bgq --mode modelled -- \
      bench alltoall --item-bytes 32 --buffer-items 512 --scheme "$grid_scheme" --grid direct --items-per-pe "$ranks"
    record "$scheme" "$ranks"
  done
  for topology in mpi-rma fcg; do
    sim_run --timeout "$limit" -- --platform "$(hotspot_platform "$ranks")" --ranks "$ranks" --calibration xe6 \
      --mode modelled -- bench hotspot --op fetch-add --ops 10 --iterations 3 --contention 100 --topology "$topology"
    record "$topology" "$ranks"
  done
done
