#!/usr/bin/env bash
# cxx17.sh CXX INCLUDE_DIR: a C++17 program that includes an entry header (transit/base.hpp,
# transit/transit.hpp, transit/mpi.hpp) fails to compile with "transit needs C++20 (compile with
# -std=c++20 or later)" as its first and only error (then the compiler stops), not with errors
# about std::span inside the headers; the same program compiles with -std=c++20.
set -uo pipefail
cxx=$1 include=$2
message='transit needs C++20 (compile with -std=c++20 or later)'
mpi_flags=()
if command -v mpicxx >/dev/null; then  # transit/mpi.hpp includes <mpi.h>: a system header
  for dir in $(mpicxx --showme:incdirs 2>/dev/null); do mpi_flags+=(-isystem "$dir"); done
fi
failed=0
for header in transit/base.hpp transit/transit.hpp transit/mpi.hpp; do
  program=$(printf '#include <%s>\nint main() { return 0; }\n' "$header")
  out=$("$cxx" -std=c++17 -Wall -Wextra -I "$include" "${mpi_flags[@]}" -x c++ -fsyntax-only - <<<"$program" 2>&1)
  status=$?
  errors=$(grep -E '(fatal )?error:' <<<"$out")
  first=$(head -n 1 <<<"$errors")
  if [ "$status" -eq 0 ]; then
    echo "cxx17: #include <$header> compiled with -std=c++17"; failed=1
  elif ! grep -qF "error: #error \"$message\"" <<<"$first"; then
    echo "cxx17: #include <$header> with -std=c++17: the first error is not '$message':"; echo "$out" | head -n 20; failed=1
  elif [ "$(grep -c 'error:' <<<"$errors")" -gt 2 ] || grep -q 'span' <<<"$errors"; then
    echo "cxx17: #include <$header> with -std=c++17: more errors than the one:"; echo "$out" | head -n 20; failed=1
  else
    echo "cxx17: #include <$header> with -std=c++17: $first"
  fi
  if ! "$cxx" -std=c++20 -Wall -Wextra -Werror -I "$include" "${mpi_flags[@]}" -x c++ -fsyntax-only - <<<"$program"; then
    echo "cxx17: #include <$header> does not compile with -std=c++20"; failed=1
  fi
done
[ "$failed" -eq 0 ] && echo "cxx17: ok"
exit "$failed"
