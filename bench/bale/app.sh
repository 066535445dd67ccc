#!/usr/bin/env bash
# One of bale's applications against `transit app APP`, same options and PE count, in one
# sitting: RUNS rounds, each running bale's APP (conveyor and exstack, -M 10) then transit's
# (streamer and sparse_exchange, -M 10) once, alternating; prints every run and the medians of
# each style's kernel time (bale's JSON keys "Conveyor" and "Exstack", mean over PEs). Both must
# pass their self-checks (exit status 0), or the script fails.
#
#   bench/bale/app.sh BALE_PREFIX TRANSIT_BIN APP PES RUNS [APP'S OPTIONS...]
#   bench/bale/app.sh /work/bale-install build/bin/transit ig 2 5 -n 5000000 -T 10000
#
# BALE_PREFIX: what bench/bale/build.sh installed (its bin/APP, bin/bale-oshrun); TRANSIT_BIN:
# the transit command (build/bin/transit). The options go to both programs as given.
set -euo pipefail

if [ $# -lt 5 ]; then
  echo "usage: $0 BALE_PREFIX TRANSIT_BIN APP PES RUNS [APP'S OPTIONS...]" >&2
  exit 2
fi
bale=$1 transit=$2 app=$3 pes=$4 runs=$5
shift 5
for f in "$bale/bin/$app" "$bale/bin/bale-oshrun" "$transit"; do
  [ -x "$f" ] || { echo "$0: '$f' is not an executable (build bale with bench/bale/build.sh)" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One run: its JSON file's "Conveyor" and "Exstack" on one line.
times_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["Conveyor"], d["Exstack"])' "$1"; }

echo "# $app $*, $pes PEs, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
echo "# run  bale_conveyor bale_exstack  transit_streamer transit_exchange  (seconds)"
: >"$work/bale" ; : >"$work/transit"
for run in $(seq 1 "$runs"); do
  "$bale/bin/bale-oshrun" --oversubscribe -n "$pes" "$bale/bin/$app" "$@" -M 10 -j "$work/b.json" >/dev/null 2>&1 ||
    { echo "$0: bale's $app failed (run $run)" >&2; exit 1; }
  mpirun --oversubscribe -n "$pes" "$transit" app "$app" "$@" -M 10 -j "$work/t.json" \
    --transit-backend=mpi >/dev/null 2>&1 || { echo "$0: transit app $app failed (run $run)" >&2; exit 1; }
  b=$(times_of "$work/b.json"); tr=$(times_of "$work/t.json")
  echo "$b" >>"$work/bale"; echo "$tr" >>"$work/transit"
  echo "$run  $b  $tr"
done
python3 - "$work/bale" "$work/transit" <<'PY'
import statistics, sys
rows = [[list(map(float, line.split())) for line in open(p)] for p in sys.argv[1:]]
(bc, be), (tc, te) = ([statistics.median(r[i] for r in rs) for i in (0, 1)] for rs in rows)
print(f"median  bale conveyor {bc:.4f}  exstack {be:.4f}   transit streamer {tc:.4f}  exchange {te:.4f}")
print(f"speedup streamer over conveyor {bc / tc:.2f}x, exchange over exstack {be / te:.2f}x")
PY
