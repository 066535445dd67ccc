#!/usr/bin/env bash
# threads_below_multiple.sh MPIEXEC PROGRAM: PROGRAM initialises MPI at MPI_THREAD_FUNNELED and
# runs transit with 2 PE threads per rank; every rank must refuse with the one-line usage error and
# status 2, and no PE may run (docs/hybrid.md).
set -u
mpiexec=$1 program=$2
output=$("$mpiexec" -n 2 --oversubscribe "$program" --transit-threads-per-rank=2 2>&1); status=$?
printf '%s\n' "$output"
fail() { echo "threads_below_multiple: $*"; exit 1; }
[ "$status" -eq 2 ] || fail "exit status $status, expected 2"
expected="^transit: error: --transit-threads-per-rank: got '2', expected 1 when MPI runs below MPI_THREAD_MULTIPLE"
[ "$(grep -c -- "$expected" <<<"$output")" -eq 2 ] || fail "expected the error once from each of the 2 ranks"
! grep -q ' ran$' <<<"$output" || fail "a PE ran"
echo "threads_below_multiple: status 2, the error from every rank, no PE ran"
