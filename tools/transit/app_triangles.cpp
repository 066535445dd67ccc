// transit app triangles: bale's triangles (apps/triangles) with its option -a and the graph
// options (-n -N -e -z -K -f ...).
#include <string>

#include "app.hpp"
#include "app_graph.hpp"
#include "triangles/triangles.hpp"

namespace transit::bench {

namespace {

apps::triangles_options triangles_args;  // read-only once the job runs

void add_triangles_options(CLI::App& sub) {
  sub.add_option("-a,--triangle_alg", triangles_args.alg, "algorithm: 0 means L & L * U, 1 means L & U * L (default 0)")
      ->transform(integer_in<int>(0, 1, "0 (L & L * U) or 1 (L & U * L)"))
      ->type_name("ALG");
  add_bale_std_options(sub, triangles_args.std);
  add_bale_graph_options(sub, triangles_args.graph);
}

/// The options as they were taken, for the banner (bale echoes its argv).
std::string triangles_line() {
  return "transit app triangles -a " + std::to_string(triangles_args.alg) + " " +
         bale_graph_line(triangles_args.graph) + " " + bale_std_line(triangles_args.std);
}

const bool registered = register_app({
    .name = "triangles",
    .summary = "bale's triangles: count the triangles of an undirected graph",
    .add_options = add_triangles_options,
    .run = [](context& ctx) { return apps::triangles_main(ctx, triangles_args, triangles_line()); },
});

}  // namespace

}  // namespace transit::bench
