#!/usr/bin/env bash
# c_consumer.sh PREFIX SOURCE OUTPUT: builds a C program against the transit installed in PREFIX as
# a user without CMake does (cc and pkg-config only; CC=mpicc for an MPI program), then checks that
# it links the shared library by its SONAME (libtransit.so.0) and that, with PREFIX's lib on
# LD_LIBRARY_PATH, it loads that copy. PACKAGE=transit-aml builds an AML program against
# transit_aml instead (libtransit_aml.so.0, which loads libtransit.so.0 from its own folder).
set -euo pipefail
prefix=$1 source=$2 output=$3
package=${PACKAGE:-transit}
library=lib${package//-/_}
pc=$(find "$prefix" -name "$package.pc" -path '*/pkgconfig/*' | head -n 1)
[ -n "$pc" ] || { echo "c_consumer: no $package.pc under $prefix"; exit 1; }
export PKG_CONFIG_PATH=$(dirname "$pc")
echo "pkg-config: $package $(pkg-config --modversion "$package"): $(pkg-config --cflags --libs "$package")"
mkdir -p "$(dirname "$output")"
# shellcheck disable=SC2046 # the flags are words
"${CC:-cc}" -std=c11 -Wall -Wextra -Wpedantic -Werror "$source" -o "$output" $(pkg-config --cflags --libs "$package")
needed=$(readelf -d "$output" | grep NEEDED)
echo "$needed"
grep -q "\[$library\.so\.0\]" <<<"$needed" || { echo "c_consumer: $output does not need $library.so.0"; exit 1; }
libdir=$(pkg-config --variable=libdir "$package")
loaded=$(LD_LIBRARY_PATH=$libdir ldd "$output" | grep -E "(libtransit|$library)\.so\.0")
echo "$loaded"
real_libdir=$(cd "$libdir" && pwd -P)
for lib in libtransit "$library"; do
  grep -q "$lib\.so\.0 => \($real_libdir\|$libdir\)/$lib\.so\.0 " <<<"$loaded" ||
    { echo "c_consumer: $lib.so.0 does not load from $libdir"; exit 1; }
done
echo "c_consumer: built $output against $prefix"
