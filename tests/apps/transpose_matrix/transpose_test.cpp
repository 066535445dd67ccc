// transpose_matrix's three styles (streamer, sparse_exchange, global_array) against the local
// reference transpose, on each kind of input: undirected, directed weighted with loops, a
// Kronecker graph, a rectangular matrix; exchange rounds of a few items (many rounds) included.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "spmat/generators.hpp"
#include "spmat/spmat.hpp"
#include "test_support.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

namespace {

using namespace transit;
using namespace transit::apps;
using transit::testing::run_spmd;

/// Collective: a rectangular matrix (rows x cols), row r holding columns (r * k) mod cols for k
/// in 1..(r mod 5), weighted r + k / 10.
sparse_matrix rectangular(context& ctx, std::int64_t rows, std::int64_t cols) {
  std::vector<matrix_entry> mine;
  for (std::int64_t r = ctx.rank(); r < rows; r += ctx.size())
    for (std::int64_t k = 1; k <= r % 5; ++k) mine.push_back({r, (r * k + k) % cols, static_cast<double>(r) + static_cast<double>(k) / 10});
  sparse_matrix m = matrix_from_entries(rows, cols, ctx.rank(), ctx.size(), true, mine);
  sort_nonzeros(m);
  finish_matrix(ctx, m);
  return m;
}

void expect_every_style_transposes(context& ctx, const sparse_matrix& a, const std::string& what) {
  const sparse_matrix reference = distribute_local(transpose_local(gather_matrix(ctx, a)), ctx.rank(), ctx.size());
  for (int style = 0; style < 4; ++style) {
    sparse_matrix at;
    const double seconds = style == 0   ? transpose_streamer(ctx, a, at)
                           : style == 1 ? transpose_exchange(ctx, a, at, 1024)
                           : style == 2 ? transpose_exchange(ctx, a, at, 3)
                                        : transpose_global_array(ctx, a, at);
    EXPECT_GE(seconds, 0.0);
    EXPECT_EQ(at.numrows, a.numcols) << what << " style " << style;
    EXPECT_EQ(at.numcols, a.numrows) << what << " style " << style;
    EXPECT_EQ(at.nnz, a.nnz) << what << " style " << style;
    sort_nonzeros(at);
    EXPECT_TRUE(compare_matrix(ctx, at, reference)) << what << " style " << style;
  }
}

TEST(TransposeMatrix, EveryStyleIsTheReferenceTranspose) {
  run_spmd([](context& ctx) {
    const std::int64_t seed = 5 + ctx.rank();
    expect_every_style_transposes(
        ctx, erdos_renyi_random_graph(ctx, 300, 0.03, edge_type::undirected, self_loops::no_loops, seed), "undirected");
    expect_every_style_transposes(
        ctx, erdos_renyi_random_graph(ctx, 200, 0.05, edge_type::directed_weighted, self_loops::loops, seed),
        "directed weighted loops");
    expect_every_style_transposes(ctx, generate_kronecker_graph_from_spec(ctx, parse_kronecker_spec("2:3x4x2x3")),
                                  "kronecker");
    expect_every_style_transposes(ctx, rectangular(ctx, 37, 11), "37 x 11");
    expect_every_style_transposes(ctx, rectangular(ctx, 5, 23), "5 x 23");
  });
}

}  // namespace
