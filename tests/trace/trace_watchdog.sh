#!/usr/bin/env bash
# trace_watchdog.sh PROGRAM [LAUNCHER...]: PROGRAM (trace_watchdog.cpp) hangs on PE 0 until the
# watchdog ends the job; the job fails with the watchdog's report, and PE 0's trace file exists,
# is valid JSON, says it was written when the watchdog fired, and shows the barrier it hung in.
set -u
program=$1; shift
work=$(mktemp -d /tmp/transit-trace-watchdog-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "trace_watchdog: $*"; exit 1; }
output=$("$@" "$program" --transit-watchdog=1 --transit-trace="$work" 2>&1); status=$?
echo "$output"
[ "$status" -ne 0 ] || fail "the job did not fail"
grep -q "watchdog: no progress" <<<"$output" || fail "no watchdog report"
python3 - "$work/transit-trace-0.json" <<'PY' || fail "PE 0's trace is missing or wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
assert "watchdog" in doc["otherData"]["written_at"], doc["otherData"]
names = {e["name"] for e in doc["traceEvents"]}
assert "barrier" in names, sorted(names)
print("PE 0's trace:", len(doc["traceEvents"]), "events, written at", doc["otherData"]["written_at"])
PY
echo "trace_watchdog: passed"
