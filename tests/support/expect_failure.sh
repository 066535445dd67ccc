#!/usr/bin/env bash
# expect_failure.sh REGEX COMMAND...: passes when COMMAND exits nonzero (and not by a signal or
# timeout) and its combined output matches REGEX (grep -E). For error-path tests. With
# --no-repeated-lines, no "transit: " line appears twice (a failure is reported once).
set -u
no_repeats=""
if [ "${1:-}" = "--no-repeated-lines" ]; then no_repeats=1; shift; fi
regex=$1; shift
output=$("$@" 2>&1); status=$?
printf '%s\n' "$output"
if [ "$status" -eq 0 ]; then echo "expect_failure: command succeeded, expected a failure"; exit 1; fi
if [ "$status" -ge 124 ]; then echo "expect_failure: exit status $status (timeout or signal)"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$output"; then echo "expect_failure: output does not match: $regex"; exit 1; fi
if [ -n "$no_repeats" ]; then
  repeated=$(grep -E '^transit: ' <<<"$output" | sort | uniq -d)
  if [ -n "$repeated" ]; then echo "expect_failure: reported more than once: $repeated"; exit 1; fi
fi
echo "expect_failure: exit status $status and the expected message"
