#!/usr/bin/env bash
# bale's own application suite (bale_classic/apps/tests/test_all.py) run against `transit app`:
# every run bale lists (its options, its PE counts 1-3, -M 31, from bale_classic/apps so that
# ../../../example_matrices is found) launched as `mpirun --oversubscribe -n P transit app NAME
# ...`, judged as bale judges it (exit status 0 and no line with "error" in the output), and
# counted: passed, failed (each failed command and its output listed), not run.
#
#   bench/bale/test_suite.sh BALE_SRC TRANSIT_BIN
#   bench/bale/test_suite.sh /work/.mirror/jdevinney+bale/repo build/bin/transit
#
# BALE_SRC: as for build.sh (a checkout of jdevinney/bale, its bare git directory, whose HEAD is
# used, or its src/bale_classic folder); nothing is built from it, the suite and bale's example
# matrices are copied. Exit status 0 when every run passed. LOGS (environment): where the failed
# runs' output goes (default: a temporary directory, removed).
#
# What differs from `pytest apps` in bale: the programs are wrappers in a temporary bin/ named as
# bale's (topo is transit's toposort); sparse_matrix_io, a file-format tool transit does not port,
# is not run (its runs are counted as not run); a failing run does not end the suite (bale's
# assert stops at the first); and the commands run under bash, as bale's `&> test.log` needs
# (under dash, /bin/sh on Debian, `&>` puts the program in the background and every run passes).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if [ $# -ne 2 ]; then
  echo "usage: $0 BALE_SRC TRANSIT_BIN   (BALE_SRC: a bale checkout, its bare git directory or its src/bale_classic)" >&2
  exit 2
fi
transit=$(realpath "$2")
[ -x "$transit" ] || { echo "$0: '$2' is not an executable (the transit command)" >&2; exit 2; }
for tool in mpirun python3 git; do
  command -v "$tool" >/dev/null || { echo "$0: '$tool' not found" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=${LOGS:-$work/logs}
mkdir -p "$logs"

# bale's layout: src/bale_classic/apps (the suite) and example_matrices at the top.
if [ -f "$1/HEAD" ] && [ -d "$1/objects" ]; then
  git -C "$1" archive HEAD src/bale_classic/apps example_matrices | tar -x -C "$work" ||
    { echo "$0: cannot extract bale's suite from the git directory '$1'" >&2; exit 2; }
else
  top=$1
  if [ -f "$1/make_bale" ]; then top=$1/../..; fi
  [ -f "$top/src/bale_classic/apps/tests/test_all.py" ] ||
    { echo "$0: '$1' is not bale's source (expected src/bale_classic/apps/tests/test_all.py)" >&2; exit 2; }
  mkdir -p "$work/src/bale_classic"
  cp -a "$top/src/bale_classic/apps" "$work/src/bale_classic/"
  if [ -d "$top/example_matrices" ]; then cp -a "$top/example_matrices" "$work/"; fi
fi
apps=$work/src/bale_classic/apps
[ -f "$apps/tests/test_all.py" ] || { echo "$0: no apps/tests/test_all.py in '$1'" >&2; exit 2; }

mkdir -p "$work/bin"
for app in histo ig randperm transpose_matrix permute_matrix topo triangles sssp; do
  name=$app
  [ "$app" = topo ] && name=toposort
  printf '#!/bin/sh\nexec "%s" app %s "$@" --transit-backend=mpi\n' "$transit" "$name" >"$work/bin/$app"
  chmod +x "$work/bin/$app"
done

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# 3 PEs on 2 cores: Open MPI's busy polling would take the cores of the ranks it waits for.
if [ 3 -gt "$(nproc)" ]; then export OMPI_MCA_mpi_yield_when_idle=1; fi
echo "# bale's apps/tests/test_all.py against $transit app, $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -n), $(nproc) cores"
cd "$apps"
python3 "$here/test_suite.py" "$apps/tests" "$work/bin" "$logs"
