#!/usr/bin/env bash
# bench/sim/phold.sh [PARTS]: PHOLD wants small buffers (TRAM thesis, Wesolowski 2014, figure 7.3
# and section 7.1.3; issue "transit at scale, part 2", item 10). `transit bench phold`, weak
# scaling, modelled mode, bgq calibration, BG/Q-like tori with 16 PEs per node; 40 LPs per PE
# (--lps-per-pe 40), 16 and 256 initial events per LP (--events-per-lp), 90% of the events local
# to their PE as in the thesis (--remote-fraction 0.1), aggregation buffers of 8 to 1024 items of
# 16 B (--buffer-items; grid "node", nodes x PEs, the default) against no aggregation
# (--scheme none: one message per remote event).
#
# The event count: in bench/phold.cpp, --items-per-pe does not count initial events; it sets the
# end of simulated time, chosen so that about that many events are handled per PE. The thesis's
# runs hold the simulated time fixed and change the event population, so the work grows with the
# population. Here every run ends after the same simulated time: --items-per-pe is
# 40 x E x PHOLD_CHAIN (default 4), i.e. each initial event starts a chain of about 4 events
# (end time (4 - 1) x 1100 ticks whatever E): about 2,560 events per PE at 16 events per LP and
# 40,960 at 256, a tenth of them remote.
#
# PARTS (default "r64 r256"): the rank counts, each a torus of 16-PE nodes as Blue Gene/Q
# partitions are:
#   r64    torus:2x2:16 (4 nodes)            r256   torus:2x2x2x2:16 (16 nodes)
#   r1024  torus:2x2x4x2x2:16 (64 nodes; not by default: not completed here, see below)
#   r4096  torus:4x4x4x2x2:16 (256 nodes; not by default, not run here; under flock
#          /tmp/transit-sim-big.lock, buffers PHOLD_BUFFERS_4096 (default "16 64 1024") and none)
# At each: both event counts, --scheme none first, then buffers PHOLD_BUFFERS (default "8 16 32 64
# 128 256 512 1024"); PHOLD_EVENTS (default "16 256") picks the event counts; PHOLD_NONE=0 skips
# the no-aggregation run (its 3 million messages at 1024 ranks and 256 events per LP).
#
# Prints one JSON line per run on stdout: the bench record (seconds = the simulated time of the
# PHOLD run, events, items_per_second_per_pe = events handled per PE per second, messages_sent,
# verified...), simulated_seconds, wall_seconds, platform, ranks, calibration, and added: part,
# label, rss_mb (the simulator's peak resident set), series (plot label "E=<events per LP>
# <ranks> ranks"), buffer (the buffer in items, 1 for none), gain_over_none (the no-aggregation
# run's seconds over this run's, at the same ranks and events per LP; 1 for none). SMPI's chatter goes to $PHOLD_LOG
# (default /dev/null). Needs `make build sim`. Real time here (2 cores shared with other
# simulations, 2026-11-26): r64 about 3 minutes (no aggregation at 256 events per LP alone: one
# minute), r256 about 45 (no aggregation at 256 events per LP alone: 764,265 messages, 20
# minutes). r1024's no aggregation at 256 events per LP (about 3 million messages) had not ended
# after 54 minutes when it was stopped.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
parts=" ${1:-r64 r256} "
sim_log=${PHOLD_LOG:-/dev/null}
chain=${PHOLD_CHAIN:-4}

# run PART SPEC RANKS EVENTS_PER_LP BUFFER|none
run() {
  local part=$1 spec=$2 ranks=$3 events=$4 buffer=$5 opts
  if [ "$buffer" = none ]; then opts=(--scheme none); else opts=(--buffer-items "$buffer"); fi
  sim_run --lock-big --timeout 3600 -- --platform "$spec" --ranks "$ranks" --calibration bgq -- bench phold \
    --lps-per-pe 40 --events-per-lp "$events" --remote-fraction 0.1 --items-per-pe $((40 * events * chain)) "${opts[@]}"
  sim_record part="$part" label="$ranks.E$events.$buffer" series="E=$events $ranks ranks" |
    python3 -c "import json,sys
r=json.loads(sys.stdin.read()); r['buffer']=1 if '$buffer'=='none' else int('$buffer')
none=float('$none_seconds' or 0)
r['gain_over_none']=1.0 if '$buffer'=='none' else round(none/r['seconds'],4) if none else None
print(json.dumps(r,separators=(',',':')),flush=True)" | tee "$workdir/last" || echo "$sim_script: $ranks.E$events.$buffer: no record" >&2
}

sweep() {  # sweep PART SPEC RANKS BUFFERS
  local e b
  for e in ${PHOLD_EVENTS:-16 256}; do
    none_seconds=""
    local first=none
    [ "${PHOLD_NONE:-1}" = 0 ] && first=""  # skip the no-aggregation run (gain_over_none is then null)
    for b in $first $4; do
      : >"$workdir/last"
      run "$1" "$2" "$3" "$e" "$b"
      if [ "$b" = none ]; then
        none_seconds=$(python3 -c "import json,sys; t=open(sys.argv[1]).read(); print(json.loads(t)['seconds'] if t.strip() else '')" "$workdir/last")
      fi
    done
  done
}
buffers=${PHOLD_BUFFERS:-8 16 32 64 128 256 512 1024}
if part r64; then sweep r64 torus:2x2:16 64 "$buffers"; fi
if part r256; then sweep r256 torus:2x2x2x2:16 256 "$buffers"; fi
if part r1024; then sweep r1024 torus:2x2x4x2x2:16 1024 "$buffers"; fi
if part r4096; then sweep r4096 torus:4x4x4x2x2:16 4096 "${PHOLD_BUFFERS_4096:-16 64 1024}"; fi
