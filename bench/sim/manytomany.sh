#!/usr/bin/env bash
# bench/sim/manytomany.sh [SERIES]: strong scaling of many-to-many traffic on a simulated Blue
# Gene/Q (TRAM thesis, Wesolowski 2014, section 7.2.1: EpiSimdemics, figure 7.5 and table 7.1;
# issue "transit at scale, part 2", item 4). `transit bench bipartite`: a fixed bipartite graph of
# persons and locations (MTM_PERSONS persons, default 65536, each visiting MTM_DEGREE locations,
# default 4, drawn uniformly over persons / 4 locations: 262,144 visits of 48 bytes per step,
# whatever the node count), 64-item buffers, modelled mode, bgq calibration, on BG/Q-like 5-D tori
# of 2 to 256 nodes with MTM_PPN PEs per node (default 4, not BG/Q's 16: see below).
#
# SERIES (default "none direct node 3d"):
#   none    --scheme none: one message per visit
#   direct  --grid direct: aggregation at the source, one buffer per destination PE (the thesis's
#           "direct" / application-specific buffering aggregates per destination too)
#   node    the default grid: nodes x PEs per node (2-D)
#   3d      A x B x PPN, A x B the nodes as the torus's dimensions merged into two (table 4.1's
#           way); at 2 nodes the node grid
# MTM_NODES (default "2 4 8 16 32 64 128 256") picks the node counts. Tori: 2 = torus:2,
# 4 = 2x2, 8 = 2x2x2, 16 = 2x2x2x2, 32 = 2x2x2x2x2, 64 = 4x2x2x2x2, 128 = 4x4x2x2x2,
# 256 = 4x4x4x2x2 (SimGrid refuses size-1 torus dimensions, docs/simulation.md).
#
# Why 4 PEs per node: the fixed graph keeps no aggregation at 262,144 messages per step at every
# node count (about 130 s of real time per run here at 32 ranks), and SimGrid's fixed cost of a
# 4096-rank job is about 5 minutes per run; 16 PEs per node to 256 nodes did not fit the session's
# time (MTM_PPN=16 runs it; runs of 2048 ranks and more take /tmp/transit-sim-big.lock).
#
# Prints one JSON line per run on stdout: the bench record (seconds = the step's simulated time,
# messages_sent, inter_node_messages, verified, ...) with simulated_seconds and wall_seconds, and
# added: series, nodes, pes_per_node, platform, ranks, rss_mb (the simulator's peak resident set).
# SMPI's chatter goes to $MTM_LOG (default /dev/null). Each run under `timeout $MTM_TIMEOUT`
# (default 3600 s). Needs `make build sim`. Real time here (2-core VM shared with 8-9 other
# simulations, 2026-11-26): grids 1 s to 5 min (3-D) and 19 min (2-D) at 1024 ranks; direct up to
# 2 min at 256 ranks; none 2-6 min at 32-128 ranks. None at 8 ranks and at 1024, and direct at 512,
# did not finish within the hour (docs/simulation-results.md gives the arithmetic in their place).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
series=${1:-none direct node 3d}
nodes_list=${MTM_NODES:-2 4 8 16 32 64 128 256}
ppn=${MTM_PPN:-4}
persons=${MTM_PERSONS:-65536}
degree=${MTM_DEGREE:-4}
sim_log=${MTM_LOG:-/dev/null}
limit=${MTM_TIMEOUT:-3600}
sim=${TRANSIT_SIM:-$root/build-sim/bin/transit}

# scripts/simulate runs the kernels it lists; until it lists bipartite, run the simulation build
# as a --program (same platform, settings and --transit-physical; the record is completed here).
if "$root/scripts/simulate" --list-kernels | grep -q '"bipartite"'; then
  as_program=()
else
  as_program=(--program "$sim")
fi

torus_of() {
  case $1 in
    2) echo 2 ;; 4) echo 2x2 ;; 8) echo 2x2x2 ;; 16) echo 2x2x2x2 ;; 32) echo 2x2x2x2x2 ;;
    64) echo 4x2x2x2x2 ;; 128) echo 4x4x2x2x2 ;; 256) echo 4x4x4x2x2 ;;
    *) echo "$sim_script: no torus for $1 nodes" >&2; exit 2 ;;
  esac
}
# The 3-D grid: nodes as A x B (the torus dimensions merged into two halves) x PEs per node.
grid3d_of() {
  case $1 in
    2) echo "2x$ppn" ;; 4) echo "2x2x$ppn" ;; 8) echo "4x2x$ppn" ;; 16) echo "4x4x$ppn" ;; 32) echo "8x4x$ppn" ;;
    64) echo "8x8x$ppn" ;; 128) echo "16x8x$ppn" ;; 256) echo "16x16x$ppn" ;;
  esac
}

# run SERIES NODES
run() {
  local name=$1 nodes=$2 ranks spec opts
  ranks=$((nodes * ppn))
  spec=torus:$(torus_of "$nodes"):$ppn
  case $name in
    none) opts=(--scheme none) ;;
    direct) opts=(--scheme grid --grid direct) ;;
    node) opts=(--scheme grid --grid node) ;;
    3d) opts=(--scheme grid --grid "$(grid3d_of "$nodes")") ;;
    *) echo "$sim_script: unknown series '$name' (none, direct, node, 3d)" >&2; exit 2 ;;
  esac
  sim_run --lock-big --timeout "$limit" -- --platform "$spec" --ranks "$ranks" --calibration bgq "${as_program[@]}" -- \
    bench bipartite --persons "$persons" --degree "$degree" --buffer-items 64 "${opts[@]}" --json
  # A run without a record is said on stderr; the sweep goes on.
  sim_record simulated_seconds wall_seconds platform="$spec" ranks:="$ranks" calibration=bgq mode=modelled \
    series="$name" nodes:="$nodes" pes_per_node:="$ppn" || true
}

for nodes in $nodes_list; do
  for s in $series; do
    run "$s" "$nodes"
  done
done
