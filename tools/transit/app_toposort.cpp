// transit app toposort: bale's topo (apps/toposort) with bale's graph options (app_graph.hpp; -n
// defaults to 500000 rows per PE, loops always) and its standard ones.
#include <string>

#include "app.hpp"
#include "app_graph.hpp"
#include "toposort/toposort.hpp"

namespace transit::bench {

namespace {

apps::toposort_options toposort_args;  // read-only once the job runs

void add_toposort_options(CLI::App& sub) {
  add_bale_graph_options(sub, toposort_args.graph);
  add_bale_std_options(sub, toposort_args.std);
}

const bool registered = register_app({
    .name = "toposort",
    .summary = "bale's toposort: permutations making a permuted triangular matrix triangular again",
    .add_options = add_toposort_options,
    .run =
        [](context& ctx) {
          return apps::toposort_main(ctx, toposort_args,
                                     "transit app toposort " + bale_graph_line(toposort_args.graph) + " " +
                                         bale_std_line(toposort_args.std));
        },
});

}  // namespace

}  // namespace transit::bench
