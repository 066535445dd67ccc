#!/bin/sh
# Keeps the one clock seam (include/transit/detail/core/clock.hpp): fails, naming file and line, when any
# file of the library, the transit command or the benchmarks reads a clock or waits other than
# through it. Under SimGrid those direct calls read the host's clock and stall every simulated
# rank (docs/simulation.md). Not bench/bale/*.c: C programs built against bale alone (bale's
# baselines, bench/bale/build.sh), which link no transit and never run on the simulator.
#   clock_seam.sh ROOT          check the tree at ROOT
#   clock_seam.sh --self-test   check that a planted direct call is caught (the check can fail)
set -u
pattern='chrono::(steady_clock|system_clock|high_resolution_clock)|this_thread::(sleep_for|sleep_until|yield)|\bsched_yield\b|\busleep\b|\bnanosleep\b|\bclock_gettime\b|\bgettimeofday\b|\bMPI_Wtime\b'
seam_files='include/transit/detail/core/clock.hpp src/core/clock.cpp src/core/simulation.cpp'

check() {
  root=$1
  found=$(cd "$root" && grep -rnE "$pattern" src include bench tools/transit 2>/dev/null |
          grep -vE "^($(echo $seam_files | sed 's/ /|/g')):" | grep -vE '^bench/bale/[^/:]*\.c:')
  if [ -n "$found" ]; then
    echo "clock reads or waits outside the seam (use transit::detail::steady_clock, sleep_for, yield from transit/detail/core/clock.hpp):"
    echo "$found"
    return 1
  fi
  return 0
}

if [ "${1:-}" = "--self-test" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/src/x" "$tmp/include/transit/detail/core" "$tmp/src/core" "$tmp/bench" "$tmp/tools/transit"
  echo 'auto t = std::chrono::steady_clock::now();' > "$tmp/include/transit/detail/core/clock.hpp"
  echo 'void f() { std::this_thread::yield(); }' > "$tmp/src/core/simulation.cpp"
  if ! check "$tmp" > /dev/null; then echo "the seam itself was reported"; exit 1; fi
  for line in 'auto t = std::chrono::steady_clock::now();' 'std::this_thread::sleep_for(d);' \
              'std::this_thread::yield();' 'sched_yield();' 'double t = MPI_Wtime();' \
              'auto t = std::chrono::high_resolution_clock::now();'; do
    echo "$line" > "$tmp/src/x/bad.cpp"
    if check "$tmp" > /dev/null; then echo "not caught: $line"; exit 1; fi
  done
  rm "$tmp/src/x/bad.cpp"
  # The transit command's sources and the kernels are scanned too.
  for dir in tools/transit bench bench/sim bench/bale; do  # bench/bale: only its .c files are exempt
    mkdir -p "$tmp/$dir"
    echo 'std::this_thread::sleep_for(d);' > "$tmp/$dir/bad.cpp"
    if check "$tmp" > /dev/null; then echo "not caught in $dir/"; exit 1; fi
    rm "$tmp/$dir/bad.cpp"
  done
  echo "self-test passed"
  exit 0
fi
check "${1:?usage: clock_seam.sh ROOT | --self-test}" && echo "clock seam: no direct clock reads or waits"
