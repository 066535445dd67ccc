// sssp as `transit app sssp` runs it: bale's options -a -S -V, the standard ones and the graph
// options (directed and weighted by default, as bale's sssp sets them).
#include <cstdio>

#include "common/bale_options.hpp"
#include "sssp/sssp.hpp"

namespace transit::apps {

namespace {

/// The options as they were taken, for the banner (bale echoes its argv).
std::string sssp_line(const sssp_options& a) {
  char step[64];
  std::snprintf(step, sizeof step, "%g", a.delta_step);
  return "transit app sssp -a " + std::to_string(a.alg) + " -S " + step + " -V " + std::to_string(a.v0) + " " +
         bale_graph_line(a.graph) + " " + bale_std_line(a.std);
}

}  // namespace

app_entry sssp_app() {
  static sssp_options args;  // read-only once the job runs
  option_table own = {
      {.names = "-a,--alg",
       .help = "algorithms, added up: 1 Bellman-Ford, 2 delta-stepping (default 3)",
       .target = &args.alg,
       .check = integer_range{1, 3, "1 (Bellman-Ford), 2 (delta-stepping) or 3 (both)"},
       .type_name = "ALG"},
      {.names = "-S,--deltaStep",
       .help = "delta-stepping's bucket width in (0, 1]; 0: 1 / max degree (default 0)",
       .target = &args.delta_step,
       .check = real_range{0.0, 1.0, "a step from 0 to 1 (0: 1 / the largest degree)"},
       .type_name = "STEPSIZE"},
      bale_count_option("-V,--V0", "the source vertex (default 0)", args.v0, "a vertex"),
  };
  return {.name = "sssp",
          .summary = "bale's sssp: single-source shortest paths (Bellman-Ford, delta-stepping)",
          .options = own + bale_std_option_table(args.std) + bale_graph_option_table(args.graph),
          .run = [](context& ctx) { return sssp_main(ctx, args, sssp_line(args)); }};
}

}  // namespace transit::apps
