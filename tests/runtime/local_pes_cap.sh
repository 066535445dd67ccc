#!/usr/bin/env bash
# local_pes_cap.sh TRANSIT EXPECT_USAGE_ERROR EXPECT_SUCCESS: the local backend refuses more than
# 4 x the hardware threads (a typo such as --transit-pes=100000 would thrash the machine), names
# both numbers, and runs them with --transit-pes-force or TRANSIT_PES_FORCE=1.
set -eu
transit=$1 expect_usage_error=$2 expect_success=$3
unset TRANSIT_PES_FORCE TRANSIT_PES
threads=$(getconf _NPROCESSORS_ONLN)  # what std::thread::hardware_concurrency reports on glibc
cap=$((4 * threads))
over=$((cap + 1))
"$expect_usage_error" "--transit-pes: got '$over', expected at most $cap [(]4 x $threads hardware threads[)] on the local backend; add --transit-pes-force [(]TRANSIT_PES_FORCE=1[)]" \
  "$transit" info --transit-pes=$over
"$expect_usage_error" "--transit-pes: got '100000', expected at most $cap " "$transit" info --transit-pes=100000
TRANSIT_PES=100000 "$expect_usage_error" "TRANSIT_PES: got '100000', expected at most $cap " "$transit" info
"$expect_success" "^pes: $cap\$" "$transit" info --transit-pes=$cap
"$expect_success" "^pes: $over\$" "$transit" info --transit-pes=$over --transit-pes-force
TRANSIT_PES_FORCE=1 "$expect_success" "^pes: $over\$" "$transit" info --transit-pes=$over
# The flag takes no separate value: the command after it is not eaten.
"$expect_success" "^pes: $over\$" "$transit" --transit-pes=$over --transit-pes-force info
echo "local_pes_cap: cap $cap on $threads hardware threads, forced above it"
