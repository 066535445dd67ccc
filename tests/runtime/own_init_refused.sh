#!/usr/bin/env bash
# own_init_refused.sh MPIEXEC PROGRAM LEVEL EXPECTED [TRANSIT OPTIONS...]: PROGRAM initialises MPI
# at LEVEL (single or funneled: OWN_MPI_LEVEL) and runs transit with 2 PE threads per rank and the
# options given; every rank must refuse with the one-line usage error EXPECTED (a grep pattern
# after "transit: error: ") and status 2, and no PE may run (docs/hybrid.md).
set -u
mpiexec=$1 program=$2 level=$3 expected=$4
shift 4
output=$(OWN_MPI_LEVEL=$level "$mpiexec" -n 2 --oversubscribe "$program" --transit-threads-per-rank=2 "$@" 2>&1); status=$?
printf '%s\n' "$output"
fail() { echo "own_init_refused: $*"; exit 1; }
[ "$status" -eq 2 ] || fail "exit status $status, expected 2"
[ "$(grep -c -- "^transit: error: $expected" <<<"$output")" -eq 2 ] || fail "expected the error once from each of the 2 ranks"
! grep -q ' ran$' <<<"$output" || fail "a PE ran"
echo "own_init_refused: status 2, the error from every rank, no PE ran"
