#!/usr/bin/env bash
# bench/before_after.sh OLD NEW [ROUNDS]: the kernels of BENCHMARKS.md's first table, an exchange and the
# one-sided hot spot, two transit builds
# alternating in one sitting (ROUNDS rounds of `--repeat 3` each, 2 MPI ranks, the settings of
# bench/measure.sh); prints a Markdown table: the median over rounds of each run's median, and after/before.
set -uo pipefail
old=$1 new=$2 rounds=${3:-5}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
field() { python3 -c '
import json,sys,statistics
v=[json.loads(l)[sys.argv[1]] for l in sys.stdin if l.startswith("{")]
print(statistics.median(v) if v else "nan")' "$1"; }
case_() {  # LABEL FIELD LAUNCH... -- ARGS...
  local label=$1 f=$2; shift 2
  local launch=() args=()
  while [ "$1" != "--" ]; do launch+=("$1"); shift; done; shift; args=("$@")
  local a=() b=()
  for _ in $(seq "$rounds"); do
    a+=("$("${launch[@]}" "$old" "${args[@]}" --json --repeat 3 2>/dev/null | field "$f")")
    b+=("$("${launch[@]}" "$new" "${args[@]}" --json --repeat 3 2>/dev/null | field "$f")")
  done
  python3 - "$label" "$f" "${a[*]}" "${b[*]}" <<'PY'
import sys,statistics
label,f,a,b=sys.argv[1:]
a=[float(x) for x in a.split()]; b=[float(x) for x in b.split()]
ma,mb=statistics.median(a),statistics.median(b)
print(f"| {label} | {f} | {ma:.4g} | {mb:.4g} | {mb/ma:.3f} |")
PY
}
mpi=(mpirun -n 2)
echo "| benchmark | field | before | after | after/before |"
echo "|---|---|---|---|---|"
case_ "histogram mpi 2, grid" items_per_second_per_pe "${mpi[@]}" -- bench histogram
case_ "histogram mpi 2, none" items_per_second_per_pe "${mpi[@]}" -- bench histogram --scheme none
case_ "randomaccess mpi 2, 2^16 words/PE" items_per_second_per_pe "${mpi[@]}" -- bench randomaccess --table-log2 16
case_ "route-step mpi 2" ns_per_item_hop "${mpi[@]}" -- bench route-step
case_ "route-step local 2" ns_per_item_hop env -- bench route-step --transit-pes=2
case_ "alltoall mpi 2, 8 B" items_per_second_per_pe "${mpi[@]}" -- bench alltoall
case_ "alltoall mpi 2, 8 B, none" items_per_second_per_pe "${mpi[@]}" -- bench alltoall --scheme none
case_ "alltoall mpi 2, 64 B" items_per_second_per_pe "${mpi[@]}" -- bench alltoall --item-bytes 64
case_ "index-gather mpi 2" items_per_second_per_pe "${mpi[@]}" -- bench index-gather
case_ "phold mpi 2" items_per_second_per_pe "${mpi[@]}" -- bench phold
case_ "histogram mpi 2, active messages" items_per_second_per_pe "${mpi[@]}" -- bench histogram --api active
# The exchange and the one-sided hot spot (issue 50: the histogram, exchange and hot spot before and after).
case_ "exchange mpi 2, nek26, 64 B, crystal router" seconds_per_exchange "${mpi[@]}" -- bench exchange --pattern nek26 --neighbors 26 --stride 1 --bytes 64 --method crystal_router --samples 7
case_ "exchange mpi 2, nek26, 64 B, direct" seconds_per_exchange "${mpi[@]}" -- bench exchange --pattern nek26 --neighbors 26 --stride 1 --bytes 64 --method direct --samples 7
case_ "hotspot mpi 2, fetch-add, nodes of 1" mean_us "${mpi[@]}" -- bench hotspot --ops 10 --iterations 100 --transit-pes-per-node=1
