// permute_matrix as `transit app permute_matrix` runs it: bale's graph options and the standard ones.
#include "permute_matrix/permute_matrix.hpp"
#include "spmat/graph_app.hpp"

namespace transit::apps {

app_entry permute_matrix_app() {
  return graph_options_app<permute_matrix_options>(
      "permute_matrix", "bale's permute_matrix: a sparse matrix's rows and columns randomly permuted",
      permute_matrix_main);
}

}  // namespace transit::apps
