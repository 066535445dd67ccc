// Exactly-once delivery, checked by content, for every router on full and partially populated
// grids from 1-D to 4-D, buffer sizes 1, 7 and 1024, with and without max_buffered_items, over
// several seeds; broadcast and object delivery likewise.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <thread>

#include "streamer_checks.hpp"
#include "streamer_internals.hpp"

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
// message per link. Steps ending by final markers add one bare marker per link (marker_messages);
// steps ending by acknowledgement add none, and acknowledge each link's message once
// (acknowledgement_messages, not counted as messages sent), or, where the transport confirms
// delivery (the mpi transport with a PE per rank), leave that to the transport: the direct grid's
// one phase ends every route (confirmed_messages, of messages_sent). The links to other nodes are
// those to the PEs not on this PE's node.
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
                  const auto links = static_cast<std::uint64_t>(ctx.size() - 1);
                  const bool acknowledged = transit::detail::streamer_test_access::last_step_acknowledged(s);
                  const std::uint64_t per_link = acknowledged ? 1 : 2;
                  EXPECT_EQ(s.stats().inter_node_messages, per_link * others);
                  EXPECT_EQ(s.stats().messages_sent, per_link * links);
                  // The final markers carry no item: counted apart (the no-aggregation baseline's
                  // cost without them, docs/simulation.md).
                  EXPECT_EQ(s.stats().marker_messages, acknowledged ? 0 : links);
                  const bool confirms = transit::detail::streamer_test_access::transport_confirms(ctx);
                  EXPECT_EQ(s.stats().acknowledgement_messages, acknowledged && !confirms ? links : 0);
                  EXPECT_EQ(s.stats().confirmed_messages, acknowledged && confirms ? links : 0);
                },
                {"--transit-pes-per-node=2"}),
            0);
}

// Steps ending by acknowledgement: a PE that joined the closing barrier with nothing to do (it
// inserted nothing) is made busy again by items it must forward, from a PE that inserts late;
// finish() still returns on no PE before every item has reached it. Each step a different PE is
// late, on a 3-D grid, so items reach their destination through two PEs already in the barrier.
TEST(streamer_delivery, finish_waits_for_items_forwarded_by_pes_already_in_the_barrier) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              streamer_options o;
              o.grid = virtual_grid::balanced(ctx.size(), 3);
              std::int64_t delivered = 0;
              streamer<int> s(ctx, o, [&](const int&) { ++delivered; });
              constexpr int per_dest = 3;
              for (int step = 0; step < std::min(ctx.size(), 4); ++step) {
                delivered = 0;
                const int late = step % ctx.size();
                if (ctx.rank() == late) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the others are in finish()
                  for (int d = 0; d < ctx.size(); ++d) {
                    for (int k = 0; k < per_dest; ++k) s.insert(k, d);
                  }
                }
                s.finish();
                EXPECT_EQ(delivered, per_dest) << "step " << step << ": finish() returned before every item arrived";
              }
            }),
            0);
}

// Steps ending by acknowledgement where the transport confirms (MPI, a PE per rank): a link's last
// flush of a few items sends them around the grid, straight to their destinations, sources
// included; fuller buffers follow the grid in the same step. Each PE inserts one item for the PE
// half the job away, which goes around the grid exactly when its first hop would have forwarded
// it; in the last step one PE also inserts 40 for every PE. Steps ending by markers, and the
// local backend, send nothing around the grid.
TEST(streamer_delivery, a_near_empty_last_flush_goes_straight_to_the_destinations) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              using access = transit::detail::streamer_test_access;
              streamer_options o;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              std::int64_t delivered = 0, wrong = 0, plain_delivered = 0;
              streamer<probe> s(ctx, o, [&](const probe& p, int source) {
                wrong += source != p.source || p.dest != ctx.rank();
                ++delivered;
              });
              streamer<probe> plain(ctx, o, [&](const probe& p) {
                wrong += p.dest != ctx.rank();
                ++plain_delivered;
              });
              const int size = ctx.size();
              const int far = (ctx.rank() + size / 2) % size;
              const router& r = plain.route_plan();
              const bool forwarded = far != ctx.rank() && !r.ends_route(r.next_hop(ctx.rank(), far, -1).phase);
              constexpr int busy = 0, per_pe = 40;
              std::uint64_t around_in_job = 0;
              for (int step = 0; step < 3; ++step) {
                delivered = plain_delivered = 0;
                const streamer_stats before = plain.stats();
                s.insert(probe{ctx.rank(), far, step}, far);
                plain.insert(probe{ctx.rank(), far, step}, far);
                if (step == 2 && ctx.rank() == busy) {
                  for (int d = 0; d < size; ++d) {
                    for (int k = 0; k < per_pe; ++k) s.insert(probe{ctx.rank(), d, k}, d);
                  }
                }
                s.finish();
                plain.finish();
                EXPECT_EQ(delivered, 1 + (step == 2 ? per_pe : 0)) << "step " << step;
                EXPECT_EQ(plain_delivered, 1) << "step " << step;
                const std::uint64_t around = plain.stats().direct_messages - before.direct_messages;
                if (access::last_step_acknowledged(plain) && access::transport_confirms(ctx)) {
                  EXPECT_EQ(around, forwarded ? 1u : 0u) << "step " << step;
                  EXPECT_EQ(plain.stats().items_forwarded, before.items_forwarded) << "step " << step;
                } else {
                  EXPECT_EQ(around, 0u) << "step " << step;
                }
                around_in_job += ctx.allreduce(around, reduce_op::sum);
              }
              EXPECT_EQ(wrong, 0);
              if (!access::transport_confirms(ctx)) {
                EXPECT_EQ(s.stats().direct_messages, 0u);
              }
              if (ctx.rank() == 0)
                std::cout << "[ note ] " << o.grid->str() << ": " << around_in_job << " messages around the grid\n";
            }),
            0);
}

