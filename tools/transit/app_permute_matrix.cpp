// transit app permute_matrix: bale's permute_matrix (apps/permute_matrix) with bale's graph
// options (app_graph.hpp) and its standard ones.
#include <string>

#include "app.hpp"
#include "app_graph.hpp"
#include "permute_matrix/permute_matrix.hpp"

namespace transit::bench {

namespace {

apps::permute_matrix_options permute_args;  // read-only once the job runs

void add_permute_options(CLI::App& sub) {
  add_bale_graph_options(sub, permute_args.graph);
  add_bale_std_options(sub, permute_args.std);
}

const bool registered = register_app({
    .name = "permute_matrix",
    .summary = "bale's permute_matrix: a sparse matrix's rows and columns randomly permuted",
    .add_options = add_permute_options,
    .run =
        [](context& ctx) {
          return apps::permute_matrix_main(ctx, permute_args,
                                           "transit app permute_matrix " + bale_graph_line(permute_args.graph) + " " +
                                               bale_std_line(permute_args.std));
        },
});

}  // namespace

}  // namespace transit::bench
