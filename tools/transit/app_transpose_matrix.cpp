// transit app transpose_matrix: bale's transpose_matrix (apps/transpose_matrix) with bale's graph
// options (app_graph.hpp) and its standard ones.
#include <string>

#include "app.hpp"
#include "app_graph.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

namespace transit::bench {

namespace {

apps::transpose_options transpose_args;  // read-only once the job runs

void add_transpose_options(CLI::App& sub) {
  add_bale_graph_options(sub, transpose_args.graph);
  add_bale_std_options(sub, transpose_args.std);
}

const bool registered = register_app({
    .name = "transpose_matrix",
    .summary = "bale's transpose_matrix: the transpose of a distributed sparse matrix",
    .add_options = add_transpose_options,
    .run =
        [](context& ctx) {
          return apps::transpose_matrix_main(ctx, transpose_args,
                                             "transit app transpose_matrix " + bale_graph_line(transpose_args.graph) +
                                                 " " + bale_std_line(transpose_args.std));
        },
});

}  // namespace

}  // namespace transit::bench
