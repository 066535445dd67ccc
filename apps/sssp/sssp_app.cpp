// sssp as `transit app sssp` runs it: bale's options -a -S -V, the standard ones and the graph
// options (directed and weighted by default, as bale's sssp sets them).
#include <cstdio>

#include "common/bale_options.hpp"
#include "spmat/graph_app.hpp"
#include "sssp/sssp.hpp"

namespace transit::apps {

namespace {

option_table sssp_own_options(sssp_options& a) {
  return {bale_alg_option("alg", "algorithms, added up: 1 Bellman-Ford, 2 delta-stepping (default 3)", a.alg,
                          {1, 3, "1 (Bellman-Ford), 2 (delta-stepping) or 3 (both)"}),
          {.names = "-S,--deltaStep",
           .help = "delta-stepping's bucket width in (0, 1]; 0: 1 / max degree (default 0)",
           .target = &a.delta_step,
           .check = real_range{0.0, 1.0, "a step from 0 to 1 (0: 1 / the largest degree)"},
           .type_name = "STEPSIZE"},
          bale_count_option("-V,--V0", "the source vertex (default 0)", a.v0, "a vertex")};
}

std::string sssp_line(const sssp_options& a) {
  char step[64];
  std::snprintf(step, sizeof step, "%g", a.delta_step);
  return "-a " + std::to_string(a.alg) + " -S " + step + " -V " + std::to_string(a.v0) + " ";
}

}  // namespace

app_entry sssp_app() {
  return graph_options_app<sssp_options>("sssp",
                                         "bale's sssp: single-source shortest paths (Bellman-Ford, delta-stepping)",
                                         sssp_main, sssp_own_options, sssp_line);
}

}  // namespace transit::apps
