#!/usr/bin/env bash
# bench/sim/dragonfly.sh [PARTS]: 2-D against 3-D grids on a dragonfly and on a torus with scattered
# nodes (TRAM thesis, Wesolowski 2014, figure 4.6 and the end of 4.8; issue "transit at scale,
# part 2", item 9). Streaming all-to-all (`transit bench alltoall`) of 32-byte items with 16 KiB
# buffers (--buffer-items 512), modelled mode, on 256 nodes x DF_PPN PEs (default 4: 1024 ranks;
# DF_PPN=16 gives the thesis's 4096 ranks, about 5 minutes and 5 GB per run alone, so it runs
# under flock /tmp/transit-sim-big.lock). Grids: 2-D 256 x PPN (nodes x PEs) and 3-D 16 x 16 x PPN.
#
# PARTS (default "dragonfly torus"):
#   dragonfly  an XC30-like dragonfly, one Aries group: dragonfly:1x4x16x4 (4 chassis of 16
#              routers, 4 nodes per router; routers of a chassis joined all to all, routers of one
#              position joined across the chassis), calibration xc30. One group, not several: the
#              spec gives one global link between two groups, which a 256-node all-to-all would
#              saturate (Piz Daint has tens per pair), and 256 nodes fit in one XC30 group (384).
#   torus      an XE6-like 3-D torus torus:8x8x8 (512 nodes), calibration xe6, the job's 256 nodes
#              scattered over it at random (seed DF_SEED, default 1), as a Cray XE6 allocation is:
#              a wrapper around the platform tool (scripts/simulate --platform-tool; the approach of
#              bench/sim/grids.sh's "random" part) maps the hostfile's 256 nodes onto a random
#              256 of the 512, keeping each node's PEs together. The 2-D grid's one hop between
#              nodes goes straight to the destination; the 3-D grid's two go through a node placed
#              at random, so its items cross about twice as many torus links.
#   compact    (not by default) the torus part with the job on the torus's first 256 nodes
#              (a 4 x 8 x 8 block, the hostfile as transit platform writes it): a reference.
# Sizes: 32, 128, 512 and 2048 B per destination (items per PE = ranks x bytes / 32), or DF_SIZES;
# grids DF_GRIDS (default "256xPPN 16x16xPPN").
#
# Prints one JSON line per run on stdout: the bench record (seconds = the all-to-all's simulated
# time, messages_sent, items_forwarded, verified...), simulated_seconds, wall_seconds, platform,
# ranks, calibration, and added: part, label, machine (dragonfly|torus|compact), grid_dims,
# bytes_per_destination, rss_mb (the simulator's peak resident set), series (plot label
# "<machine> <N>-D"). SMPI's chatter goes to $DF_LOG (default /dev/null). Needs `make build sim`.
# Real time here (2 cores shared with other simulations, 2026-11-26, DF_PPN=4): the 2-D grid
# sends about 270,000 messages at every size, 4 to 20 minutes a run (32 B: 260 s, 128 B: 950 s,
# 512 B: 1200 s); the 3-D grid 34,000-120,000, 1.5 to 4 minutes. About 50 minutes a part for
# 32-512 B; the 2048 B dragonfly run was stopped after 16 minutes, and the torus part ran only
# 32 and 128 B (DF_SIZES="32 128"). compact was not run.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
parts=" ${1:-dragonfly torus} "
sim_log=${DF_LOG:-/dev/null}
ppn=${DF_PPN:-4}
ranks=$((256 * ppn))

# The wrapper that scatters the job's nodes over the torus (part torus): virtual node i of the
# hostfile goes to physical node to[i], a random sample of all the platform's nodes.
cat >"$workdir/scattering-platform-tool" <<'SH'
#!/usr/bin/env bash
set -euo pipefail
"$DF_REAL_TOOL" "$@"
hostfile="" platform="" prev=""
for a in "$@"; do
  [ "$prev" = "--hostfile" ] && hostfile=$a
  [ "$prev" = "--platform" ] && platform=$a
  prev=$a
done
[ -n "$hostfile" ] || exit 0
python3 - "$hostfile" "$platform" "${DF_SEED:-1}" <<'PY'
import random, re, sys
path, platform, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
hosts = open(path).read().split()
last = int(re.search(r'radical="0-([0-9]+)"', open(platform).read()).group(1))
nodes = list(dict.fromkeys(hosts))                  # the job's nodes, in transit's order
chosen = random.Random(seed).sample(range(last + 1), len(nodes))
to = {h: f"node-{c}" for h, c in zip(nodes, chosen)}
open(path, "w").write("".join(to[h] + "\n" for h in hosts))
PY
SH
chmod +x "$workdir/scattering-platform-tool"

# run PART MACHINE SPEC CALIBRATION GRID BYTES_PER_DESTINATION
run() {
  local part=$1 machine=$2 spec=$3 cal=$4 grid=$5 bpd=$6 envs=() dims
  dims=$(awk -F x '{print NF}' <<<"$grid")
  [ "$machine" = torus ] && envs=(--env TRANSIT_TOOL="$workdir/scattering-platform-tool" --env DF_REAL_TOOL="$tool")
  sim_run "${envs[@]}" --lock-big --timeout 3000 -- --platform "$spec" --ranks "$ranks" --calibration "$cal" -- \
    bench alltoall --item-bytes 32 --buffer-items 512 --grid "$grid" --items-per-pe $((ranks * bpd / 32))
  # A run without a record is said on stderr; the sweep goes on.
  sim_record part="$part" label="$machine.$grid.$bpd" machine="$machine" series="$machine $dims-D" rss_mb \
    grid_dims:="$dims" bytes_per_destination:="$bpd" || true
}

sweep() {  # sweep PART MACHINE SPEC CALIBRATION
  for bpd in ${DF_SIZES:-32 128 512 2048}; do
    for grid in ${DF_GRIDS:-256x$ppn 16x16x$ppn}; do
      run "$@" "$grid" "$bpd"
    done
  done
}
if part dragonfly; then sweep dragonfly dragonfly "dragonfly:1x4x16x4:$ppn" xc30; fi
if part torus; then sweep torus torus "torus:8x8x8:$ppn" xe6; fi
if part compact; then sweep compact compact "torus:8x8x8:$ppn" xe6; fi
