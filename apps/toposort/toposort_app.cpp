// toposort as `transit app toposort` runs it: bale's graph options and the standard ones.
#include "toposort/toposort.hpp"
#include "spmat/graph_app.hpp"

namespace transit::apps {

app_entry toposort_app() {
  return graph_options_app<toposort_options>(
      "toposort", "bale's toposort: permutations making a permuted triangular matrix triangular again",
      toposort_main);
}

}  // namespace transit::apps
