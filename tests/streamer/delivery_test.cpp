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
using transit::testing::probe;
using transit::testing::probe_destination;

struct grid_case {
  std::string name;
  std::function<std::optional<virtual_grid>(const context&)> make;
};

// Grids for the grid router: whatever the PE count, these are full or partially populated.
std::vector<grid_case> grid_router_cases() {
  return {
      {"default", [](const context&) { return std::nullopt; }},
      {"direct", [](const context& c) { return virtual_grid::direct(c.size()); }},
      {"2d", [](const context& c) { return virtual_grid::balanced(c.size(), 2); }},
      {"3d", [](const context& c) { return virtual_grid::balanced(c.size(), 3); }},
      {"4d", [](const context& c) { return virtual_grid::balanced(c.size(), 4); }},
      {"skewed-partial",
       [](const context& c) {
         return virtual_grid({2, (c.size() + 2) / 2 + 1}, c.size());  // always has empty slots
       }},
      {"node-pe", [](const context& c) { return virtual_grid::node_pe(c.machine()); }},
  };
}

// Node-aware grids: rows are nodes (the machine is emulated with --transit-pes-per-node).
std::vector<grid_case> node_aware_cases() {
  return {
      {"node-pe", [](const context& c) { return virtual_grid::node_pe(c.machine()); }},
      {"3d-nodes",
       [](const context& c) {
         const auto& m = c.machine();
         const int nodes = m.num_nodes();
         const int a = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(nodes))));
         return virtual_grid({a, (nodes + a - 1) / a, m.max_pes_per_node()}, c.size());
       }},
  };
}

void run_case(context& ctx, const streamer_options& options, std::uint64_t seed, std::int64_t per_pe,
              const std::string& where) {
  delivery_log log(ctx.rank(), ctx.size(), per_pe);
  streamer<probe> s(ctx, options, [&](const probe& p) { log.record(p); });
  for (int step = 0; step < 2; ++step) {  // two steps on one streamer
    log.reset();
    const std::uint64_t step_seed = seed + 1000 * step;
    for (std::int64_t q = 0; q < per_pe; ++q) {
      const int dest = probe_destination(step_seed, ctx.rank(), q, ctx.size());
      s.insert(probe{ctx.rank(), dest, q}, dest);
    }
    s.finish();
    log.check(step_seed, where + " step " + std::to_string(step));
  }
  const auto st = s.stats();
  EXPECT_EQ(st.items_inserted, static_cast<std::uint64_t>(2 * per_pe));
  if (options.max_buffered_items > 0) {
    EXPECT_LE(st.items_buffered_peak, options.max_buffered_items) << where;
  }
  // Aggregation memory stays within one buffer per link (peers plus this PE's own).
  const std::uint64_t links = s.route_plan().out_links(ctx.rank()).size() + 1;
  const std::uint64_t per_buffer = 16 + options.buffer_items * (sizeof(probe) + sizeof(std::int32_t)) + 4;
  EXPECT_LE(st.buffer_bytes_peak, links * per_buffer) << where;
  // Messages to other nodes are counted as such: exactly the sends on links to another node.
  EXPECT_LE(st.inter_node_messages, st.messages_sent) << where;
  if (ctx.machine().num_nodes() == 1) {
    EXPECT_EQ(st.inter_node_messages, 0u) << where;
  }
  const auto delivered = ctx.allreduce<std::uint64_t>(st.items_delivered, reduce_op::sum);
  EXPECT_EQ(delivered, static_cast<std::uint64_t>(2 * per_pe * ctx.size())) << where;
}

void sweep(routing route, const std::vector<grid_case>& grids, context& ctx) {
  const std::size_t buffers[] = {1, 7, 1024};
  int variant = 0;
  for (const auto& g : grids) {
    for (const std::size_t buffer : buffers) {
      for (const std::size_t bound : {std::size_t{0}, std::size_t{16}}) {
        streamer_options o;
        o.grid = g.make(ctx);
        o.route = route;
        o.buffer_items = buffer;
        o.max_buffered_items = bound;
        const std::uint64_t seed = 17 + static_cast<std::uint64_t>(variant++);
        const std::string where = std::string(to_string(route)) + " grid " + g.name + " (" +
                                  (o.grid ? o.grid->str() : std::string("node_pe")) + ") buffer " +
                                  std::to_string(buffer) + " bound " + std::to_string(bound) + " seed " +
                                  std::to_string(seed);
        run_case(ctx, o, seed, 300, where);
      }
    }
  }
}

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
                      if (route == routing::grid) o.grid = virtual_grid::balanced(ctx.size(), 3);
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
// message per link, plus one bare final marker per link; the links to other nodes are those to the
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
                },
                {"--transit-pes-per-node=2"}),
            0);
}

}  // namespace
