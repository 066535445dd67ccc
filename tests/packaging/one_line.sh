#!/usr/bin/env bash
# one_line.sh CXX INCLUDE_DIR: the entry headers compile on their own, as a user's one-line program
# includes them, with the library's warnings as errors:
#   - `#include <transit/base.hpp>` and `#include <transit/transit.hpp>`, each alone;
#   - a program that streams items (run, context, streamer_options, streamer<T>) with base.hpp only,
#     so the light header keeps what it promises;
# and the light header stays lighter than the umbrella (preprocessed lines, line markers included,
# as scripts/header-weight counts them). Prints both sizes.
set -euo pipefail
cxx=$1 include=$2
flags=(-std=c++20 -Wall -Wextra -Wpedantic -Werror -I "$include" -x c++)
lines() { printf '#include <%s>\n' "$1" | "$cxx" "${flags[@]}" -E - | wc -l; }
for header in transit/base.hpp transit/transit.hpp; do
  printf '#include <%s>\n' "$header" | "$cxx" "${flags[@]}" -fsyntax-only - ||
    { echo "one_line: #include <$header> alone does not compile"; exit 1; }
done
"$cxx" "${flags[@]}" -fsyntax-only - <<'PROGRAM' || { echo "one_line: a streaming program needs more than base.hpp"; exit 1; }
#include <transit/base.hpp>
#include <stdexcept>
int main(int argc, char** argv) {
  return transit::run(argc, argv, [](transit::context& ctx) {
    transit::streamer_options options;
    options.buffer_items = 64;
    long sum = 0;
    transit::streamer<long> s(ctx, options, [&](const long& item) { sum += item; });
    s.insert(ctx.rank(), (ctx.rank() + 1) % ctx.size());
    s.finish();
    if (ctx.allreduce(sum, transit::reduce_op::sum) != ctx.allreduce(long{ctx.rank()}, transit::reduce_op::sum))
      throw std::logic_error("lost items");
  });
}
PROGRAM
base=$(lines transit/base.hpp) umbrella=$(lines transit/transit.hpp)
echo "one_line: preprocessed lines: transit/base.hpp $base, transit/transit.hpp $umbrella"
[ "$base" -lt "$umbrella" ] || { echo "one_line: base.hpp is not lighter than transit.hpp"; exit 1; }
echo "one_line: ok"
