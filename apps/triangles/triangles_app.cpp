// triangles as `transit app triangles` runs it: bale's option -a, the standard ones and the graph
// options.
#include "common/bale_options.hpp"
#include "spmat/graph_app.hpp"
#include "triangles/triangles.hpp"

namespace transit::apps {

app_entry triangles_app() {
  return graph_options_app<triangles_options>(
      "triangles", "bale's triangles: count the triangles of an undirected graph", triangles_main,
      [](triangles_options& a) {
        return option_table{bale_alg_option("triangle_alg",
                                            "algorithm: 0 means L & L * U, 1 means L & U * L (default 0)", a.alg,
                                            {0, 1, "0 (L & L * U) or 1 (L & U * L)"})};
      },
      [](const triangles_options& a) { return "-a " + std::to_string(a.alg) + " "; });
}

}  // namespace transit::apps
