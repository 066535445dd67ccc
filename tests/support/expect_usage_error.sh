#!/usr/bin/env bash
# expect_usage_error.sh REGEX [--launcher] COMMAND...: passes when COMMAND exits with status 2 (a
# usage error) and says so in exactly one line "transit: error: ..." matching REGEX (grep -E).
# Without --launcher that line is the whole output (no second message, no banner, no job output);
# with --launcher (under mpirun) the launcher may add its own lines, but only one process reports.
set -u
regex=$1; shift
launcher=0
if [ "${1:-}" = "--launcher" ]; then launcher=1; shift; fi
output=$("$@" 2>&1); status=$?
printf '%s\n' "$output"
fail() { echo "expect_usage_error: $*"; exit 1; }
[ "$status" -eq 2 ] || fail "exit status $status, expected 2"
errors=$(grep -c '^transit: error: ' <<<"$output")
[ "$errors" -eq 1 ] || fail "$errors lines 'transit: error: ...', expected 1"
if [ "$launcher" -eq 0 ] && [ "$(wc -l <<<"$output")" -ne 1 ]; then fail "more output than the one message"; fi
grep '^transit: error: ' <<<"$output" | grep -Eq -- "$regex" || fail "the message does not match: $regex"
echo "expect_usage_error: exit status 2 and the one expected message"
