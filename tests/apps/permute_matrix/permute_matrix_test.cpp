// permute_matrix's three styles give bale's permuted matrix: bale's permute_matrix dumps it (-M 2
// -D: permute_matrix_outmat, from the input its graph options generate and its rand_permp
// permutations with seeds s and s + 12345), bench/bale/mm_checksum.py sums it as matrix_checksum
// does: `bale-oshrun -n P permute_matrix ARGS -M 2 -D` at P = 1, 2, 3. And every style at any PE
// count equals the permutation done on one PE.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "permute_matrix/permute_matrix.hpp"
#include "randperm/randperm.hpp"
#include "test_support.hpp"

namespace {

using namespace transit;
using transit::testing::run_spmd;

struct bale_case {
  const char* args;
  apps::bale_graph_options graph;
};

apps::bale_graph_options graph(std::int64_t numrows, double nz_per_row, double edge_prob, bool directed, bool loops,
                               bool weighted) {
  apps::bale_graph_options g;
  g.numrows = numrows;
  g.nz_per_row = nz_per_row;
  g.edge_prob = edge_prob;
  g.directed = directed;
  g.loops = loops;
  g.weighted = weighted;
  return g;
}

// mm_checksum.py of bale's permute_matrix_outmat: structure, nnz, value sum (by PE count).
const std::map<std::pair<std::string, int>, apps::matrix_checksum_t> bale_outmat = {
    {{"-N 50 -z 4", 1}, {0x3c843fdc1229fdc8, 170, 0.0}},
    {{"-N 50 -z 4", 2}, {0xe9bdb4a170dded56, 171, 0.0}},
    {{"-N 50 -z 4", 3}, {0x8409222e3f7b0b54, 179, 0.0}},
    {{"-N 40 -e 0.1 -d -l -w", 1}, {0x5062efd42e3a0c81, 169, 86.160478}},
    {{"-N 40 -e 0.1 -d -l -w", 2}, {0xece68b5c6ac90a3c, 176, 95.775825}},
    {{"-N 40 -e 0.1 -d -l -w", 3}, {0xead8162aadbe3673, 180, 97.651611}},
    {{"-K 1:2x3x4", 1}, {0x78cae595abee0cca, 157, 0.0}},
    {{"-K 1:2x3x4", 2}, {0xf686e0f1997b1efb, 157, 0.0}},
    {{"-K 1:2x3x4", 3}, {0xf5017d4153d14da3, 157, 0.0}},
};

TEST(PermuteMatrix, EveryStyleGivesBalesMatrix) {
  run_spmd([](context& ctx) {
    apps::bale_graph_options kron;
    kron.model = apps::graph_model::kronecker;
    kron.kron_string = "1:2x3x4";
    kron.kron = apps::parse_kronecker_spec(kron.kron_string);
    for (const auto& [args, options] : {std::pair<std::string, apps::bale_graph_options>{"-N 50 -z 4", graph(50, 4, 0, false, false, false)},
                                        {"-N 40 -e 0.1 -d -l -w", graph(40, 10, 0.1, true, true, true)},
                                        {"-K 1:2x3x4", kron}}) {
      apps::bale_std_options std_options;
      const apps::bale_graph_options resolved = apps::resolve_graph_options(options, ctx.size());
      const apps::sparse_matrix in = apps::make_input_graph(ctx, std_options, resolved);
      const auto rperm = apps::rand_perm(ctx, in.numrows, std_options.seed);
      const auto cperm = apps::rand_perm(ctx, in.numcols, std_options.seed + 12345);
      const auto bale = bale_outmat.find({args, ctx.size()});
      std::vector<apps::sparse_matrix> outs;
      outs.push_back(apps::permute_matrix_exchange(ctx, in, rperm, cperm, 1024));
      outs.push_back(apps::permute_matrix_exchange(ctx, in, rperm, cperm, 3));  // many rounds
      outs.push_back(apps::permute_matrix_streamer(ctx, in, rperm, cperm));
      outs.push_back(apps::permute_matrix_global_array(ctx, in, rperm, cperm));
      for (std::size_t s = 0; s < outs.size(); ++s) {
        EXPECT_TRUE(apps::compare_matrix(ctx, outs[s], outs[0])) << args << " style " << s;
        const apps::matrix_checksum_t sum = apps::matrix_checksum(ctx, outs[s]);
        EXPECT_EQ(sum.nnz, in.nnz) << args;
        if (bale != bale_outmat.end()) {
          EXPECT_EQ(sum.structure, bale->second.structure) << args << " style " << s;
          EXPECT_EQ(sum.nnz, bale->second.nnz) << args;
          EXPECT_NEAR(sum.value_sum, bale->second.value_sum, 1e-4) << args;  // bale's file has 6 decimals
        }
      }
    }
  });
}

TEST(PermuteMatrix, RefusesPermutationsOfTheWrongLength) {
  run_spmd([](context& ctx) {
    const apps::sparse_matrix in = apps::make_input_graph(ctx, {}, apps::resolve_graph_options(graph(30, 3, 0, true, false, false), ctx.size()));
    const auto rperm = apps::rand_perm(ctx, in.numrows, 1);
    std::vector<std::int64_t> shorter = rperm;
    if (ctx.rank() == 0) shorter.pop_back();
    EXPECT_THROW(apps::permute_matrix_exchange(ctx, in, shorter, rperm, 16), std::invalid_argument);
    EXPECT_THROW(apps::permute_matrix_streamer(ctx, in, rperm, shorter), std::invalid_argument);
    EXPECT_THROW(apps::permute_matrix_global_array(ctx, in, shorter, shorter), std::invalid_argument);
  });
}

TEST(PermuteMatrix, ProgramPassesItsSelfCheck) {
  run_spmd([](context& ctx) {
    apps::permute_matrix_options o;
    o.graph = graph(0, 5, 0, false, false, true);
    o.graph.l_numrows = 100;
    o.std.buf_cnt = 16;
    EXPECT_EQ(apps::permute_matrix_main(ctx, o, "permute_matrix_test"), 0);
    o.graph.filename = "/nonexistent/m.mtx";
    EXPECT_EQ(apps::permute_matrix_main(ctx, o, "permute_matrix_test"), 2);
  });
}

}  // namespace
