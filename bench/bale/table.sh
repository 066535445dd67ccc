#!/usr/bin/env bash
# Every bale application against transit's, at each PE count, in one sitting: compare.sh (sssp.sh
# for sssp) per application and PE count, RUNS alternating runs each, then one markdown table of
# the medians (seconds: bale's conveyor and exstack, transit's streamer and sparse_exchange) and
# the speedups, every answer compared on the way (a difference or a failed self-check stops it).
#
#   bench/bale/table.sh BALE_PREFIX TRANSIT_BIN [PES...]
#   RUNS=5 bench/bale/table.sh /work/bale-install build/bin/transit 2 4 8
#
# PES default to 2 4 8. The sizes (options per application, below) keep bale's conveyor kernel at
# 0.1-0.3 s on 2 PEs of the machine of BENCHMARKS.md; -n is per PE, so 4 and 8 PEs do 2x and 4x the
# work. The full logs go to the directory LOGS (default: a temporary one, removed).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -lt 2 ]; then
  echo "usage: $0 BALE_PREFIX TRANSIT_BIN [PES...]   (RUNS, LOGS from the environment)" >&2
  exit 2
fi
bale=$1 transit=$2
shift 2
pe_counts=("$@")
[ ${#pe_counts[@]} -gt 0 ] || pe_counts=(2 4 8)
runs=${RUNS:-5}
logs=${LOGS:-}
if [ -z "$logs" ]; then logs=$(mktemp -d); trap 'rm -rf "$logs"' EXIT; fi
mkdir -p "$logs"

apps=(
  "histo -n 10000000"
  "ig -n 3000000"
  "randperm -n 1000000"
  "transpose_matrix -n 300000"
  "permute_matrix -n 200000"
  "toposort -n 200000"
  "triangles -n 40000"
  "sssp -n 100000"
)

echo "# bale's applications against transit's: $runs alternating runs, medians (seconds)"
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores"
echo
echo "| application | PEs | bale conveyor | transit streamer | speedup | bale exstack | transit sparse_exchange | speedup | answers |"
echo "|---|---|---|---|---|---|---|---|---|"
for pes in "${pe_counts[@]}"; do
  for spec in "${apps[@]}"; do
    read -r -a words <<<"$spec"
    app=${words[0]} args=("${words[@]:1}")
    log=$logs/$app.$pes.log
    if [ "$app" = sssp ]; then
      "$here/sssp.sh" "$bale" "$transit" "$pes" "$runs" "${args[@]}" >"$log" 2>&1 ||
        { echo "$0: sssp at $pes PEs failed: $(tail -3 "$log")" >&2; exit 1; }
      # Four kernels: Bellman-Ford and delta-stepping, one row each.
      python3 - "$log" "$pes" "${args[*]}" <<'PY'
import re, sys
log, pes, args = sys.argv[1:4]
m = {}
for line in open(log):
    r = re.match(r"median (\S+)_(Exstack|Conveyor)/\S+\s+bale\s+(\S+)\s+transit\s+(\S+)", line)
    if r: m[(r[1], r[2])] = (float(r[3]), float(r[4]))
for algo, name in (("Bellman-Ford", "sssp Bellman-Ford"), ("Delta", "sssp delta-stepping")):
    (bc, tc), (be, te) = m[(algo, "Conveyor")], m[(algo, "Exstack")]
    print(f"| {name} {args} | {pes} | {bc:.4f} | {tc:.4f} | {bc / tc:.2f}x | {be:.4f} | {te:.4f} | {be / te:.2f}x | distances equal |")
PY
    else
      PES=$pes RUNS=$runs "$here/compare.sh" "$bale" "$transit" "$app" "${args[@]}" >"$log" 2>&1 ||
        { echo "$0: $app at $pes PEs failed: $(tail -3 "$log")" >&2; exit 1; }
      python3 - "$log" "$pes" "$spec" <<'PY'
import re, sys
log, pes, spec = sys.argv[1:4]
text = open(log).read()
r = re.search(r"median\s+bale conveyor (\S+)\s+exstack (\S+)\s+transit streamer (\S+)\s+exchange (\S+)", text)
bc, be, tc, te = map(float, r.groups())
answers = "equal" if re.search(r"answers compared .*: equal", text) else "DIFFERENT"
print(f"| {spec} | {pes} | {bc:.4f} | {tc:.4f} | {bc / tc:.2f}x | {be:.4f} | {te:.4f} | {be / te:.2f}x | {answers} |")
PY
    fi
  done
done