// Chosen step by step (TRANSIT_STEP_END=adaptive; automatic does so where it pays, below): the
// first step ends by acknowledgement, and each later step by acknowledgement after a step where
// under half the links carried items, by final markers after one where more did.
TEST(streamer_delivery, each_step_ends_the_way_the_step_before_chose) {
  const char* forced = std::getenv("TRANSIT_STEP_END");
  if (forced == nullptr || std::string_view(forced) != "adaptive") GTEST_SKIP() << "run with TRANSIT_STEP_END=adaptive";
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() < 3) return;  // one PE's single link is half of all links: never "sparse"
              streamer_options o;
              o.grid = virtual_grid::direct(ctx.size());
              std::int64_t delivered = 0;
              streamer<int> s(ctx, o, [&](const int&) { ++delivered; });
              const auto sparse = [&] {
                if (ctx.rank() == 0) s.insert(1, ctx.size() - 1);
                s.finish();
              };
              const auto dense = [&] {
                for (int d = 0; d < ctx.size(); ++d) s.insert(1, d);
                s.finish();
              };
              using access = transit::detail::streamer_test_access;
              sparse();
              EXPECT_TRUE(access::last_step_acknowledged(s)) << "the first step";
              dense();
              EXPECT_TRUE(access::last_step_acknowledged(s)) << "a dense step after a sparse one";
              sparse();
              EXPECT_FALSE(access::last_step_acknowledged(s)) << "a sparse step after a dense one";
              sparse();
              EXPECT_TRUE(access::last_step_acknowledged(s)) << "a sparse step after a sparse one";
              // Three sparse steps of one item for the last PE, one dense step of one for each PE.
              EXPECT_EQ(delivered, ctx.size() + (ctx.rank() == ctx.size() - 1 ? 3 : 0));
            }),
            0);
}

// Automatic (TRANSIT_STEP_END unset) chooses step by step only where a round trip per hop buys
// more than a marker per link, and no PE shares its core. Else markers. With acknowledgements of
// transit's on every hop: more than 3 links per hop. Where the transport confirms delivery (the
// last hop, and near-empty flushes sent around the grid): more than 1 link in all.
TEST(streamer_delivery, automatic_chooses_step_by_step_on_many_links_per_hop_with_a_core_per_pe) {
  using access = transit::detail::streamer_test_access;
  EXPECT_FALSE(access::chooses_step_by_step("automatic", 1, 1, false, false)) << "2 PEs, direct";
  EXPECT_FALSE(access::chooses_step_by_step("automatic", 3, 1, false, false)) << "4 PEs, direct";
  EXPECT_TRUE(access::chooses_step_by_step("automatic", 4, 1, false, false)) << "5 PEs, direct";
  EXPECT_FALSE(access::chooses_step_by_step("automatic", 6, 2, false, false)) << "4x4";
  EXPECT_TRUE(access::chooses_step_by_step("automatic", 7, 2, false, false)) << "4x5";
  EXPECT_TRUE(access::chooses_step_by_step("automatic", 30, 2, false, false)) << "16x16";
  EXPECT_FALSE(access::chooses_step_by_step("automatic", 8, 8, false, false)) << "the hypercube of 256";
  EXPECT_FALSE(access::chooses_step_by_step("automatic", 30, 2, true, false)) << "16x16, cores shared";
  EXPECT_TRUE(access::chooses_step_by_step("adaptive", 1, 1, true, false)) << "forced";
  // Confirmed by the transport.
  EXPECT_FALSE(access::chooses_step_by_step("automatic", 1, 1, false, true)) << "2 PEs, direct, confirmed";
  EXPECT_TRUE(access::chooses_step_by_step("automatic", 3, 1, false, true)) << "4 PEs, direct, confirmed";
  EXPECT_TRUE(access::chooses_step_by_step("automatic", 4, 2, false, true)) << "4x2, confirmed";
  EXPECT_TRUE(access::chooses_step_by_step("automatic", 3, 3, false, true)) << "2x2x2, confirmed";
  EXPECT_TRUE(access::chooses_step_by_step("automatic", 8, 8, false, true)) << "the hypercube of 256, confirmed";
  EXPECT_FALSE(access::chooses_step_by_step("automatic", 30, 2, true, true)) << "16x16, cores shared, confirmed";
  EXPECT_FALSE(access::chooses_step_by_step("markers", 30, 2, false, true)) << "forced markers, confirmed";
  EXPECT_FALSE(access::chooses_step_by_step("automatic", 3, 1, true, true)) << "4 PEs, direct, cores shared";
}

}  // namespace
