// toposort's three styles (streamer, sparse_exchange, global_array): each finds permutations that
// make the matrix upper triangular with unit diagonal (bale's check), the streamer and exchange
// styles the same ones (levels and places do not depend on message order), every style the same
// number of levels (bale's own numbers are checked end to end, CMakeLists.txt); a matrix that is
// no permutation of a triangular one is refused on every PE.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "spmat/generators.hpp"
#include "test_support.hpp"
#include "toposort/toposort.hpp"

namespace {

using namespace transit;
using transit::apps::sparse_matrix;
using transit::testing::run_spmd;

sparse_matrix transpose(context& ctx, const sparse_matrix& mat) {
  return apps::distribute_local(apps::transpose_local(apps::gather_matrix(ctx, mat)), ctx.rank(), ctx.size());
}

/// Runs every style on `mat`; checks each answer and that they agree; returns the number of
/// levels.
std::int64_t every_style(context& ctx, const sparse_matrix& mat) {
  const sparse_matrix tmat = transpose(ctx, mat);
  const auto n = static_cast<std::size_t>(mat.lnumrows);
  std::vector<std::int64_t> rperm(n), cperm(n), rperm0, cperm0;
  std::int64_t levels = -1;
  for (int style = 0; style < 4; ++style) {
    apps::toposort_result r;
    if (style == 0) r = apps::toposort_streamer(ctx, mat, tmat, rperm, cperm);
    if (style == 1) r = apps::toposort_exchange(ctx, mat, tmat, rperm, cperm, 1024);
    if (style == 2) r = apps::toposort_exchange(ctx, mat, tmat, rperm, cperm, 3);  // many rounds
    if (style == 3) r = apps::toposort_global_array(ctx, mat, tmat, rperm, cperm);
    EXPECT_TRUE(apps::toposort_check(ctx, mat, rperm, cperm)) << "style " << style;
    if (style == 0) {
      levels = r.num_levels;
      rperm0 = rperm;
      cperm0 = cperm;
    } else if (style < 3) {  // the AGP style places rows in the order PEs claim pivots
      EXPECT_EQ(rperm, rperm0) << "style " << style;
      EXPECT_EQ(cperm, cperm0) << "style " << style;
    }
    EXPECT_EQ(r.num_levels, levels) << "style " << style;
    EXPECT_GE(r.seconds, 0.0);
  }
  return levels;
}

TEST(Toposort, EveryStyleSortsALowerTriangularGraph) {
  // A lower triangular matrix with unit diagonal is a permutation (both orders reversed) of an
  // upper triangular one.
  run_spmd([](context& ctx) {
    const sparse_matrix lower = apps::erdos_renyi_random_graph(ctx, 300, 0.05, apps::edge_type::undirected,
                                                               apps::self_loops::loops, 11 + ctx.rank());
    EXPECT_GT(every_style(ctx, lower), 1);
  });
}

TEST(Toposort, CheckRefusesWrongPermutations) {
  run_spmd([](context& ctx) {
    const sparse_matrix lower = apps::erdos_renyi_random_graph(ctx, 50, 0.2, apps::edge_type::undirected,
                                                               apps::self_loops::loops, 5 + ctx.rank());
    const auto n = static_cast<std::size_t>(lower.lnumrows);
    std::vector<std::int64_t> identity(n), reversed(n), twice(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      identity[i] = lower.global_row(static_cast<std::int64_t>(i));
      reversed[i] = 49 - identity[i];
    }
    EXPECT_TRUE(apps::toposort_check(ctx, lower, reversed, reversed));
    EXPECT_FALSE(apps::toposort_check(ctx, lower, identity, identity));  // lower, not upper
    EXPECT_FALSE(apps::toposort_check(ctx, lower, reversed, twice));     // not a permutation
  });
}

TEST(Toposort, KernelsRefuseAMatrixWithoutASingleNonzeroRow) {
  // Row r holds columns r and r + 1 (mod n): a cycle, no row to start from.
  run_spmd([](context& ctx) {
    const std::int64_t n = 12;
    std::vector<apps::matrix_entry> entries;
    for (std::int64_t r = ctx.rank(); r < n; r += ctx.size()) {
      entries.push_back({r, r, 0});
      entries.push_back({r, (r + 1) % n, 0});
    }
    sparse_matrix mat = apps::matrix_from_entries(n, n, ctx.rank(), ctx.size(), false, entries);
    apps::finish_matrix(ctx, mat);
    const sparse_matrix tmat = transpose(ctx, mat);
    std::vector<std::int64_t> rperm(static_cast<std::size_t>(mat.lnumrows)), cperm(rperm.size()), wrong(rperm.size() + 1);
    EXPECT_THROW(apps::toposort_streamer(ctx, mat, tmat, rperm, cperm), std::invalid_argument);
    EXPECT_THROW(apps::toposort_exchange(ctx, mat, tmat, rperm, cperm, 4), std::invalid_argument);
    EXPECT_THROW(apps::toposort_global_array(ctx, mat, tmat, rperm, cperm), std::invalid_argument);
    EXPECT_THROW(apps::toposort_streamer(ctx, mat, tmat, wrong, cperm), std::invalid_argument);
    EXPECT_THROW(apps::toposort_exchange(ctx, mat, tmat, rperm, cperm, 0), std::invalid_argument);
  });
}

}  // namespace
