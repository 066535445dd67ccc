// transpose_matrix as `transit app transpose_matrix` runs it: bale's graph options and the standard ones.
#include "transpose_matrix/transpose_matrix.hpp"
#include "spmat/graph_app.hpp"

namespace transit::apps {

app_entry transpose_matrix_app() {
  return graph_options_app<transpose_options>(
      "transpose_matrix", "bale's transpose_matrix: the transpose of a distributed sparse matrix",
      transpose_matrix_main);
}

}  // namespace transit::apps
