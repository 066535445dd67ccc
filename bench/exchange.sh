#!/usr/bin/env bash
# bench/exchange.sh [TRANSIT] [SAMPLES]: the sparse exchange bar of BENCHMARKS.md in one sitting.
# For the 26-neighbour pattern (partners (r +- S*i) mod P), strides 1 and 3, B = 8, 64, 512 and 4096
# bytes per parcel, at 2, 4 and 8 MPI ranks, `transit bench exchange --method all` times every method
# in one job (samples interleaved across methods) and says what automatic chose. Prints one line per
# point: each method's time per exchange (max over PEs, median over SAMPLES samples), automatic's
# ratio to the fastest fixed method and to mpi_neighbor (the bar: both at most 1.10), and the bytes
# the crystal router and grid forward per exchange (summed over PEs: JSON field bytes_forwarded). Every JSON record goes to
# $EXCHANGE_LOG (default /tmp/transit-exchange.jsonl).
set -euo pipefail
transit=${1:-build-bench/bin/transit}
samples=${2:-7}
log=${EXCHANGE_LOG:-/tmp/transit-exchange.jsonl}
: >"$log"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)," \
     "$(free -g | awk '/Mem:/ {print $2}') GiB; $(date -u +%F)"
echo "command: mpirun -n P $transit bench exchange --pattern nek26 --neighbors 26 --stride S --bytes B" \
     "--method all --samples $samples --json"
printf '%-3s %-2s %-5s | %9s %9s %9s %9s %9s | %-14s %9s | %6s %6s | %9s %9s\n' \
  P S B direct crystal grid alltoallv neighbor automatic=... us auto/best auto/nbr cr_fwd grid_fwd
for ranks in 2 4 8; do
  mpi=(mpirun -n "$ranks")
  if [ "$ranks" -gt "$(nproc)" ]; then mpi+=(--oversubscribe --mca mpi_yield_when_idle 1); fi
  for stride in 1 3; do
    for bytes in 8 64 512 4096; do
      out=$("${mpi[@]}" "$transit" bench exchange --pattern nek26 --neighbors 26 --stride "$stride" \
              --bytes "$bytes" --method all --samples "$samples" --json)
      printf '%s\n' "$out" >>"$log"
      python3 -c '
import json, sys
rows = {r["method"]: r for r in map(json.loads, (l for l in sys.stdin if l.startswith("{")))}
us = lambda m: rows[m]["seconds_per_exchange"] * 1e6 if m in rows else float("nan")
fixed = [m for m in rows if m != "automatic"]
best = min(fixed, key=us)
auto = rows["automatic"]
bad = [m for m, r in rows.items() if not r["verified"]]
print("%-3s %-2s %-5s | %9.1f %9.1f %9.1f %9.1f %9.1f | %-14s %9.1f | %6.2f %6.2f | %9.0f %9.0f%s" % (
    sys.argv[1], sys.argv[2], sys.argv[3], us("direct"), us("crystal_router"), us("grid"),
    us("mpi_alltoallv"), us("mpi_neighbor"), auto["chosen"], us("automatic"),
    us("automatic") / us(best), us("automatic") / us("mpi_neighbor"),
    rows["crystal_router"]["bytes_forwarded"], rows["grid"]["bytes_forwarded"],
    "  VERIFICATION FAILED: " + ",".join(bad) if bad else ""))
' "$ranks" "$stride" "$bytes" <<<"$out"
    done
  done
done
