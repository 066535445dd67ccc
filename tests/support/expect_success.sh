#!/usr/bin/env bash
# expect_success.sh REGEX COMMAND...: passes when COMMAND exits with status 0 and its combined
# output matches REGEX (grep -E). ctest's PASS_REGULAR_EXPRESSION alone ignores the exit status.
set -u
regex=$1; shift
output=$("$@" 2>&1); status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then echo "expect_success: exit status $status"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$output"; then echo "expect_success: output does not match: $regex"; exit 1; fi
