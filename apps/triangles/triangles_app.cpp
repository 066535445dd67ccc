// triangles as `transit app triangles` runs it: bale's option -a, the standard ones and the graph
// options.
#include "common/bale_options.hpp"
#include "triangles/triangles.hpp"

namespace transit::apps {

namespace {

/// The options as they were taken, for the banner (bale echoes its argv).
std::string triangles_line(const triangles_options& a) {
  return "transit app triangles -a " + std::to_string(a.alg) + " " + bale_graph_line(a.graph) + " " +
         bale_std_line(a.std);
}

}  // namespace

app_entry triangles_app() {
  static triangles_options args;  // read-only once the job runs
  option_table own = {
      {.names = "-a,--triangle_alg",
       .help = "algorithm: 0 means L & L * U, 1 means L & U * L (default 0)",
       .target = &args.alg,
       .check = integer_range{0, 1, "0 (L & L * U) or 1 (L & U * L)"},
       .type_name = "ALG"},
  };
  return {.name = "triangles",
          .summary = "bale's triangles: count the triangles of an undirected graph",
          .options = own + bale_std_option_table(args.std) + bale_graph_option_table(args.graph),
          .run = [](context& ctx) { return triangles_main(ctx, args, triangles_line(args)); }};
}

}  // namespace transit::apps
