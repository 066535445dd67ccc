// transit app sssp: bale's sssp (apps/sssp) with its options -a -S -V and the graph options
// (-n -N -e -z -f ...; directed and weighted by default, as bale's sssp sets them).
#include <cstdio>
#include <string>

#include "app.hpp"
#include "app_graph.hpp"
#include "sssp/sssp.hpp"

namespace transit::bench {

namespace {

apps::sssp_options sssp_args;  // read-only once the job runs

void add_sssp_options(CLI::App& sub) {
  sub.add_option("-a,--alg", sssp_args.alg, "algorithms, added up: 1 Bellman-Ford, 2 delta-stepping (default 3)")
      ->transform(integer_in<int>(1, 3, "1 (Bellman-Ford), 2 (delta-stepping) or 3 (both)"))
      ->type_name("ALG");
  sub.add_option("-S,--deltaStep", sssp_args.delta_step, "delta-stepping's bucket width in (0, 1]; 0: 1 / max degree (default 0)")
      ->transform(real_in(0.0, 1.0, "a step from 0 to 1 (0: 1 / the largest degree)"))
      ->type_name("STEPSIZE");
  sub.add_option("-V,--V0", sssp_args.v0, "the source vertex (default 0)")
      ->transform(bale_count("a vertex"))
      ->type_name("NUM");
  add_bale_std_options(sub, sssp_args.std);
  add_bale_graph_options(sub, sssp_args.graph);
}

/// The options as they were taken, for the banner (bale echoes its argv).
std::string sssp_line() {
  char step[64];
  std::snprintf(step, sizeof step, "%g", sssp_args.delta_step);
  return "transit app sssp -a " + std::to_string(sssp_args.alg) + " -S " + step + " -V " + std::to_string(sssp_args.v0) +
         " " + bale_graph_line(sssp_args.graph) + " " + bale_std_line(sssp_args.std);
}

const bool registered = register_app({
    .name = "sssp",
    .summary = "bale's sssp: single-source shortest paths (Bellman-Ford, delta-stepping)",
    .add_options = add_sssp_options,
    .run = [](context& ctx) { return apps::sssp_main(ctx, sssp_args, sssp_line()); },
});

}  // namespace

}  // namespace transit::bench
