#!/usr/bin/env bash
# bale's sssp against `transit app sssp`, with the same options and PE count, in one sitting (as
# compare.sh, whose "Conveyor"/"Exstack" keys sssp does not write): RUNS rounds, each running
# bale (conveyor and exstack, -M 10) then transit (streamer and sparse_exchange, -M 10) once,
# alternating; prints every run and the medians of the four kernel times (Bellman-Ford and Delta,
# Conveyor and Exstack; bale's JSON keys without "(compares)"). The answers are compared: both
# sides' distances (their -D dump, sssp_dist, "%lf" per vertex) byte for byte; both programs must
# pass their self-checks (exit status 0), or the script fails.
#
#   bench/bale/sssp.sh BALE_PREFIX TRANSIT_BIN PES RUNS [bale's options...]
#
# BALE_PREFIX: what bench/bale/build.sh installed (its bin/sssp, bin/bale-oshrun); TRANSIT_BIN:
# the transit command (build/bin/transit). Example: sssp.sh /work/bale-install build/bin/transit
# 2 5 -n 20000
set -euo pipefail

if [ $# -lt 4 ]; then
  echo "usage: $0 BALE_PREFIX TRANSIT_BIN PES RUNS [bale's options...]" >&2
  exit 2
fi
bale=$1 transit=$2 pes=$3 runs=$4 app=sssp
shift 4
for f in "$bale/bin/$app" "$bale/bin/bale-oshrun" "$transit"; do
  [ -x "$f" ] || { echo "$0: '$f' is not an executable (build bale with bench/bale/build.sh)" >&2; exit 2; }
done
transit=$(cd "$(dirname "$transit")" && pwd)/$(basename "$transit")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Above the core count both sides run oversubscribed, with Open MPI's mpi_yield_when_idle (as compare.sh).
if [ "$pes" -gt "$(nproc)" ]; then export OMPI_MCA_mpi_yield_when_idle=1; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bale" "$work/transit"

# One run's kernel times ("Bellman-Ford Exstack ()" ...) as "name=seconds" words, in the file's
# order.
times_of() {
  python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
print(" ".join(re.sub(r" \(.*\)$", "", k).replace(" ", "_") + "=" + v for k, v in d.items()
               if re.search(r"(Conveyor|Exstack)( \(.*\))?$", k)))' "$1"
}

echo "# $app $*, $pes PEs, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores"
: >"$work/bale.times"; : >"$work/transit.times"
for run in $(seq 1 "$runs"); do
  (cd "$work/bale" && "$bale/bin/bale-oshrun" --oversubscribe -n "$pes" "$bale/bin/$app" "$@" -D -M 10 -j b.json >/dev/null 2>&1) ||
    { echo "$0: bale's $app failed (run $run)" >&2; exit 1; }
  (cd "$work/transit" && mpirun --oversubscribe -n "$pes" "$transit" app "$app" "$@" -D -M 10 -j t.json \
    --transit-backend=mpi >/dev/null 2>&1) || { echo "$0: transit app $app failed (run $run)" >&2; exit 1; }
  b=$(times_of "$work/bale/b.json"); t=$(times_of "$work/transit/t.json")
  cmp -s "$work/bale/sssp_dist" "$work/transit/sssp_dist" ||
    { echo "$0: distances differ (bale's and transit's sssp_dist, run $run)" >&2; exit 1; }
  echo "$b" >>"$work/bale.times"; echo "$t" >>"$work/transit.times"
  echo "run $run  bale: $b  transit: $t  (distances equal)"
done
python3 - "$work/bale.times" "$work/transit.times" <<'PY'
import statistics, sys
def medians(path):
    runs = [dict(w.split("=") for w in line.split()) for line in open(path)]
    return {k: statistics.median(float(r[k]) for r in runs) for k in runs[0]}
bale, transit = medians(sys.argv[1]), medians(sys.argv[2])
for key in bale:
    b, t = bale[key], transit.get(key, float("nan"))
    style = key.replace("Conveyor", "Conveyor/streamer").replace("Exstack", "Exstack/sparse_exchange")
    print(f"median {style:40s} bale {b:8.4f}  transit {t:8.4f}  speedup {b / t:5.2f}x")
PY
