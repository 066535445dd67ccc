#!/usr/bin/env bash
# bale's triangles or sssp against `transit app triangles|sssp`, with the same options and PE
# count, in one sitting: RUNS rounds, each running bale (conveyor and exstack, -M 10) then transit
# (streamer and sparse_exchange, -M 10) once, alternating; prints every run and the medians of
# each kernel time bale reports under "Conveyor"/"Exstack" (sssp: Bellman-Ford and Delta of
# each; mean over PEs, bale's JSON keys without sssp's "(compares)"). The answers are compared:
# triangles' count, and sssp's distances (both sides' -D dump, sssp_dist); both programs must pass
# their self-checks (exit status 0), or the script fails.
#
#   bench/bale/graphs.sh BALE_PREFIX TRANSIT_BIN APP PES RUNS [bale's options...]
#
# BALE_PREFIX: what bench/bale/build.sh installed (its bin/APP, bin/bale-oshrun); TRANSIT_BIN:
# the transit command (build/bin/transit). Example: graphs.sh /work/bale-install build/bin/transit
# triangles 2 5 -n 100000
set -euo pipefail

if [ $# -lt 5 ]; then
  echo "usage: $0 BALE_PREFIX TRANSIT_BIN triangles|sssp PES RUNS [bale's options...]" >&2
  exit 2
fi
bale=$1 transit=$2 app=$3 pes=$4 runs=$5
shift 5
case $app in
  triangles) dump=() ;;
  sssp) dump=(-D) ;;  # the distances, to compare
  *) echo "$0: APP: got '$app', expected triangles or sssp" >&2; exit 2 ;;
esac
for f in "$bale/bin/$app" "$bale/bin/bale-oshrun" "$transit"; do
  [ -x "$f" ] || { echo "$0: '$f' is not an executable (build bale with bench/bale/build.sh)" >&2; exit 2; }
done
transit=$(cd "$(dirname "$transit")" && pwd)/$(basename "$transit")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bale" "$work/transit"

# One run's kernel times ("Conveyor", "Exstack", sssp's "Bellman-Ford Exstack ()" ...) as
# "name=seconds" words, in the file's order; and its answer (the triangle count).
times_of() {
  python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
print(" ".join(re.sub(r" \(.*\)$", "", k).replace(" ", "_") + "=" + v for k, v in d.items()
               if re.search(r"(Conveyor|Exstack)( \(.*\))?$", k)))' "$1"
}
answer_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("triangles", d.get("num_triangles", "-")))' "$1"; }

echo "# $app $*, $pes PEs, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores"
: >"$work/bale.times"; : >"$work/transit.times"
for run in $(seq 1 "$runs"); do
  (cd "$work/bale" && "$bale/bin/bale-oshrun" -n "$pes" "$bale/bin/$app" "$@" "${dump[@]}" -M 10 -j b.json >/dev/null 2>&1) ||
    { echo "$0: bale's $app failed (run $run)" >&2; exit 1; }
  (cd "$work/transit" && mpirun --oversubscribe -n "$pes" "$transit" app "$app" "$@" "${dump[@]}" -M 10 -j t.json \
    --transit-backend=mpi >/dev/null 2>&1) || { echo "$0: transit app $app failed (run $run)" >&2; exit 1; }
  b=$(times_of "$work/bale/b.json"); t=$(times_of "$work/transit/t.json")
  ba=$(answer_of "$work/bale/b.json"); ta=$(answer_of "$work/transit/t.json")
  [ "$ba" = "$ta" ] || { echo "$0: answers differ: bale $ba, transit $ta (run $run)" >&2; exit 1; }
  if [ "$app" = sssp ]; then
    cmp -s "$work/bale/sssp_dist" "$work/transit/sssp_dist" ||
      { echo "$0: distances differ (bale's and transit's sssp_dist, run $run)" >&2; exit 1; }
    ta="distances equal"
  fi
  echo "$b" >>"$work/bale.times"; echo "$t" >>"$work/transit.times"
  echo "run $run  bale: $b  transit: $t  ($app: $ta)"
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
