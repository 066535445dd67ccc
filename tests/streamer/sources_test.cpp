// The source PE handed to deliver callbacks that take it, `(const T& item, int source)`: right for
// every item on every router and grid (direct, 2-D to 4-D, partially populated, node-aware), for
// broadcasts (the root), for items inserted by an application's threads, for items inserted by
// callbacks (a reply to the source, as bale's index gather does), for runs of items
// (batch_deliver) and for object_streamer; and a callback without the source carries none.
#include <atomic>
#include <thread>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::testing::grid_router_cases;
using transit::testing::node_aware_cases;
using transit::testing::probe;
using transit::testing::probe_destination;
using transit::testing::sweep;

TEST(streamer_sources, grid_router_every_grid) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) { sweep(routing::grid, grid_router_cases(), ctx, true); },
                                       {"--transit-pes-per-node=3"}),
            0);
}

TEST(streamer_sources, node_aware) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) { sweep(routing::node_aware, node_aware_cases(), ctx, true); },
                                       {"--transit-pes-per-node=2"}),
            0);
}

TEST(streamer_sources, node_aware_advanced) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) { sweep(routing::node_aware_advanced, node_aware_cases(), ctx, true); },
                {"--transit-pes-per-node=4"}),
            0);
}

// The grids whose routes have more than one hop (where sources must travel with the items).
std::vector<std::optional<virtual_grid>> routed_grids(const context& ctx) {
  return {virtual_grid::direct(ctx.size()), virtual_grid::balanced(ctx.size(), 2),
          virtual_grid::balanced(ctx.size(), 3)};
}

TEST(streamer_sources, a_broadcast_comes_from_its_root) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  for (const auto& grid : routed_grids(ctx)) {
                    for (const std::size_t buffer : {std::size_t{1}, std::size_t{1024}}) {
                      streamer_options o;
                      o.grid = grid;
                      o.buffer_items = buffer;
                      std::vector<int> seen(static_cast<std::size_t>(ctx.size()), 0);
                      int wrong = 0;
                      streamer<int> s(ctx, o, [&](const int& root, int source) {
                        wrong += root != source;
                        ++seen[static_cast<std::size_t>(root)];
                      });
                      s.broadcast(ctx.rank());
                      s.insert(ctx.rank(), (ctx.rank() + 1) % ctx.size());  // and a unicast beside it
                      s.finish();
                      EXPECT_EQ(wrong, 0) << grid->str() << " buffer " << buffer;
                      for (int r = 0; r < ctx.size(); ++r) {
                        const int expected = 1 + (r == (ctx.rank() + ctx.size() - 1) % ctx.size() ? 1 : 0);
                        EXPECT_EQ(seen[static_cast<std::size_t>(r)], expected) << "from PE " << r;
                      }
                    }
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

// Index gather: a request carries no PE, the reply goes back to its source, and a callback that
// inserts needs quiesce(). Every PE asks every other for (rank, i) and checks every answer.
TEST(streamer_sources, replies_go_back_to_the_source) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              struct request {
                std::int64_t index;
              };
              struct reply {
                std::int64_t index;
                std::int64_t value;
              };
              constexpr std::int64_t per_pe = 400;
              for (const auto& grid : routed_grids(ctx)) {
                streamer_options o;
                o.grid = grid;
                o.buffer_items = 16;
                std::vector<std::int64_t> answers(per_pe, -1);
                std::int64_t wrong = 0;
                streamer<reply> replies(ctx, o, [&](const reply& r, int source) {
                  wrong += r.value != r.index * 1000 + source;
                  answers[static_cast<std::size_t>(r.index)] = r.value;
                });
                streamer<request> requests(ctx, o, [&](const request& q, int source) {
                  replies.insert(reply{q.index, q.index * 1000 + ctx.rank()}, source);
                });
                for (std::int64_t i = 0; i < per_pe; ++i) {
                  requests.insert(request{i}, static_cast<int>((ctx.rank() + i) % ctx.size()));
                }
                requests.finish();
                replies.finish();
                EXPECT_EQ(wrong, 0) << grid->str();
                for (std::int64_t i = 0; i < per_pe; ++i)
                  ASSERT_EQ(answers[static_cast<std::size_t>(i)], i * 1000 + (ctx.rank() + i) % ctx.size())
                      << grid->str() << " index " << i;
              }
            }),
            0);
}

TEST(streamer_sources, items_inserted_by_threads_come_from_their_pe) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              constexpr int threads = 3;
              constexpr std::int64_t per_thread = 200;
              for (const auto& grid : routed_grids(ctx)) {
                streamer_options o;
                o.grid = grid;
                o.buffer_items = 8;
                std::int64_t wrong = 0, delivered = 0;
                streamer<probe> s(ctx, o, [&](const probe& p, int source) {
                  wrong += p.source != source;
                  ++delivered;
                });
                std::vector<std::thread> pool;
                for (int t = 0; t < threads; ++t) {
                  pool.emplace_back([&, t] {
                    auto in = s.make_inserter();
                    for (std::int64_t q = 0; q < per_thread; ++q) {
                      const int dest = probe_destination(5 + static_cast<std::uint64_t>(t), ctx.rank(), q, ctx.size());
                      in.insert(probe{ctx.rank(), dest, q}, dest);
                    }
                  });
                }
                for (auto& th : pool) th.join();
                s.finish();
                EXPECT_EQ(wrong, 0) << grid->str();
                EXPECT_EQ(ctx.allreduce(delivered, reduce_op::sum), threads * per_thread * ctx.size()) << grid->str();
              }
            }),
            0);
}

