#!/usr/bin/env bash
# trace_cli.sh CASE TRANSIT [MPIEXEC]: the trace from the command line, one case per ctest test.
#   summarize  histogram on 4 local PEs with --transit-trace, then `transit trace summarize`,
#              `summarize --series` and `merge`: a report with every section, JSON lines, one
#              merged file with all 4 PEs' events
#   mpi        the same run on 3 MPI ranks (TRANSIT_TRACE in the environment): 3 files, summarized
#   hybrid     2 ranks x 2 PE threads with a communication thread: its hand-offs in a file per
#              rank, merged after the PEs' rows
#   full_disk  the files go to a 48 KiB tmpfs: the run still succeeds with its result, a warning
#              names each file cut short, and every file is valid JSON (exit 77, skipped, where
#              mounting is not allowed)
#   dev_full   a PE's file is /dev/full (every write refused): a warning, the result, no crash
set -u
case_name=$1 transit=$2 mpiexec=${3:-mpiexec}
work=$(mktemp -d /tmp/transit-trace-cli-XXXXXX)
mounted=""
cleanup() {
  if [ -n "$mounted" ]; then umount "$mounted"; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "trace_cli $case_name: $*"; exit 1; }

# check_json FILE...: each file parses as JSON with a traceEvents array; prints the event count.
check_json() {
  python3 - "$@" <<'EOF' || fail "a trace file is not valid JSON"
import json, sys
for name in sys.argv[1:]:
    with open(name) as f:
        doc = json.load(f)
    assert isinstance(doc["traceEvents"], list), name
    print(name, len(doc["traceEvents"]), "events")
EOF
}

histogram() {  # histogram ARGS...: a small run whose one JSON line must say verified
  local out
  out=$("$@" 2>"$work/stderr") || { cat "$work/stderr"; fail "the run failed: $*"; }
  cat "$work/stderr"
  grep -q '"verified": *true' <<<"$out" || fail "no verified result line in: $out"
}

case $case_name in
  summarize)
    histogram "$transit" bench histogram --items-per-pe 20000 --json --transit-backend=local --transit-pes=4 \
      --transit-trace="$work/run"
    [ "$(ls "$work"/run/transit-trace-*.json | wc -l)" -eq 4 ] || fail "expected 4 files: $(ls "$work/run")"
    check_json "$work"/run/transit-trace-*.json
    report=$(TRANSIT_TRACE="$work/run" "$transit" trace summarize "$work/run") || fail "summarize failed: $report"
    echo "$report"
    for section in "4 PE files \(local, 4 PEs in the run\)" "none dropped" "time per PE" "dim 0 " \
                   "busiest PEs" "busiest links" "load imbalance" "work +max/mean"; do
      grep -Eq -- "$section" <<<"$report" || fail "the report has no '$section'"
    done
    # The summarizer's own job wrote no trace over the files it read (TRANSIT_TRACE was set).
    [ "$(ls "$work"/run/transit-trace-*.json | wc -l)" -eq 4 ] || fail "summarize changed the files"
    "$transit" trace summarize "$work/run" --series >"$work/series.jsonl" || fail "summarize --series failed"
    python3 -c "
import json, sys
rows = [json.loads(line) for line in open('$work/series.jsonl')]
assert sorted({r['pe'] for r in rows}) == [0, 1, 2, 3], rows[:3]
assert sum(r['messages'] for r in rows) > 0
print(len(rows), 'series rows')" || fail "--series is not JSON lines of 4 PEs"
    "$transit" trace merge "$work/run" --out "$work/merged.json" || fail "merge failed"
    python3 -c "
import json
doc = json.load(open('$work/merged.json'))
threads = {e['tid'] for e in doc['traceEvents']}
assert threads == {0, 1, 2, 3}, threads
print(len(doc['traceEvents']), 'merged events')" || fail "the merged file does not hold the 4 PEs"
    ;;
  mpi)
    TRANSIT_TRACE="$work/run" histogram "$mpiexec" -n 3 --oversubscribe "$transit" bench histogram \
      --items-per-pe 20000 --json --transit-backend=mpi
    [ "$(ls "$work"/run/transit-trace-*.json | wc -l)" -eq 3 ] || fail "expected 3 files: $(ls "$work/run")"
    check_json "$work"/run/transit-trace-*.json
    report=$("$transit" trace summarize "$work/run") || fail "summarize failed: $report"
    echo "$report"
    grep -q "3 PE files (mpi, 3 PEs in the run)" <<<"$report" || fail "the report does not see 3 mpi PEs"
    ;;
  hybrid)
    histogram "$mpiexec" -n 2 --oversubscribe --bind-to none "$transit" bench histogram --items-per-pe 20000 --json \
      --transit-backend=mpi --transit-threads-per-rank=2 --transit-comm-thread=1 --transit-trace="$work/run"
    [ "$(ls "$work"/run/transit-trace-comm-*.json | wc -l)" -eq 2 ] || fail "expected 2 comm thread files: $(ls "$work/run")"
    check_json "$work"/run/transit-trace-*.json
    merged=$("$transit" trace merge "$work/run" --out "$work/merged.json") || fail "merge failed: $merged"
    echo "$merged"
    grep -q "of 4 PEs and 2 communication threads" <<<"$merged" || fail "merge did not take the comm thread files"
    report=$("$transit" trace summarize "$work/run") || fail "summarize failed: $report"
    grep -q "4 PE files (mpi, 4 PEs in the run)" <<<"$report" || fail "the report does not see 4 PEs: $report"
    grep -q "note: 2 communication threads' files" <<<"$report" || fail "the report does not name the comm threads' files"
    python3 -c "
import json
doc = json.load(open('$work/merged.json'))
names = {e['args']['name'] for e in doc['traceEvents'] if e.get('name') == 'thread_name'}
assert names == {'PE 0', 'PE 1', 'PE 2', 'PE 3', 'comm thread'}, names
rows = {(e['pid'], e['tid']) for e in doc['traceEvents'] if e.get('name', '').startswith('hand-off to ')}
assert rows == {(0, 4), (1, 5)}, rows  # each rank's communication thread, after the PEs' rows
print(len(doc['traceEvents']), 'merged events')" || fail "the merged file does not hold the PEs and the comm threads"
    ;;
  full_disk)
    mkdir "$work/disk"
    if ! mount -t tmpfs -o size=48k tmpfs "$work/disk" 2>"$work/mount.err"; then
      echo "trace_cli full_disk: skipped: cannot mount a tmpfs here ($(cat "$work/mount.err"))"
      exit 77
    fi
    mounted="$work/disk"
    histogram "$transit" bench histogram --items-per-pe 200000 --json --transit-backend=local --transit-pes=2 \
      --transit-trace="$work/disk"
    grep -q "warning: --transit-trace: .*could not be written whole (No space left on device)" "$work/stderr" ||
      fail "no warning about the full disk"
    ls -l "$work/disk"
    check_json "$work"/disk/transit-trace-*.json
    ;;
  dev_full)
    mkdir "$work/run"
    ln -s /dev/full "$work/run/transit-trace-1.json"
    histogram "$transit" bench histogram --items-per-pe 20000 --json --transit-backend=local --transit-pes=2 \
      --transit-trace="$work/run"
    grep -q "PE 1: warning: --transit-trace: .*transit-trace-1.json could not be written whole (No space left on device)" \
      "$work/stderr" || fail "no warning for PE 1's file"
    check_json "$work/run/transit-trace-0.json"
    ;;
  *) fail "unknown case" ;;
esac
echo "trace_cli $case_name: passed"
