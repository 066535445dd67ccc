#!/usr/bin/env bash
# bench/trace_cost.sh BASE TRANSIT [ROUNDS [HISTOGRAM OPTIONS...]]: what the timeline trace (docs/trace.md) costs, in one
# sitting: `transit bench histogram` at 2 MPI ranks with BASE (a build without the trace, such as
# main's), with TRANSIT and the trace off, and with TRANSIT and --transit-trace on, alternating
# A B C A B C ... for ROUNDS rounds (default 5). Prints each variant's median rate (items/s/PE of
# the kernel) and median wall time of the whole launch (the trace's files are written after the
# kernel's clock stops, so only the wall time includes them), and the ratios.
set -euo pipefail
base=$1 transit=$2 rounds=${3:-5}
shift $(($# < 3 ? $# : 3))
extra=("$@")  # more options for every run, such as --items-per-pe
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
dir=$(mktemp -d /tmp/transit-trace-cost-XXXXXX)
trap 'rm -rf "$dir"' EXIT
log=$dir/runs.jsonl

# one LABEL TRANSIT [OPTIONS...]: one run; appends its record, with the label and wall time, to the log
one() {
  local label=$1 binary=$2
  shift 2
  local start end out
  start=$(date +%s.%N)
  out=$(mpirun -n 2 "$binary" bench histogram --json "${extra[@]}" "$@")
  end=$(date +%s.%N)
  grep -q '"verified": *true' <<<"$out" || { echo "$label: not verified: $out"; exit 1; }
  python3 -c 'import json, sys; r = json.loads(sys.argv[1]); r["label"] = sys.argv[2]; r["wall"] = float(sys.argv[4]) - float(sys.argv[3]); print(json.dumps(r))' \
    "$(grep '^{' <<<"$out" | head -1)" "$label" "$start" "$end" >>"$log"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $(date -u '+%F %H:%M') UTC"
for ((i = 0; i < rounds; ++i)); do
  one base "$base"
  one off "$transit"
  rm -rf "$dir/trace"
  one on "$transit" --transit-trace="$dir/trace"
done
echo "trace files of the last run: $(du -sh "$dir/trace" | cut -f1), $(cat "$dir"/trace/*.json | wc -l) lines"
python3 - "$log" <<'EOF'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
median = {}
for label in ("base", "off", "on"):
    rates = [r["items_per_second_per_pe"] for r in runs if r["label"] == label]
    walls = [r["wall"] for r in runs if r["label"] == label]
    median[label] = (statistics.median(rates), statistics.median(walls))
    print(f"{label:5s} rate median {median[label][0]:.4g} items/s/PE (runs: {', '.join(f'{x:.3g}' for x in rates)}); "
          f"wall median {median[label][1]:.3f} s")
print(f"trace off / base: rate {median['off'][0] / median['base'][0]:.3f}x, wall {median['off'][1] / median['base'][1]:.3f}x")
print(f"trace on / off:   rate {median['on'][0] / median['off'][0]:.3f}x, wall {median['on'][1] / median['off'][1]:.3f}x")
EOF