TEST(streamer_sources, batch_deliver_gets_the_sources_of_a_run) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              for (const auto& grid : routed_grids(ctx)) {
                streamer_options o;
                o.grid = grid;
                o.buffer_items = 32;
                std::int64_t wrong = 0, delivered = 0;
                streamer<probe> s(ctx, o,
                                  detail::batch_deliver{[&](const probe* items, const std::int32_t* sources, int source,
                                                            std::uint32_t& cursor, std::uint32_t n) {
                                    for (; cursor < n; ++cursor) {
                                      const int from = sources != nullptr ? sources[cursor] : source;
                                      wrong += items[cursor].source != from;
                                      ++delivered;
                                    }
                                  }});
                constexpr std::int64_t per_pe = 300;
                for (std::int64_t q = 0; q < per_pe; ++q) {
                  const int dest = probe_destination(3, ctx.rank(), q, ctx.size());
                  s.insert(probe{ctx.rank(), dest, q}, dest);
                }
                s.finish();
                EXPECT_EQ(wrong, 0) << grid->str();
                EXPECT_EQ(ctx.allreduce(delivered, reduce_op::sum), per_pe * ctx.size()) << grid->str();
              }
            }),
            0);
}

TEST(streamer_sources, object_streamer_names_the_inserting_pe) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              const std::int64_t objects = 20 * ctx.size();
              auto home = [&](const std::int64_t& object) { return static_cast<int>((object * 7) % ctx.size()); };
              std::vector<std::int64_t> from_sum(static_cast<std::size_t>(objects), 0);
              streamer_options o;
              o.grid = virtual_grid::balanced(ctx.size(), 2);
              object_streamer<double> s(ctx, o, home, [&](const std::int64_t& object, const double&, int source) {
                from_sum[static_cast<std::size_t>(object)] += source + 1;
              });
              for (std::int64_t obj = 0; obj < objects; ++obj) s.insert(1.0, obj);
              s.finish();
              const std::int64_t all = std::int64_t{ctx.size()} * (ctx.size() + 1) / 2;  // every PE once
              for (std::int64_t obj = 0; obj < objects; ++obj)
                ASSERT_EQ(from_sum[static_cast<std::size_t>(obj)], home(obj) == ctx.rank() ? all : 0) << obj;
            }),
            0);
}

// Without the source in the callback, nothing travels for it: the bytes sent are those of the
// items and destinations alone. With it, a routed grid sends more (the sources) and a direct one
// exactly the same.
TEST(streamer_sources, only_a_callback_that_asks_pays_for_sources) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              for (const auto& grid : routed_grids(ctx)) {
                std::uint64_t bytes[2] = {0, 0};
                int phases = 0;
                for (const bool with : {false, true}) {
                  streamer_options o;
                  o.grid = grid;
                  o.buffer_items = 64;
                  std::optional<streamer<probe>> s;
                  if (with) {
                    s.emplace(ctx, o, [](const probe&, int) {});
                  } else {
                    s.emplace(ctx, o, [](const probe&) {});
                  }
                  for (std::int64_t q = 0; q < 500; ++q) {
                    const int dest = probe_destination(11, ctx.rank(), q, ctx.size());
                    s->insert(probe{ctx.rank(), dest, q}, dest);
                  }
                  s->finish();
                  bytes[with ? 1 : 0] = ctx.allreduce(s->stats().bytes_sent, reduce_op::sum);
                  phases = s->route_plan().num_phases();
                }
                // From 4 PEs on, these grids have two dimensions of size 2 or more: some items
                // take two hops.
                if (phases > 1 && ctx.size() >= 4) {
                  EXPECT_GT(bytes[1], bytes[0]) << grid->str();
                } else if (phases == 1) {
                  EXPECT_EQ(bytes[1], bytes[0]) << grid->str();
                }
              }
            }),
            0);
}

TEST(streamer_sources, every_pe_must_ask_for_sources_alike) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              if (ctx.size() < 2) GTEST_SKIP() << "needs two PEs to disagree";
              try {
                std::optional<streamer<int>> s;
                if (ctx.rank() == 0) {
                  s.emplace(ctx, streamer_options{}, [](const int&, int) {});
                } else {
                  s.emplace(ctx, streamer_options{}, [](const int&) {});
                }
                ADD_FAILURE() << "constructed a streamer that delivers sources on PE 0 only";
              } catch (const std::logic_error& e) {
                EXPECT_NE(std::string(e.what()).find("delivering sources"), std::string::npos) << e.what();
              }
            }),
            0);
}

}  // namespace
