// bfs as `transit app bfs` runs it: Graph500's SCALE and edge factor as named options (-s, -e; the
// reference takes them as its two arguments), the root count, the seed and -V to time without
// validating.
#include "bfs/bfs.hpp"

namespace transit::apps {

app_entry bfs_app() {
  static bfs_options args;  // read-only once the job runs
  return {.name = "bfs",
          .summary = "Graph500's BFS (kernel 2): Kronecker graph, 64 roots, the five validation checks, TEPS",
          .options = {{.names = "-s,--scale",
                       .help = "log2 of the vertex count (default 16)",
                       .target = &args.scale,
                       .check = integer_range{1, 42, "a scale from 1 to 42 (2^SCALE vertices)"},
                       .type_name = "SCALE"},
                      {.names = "-e,--edgefactor",
                       .help = "edges per vertex (default 16)",
                       .target = &args.edgefactor,
                       .check = integer_range{1, 1 << 20, "an edge factor from 1 to 2^20"},
                       .type_name = "EF"},
                      {.names = "-r,--roots",
                       .help = "search roots (default 64, the specification's)",
                       .target = &args.roots,
                       .check = integer_range{1, 1 << 16, "a number of roots from 1 to 65536"},
                       .type_name = "NUM"},
                      {.names = "--seed",
                       .help = "the generator's seeds are SEED and SEED + 1 (default 2: the reference's 2 and 3)",
                       .target = &args.seed,
                       .check = integer_range{0, std::int64_t{1} << 62, "a seed from 0 to 2^62"},
                       .type_name = "SEED"},
                      {.names = "-a,--algorithm",
                       .help = "top-down (the reference's, default) or direction-optimizing (Beamer's bottom-up steps)",
                       .target = &args.algorithm,
                       .check = one_of_names{{"top-down", "direction-optimizing"}},
                       .type_name = "NAME"},
                      {.names = "-V,--no-validate",
                       .help = "time the searches without validating them",
                       .target = &args.no_validate,
                       .kind = option_kind::flag}},
          .run = [](context& ctx) { return bfs_main(ctx, args); }};
}

}  // namespace transit::apps
