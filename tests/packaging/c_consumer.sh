#!/usr/bin/env bash
# c_consumer.sh PREFIX SOURCE OUTPUT: builds a C program against the transit installed in PREFIX as
# a user without CMake does (cc and pkg-config only; CC=mpicc for an MPI program), then checks that
# it links the shared library by its SONAME (libtransit.so.0) and that, with PREFIX's lib on
# LD_LIBRARY_PATH, it loads that copy.
set -euo pipefail
prefix=$1 source=$2 output=$3
pc=$(find "$prefix" -name transit.pc -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || { echo "c_consumer: no transit.pc under $prefix"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
echo "pkg-config: transit $(pkg-config --modversion transit): $(pkg-config --cflags --libs transit)"
mkdir -p "$(dirname "$output")"
# shellcheck disable=SC2046 # the flags are words
"${CC:-cc}" -std=c11 -Wall -Wextra -Wpedantic -Werror "$source" -o "$output" $(pkg-config --cflags --libs transit)
needed=$(readelf -d "$output" | grep NEEDED)
echo "$needed"
grep -q '\[libtransit\.so\.0\]' <<<"$needed" || { echo "c_consumer: $output does not need libtransit.so.0"; exit 1; }
libdir=$(pkg-config --variable=libdir transit)
loaded=$(LD_LIBRARY_PATH=$libdir ldd "$output" | grep 'libtransit\.so\.0')
echo "$loaded"
real_libdir=$(cd "$libdir" && pwd -P)
grep -q "=> $real_libdir/libtransit\.so\.0 \|=> $libdir/libtransit\.so\.0 " <<<"$loaded" ||
  { echo "c_consumer: libtransit.so.0 does not load from $libdir"; exit 1; }
echo "c_consumer: built $output against $prefix"
