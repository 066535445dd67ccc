#!/usr/bin/env bash
# expect_failure.sh REGEX COMMAND...: passes when COMMAND exits nonzero (and not by a signal or
# timeout) and its combined output matches REGEX (grep -E). For error-path tests.
set -u
regex=$1; shift
output=$("$@" 2>&1); status=$?
printf '%s\n' "$output"
if [ "$status" -eq 0 ]; then echo "expect_failure: command succeeded, expected a failure"; exit 1; fi
if [ "$status" -ge 124 ]; then echo "expect_failure: exit status $status (timeout or signal)"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$output"; then echo "expect_failure: output does not match: $regex"; exit 1; fi
echo "expect_failure: exit status $status and the expected message"
