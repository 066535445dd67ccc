#!/usr/bin/env bash
# The reference checksums tests/apps/spmat holds: bale's transpose_matrix generates each input
# graph with bale's graph options and dumps it (-M 0 -D: no kernel, the input written as
# transpose_inmat), and mm_checksum.py sums it as transit's matrix_checksum does.
#
#   bench/bale/spmat_reference.sh BALE_PREFIX [PES...]     (default PES: 1 2 3)
#
# Prints one line per case and PE count: "PES | ARGS | structure nnz value_sum".
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -lt 1 ]; then echo "usage: $0 BALE_PREFIX [PES...]" >&2; exit 2; fi
bale=$1; shift
pes_list=${*:-1 2 3}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cases=(
  "-N 50 -z 4"
  "-N 40 -z 3 -d"
  "-N 40 -e 0.1 -d -l -w"
  "-N 30 -z 5 -l -w"
  "-N 64 -z 6 -w -s 7"
  "-n 20 -z 4 -d -l"
  "-K 0:2x3x4"
  "-K 1:2x3x4"
  "-K 2:3x3x2x2"
)
for pes in $pes_list; do
  for args in "${cases[@]}"; do
    # shellcheck disable=SC2086  # the case's options are meant to split
    (cd "$work" && "$bale/bin/bale-oshrun" --oversubscribe -n "$pes" "$bale/bin/transpose_matrix" $args -M 0 -D >/dev/null 2>&1) ||
      { echo "$0: bale's transpose_matrix $args failed at $pes PEs" >&2; exit 1; }
    echo "$pes | $args | $("$here/mm_checksum.py" "$work/transpose_inmat")"
  done
done
