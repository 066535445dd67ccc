#!/usr/bin/env bash
# bale's histo against `transit app histo`, at the same -n -T -s and PE count, in one sitting
# (bench/bale/app.sh: RUNS alternating rounds of bale then transit, -M 10, medians of the
# conveyor/streamer and exstack/sparse_exchange times, both self-checks required).
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
exec "$(dirname "${BASH_SOURCE[0]}")/app.sh" "$1" "$2" histo "${3:-2}" "${7:-5}" -n "${4:-5000000}" -T "${5:-10000}" -s "${6:-122222}"
