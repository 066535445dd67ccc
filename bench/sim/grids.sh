#!/usr/bin/env bash
# bench/sim/grids.sh [PARTS]: grid dimensionality on a simulated Blue Gene/Q (TRAM thesis,
# Wesolowski 2014, figures 4.2-4.3 with table 4.1, table 4.2 and its discussion in 4.7, figure 4.7;
# issue "transit at scale, part 2", topic "grids"). Streaming all-to-all (`transit bench alltoall`)
# of 32-byte items with 16 KiB buffers (--buffer-items 512), modelled mode, bgq calibration, on
# 5-D BG/Q-like tori with 16 PEs per node; the grids merge torus dimensions as table 4.1 does.
#
# PARTS (default "dims8 dims32 none raw dims64 ratio random slowlinks"):
#   dims8   table 4.1's grids at 8 nodes (torus:2x2x2:16, 128 ranks): 1-D direct, 2-D nodes x PEs,
#           3-D ABC x DE x T, 4-D AB x C x DE x T, 5-D AB x C x DE x T/4 x 4; 32 B to 2 KiB per
#           destination (items per PE = ranks x bytes per destination / 32).
#   dims32  32 nodes (torus:2x2x2x2x2:16, 512 ranks): every grid: direct, 2-D 32x16 and 16x32,
#           3-D 8x8x8 and 8x4x16, 4-D, 5-D and 6-D A x B x C x D x E x T, 32 B to 512 B per
#           destination; direct, 32x16 and 8x4x16 also at 2 KiB. Direct sends 512 x 511 messages
#           whatever the volume (9-11 minutes each here, 2026-11-28); GRIDS_DIRECT32=0 leaves it out.
#   none    no aggregation (--scheme none: the streamer with 1-item buffers, whose end sends a bare
#           final marker per link; the record's marker_messages counts them) at 8 nodes, 32 B and
#           128 B per destination, and at 32 nodes 32 B (11 minutes here; GRIDS_NONE32=0 leaves it
#           out).
#   raw     no aggregation without the streamer: one MPI_Isend per item (--scheme mpi-raw), ended
#           by an MPI_Ialltoall of counts, at the same points as none.
#   dims64  64 nodes (torus:2x2x4x2x2:16, 1024 ranks), 32 B per destination: 2-D 64x16 and 3-D
#           16x4x16 at both ratios, 6-D 2x2x4x2x2x16 at 24.
#   dims4096  256 nodes (torus:4x4x4x2x2:16, 4096 ranks: the thesis's scale, where more dimensions
#           should start to pay), 32 B per destination: table 4.1's 2-D 256x16, 3-D 64x4x16
#           (ABC x DE x T), 4-D 16x4x4x16 (AB x C x DE x T) and 6-D 4x4x4x2x2x16 at ratio 24, the
#           2-D and 3-D grids also at 5.5 and at 24 with a NIC of 1 M messages per second per node
#           (GRIDS4096_RUNS picks runs by label, e.g. "4096n.256x16.32.r24"). Each run holds
#           /tmp/transit-sim-big.lock (one such simulation at a time).
#   ratio   dims8's grids, and at 32 nodes dims32's grids at 32 B and 512 B, with
#           (o_s + o_d) / o_a = 5.5 (Cray XE6, thesis table 4.2) instead of BG/Q's 24: bgq with
#           --set seconds_per_message=8.14e-7 (per end; 2 x 8.14e-7 / 2.96e-7 = 5.5), everything
#           else BG/Q's.
#   random  a 6-D grid 4x4x4x4x2x2 on 512 nodes (torus:4x4x4x4x2:2, 1024 ranks: 2 PEs per node,
#           not 16, to stay within minutes), nodes in torus order against randomly permuted
#           (figure 4.7), 32 B to 1 KiB per destination. transit has no option for a random
#           placement: a wrapper around the platform tool (scripts/simulate --platform-tool)
#           permutes the nodes of the hostfile that `transit platform` wrote, keeping each node's
#           PEs together (seed GRIDS_SEED, default 1). transit still believes PE p is on node
#           p / PPN, so its grid is laid out as on the torus while the ranks sit on random nodes:
#           the thesis's "first five dimensions random, PEs of a node contiguous along the sixth".
#   slowlinks  random's pair at 256 B per destination with 0.2 GB/s links (a sensitivity run).
#
# Prints one JSON line per run on stdout: the bench record (seconds = the all-to-all's simulated
# time, messages_sent, items_forwarded, verified...), simulated_seconds, wall_seconds, platform,
# ranks, and added: part, label, torus_nodes, grid_dims (1 for direct, 0 for none and mpi-raw),
# bytes_per_destination, ratio ((o_s+o_d)/o_a), mapping (torus|random), rss_mb (the simulator's
# peak resident set), series (a plot label: "none", "mpi-raw" or "<N>-D <grid>"). SMPI's own chatter goes to
# $GRIDS_LOG (default /dev/null). Needs `make build sim`. Real time here (2 cores shared with other
# simulations): dims8 1 minute, dims32 48 (40 of them direct), none 12, raw 2, ratio 15
# (2026-11-28); dims64 6, random 7, slowlinks 8 (2026-11-26).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
parts=" ${1:-dims8 dims32 none raw dims64 ratio random slowlinks} "
sim_log=${GRIDS_LOG:-/dev/null}

