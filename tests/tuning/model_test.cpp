// The cost model's counts are the streamer's: for every router on full and partially populated
// grids, buffer sizes from 1 up, two item sizes, and destinations drawn at random, the predicted
// messages, inter-node messages, bytes and forwarded items equal what the streamers of all PEs
// count in a done()/wait() step, exactly. Also the uniform patterns (when their shares divide
// evenly), the candidate grids, and the rank correlation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "test_support.hpp"
#include "transit/tuning/model.hpp"

namespace {

using namespace transit;

struct counts {
  std::uint64_t messages, inter_node, bytes, forwarded;
};

template <std::size_t Bytes>
struct item {
  std::byte b[Bytes];
};

/// Destination of item q of PE `source`: deterministic, so every PE can rebuild the matrix.
int destination(int source, int q, int pes, std::uint64_t seed) {
  std::mt19937_64 r(seed * 7919 + static_cast<std::uint64_t>(source) * 104729 + static_cast<std::uint64_t>(q));
  return static_cast<int>(r() % static_cast<std::uint64_t>(pes));
}

template <std::size_t Bytes>
counts measure_step(context& ctx, const virtual_grid& grid, routing route, std::size_t buffer, int per_pe,
                    std::uint64_t seed) {
  // The model counts a final message on every link: steps that end by markers (docs/tuning.md).
  ::setenv("TRANSIT_STEP_END", "markers", 1);
  streamer_options o;
  o.grid = grid;
  o.route = route;
  o.buffer_items = buffer;
  std::uint64_t delivered = 0;
  streamer<item<Bytes>> s(ctx, o, [&](const item<Bytes>&) { ++delivered; });
  for (int q = 0; q < per_pe; ++q) s.insert(item<Bytes>{}, destination(ctx.rank(), q, ctx.size(), seed));
  s.finish();
  const auto st = s.stats();
  EXPECT_EQ(ctx.allreduce(delivered, reduce_op::sum), static_cast<std::uint64_t>(per_pe) * ctx.size());
  return {ctx.allreduce(st.messages_sent, reduce_op::sum), ctx.allreduce(st.inter_node_messages, reduce_op::sum),
          ctx.allreduce(st.bytes_sent, reduce_op::sum), ctx.allreduce(st.items_forwarded, reduce_op::sum)};
}

std::vector<std::uint64_t> matrix_of(int pes, int per_pe, std::uint64_t seed) {
  std::vector<std::uint64_t> m(static_cast<std::size_t>(pes) * pes, 0);
  for (int s = 0; s < pes; ++s)
    for (int q = 0; q < per_pe; ++q) ++m[static_cast<std::size_t>(s) * pes + destination(s, q, pes, seed)];
  return m;
}

template <std::size_t Bytes>
void check_exact(context& ctx, const virtual_grid& grid, routing route, std::size_t buffer, int per_pe,
                 std::uint64_t seed) {
  const counts got = measure_step<Bytes>(ctx, grid, route, buffer, per_pe, seed);
  step_workload w;
  w.item_bytes = Bytes;
  w.pattern = destinations::matrix;
  w.matrix = matrix_of(ctx.size(), per_pe, seed);
  const step_prediction p = predict_step(ctx.machine(), grid, route, buffer, w, built_in_costs(ctx.backend()));
  const std::string where = std::string(to_string(route)) + " grid " + grid.str() + " buffer " +
                            std::to_string(buffer) + " item " + std::to_string(Bytes) + " B";
  EXPECT_TRUE(p.exact) << where;
  EXPECT_EQ(p.messages, got.messages) << where;
  EXPECT_EQ(p.inter_node_messages, got.inter_node) << where;
  EXPECT_EQ(p.bytes, got.bytes) << where;
  EXPECT_EQ(p.items_forwarded, got.forwarded) << where;
  EXPECT_GT(p.seconds, 0) << where;
}

std::vector<virtual_grid> grids_of(const context& ctx) {
  const int p = ctx.size();
  std::vector<virtual_grid> out{virtual_grid::direct(p), virtual_grid::balanced(p, 2), virtual_grid::balanced(p, 3),
                                virtual_grid::node_pe(ctx.machine())};
  out.emplace_back(std::vector<int>{2, (p + 2) / 2 + 1}, p);  // always partially populated
  return out;
}

TEST(tuning_model, counts_equal_the_streamers_on_every_grid) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  std::uint64_t seed = 3;
                  for (const auto& grid : grids_of(ctx)) {
                    for (const std::size_t buffer : {std::size_t{1}, std::size_t{3}, std::size_t{64}}) {
                      check_exact<8>(ctx, grid, routing::grid, buffer, 150, ++seed);
                      check_exact<24>(ctx, grid, routing::grid, buffer, 97, ++seed);
                    }
                  }
                },
                {"--transit-pes-per-node=3"}),
            0);
}

