#!/usr/bin/env bash
# install_library.sh SOURCE_DIR INSTALL_BUILD PREFIX LIBDIR [CMAKE_FLAGS...]
# Installs transit as README "Installing" says, `make install PREFIX=...`: the library only, from
# its own build in INSTALL_BUILD (tests, transit command, applications, benchmarks and Python off),
# into an emptied PREFIX so that no file an earlier run installed can stand in for one no longer
# installed. Then checks the installed tree: libtransit.so (with its SONAME link) and libtransit.a,
# the C and C++ headers, the CMake package (transit::transit) and transit.pc, and no transit command;
# and that the build behind it built the library alone (no transit command, tests or applications).
set -euo pipefail
source_dir=$1 build=$2 prefix=$3 libdir=$4
shift 4
rm -rf "$prefix"
# Run from ctest under `make test`: the inner make must not take the outer one's job server.
start=$SECONDS
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
  make -C "$source_dir" install PREFIX="$prefix" INSTALL_BUILD="$build" CMAKE_FLAGS="$*"
echo "install_library: make install took $((SECONDS - start)) s"

missing=0
for file in "$libdir/libtransit.so" "$libdir/libtransit.so.0" "$libdir/libtransit.a" \
            include/transit/transit.h include/transit/transit.hpp include/transit/base.hpp \
            include/transit/mpi.hpp include/transit/detail/core/cxx20.hpp \
            "$libdir/cmake/transit/transitConfig.cmake" "$libdir/cmake/transit/transitConfigVersion.cmake" \
            "$libdir/cmake/transit/transitTargets.cmake" "$libdir/pkgconfig/transit.pc" \
            "$libdir/libtransit_aml.so.0" include/transit-aml/aml.h "$libdir/pkgconfig/transit-aml.pc"; do
  if [ -e "$prefix/$file" ]; then
    echo "install_library: installed $file"
  else
    echo "install_library: missing $prefix/$file"; missing=1
  fi
done
if [ -e "$prefix/bin/transit" ]; then
  echo "install_library: $prefix/bin/transit installed: the library install must not build the tools"; missing=1
fi
# What the library-only build can build at all: the library, its shared copy, nothing of the rest.
built=$(ninja -C "$build" -t targets all | sed -n 's/^\([A-Za-z0-9_]*\): phony$/\1/p' | sort -u | tr '\n' ' ')
for target in transit_cli transit_apps transit_bench transit_python transit_test_support; do
  if grep -qw "$target" <<<"$built"; then
    echo "install_library: $build has the target $target: the library install builds more than the library"; missing=1
  fi
done
[ "$missing" -eq 0 ] && echo "install_library: ok: $prefix has the library, headers, CMake package and transit.pc, no tools"
exit "$missing"
