#!/usr/bin/env bash
# bench/languages.sh [ROUNDS] [BUILD]: one sitting of the histogram of `transit bench histogram` in
# C++, through the C API (--api c) and from Python (bench/python_histogram.py, NumPy batches of
# 64 Ki), 2 ranks, the same items, table and automatic buffers, alternating, ROUNDS rounds (3);
# prints each rate (M updates/s per PE) and the medians. Run from the checkout after `make build`.
set -u
rounds=${1:-3}
build=${2:-build}
export PYTHONPATH=$build/python
if [ "$(id -u)" -eq 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
declare -A rates
for r in $(seq "$rounds"); do
  for v in cpp c py; do
    case $v in
      cpp) out=$(mpirun -n 2 $build/bin/transit bench histogram --buffer-items 0 2>&1 | grep -o '[0-9.]* M items/s/PE' | head -1);;
      c)   out=$(mpirun -n 2 $build/bin/transit bench histogram --buffer-items 0 --api c 2>&1 | grep -o '[0-9.]* M items/s/PE' | head -1);;
      py)  out=$(mpirun -n 2 /usr/bin/python3 bench/python_histogram.py 2>&1 | grep -oE '[0-9.]+ M updates/s per PE' | head -1);;
    esac
    rate=${out%% *}
    echo "round $r $v $rate"
    rates[$v]="${rates[$v]:-} $rate"
  done
done
for v in cpp c py; do
  med=$(printf '%s\n' ${rates[$v]} | sort -g | awk '{a[NR]=$1} END {print (NR%2)? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
  echo "median $v $med"
done
