// sssp's four kernels (Bellman-Ford and delta-stepping, each on streamer and sparse_exchange)
// find the distances bale's own program finds on the same graphs: the number of reachable
// vertices and the sum of their distances as bale's -D dump prints them (see bale_sums for how
// each was recorded), and the same distances as each other at every PE count. Also the whole
// program: the self-check passes, also with -l (overridden, as bale does); unweighted graphs and a
// source beyond the graph are refused with status 2.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "spmat/graph_input.hpp"
#include "sssp/sssp.hpp"
#include "test_support.hpp"

namespace {

using namespace transit;
using transit::apps::sssp_options;
using transit::testing::run_spmd;

struct sssp_case {
  std::int64_t l_numrows, numrows;
  double nz_per_row, edge_prob;
  std::int64_t seed, v0;
  double delta_step;
};

/// bale's distances in short: the reachable vertices and the sum of their distances.
struct distance_sum {
  std::int64_t reachable;
  double sum;
};

// `bale-oshrun -n P /work/bale-install/bin/sssp ARGS -D`, then `awk '$1 != "inf" {n++; s += $1}
// END {printf "%d %.6f", n, s}' sssp_dist` (bale writes each distance with "%lf"); P = 1 and 2,
// bale_classic over Open MPI 4.1's OpenSHMEM, where all six of its implementations compared.
struct recorded {
  sssp_case graph;
  distance_sum on_1, on_2;
};
const std::vector<recorded> bale_sums = {
    {{500, 0, 5.0, 0.0, 122222, 0, 0.0}, {499, 510.963812}, {995, 1441.935926}},       // -n 500 -z 5
    {{400, 0, 3.0, 0.0, 9, 17, 0.0}, {379, 908.902901}, {749, 1645.070305}},           // -n 400 -z 3 -s 9 -V 17
    {{300, 0, 10.0, 0.02, 122222, 0, 0.1}, {299, 304.383595}, {600, 558.206068}},      // -n 300 -e 0.02 -S 0.1
    {{100000, 777, 4.0, 0.0, 122222, 5, 0.0}, {767, 1394.802519}, {758, 1140.347321}},  // -N 777 -z 4 -V 5
};

/// Collective: the input graph as `transit app sssp` reads it (the report goes nowhere).
apps::sparse_matrix input_graph(context& ctx, const sssp_case& c) {
  apps::sssp_options o;
  o.graph.l_numrows = c.l_numrows;
  o.graph.numrows = c.numrows;
  o.graph.nz_per_row = c.nz_per_row;
  o.graph.edge_prob = c.edge_prob;
  o.std.seed = c.seed;
  o.std.json_output = "/dev/null";  // the report's lines are not what is tested here
  apps::bale_report report(ctx, o.std, "sssp", "sssp_test");
  return apps::get_input_graph(ctx, report, o.std, apps::resolve_graph_options(o.graph, ctx.size()));
}

/// Collective: as bale's dump and awk count them: the distances in vertex order, each rounded
/// as "%lf" prints it, the infinite ones left out.
distance_sum sum_as_bale_prints(context& ctx, std::int64_t numrows, const std::vector<double>& dist) {
  std::vector<double> all(static_cast<std::size_t>(numrows), 0.0);
  for (std::size_t li = 0; li < dist.size(); ++li)
    all[li * static_cast<std::size_t>(ctx.size()) + static_cast<std::size_t>(ctx.rank())] = dist[li];
  ctx.allreduce(std::span<double>(all), reduce_op::sum);
  distance_sum s{0, 0.0};
  for (const double d : all) {
    if (std::isinf(d)) continue;
    char text[64];
    std::snprintf(text, sizeof text, "%lf", d);
    ++s.reachable;
    s.sum += std::strtod(text, nullptr);
  }
  return s;
}

TEST(Sssp, EveryKernelFindsBalesDistances) {
  run_spmd([](context& ctx) {
    for (const recorded& r : bale_sums) {
      const apps::sparse_matrix mat = input_graph(ctx, r.graph);
      const auto n = static_cast<std::size_t>(mat.lnumrows);
      std::vector<std::vector<double>> found(5, std::vector<double>(n));
      apps::sssp_bellman_streamer(ctx, mat, r.graph.v0, found[0]);
      apps::sssp_bellman_exchange(ctx, mat, r.graph.v0, 1024, found[1]);
      apps::sssp_bellman_exchange(ctx, mat, r.graph.v0, 2, found[2]);  // many small rounds
      apps::sssp_delta_streamer(ctx, mat, r.graph.v0, r.graph.delta_step, found[3]);
      apps::sssp_delta_exchange(ctx, mat, r.graph.v0, r.graph.delta_step, 3, found[4]);
      for (std::size_t k = 1; k < found.size(); ++k)
        EXPECT_LT(apps::sssp_answer_diff(ctx, found[0], found[k]), 1.0e-8) << "kernel " << k << " V0 " << r.graph.v0;
      const distance_sum mine = sum_as_bale_prints(ctx, mat.numrows, found[3]);
      if (ctx.size() <= 2) {
        const distance_sum& bale = ctx.size() == 1 ? r.on_1 : r.on_2;
        EXPECT_EQ(mine.reachable, bale.reachable) << "V0 " << r.graph.v0;
        EXPECT_NEAR(mine.sum, bale.sum, 1.0e-5) << "V0 " << r.graph.v0;  // bale's sum printed to 6 places
      }
    }
  });
}

TEST(Sssp, ProgramPassesItsSelfCheckAndRefusesBadGraphs) {
  run_spmd([](context& ctx) {
    sssp_options o;
    o.graph.l_numrows = 150;
    o.graph.nz_per_row = 4;
    o.std.buf_cnt = 8;
    for (const int alg : {1, 2, 3}) {
      o.alg = alg;
      EXPECT_EQ(apps::sssp_main(ctx, o, "sssp_test"), 0);
    }
    o.v0 = 150 * ctx.size();  // one past the last vertex
    EXPECT_EQ(apps::sssp_main(ctx, o, "sssp_test"), 2);
    o.v0 = 0;
    o.graph.loops = true;  // overridden with a warning, as bale does: the run checks itself
    EXPECT_EQ(apps::sssp_main(ctx, o, "sssp_test"), 0);
    o.graph.loops = false;
    o.graph.model = apps::graph_model::kronecker;  // no weights
    o.graph.kron_string = "1:3x4x5";
    o.graph.kron = apps::parse_kronecker_spec(o.graph.kron_string);
    EXPECT_EQ(apps::sssp_main(ctx, o, "sssp_test"), 2);
  });
}

}  // namespace
