#!/usr/bin/env bash
# local_pes_any.sh TRANSIT EXPECT_USAGE_ERROR EXPECT_SUCCESS [SANITIZERS]: the local backend runs any PE count
# that can run. Above the hardware threads it runs, and a job of more than a second says once on
# stderr that it is slower; it used to refuse more than 4 x the hardware threads.
# --transit-pes-force and TRANSIT_PES_FORCE=1 are still accepted (no effect). Refused: a count
# above the kernel's thread limit (named), and a count whose threads cannot be created (here:
# address space for only a few thread stacks).
set -eu
transit=$1 expect_usage_error=$2 expect_success=$3 sanitizers=${4:-}
unset TRANSIT_PES_FORCE TRANSIT_PES
threads=$(getconf _NPROCESSORS_ONLN)  # what std::thread::hardware_concurrency reports on glibc
over=$((4 * threads + 5))             # 13 on 2 cores: the count of the issue
warning="^transit: warning: $over PEs on $threads hardware threads: the local backend runs them all"
fail() { echo "local_pes_any: $*"; exit 1; }

# Runs. A job of more than a second says once on stderr that it is slower (stdout stays the
# job's); a short one, such as info, and one at the hardware threads say nothing.
# 40 M items per PE: about 3 s on this machine's 2 cores (5 M took 0.72 s, under the
# second, and did not warn), far past the second after which the warning comes.
# A sanitizer's build is 3-20x slower, but not always: 4 M items under ASan once ran in under the
# second (no warning, a failed test); 12 M runs about 3 s there, within the timeout.
items=40000000
[ -z "$sanitizers" ] || items=12000000
out=$("$transit" bench histogram --items-per-pe $items --transit-pes=$over 2>/tmp/local_pes_any.$$) ||
  fail "bench histogram --transit-pes=$over failed"
err=$(cat /tmp/local_pes_any.$$); rm -f /tmp/local_pes_any.$$
echo "$out"; echo "$err"
grep -q "$over PEs .* verified" <<<"$out" || fail "no verified run of $over PEs"
[ "$(grep -c . <<<"$err")" -eq 1 ] || fail "stderr is not one line"
grep -Eq "$warning" <<<"$err" || fail "no warning: $warning"
err=$("$transit" info --transit-pes=$over 2>&1 >/dev/null)
[ -z "$err" ] || fail "info (a short job) warned: $err"
err=$("$transit" bench histogram --items-per-pe 5000000 --transit-pes=$threads 2>&1 >/dev/null)
[ -z "$err" ] || fail "a warning at $threads PEs: $err"
TRANSIT_PES=$over "$expect_success" "^pes: $over\$" "$transit" info
# The old flag: accepted, no effect, and it takes no separate value (the command after it stays).
"$expect_success" "^pes: $over\$" "$transit" info --transit-pes=$over --transit-pes-force
TRANSIT_PES_FORCE=1 "$expect_success" "^pes: $over\$" "$transit" info --transit-pes=$over
"$expect_success" "^pes: $over\$" "$transit" --transit-pes=$over --transit-pes-force info
# Above what the kernel lets a process have: refused before anything starts, the limit named.
limit=$(cat /proc/sys/kernel/pid_max /proc/sys/kernel/threads-max | sort -n | head -1)
"$expect_usage_error" "--transit-pes: got '$((limit + 1))', expected at most $limit on the local backend [(]one thread per PE" \
  "$transit" info --transit-pes=$((limit + 1))
TRANSIT_PES=100000000 "$expect_usage_error" "TRANSIT_PES: got '100000000', expected at most $limit " "$transit" info
# Threads that cannot be created: 1 GiB of address space holds the program but not 400 stacks of 8 MiB.
# Not under a sanitizer: its shadow memory alone reserves terabytes of address space, so the
# program cannot start at all in 1 GiB (the normal build runs this check).
if [ -z "$sanitizers" ]; then
  "$expect_usage_error" "--transit-pes: got '400', expected a PE count this system can start: thread [0-9]+ could not be created" \
    sh -c "ulimit -s 8192 && ulimit -v 1048576 && exec $transit info --transit-pes=400"
else
  echo "local_pes_any: the thread-creation failure is not checked under the sanitizers ($sanitizers)"
fi
echo "local_pes_any: $over PEs run on $threads hardware threads with one warning; above $limit refused"
