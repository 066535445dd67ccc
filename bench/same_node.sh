#!/usr/bin/env bash
# bench/same_node.sh BEFORE AFTER [ROUNDS]: issue 41 in one sitting. One-sided operations inside one
# node (one host, no emulated nodes) in polling mode, the default, of two transit builds, against
# mpi_rma (Open MPI's osc sm, run from AFTER). Shapes ($SAME_NODE_SHAPES, comma-separated; default
# "local 4,mpi 2,mpi 4"): local 4 or 16 PEs; mpi 2, 4 or 16 ranks (above 2 oversubscribed on 2
# cores: --oversubscribe and mpi_yield_when_idle=1); hybrid 1x2 and 2x2 (ranks x PE threads,
# mpirun --bind-to none; no mpi_rma: its windows hold one PE per rank). Kernels:
#   bench hotspot --op fetch-add --ops 10 --iterations 200 --contention C, C = 100 and 0:
#     mean_us, each PE's mean time per fetch-add averaged over PEs;
#   bench atomics --ops 1000: fetch_add_us, accumulate_us (with fence) and lock_us, first PE to last;
#   app histo -n 500000 -T 1000 -M 9 (with $SAME_NODE_HISTO=1): bale's histogram through
#     global_array::accumulate (AGP) and through the streamer (Conveyor), seconds of each.
# ROUNDS rounds (default 5), every configuration once per round, interleaved; the table shows the
# median over rounds, before/after and after/mpi-rma as ratios of medians. JSON records go to
# $SAME_NODE_LOG (default /tmp/transit-same-node.jsonl).
set -euo pipefail
before=$1 after=$2 rounds=${3:-5}
log=${SAME_NODE_LOG:-/tmp/transit-same-node.jsonl}
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "$(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "before: $before; after: $after; $rounds rounds"

# run SHAPE VARIANT BINARY LAUNCH... -- ARGS...: one job; its JSON record, tagged, into the log.
run() {
  local shape=$1 variant=$2 binary=$3; shift 3
  local launch=()
  while [ "$1" != "--" ]; do launch+=("$1"); shift; done
  shift
  local out
  if ! out=$("${launch[@]}" "$binary" "$@" --json 2>/tmp/transit-same-node.err); then
    echo "bench/same_node.sh: FAILED: $shape $variant $*" >&2
    cat /tmp/transit-same-node.err >&2
    exit 1
  fi
  grep '^{' <<<"$out" | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    r["shape"], r["variant"], r["round"] = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print(json.dumps(r))' "$shape" "$variant" "$round" >>"$log"
  printf '.' >&2
}

# histo SHAPE VARIANT BINARY LAUNCH...: bale's histogram; AGP and Conveyor seconds into the log.
histo() {
  local shape=$1 variant=$2 binary=$3; shift 3
  rm -f /tmp/transit-same-node-histo.json
  if ! "$@" "$binary" app histo -n 500000 -T 1000 -M 9 -j /tmp/transit-same-node-histo.json "${backend[@]}" \
      >/dev/null 2>/tmp/transit-same-node.err; then
    echo "bench/same_node.sh: FAILED: $shape $variant app histo" >&2
    cat /tmp/transit-same-node.err >&2
    exit 1
  fi
  python3 -c '
import json, sys
r = json.load(open("/tmp/transit-same-node-histo.json"))
print(json.dumps({"kernel": "histo", "shape": sys.argv[1], "variant": sys.argv[2], "round": int(sys.argv[3]),
                  "agp_s": float(r["AGP"]), "streamer_s": float(r["Conveyor"]), "verified": True}))' \
    "$shape" "$variant" "$round" >>"$log"
  printf '.' >&2
}

