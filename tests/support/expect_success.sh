#!/usr/bin/env bash
# expect_success.sh [--once LINE_REGEX] REGEX COMMAND...: passes when COMMAND exits with status 0
# and its combined output matches REGEX (grep -E). ctest's PASS_REGULAR_EXPRESSION alone ignores
# the exit status. With --once, exactly one output line also matches LINE_REGEX (a warning that
# PE 0 alone prints, not every PE).
set -u
once=""
if [ "${1:-}" = "--once" ]; then once=$2; shift 2; fi
regex=$1; shift
output=$("$@" 2>&1); status=$?
printf '%s\n' "$output"
if [ "$status" -ne 0 ]; then echo "expect_success: exit status $status"; exit 1; fi
if ! grep -Eq -- "$regex" <<<"$output"; then echo "expect_success: output does not match: $regex"; exit 1; fi
if [ -n "$once" ]; then
  count=$(grep -Ec -- "$once" <<<"$output")
  if [ "$count" -ne 1 ]; then echo "expect_success: $count lines match '$once', expected 1"; exit 1; fi
fi
