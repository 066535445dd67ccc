#!/usr/bin/env bash
# bench/measure.sh [TRANSIT] [REPEATS]: the measurements of BENCHMARKS.md in one sitting, so that
# ratios compare runs made minutes apart on the same (shared, noisy) machine. Prints one summary
# line per measurement (median of REPEATS runs) and keeps every JSON record in $MEASURE_LOG
# (default /tmp/transit-measure.jsonl), ready for tools/plot.py.
# Runs the Debian hpcc package's MPIRandomAccess beside randomaccess when /usr/bin/hpcc exists.
set -euo pipefail
transit=${1:-build-bench/bin/transit}
repeats=${2:-7}
log=${MEASURE_LOG:-/tmp/transit-measure.jsonl}
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
mpi=(mpirun -n 2)

# median FIELD: median of FIELD over the JSON records on stdin
median() {
  python3 -c '
import json, statistics, sys
values = [json.loads(line)[sys.argv[1]] for line in sys.stdin if line.startswith("{")]
print(f"{statistics.median(values):.6g}")' "$1"
}

# run LABEL FIELD COMMAND...: runs a bench command with --json --repeat, prints the median of FIELD
run() {
  local label=$1 field=$2
  shift 2
  local out
  out=$("$@" --json --repeat "$repeats")
  printf '%s\n' "$out" >>"$log"
  if grep -q '"verified":false' <<<"$out"; then echo "$label: VERIFICATION FAILED"; fi
  printf '%-44s %s = %s\n' "$label" "$field" "$(median "$field" <<<"$out")"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "$(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%F)"
run "histogram mpi 2, grid" items_per_second_per_pe "${mpi[@]}" "$transit" bench histogram
run "histogram mpi 2, none" items_per_second_per_pe "${mpi[@]}" "$transit" bench histogram --scheme none
run "histogram mpi 2, grid (peak buffer bytes)" buffer_bytes_peak "${mpi[@]}" "$transit" bench histogram
run "randomaccess mpi 2, 2^16 words/PE" items_per_second_per_pe "${mpi[@]}" "$transit" bench randomaccess --table-log2 16
if command -v hpcc >/dev/null; then
  # HPCC sizes its table from the HPL N of hpccinf.txt: N=500 on 2 ranks gives 2^16 words per PE.
  dir=$(mktemp -d)
  sed -e '6s/^[0-9]* /500  /' -e '11s/^[0-9]* /1 /' /usr/share/doc/hpcc/examples/_hpccinf.txt >"$dir/hpccinf.txt"
  rates=()
  for _ in $(seq "$repeats"); do
    (cd "$dir" && rm -f hpccoutf.txt && "${mpi[@]}" hpcc >/dev/null 2>&1)
    rates+=("$(awk '/Begin of MPIRandomAccess section/ {s=1} s && /Updates    per second/ {print $1 * 1e9 / 2; exit}' \
               "$dir/hpccoutf.txt")")
  done
  printf '%-44s %s = %s  (%s)\n' "hpcc MPIRandomAccess mpi 2, 2^16 words/PE" "updates/s/PE" \
         "$(printf '%s\n' "${rates[@]}" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}')" \
         "$(grep -m1 'PE Main table size' "$dir/hpccoutf.txt")"
  rm -rf "$dir"
else
  echo "hpcc MPIRandomAccess: not installed (apt-get install hpcc)"
fi
run "route-step mpi 2" ns_per_item_hop "${mpi[@]}" "$transit" bench route-step
run "route-step local 2" ns_per_item_hop "$transit" bench route-step --transit-pes=2
run "alltoall mpi 2, 8 B" items_per_second_per_pe "${mpi[@]}" "$transit" bench alltoall
run "alltoall mpi 2, 8 B, none" items_per_second_per_pe "${mpi[@]}" "$transit" bench alltoall --scheme none
run "alltoall mpi 2, 64 B" items_per_second_per_pe "${mpi[@]}" "$transit" bench alltoall --item-bytes 64
run "index-gather mpi 2" items_per_second_per_pe "${mpi[@]}" "$transit" bench index-gather
run "phold mpi 2" items_per_second_per_pe "${mpi[@]}" "$transit" bench phold
# The same kernels written with active_messages, right after their streamer runs' sitting, and a
# 100 MiB call against one 100 MiB transport message (both timed in each run).
run "histogram mpi 2, active messages" items_per_second_per_pe "${mpi[@]}" "$transit" bench histogram --api active
run "histogram mpi 2, streamer (again)" items_per_second_per_pe "${mpi[@]}" "$transit" bench histogram
run "phold mpi 2, active messages" items_per_second_per_pe "${mpi[@]}" "$transit" bench phold --api active
run "payload mpi 2, 100 MiB call, GB/s" active_gbytes_per_second "${mpi[@]}" "$transit" bench payload
run "payload mpi 2, 100 MiB call / transport message" active_vs_transport "${mpi[@]}" "$transit" bench payload
echo "demo (local, 8 PEs in nodes of 4):"
"$transit" demo
