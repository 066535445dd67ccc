#!/usr/bin/env bash
# Builds bale_classic (libgetput, exstack, convey, spmat, std_options, apps) over Open MPI's
# OpenSHMEM, so that transit's applications can be compared with bale's own, answer for answer.
#
#   bench/bale/build.sh BALE_SRC PREFIX
#
# BALE_SRC: a checkout of jdevinney/bale, its bare git directory (HEAD is built), or its
#           src/bale_classic folder.
# PREFIX:   where bale is installed (PREFIX/bin/histo, ...); the build tree is PREFIX/build and the
#           autotools run on a copy in PREFIX/build/source, so the checkout is left as it was.
# Needs: oshcc/oshrun (Debian's openmpi-bin, libopenmpi-dev), autoconf, automake, python3.
# Also installs PREFIX/bin/bale-oshrun (oshrun with the settings bale needs here: use it as
# `bale-oshrun -n 2 PREFIX/bin/histo ...`) and PREFIX/bin/reference_draws (reference_draws.c: the
# draws and histo checksums that tests/apps holds) and PREFIX/bin/reference_apps (reference_apps.c:
# the ig checksums and randperm permutations of tests/apps/ig and tests/apps/randperm), and runs
# histo and ig at 2 PEs as a check.
# Then builds bale's conveyors a second time, over plain MPI (convey's --with-mpi, mpicc) into
# PREFIX/convey-mpi, and on them PREFIX/bin/convey_histogram (convey_histogram.c: `transit bench
# histogram`'s kernel and draws on a conveyor, the baseline for many ranks per core), checked at 2
# ranks: `mpirun -n P PREFIX/bin/convey_histogram --items-per-pe N`.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)  # before any cd: BASH_SOURCE may be relative

if [ $# -ne 2 ]; then
  echo "usage: $0 BALE_SRC PREFIX   (BALE_SRC: a bale checkout, its bare git directory or its src/bale_classic)" >&2
  exit 2
fi
src=$1
prefix=$2
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
copy=$prefix/build/source
rm -rf "$copy"
mkdir -p "$copy"
if [ -f "$src/HEAD" ] && [ -d "$src/objects" ]; then  # a bare repository: its HEAD's bale_classic
  git -C "$src" archive HEAD src/bale_classic | tar -x -C "$copy" ||
    { echo "$0: cannot extract src/bale_classic from the git directory '$src'" >&2; exit 2; }
  src=$copy/src/bale_classic
fi
if [ -d "$src/src/bale_classic" ]; then src=$src/src/bale_classic; fi
if [ ! -f "$src/make_bale" ] || [ ! -d "$src/libgetput" ]; then
  echo "$0: '$1' is not bale's source (expected make_bale and libgetput/ in it or in src/bale_classic)" >&2
  exit 2
fi
for tool in oshcc oshrun mpicc mpirun autoreconf python3; do
  command -v "$tool" >/dev/null || { echo "$0: '$tool' not found (scripts/setup installs it)" >&2; exit 2; }
done

if [ "$src" != "$copy/src/bale_classic" ]; then cp -a "$src" "$copy/bale_classic"; src=$copy/bale_classic; fi
cd "$src"
# bale's bootstrap.sh: autoreconf in each package (none uses libtool).
for pkg in libgetput exstack convey spmat std_options apps; do
  (cd "$pkg" && autoreconf -fi >/dev/null 2>&1) || { echo "$0: autoreconf failed in $pkg" >&2; exit 1; }
done
# make_bale runs configure, make and make install in each package, in order, against PREFIX.
CC=oshcc python3 make_bale -s -j 2 -b "$prefix/build" -i "$prefix"
for app in histo ig; do
  [ -x "$prefix/bin/$app" ] || { echo "$0: $prefix/bin/$app was not built" >&2; exit 1; }
done

# Open MPI 4.1's OpenSHMEM: bale's programs finish their work, then crash in shmem_finalize
# (MPI_Finalize -> osc/rdma's teardown -> opal_mem_hooks_release_hook, SIGSEGV). Leaving the
# osc/rdma component out avoids it; shmem itself (spml ucx) is unaffected.
root_flag=""
if [ "$(id -u)" -eq 0 ]; then root_flag="--allow-run-as-root"; fi
cat > "$prefix/bin/bale-oshrun" <<WRAPPER
#!/usr/bin/env bash
exec oshrun $root_flag --mca osc ^rdma "\$@"
WRAPPER
chmod +x "$prefix/bin/bale-oshrun"

oshcc -std=c11 -O2 -DUSE_SHMEM -I"$prefix/include" "$here/reference_draws.c" -L"$prefix/lib" -llibgetput -lm \
  -o "$prefix/bin/reference_draws"
oshcc -std=c11 -O2 -DUSE_SHMEM -I"$prefix/include" "$here/reference_apps.c" -L"$prefix/lib" -lspmat -lconvey -lexstack \
  -llibgetput -lm -o "$prefix/bin/reference_apps"

for app in histo ig; do
  if ! "$prefix/bin/bale-oshrun" -n 2 "$prefix/bin/$app" -n 1000 -T 100 >"$prefix/build/$app.check.log" 2>&1; then
    echo "$0: '$prefix/bin/bale-oshrun -n 2 $prefix/bin/$app -n 1000 -T 100' failed: see $prefix/build/$app.check.log" >&2
    exit 1
  fi
done

# Conveyors over MPI: convey alone, configured --with-mpi (its mpp2mpi layer, no SHMEM), at -O3 as
# transit's Release build is compiled.
mkdir -p "$prefix/build/convey-mpi"
(cd "$prefix/build/convey-mpi" &&
  "$src/convey/configure" --with-mpi CC=mpicc CFLAGS="-g -O3" --prefix="$prefix/convey-mpi" >configure.log 2>&1 &&
  make -j 2 >make.log 2>&1 && make install >install.log 2>&1) ||
  { echo "$0: building convey over MPI failed: see $prefix/build/convey-mpi/*.log" >&2; exit 1; }
mpicc -std=c11 -O3 -I"$prefix/convey-mpi/include" "$here/convey_histogram.c" -L"$prefix/convey-mpi/lib" -lconvey -lm \
  -o "$prefix/bin/convey_histogram"
mpi_root=()
if [ "$(id -u)" -eq 0 ]; then mpi_root=(--allow-run-as-root); fi
if ! mpirun "${mpi_root[@]}" -n 2 "$prefix/bin/convey_histogram" --items-per-pe 1000 >"$prefix/build/convey_histogram.check.log" 2>&1; then
  echo "$0: 'mpirun -n 2 $prefix/bin/convey_histogram --items-per-pe 1000' failed: see $prefix/build/convey_histogram.check.log" >&2
  exit 1
fi
echo "bale installed in $prefix/bin; run its programs with $prefix/bin/bale-oshrun -n PES PROGRAM ..."
echo "conveyors over MPI: mpirun -n PES $prefix/bin/convey_histogram --items-per-pe N"
