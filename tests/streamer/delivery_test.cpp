// Exactly-once delivery, checked by content, for every router on full and partially populated
// grids from 1-D to 4-D, buffer sizes 1, 7 and 1024, with and without max_buffered_items, over
// several seeds; broadcast and object delivery likewise.
#include <algorithm>
#include <atomic>
#include <cmath>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::testing::delivery_log;
using transit::testing::grid_router_cases;
using transit::testing::node_aware_cases;
using transit::testing::probe;
using transit::testing::probe_destination;
using transit::testing::sweep;

TEST(streamer_delivery, grid_router_every_grid) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) { sweep(routing::grid, grid_router_cases(), ctx); },
                                       {"--transit-pes-per-node=3"}),
            0);
}

TEST(streamer_delivery, node_aware) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) { sweep(routing::node_aware, node_aware_cases(), ctx); },
                                       {"--transit-pes-per-node=2"}),
            0);
}

TEST(streamer_delivery, node_aware_uneven_nodes) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) { sweep(routing::node_aware, node_aware_cases(), ctx); },
                                       {"--transit-pes-per-node=3"}),
            0);
}

TEST(streamer_delivery, node_aware_advanced) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) { sweep(routing::node_aware_advanced, node_aware_cases(), ctx); },
                {"--transit-pes-per-node=4"}),
            0);
}

TEST(streamer_delivery, broadcast_reaches_every_pe_once) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  for (const routing route : {routing::grid, routing::node_aware, routing::node_aware_advanced}) {
                    for (const std::size_t buffer : {std::size_t{1}, std::size_t{5}, std::size_t{1024}}) {
                      constexpr int per_root = 3;
                      std::vector<int> seen(static_cast<std::size_t>(ctx.size()) * per_root, 0);
                      streamer_options o;
                      o.route = route;
                      o.buffer_items = buffer;
                      if (route == routing::grid)
                        o.grid = virtual_grid::balanced(ctx.size(), 3);
                      streamer<probe> s(ctx, o, [&](const probe& p) {
                        ++seen[static_cast<std::size_t>(p.source) * per_root + p.sequence];
                      });
                      for (int q = 0; q < per_root; ++q) s.broadcast(probe{ctx.rank(), -1, q});
                      s.finish();
                      for (std::size_t i = 0; i < seen.size(); ++i)
                        ASSERT_EQ(seen[i], 1) << to_string(route) << " buffer " << buffer << ": broadcast "
                                              << i % per_root << " of PE " << i / per_root << " on PE "
                                              << ctx.rank();
                      // Routed through the tree: a root sends to its children only, not to every PE.
                      if (ctx.size() > 4 && route == routing::grid && buffer == 1024) {
                        EXPECT_LT(s.stats().messages_sent, static_cast<std::uint64_t>(ctx.size()) * 2);
                      }
                    }
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

TEST(object_streamer, delivers_to_the_home_of_each_object) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              constexpr std::int64_t objects_per_pe = 50;
              const std::int64_t objects = objects_per_pe * ctx.size();
              auto home = [&](const std::int64_t& object) { return static_cast<int>((object * 7) % ctx.size()); };
              std::vector<std::int64_t> received(objects, 0);
              std::atomic<int> wrong_home{0};
              object_streamer<double> s(ctx, {}, home, [&](const std::int64_t& object, const double& value) {
                if (home(object) != ctx.rank()) wrong_home.fetch_add(1);
                received[object] += static_cast<std::int64_t>(value);
              });
              // Every PE sends object o the value o + 1, once per PE.
              for (std::int64_t o = 0; o < objects; ++o) s.insert(static_cast<double>(o + 1), o);
              s.finish();
              EXPECT_EQ(wrong_home.load(), 0);
              for (std::int64_t o = 0; o < objects; ++o) {
                const std::int64_t expected = home(o) == ctx.rank() ? (o + 1) * ctx.size() : 0;
                ASSERT_EQ(received[o], expected) << "object " << o;
              }
            }),
            0);
}

}  // namespace

namespace {

// Counted exactly: one item per destination with one-item buffers on the direct grid is one
// message per link, plus one bare final marker per link (marker_messages); the links to other nodes are those to the
// PEs not on this PE's node.
TEST(streamer_delivery, messages_to_other_nodes_are_counted_exactly) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  streamer_options o;
                  o.grid = virtual_grid::direct(ctx.size());
                  o.buffer_items = 1;
                  streamer<int> s(ctx, o, [](const int&) {});
                  for (int d = 0; d < ctx.size(); ++d) s.insert(d, d);
                  s.finish();
                  const auto& m = ctx.machine();
                  const std::uint64_t others = static_cast<std::uint64_t>(ctx.size() - m.pes_on_node(m.node_of(ctx.rank())));
                  EXPECT_EQ(s.stats().inter_node_messages, 2 * others);
                  EXPECT_EQ(s.stats().messages_sent, 2 * static_cast<std::uint64_t>(ctx.size() - 1));
                  // Half of them carry no item: the final markers, counted apart (the no-aggregation
                  // baseline's cost without them, docs/simulation.md).
                  EXPECT_EQ(s.stats().marker_messages, static_cast<std::uint64_t>(ctx.size() - 1));
                },
                {"--transit-pes-per-node=2"}),
            0);
}

}  // namespace
