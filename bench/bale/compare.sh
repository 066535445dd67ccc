#!/usr/bin/env bash
# Any bale application against `transit app APP`, same options, same PE count, in one sitting:
# RUNS rounds, each running bale's APP then transit's once (alternating), both with -M 10
# (conveyor and exstack: streamer and sparse_exchange) and -j; prints every run's kernel times and
# the medians, and compares the answers: every key both JSON files hold, except the times and
# what names the run (date, app, backend, version), must be equal (num_triangles, matrix_nnz...).
# Both must pass their self-checks (exit status 0), or the script fails.
#
#   bench/bale/compare.sh BALE_PREFIX TRANSIT_BIN APP [ARGS...]
#   PES=2 RUNS=5 bench/bale/compare.sh /work/bale-install build/bin/transit transpose_matrix -n 200000
#
# BALE_PREFIX: what bench/bale/build.sh installed (bin/APP, bin/bale-oshrun); TRANSIT_BIN: the
# transit command. PES (default 2) and RUNS (default 5) from the environment; above the core
# count both sides run oversubscribed, both with Open MPI's mpi_yield_when_idle (its busy polling
# would otherwise take the cores of the ranks it waits for). bale's toposort is its program
# `topo`: APP is transit's name, bale's is mapped.
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 BALE_PREFIX TRANSIT_BIN APP [ARGS...]   (PES, RUNS from the environment)" >&2
  exit 2
fi
bale=$(cd "$1" && pwd) transit=$(realpath "$2") app=$3
shift 3
pes=${PES:-2} runs=${RUNS:-5}
bale_app=$app
[ "$app" = toposort ] && bale_app=topo
if [ "$pes" -gt "$(nproc)" ]; then export OMPI_MCA_mpi_yield_when_idle=1; fi
for f in "$bale/bin/$bale_app" "$bale/bin/bale-oshrun" "$transit"; do
  [ -x "$f" ] || { echo "$0: '$f' is not an executable (build bale with bench/bale/build.sh)" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

times_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["Conveyor"], d["Exstack"])' "$1"; }

echo "# $app $*, $pes PEs, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores"
echo "# run  bale_conveyor bale_exstack  transit_streamer transit_exchange  (seconds)"
: >"$work/bale"; : >"$work/transit"
for run in $(seq 1 "$runs"); do
  (cd "$work" && "$bale/bin/bale-oshrun" --oversubscribe -n "$pes" "$bale/bin/$bale_app" "$@" -M 10 -j "$work/b.json" \
    >"$work/b.log" 2>&1) || { echo "$0: bale's $bale_app failed (run $run): $(tail -3 "$work/b.log")" >&2; exit 1; }
  (cd "$work" && mpirun --oversubscribe -n "$pes" "$transit" app "$app" "$@" -M 10 -j "$work/t.json" \
    --transit-backend=mpi >"$work/t.log" 2>&1) || { echo "$0: transit app $app failed (run $run): $(tail -3 "$work/t.log")" >&2; exit 1; }
  b=$(times_of "$work/b.json"); tr=$(times_of "$work/t.json")
  echo "$b" >>"$work/bale"; echo "$tr" >>"$work/transit"
  echo "$run  $b  $tr"
done
python3 - "$work/bale" "$work/transit" "$work/b.json" "$work/t.json" <<'PY'
import json, statistics, sys
rows = [[list(map(float, line.split())) for line in open(p)] for p in sys.argv[1:3]]
(bc, be), (tc, te) = ([statistics.median(r[i] for r in rs) for i in (0, 1)] for rs in rows)
print(f"median  bale conveyor {bc:.4f}  exstack {be:.4f}   transit streamer {tc:.4f}  exchange {te:.4f}")
print(f"speedup streamer over conveyor {bc / tc:.2f}x, exchange over exstack {be / te:.2f}x")
b, t = (json.load(open(p)) for p in sys.argv[3:5])
skip = {"date", "app", "backend", "bale_version", "AGP", "Exstack", "Exstack2", "Conveyor"}
common = sorted(k for k in b.keys() & t.keys() if k not in skip)
differ = [k for k in common if b[k] != t[k]]
print("answers compared (" + ", ".join(common) + "): " + ("equal" if not differ else "DIFFERENT"))
for k in differ:
    print(f"  {k}: bale {b[k]!r}, transit {t[k]!r}")
sys.exit(1 if differ else 0)
PY