IFS=, read -r -a shapes <<<"${SAME_NODE_SHAPES:-local 4,mpi 2,mpi 4}"
hotspot=(bench hotspot --op fetch-add --ops 10 --iterations 200)
atomics=(bench atomics --ops 1000)
for round in $(seq 1 "$rounds"); do
  for shape in "${shapes[@]}"; do
    case $shape in
      "local "*) launch=(env) backend=(--transit-backend=local "--transit-pes=${shape#local }") ;;
      "mpi 2") launch=(mpirun -n 2) backend=() ;;
      "mpi "*) launch=(mpirun -n "${shape#mpi }" --oversubscribe --mca mpi_yield_when_idle 1) backend=() ;;
      "hybrid "*)
        ranks=${shape#hybrid }
        launch=(mpirun -n "${ranks%x*}" --bind-to none) backend=("--transit-threads-per-rank=${ranks#*x}") ;;
      *) echo "bench/same_node.sh: unknown shape '$shape'" >&2; exit 2 ;;
    esac
    for contention in 100 0; do
      run "$shape" before "$before" "${launch[@]}" -- "${hotspot[@]}" --contention "$contention" "${backend[@]}"
      run "$shape" after "$after" "${launch[@]}" -- "${hotspot[@]}" --contention "$contention" "${backend[@]}"
      if [[ $shape == mpi* ]]; then  # MPI windows: the mpi backend, one PE per rank
        run "$shape" mpi-rma "$after" "${launch[@]}" -- "${hotspot[@]}" --contention "$contention" --topology mpi-rma
      fi
    done
    run "$shape" before "$before" "${launch[@]}" -- "${atomics[@]}" "${backend[@]}"
    run "$shape" after "$after" "${launch[@]}" -- "${atomics[@]}" "${backend[@]}"
    if [[ $shape == mpi* ]]; then
      run "$shape" mpi-rma "$after" "${launch[@]}" -- "${atomics[@]}" --topology mpi-rma
    fi
    if [ "${SAME_NODE_HISTO:-0}" = 1 ]; then
      histo "$shape" before "$before" "${launch[@]}"
      histo "$shape" after "$after" "${launch[@]}"
    fi
  done
done
echo >&2

python3 - "$log" "${shapes[@]}" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
shapes = sys.argv[2:]
def med(shape, variant, kernel, field, contention=None):
    v = [r[field] for r in rows if r["shape"] == shape and r["variant"] == variant and r["kernel"] == kernel
         and (contention is None or r["contention"] == contention) and r.get(field) is not None]
    return statistics.median(v) if v else None
def verified(shape, variant, kernel):
    return all(r["verified"] for r in rows if r["shape"] == shape and r["variant"] == variant and r["kernel"] == kernel)
f = lambda v: "-" if v is None else ("%.3g" % v)
ratio = lambda a, b: "-" if a is None or b is None or b == 0 else "%.2fx" % (a / b)
print("| shape | measure | before, us | after, us | mpi-rma, us | before / after | after / mpi-rma | applied in node (after) |")
print("|---|---|---|---|---|---|---|---|")
for shape in shapes:
    for c in (100, 0):
        b, a, m = (med(shape, v, "hotspot", "mean_us", c) for v in ("before", "after", "mpi-rma"))
        n = med(shape, "after", "hotspot", "applied_in_node", c)
        print("| %s | hot spot %d%%, mean | %s | %s | %s | %s | %s | %s |" % (shape, c, f(b), f(a), f(m), ratio(b, a),
              ratio(a, m), "-" if n is None else "%d" % n))
    for field, label in (("fetch_add_us", "fetch-add latency"), ("accumulate_us", "accumulate + fence"),
                         ("lock_us", "lock")):
        b, a, m = (med(shape, v, "atomics", field) for v in ("before", "after", "mpi-rma"))
        print("| %s | %s | %s | %s | %s | %s | %s | |" % (shape, label, f(b), f(a), f(m), ratio(b, a), ratio(a, m)))
    for field, label in (("agp_s", "histo, global_array::accumulate (s)"), ("streamer_s", "histo, streamer (s)")):
        b, a = (med(shape, v, "histo", field) for v in ("before", "after"))
        if a is not None:
            print("| %s | %s | %s | %s | - | %s | - | |" % (shape, label, f(b), f(a), ratio(b, a)))
bad = sorted({(r["shape"], r["variant"], r["kernel"]) for r in rows if not r["verified"]})
print("runs: %d, all verified" % len(rows) if not bad else "NOT VERIFIED: %s" % bad)
PY
