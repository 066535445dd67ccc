# bench/sim/lib.sh: what the simulation sweeps of bench/sim/ share, sourced by each:
#   source "$(dirname "$0")/lib.sh"
# It sets root (the source tree), tool (TRANSIT_TOOL, default build/bin/transit), workdir (a
# temporary directory removed on exit) and sim_log (where sim_run puts SMPI's chatter; the script
# sets it, default /dev/null), and defines part, sim_run, sim_record and with_us_per_exchange.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tool=${TRANSIT_TOOL:-$root/build/bin/transit}
sim_log=/dev/null
sim_script=bench/sim/$(basename "$0")
workdir=$(mktemp -d)
trap 'rm -rf "$workdir"' EXIT

# part NAME: whether NAME is among the parts the script was asked for (" $parts ", set by it).
part() { [[ $parts == *" $1 "* ]]; }

# sim_run [--env VAR=VALUE]... [--lock-big] [--timeout SECONDS] -- SIMULATE-ARGS...: one run of
# scripts/simulate under /usr/bin/time (its peak resident set); its standard output in
# $workdir/out, its standard error in $workdir/out.err, for sim_record. --env sets a variable for
# the run; --lock-big runs it under flock /tmp/transit-sim-big.lock when it has 2048 ranks or more
# (one such simulation at a time: they take GBs); --timeout stops it (an empty value: none). A
# failed run is not an error here: sim_record finds no record.
sim_run() {
  local envs=() lock=0 limit="" ranks=0 previous="" arg pre=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
      --env) envs+=("$2"); shift 2 ;;
      --lock-big) lock=1; shift ;;
      --timeout) limit=$2; shift 2 ;;
      *) echo "sim_run: unknown option '$1'" >&2; return 2 ;;
    esac
  done
  shift
  for arg in "$@"; do
    [ "$previous" = "--ranks" ] && ranks=$arg
    previous=$arg
  done
  [ "$lock" = 1 ] && [ "$ranks" -ge 2048 ] && pre+=(flock /tmp/transit-sim-big.lock)
  [ -n "$limit" ] && pre+=(timeout "$limit")
  env "${envs[@]}" "${pre[@]}" /usr/bin/time -f "peak_kb %M" "$root/scripts/simulate" "$@" \
    >"$workdir/out" 2>"$workdir/out.err" || true
  # SMPI's chatter, without /usr/bin/time's line and SMPI's sleep_for warnings (thousands of them).
  grep -v -e '^peak_kb ' -e 'sleep_for' "$workdir/out.err" >>"$sim_log" || true
}

# sim_record [--all] [FIELD=VALUE | FIELD:=JSON | rss_mb | simulated_seconds | wall_seconds]...:
# the last run's record (--all: every record) on one line with those fields (bench/sim/record.py);
# with no record, says so on stderr with the end of the run's output and fails.
sim_record() {
  python3 "$root/bench/sim/record.py" "$workdir/out" --name "$sim_script" "$@"
}

# with_us_per_exchange: each `bench exchange` record of standard input (a JSON line) with
# us_per_exchange (seconds_per_exchange in microseconds) added, on standard output.
with_us_per_exchange() {
  python3 -c '
import json, sys
for line in sys.stdin:
    record = json.loads(line)
    record["us_per_exchange"] = record["seconds_per_exchange"] * 1e6
    print(json.dumps(record, separators=(",", ":")), flush=True)
'
}