TEST(tuning_model, counts_equal_the_streamers_with_node_aware_routing) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  std::uint64_t seed = 101;
                  for (const routing route : {routing::node_aware, routing::node_aware_advanced}) {
                    const auto& m = ctx.machine();
                    for (const auto& grid :
                         {virtual_grid::node_pe(m),
                          virtual_grid({2, (m.num_nodes() + 1) / 2, m.max_pes_per_node()}, ctx.size())}) {
                      for (const std::size_t buffer : {std::size_t{1}, std::size_t{5}, std::size_t{128}}) {
                        try {
                          make_router(route, grid, m);
                        } catch (const std::invalid_argument&) {
                          continue;  // rows are not nodes on this PE count
                        }
                        check_exact<8>(ctx, grid, route, buffer, 120, ++seed);
                      }
                    }
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

// An all-to-all in rounds (every other PE once per round) with whole rounds: the "others" pattern
// then has whole shares and its counts are exact too.
TEST(tuning_model, uniform_shares_are_exact_when_they_divide) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              const int p = ctx.size();
              const int rounds = 37;
              const int per_pe = p == 1 ? rounds : rounds * (p - 1);
              for (const auto& grid : grids_of(ctx)) {
                for (const std::size_t buffer : {std::size_t{2}, std::size_t{10}}) {
                  streamer_options o;
                  o.grid = grid;
                  o.buffer_items = buffer;
                  streamer<std::uint64_t> s(ctx, o, [](const std::uint64_t&) {});
                  for (int r = 0; r < rounds; ++r)
                    for (int d = 0; d < p; ++d)
                      if (d != ctx.rank() || p == 1) s.insert(1, d);
                  s.finish();
                  step_workload w;
                  w.items_per_pe = per_pe;
                  w.pattern = destinations::others;
                  const auto pred = predict_step(ctx.machine(), grid, routing::grid, buffer, w, built_in_costs("local"));
                  EXPECT_EQ(pred.messages, ctx.allreduce(s.stats().messages_sent, reduce_op::sum)) << grid.str();
                  EXPECT_EQ(pred.items_forwarded, ctx.allreduce(s.stats().items_forwarded, reduce_op::sum))
                      << grid.str();
                }
              }
            }),
            0);
}

TEST(tuning_model, candidates_cover_one_to_four_dimensions_and_node_aware) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  const auto candidates = candidate_grids(ctx.machine(), ctx.topology().physical());
                  ASSERT_FALSE(candidates.empty());
                  bool direct = false, node_aware = false;
                  for (const auto& c : candidates) {
                    EXPECT_EQ(c.grid.num_pes(), ctx.size());
                    EXPECT_LE(c.grid.ndims(), 4);
                    for (const int d : c.grid.dims()) {
                      EXPECT_GE(d, ctx.size() > 1 ? 2 : 1) << c.name();
                    }
                    EXPECT_NO_THROW(make_router(c.route, c.grid, ctx.machine())) << c.name();
                    EXPECT_EQ(virtual_grid::parse(c.spec(), ctx.machine()), c.grid) << c.name();
                    direct |= c.grid.ndims() == 1;
                    node_aware |= c.route != routing::grid;
                  }
                  EXPECT_TRUE(direct);
                  if (ctx.machine().num_nodes() > 1) {
                    EXPECT_TRUE(node_aware);
                  }
                  if (ctx.size() == 16) {  // 16 = 16, 2x8, 4x4, 8x2, 2x2x4, 2x4x2, 4x2x2, 2x2x2x2
                    int full = 0, partial = 0;
                    for (const auto& c : candidates) {
                      if (c.route != routing::grid) continue;
                      (c.grid.num_slots() == 16 ? full : partial) += 1;
                    }
                    EXPECT_EQ(full, 8);
                    EXPECT_EQ(partial, 1);  // the balanced 3-D grid, 3x3x2
                  }
                },
                {"--transit-pes-per-node=4"}),
            0);
}