# The wrapper that gives the hostfile a random node order (part random).
cat >"$workdir/permuting-platform-tool" <<'SH'
#!/usr/bin/env bash
set -euo pipefail
"$GRIDS_REAL_TOOL" "$@"
hostfile="" prev=""
for a in "$@"; do
  [ "$prev" = "--hostfile" ] && hostfile=$a
  prev=$a
done
[ -n "$hostfile" ] || exit 0
python3 - "$hostfile" "${GRIDS_SEED:-1}" <<'PY'
import random, sys
path, seed = sys.argv[1], int(sys.argv[2])
hosts = open(path).read().split()
nodes = list(dict.fromkeys(hosts))       # nodes in torus order
shuffled = nodes[:]
random.Random(seed).shuffle(shuffled)
to = dict(zip(nodes, shuffled))          # virtual node i -> physical node to[i]
open(path, "w").write("".join(to[h] + "\n" for h in hosts))
PY
SH
chmod +x "$workdir/permuting-platform-tool"

# run PART LABEL SPEC RANKS SCHEME GRID ITEMS RATIO MAPPING [scripts/simulate options...]
run() {
  local part=$1 label=$2 spec=$3 ranks=$4 scheme=$5 grid=$6 items=$7 ratio=$8 mapping=$9
  shift 9
  local envs=(--lock-big) torus nodes=1 d dims series bpd nic=0 previous="" arg
  if [ "$mapping" = random ]; then
    envs=(--env TRANSIT_TOOL="$workdir/permuting-platform-tool" --env GRIDS_REAL_TOOL="$tool")
  fi
  sim_run "${envs[@]}" -- --platform "$spec" --ranks "$ranks" --calibration bgq "$@" -- bench alltoall \
    --item-bytes 32 --buffer-items 512 --scheme "$scheme" --grid "$grid" --items-per-pe "$items"
  torus=${spec#*:}
  torus=${torus%%:*}
  for d in ${torus//x/ }; do nodes=$((nodes * d)); done
  if [ "$scheme" = none ] || [ "$scheme" = mpi-raw ]; then dims=0; elif [ "$grid" = direct ]; then dims=1; else dims=$(awk -F x '{print NF}' <<<"$grid"); fi
  if [ "$dims" = 0 ]; then series=$scheme; else series="$dims-D $grid"; fi
  bpd=$(python3 -c "print($items * 32 / $ranks)")  # as a float, as before
  for arg in "$@"; do
    [ "$previous" = "--set" ] && [[ $arg == nic_messages_per_second=* ]] && nic=${arg#*=}
    previous=$arg
  done
  sim_record part="$part" label="$label" torus_nodes:="$nodes" grid_dims:="$dims" bytes_per_destination:="$bpd" \
    ratio:="$ratio" mapping="$mapping" nic_messages_per_second:="$nic" rss_mb series="$series"
}

# Table 4.1's grids. 8 nodes: torus 2x2x2 read as A=2, C=2, E=2 (B = D = 1; SimGrid refuses size-1
# torus dimensions), so ABC = 4, DE = 2, AB = 2, C = 2; the 6-D grid is the 4-D one there. 32 nodes:
# A..E = 2x2x2x2x2. Direct at 32 nodes sends 512 x 511 messages of 32 B at any volume up to 16 KiB
# per destination (9-11 minutes each here); GRIDS_DIRECT32=0 leaves it out.
grids8="direct 8x16 4x2x16 2x2x2x16 2x2x2x4x4"
grids32="32x16 16x32 8x8x8 8x4x16 4x2x4x16 4x2x4x4x4 2x2x2x2x2x16"
grids2048="32x16 8x4x16"
[ "${GRIDS_DIRECT32:-1}" = 1 ] && grids32="direct $grids32" && grids2048="direct $grids2048"
xe6_ratio=(--set seconds_per_message=8.14e-7)

# grids8 PART RATIO [options]: table 4.1's grids at 8 nodes, 32 B to 2 KiB per destination
grids8() {
  local part=$1 ratio=$2
  shift 2
  for bpd in 32 128 512 2048; do
    for g in $grids8; do
      run "$part" "8n.$g.$bpd" torus:2x2x2:16 128 grid "$g" $((128 * bpd / 32)) "$ratio" torus "$@"
    done
  done
}
# grids32 PART RATIO "VOLUMES" "GRIDS" [options]: at 32 nodes
grids32() {
  local part=$1 ratio=$2 volumes=$3 grids=$4
  shift 4
  for bpd in $volumes; do
    for g in $grids; do
      run "$part" "32n.$g.$bpd" torus:2x2x2x2x2:16 512 grid "$g" $((512 * bpd / 32)) "$ratio" torus "$@"
    done
  done
}

if part dims8; then grids8 dims 24.3; fi
if part dims32; then
  grids32 dims 24.3 "32 128 512" "$grids32"
  grids32 dims 24.3 2048 "$grids2048"
fi
if part none; then
  # No aggregation: one message per item, and a bare final marker per link at the end (the
  # record's marker_messages: reported apart in the results).
  for bpd in 32 128; do
    run dims "8n.none.$bpd" torus:2x2x2:16 128 none direct $((128 * bpd / 32)) 24.3 torus
  done
  [ "${GRIDS_NONE32:-1}" = 1 ] && run dims "32n.none.32" torus:2x2x2x2x2:16 512 none direct 512 24.3 torus
fi
if part raw; then
  # No aggregation without the streamer: one MPI_Isend per item (`--scheme mpi-raw`), ended by an
  # MPI_Ialltoall of counts instead of final markers.
  for bpd in 32 128; do
    run dims "8n.raw.$bpd" torus:2x2x2:16 128 mpi-raw direct $((128 * bpd / 32)) 24.3 torus
  done
  [ "${GRIDS_NONE32:-1}" = 1 ] && run dims "32n.raw.32" torus:2x2x2x2x2:16 512 mpi-raw direct 512 24.3 torus
fi
if part ratio; then
  grids8 ratio 5.5 "${xe6_ratio[@]}"
  grids32 ratio 5.5 "32 512" "$grids32" "${xe6_ratio[@]}"
  run ratio "8n.none.32" torus:2x2x2:16 128 none direct 128 5.5 torus "${xe6_ratio[@]}"
fi
if part dims64; then
  for ratio in 24.3 5.5; do
    opts=()
    [ "$ratio" = 5.5 ] && opts=("${xe6_ratio[@]}")
    p=dims; [ "$ratio" = 5.5 ] && p=ratio
    for g in 64x16 16x4x16; do
      run "$p" "64n.$g.32" torus:2x2x4x2x2:16 1024 grid "$g" 1024 "$ratio" torus "${opts[@]}"
    done
  done
  run dims "64n.2x2x4x2x2x16.32" torus:2x2x4x2x2:16 1024 grid 2x2x4x2x2x16 1024 24.3 torus
fi
if part dims4096; then
  # run4096 LABEL GRID RATIO [options]: one 4096-rank run, if GRIDS4096_RUNS (default: all) names it
  run4096() {
    local label=$1 g=$2 ratio=$3
    shift 3
    if [ -n "${GRIDS4096_RUNS:-}" ] && [[ " $GRIDS4096_RUNS " != *" $label "* ]]; then return 0; fi
    run dims "$label" torus:4x4x4x2x2:16 4096 grid "$g" 4096 "$ratio" torus "$@"
  }
  for g in 256x16 64x4x16 16x4x4x16 4x4x4x2x2x16; do run4096 "4096n.$g.32.r24" "$g" 24.3; done
  for g in 256x16 64x4x16; do
    run4096 "4096n.$g.32.r5.5" "$g" 5.5 "${xe6_ratio[@]}"
    run4096 "4096n.$g.32.r24.nic1M" "$g" 24.3 --set nic_messages_per_second=1e6
  done
fi
if part slowlinks; then
  # Sensitivity, not BG/Q: the same 6-D pair at 256 B per destination with links 10 times slower
  # than BG/Q's 2 GB/s, so that the links weigh against the per-item and per-message charges
  # (with 2 PEs per node instead of 16, a node injects 8 times less than on BG/Q). The random run
  # took 6 minutes here; 40 times slower links were not run.
  for bw in 2e8; do
    for mapping in torus random; do
      run slowlinks "512n.6d.256.$mapping.$bw" torus:4x4x4x4x2:2 1024 grid 4x4x4x4x2x2 8192 24.3 "$mapping" \
        --set link_bytes_per_second=$bw
    done
  done
fi
if part random; then
  for bpd in 32 256 1024; do
    for mapping in torus random; do
      run random "512n.6d.$bpd.$mapping" torus:4x4x4x4x2:2 1024 grid 4x4x4x4x2x2 $((1024 * bpd / 32)) 24.3 "$mapping"
    done
  done
fi
