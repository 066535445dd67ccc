#!/usr/bin/env bash
# bale's histo against `transit app histo`, at the same -n -T -s and PE count, in one sitting:
# RUNS rounds, each running bale (conveyor and exstack, -M 10) then transit (streamer and
# sparse_exchange, -M 10) once, alternating; prints every run and the medians of each style's
# kernel time (bale's JSON keys "Conveyor" and "Exstack", mean over PEs). Both must pass their
# self-checks (exit status 0), or the script fails.
#
#   bench/bale/histo.sh BALE_PREFIX TRANSIT_BIN [PES] [N_PER_PE] [T_PER_PE] [SEED] [RUNS]
#
# BALE_PREFIX: what bench/bale/build.sh installed (its bin/histo, bin/bale-oshrun);
# TRANSIT_BIN: the transit command (build/bin/transit). Defaults: 2 PEs, bale's -n 5000000 and
# -T 10000, -s 122222, 5 runs.
set -euo pipefail

if [ $# -lt 2 ]; then
  echo "usage: $0 BALE_PREFIX TRANSIT_BIN [PES] [N_PER_PE] [T_PER_PE] [SEED] [RUNS]" >&2
  exit 2
fi
# compare.sh runs any application so; histo's options by position, as this script always took them.
PES=${3:-2} RUNS=${7:-5} exec "$(dirname "${BASH_SOURCE[0]}")/compare.sh" "$1" "$2" histo -n "${4:-5000000}" \
  -T "${5:-10000}" -s "${6:-122222}"