// PEs sharing cores: balanced work takes pes_per_core times as long; a PE with more work than the
// rest finishes its excess at full speed once they are done (fair sharing), so one heavier PE
// costs less than pes_per_core times its excess. And two calibrations of one link (same_link)
// are used as their mean.
TEST(tuning_model, shared_cores_and_one_kind_of_link) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              const int p = ctx.size();
              if (p < 4) return;
              const virtual_grid direct = virtual_grid::direct(p);
              step_workload balanced;
              balanced.items_per_pe = 100000;
              balanced.pattern = destinations::others;
              machine_costs alone = built_in_costs("local", 1), shared = built_in_costs("local", 4);
              const auto one = predict_step(ctx.machine(), direct, routing::grid, 64, balanced, alone);
              const auto four = predict_step(ctx.machine(), direct, routing::grid, 64, balanced, shared);
              EXPECT_NEAR(four.seconds - four.flush_seconds, 4 * (one.seconds - one.flush_seconds), 1e-12);

              // Every PE sends to PE 0 only: PE 0 receives p - 1 times what each other PE sends.
              step_workload hot;
              hot.pattern = destinations::matrix;
              hot.matrix.assign(static_cast<std::size_t>(p) * p, 0);
              for (int s = 1; s < p; ++s) hot.matrix[static_cast<std::size_t>(s) * p] = 1000;
              const auto hot_one = predict_step(ctx.machine(), direct, routing::grid, 64, hot, alone);
              const auto hot_four = predict_step(ctx.machine(), direct, routing::grid, 64, hot, shared);
              const double busiest = hot_one.seconds - hot_one.flush_seconds;  // PE 0's work, alone on its core
              const double run = hot_four.seconds - hot_four.flush_seconds;
              EXPECT_GT(run, busiest);
              EXPECT_LT(run, 4 * busiest);

              machine_costs apart = alone, mean = alone;
              apart.inter = {2 * alone.intra.alpha, 3 * alone.intra.beta, 2 * alone.intra.per_item};
              apart.same_link = true;
              mean.intra = mean.inter = {1.5 * alone.intra.alpha, 2 * alone.intra.beta, 1.5 * alone.intra.per_item};
              const auto a = predict_step(ctx.machine(), direct, routing::grid, 64, balanced, apart);
              const auto b = predict_step(ctx.machine(), direct, routing::grid, 64, balanced, mean);
              EXPECT_DOUBLE_EQ(a.seconds, b.seconds);
            }),
            0);
}

// The links enter the model only on a machine the job named: without --transit-physical there
// is no network to route over; with it, a step between nodes has a link term and no flush term.
TEST(tuning_model, links_only_on_a_named_machine) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) { EXPECT_EQ(named_network(ctx), nullptr); }), 0);
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  const topology_manager* network = named_network(ctx);
                  ASSERT_NE(network, nullptr);
                  EXPECT_EQ(network->num_pes(), ctx.size());
                  step_workload w;
                  w.items_per_pe = 1000;
                  w.pattern = destinations::others;
                  const auto p = predict_step(ctx.machine(), virtual_grid({ctx.size()}, ctx.size()), routing::grid,
                                              64, w, built_in_costs(ctx.backend()), network);
                  EXPECT_EQ(p.flush_seconds, 0.0);
                  if (ctx.size() > 1) {
                    EXPECT_GT(p.link_seconds, 0.0);
                  }
                },
                {"--transit-physical=switch:16:1", "--transit-pes-per-node=1"}),
            0);
}

TEST(tuning_model, rank_correlation) {
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(rank_correlation({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  EXPECT_NEAR(rank_correlation({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}), 0.8, 1e-12);
  EXPECT_TRUE(std::isnan(rank_correlation({1}, {1})));
  EXPECT_TRUE(std::isnan(rank_correlation({1, 1, 1}, {1, 2, 3})));
}

}  // namespace
