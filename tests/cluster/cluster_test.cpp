// Runs on the emulated cluster (scripts/cluster, docs/cluster.md) under
// `mpirun --map-by node`: ranks on different hosts talk over TCP through the emulated switch, and
// machine() is what MPI reports, with no --transit-pes-per-node. TRANSIT_TEST_CLUSTER_HOSTS is
// the number of hosts the job spans.
#include <unistd.h>

#include <cstdlib>
#include <vector>
#include <functional>
#include <set>
#include <string>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::testing::probe;
using transit::testing::probe_destination;

int expected_hosts() {
  const char* text = std::getenv("TRANSIT_TEST_CLUSTER_HOSTS");
  return text != nullptr ? std::atoi(text) : 0;
}

TEST(cluster, machine_reports_the_hosts) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              char name[256] = {};
              ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
              // Every PE learns every PE's host name (as a hash) through the context's reductions.
              const std::uint64_t mine = std::hash<std::string>{}(name) | 1;  // never 0
              std::vector<std::uint64_t> host_of(static_cast<std::size_t>(ctx.size()));
              for (int r = 0; r < ctx.size(); ++r)
                host_of[r] = ctx.allreduce<std::uint64_t>(r == ctx.rank() ? mine : 0, reduce_op::max);
              const auto& m = ctx.machine();
              const std::set<std::uint64_t> hosts(host_of.begin(), host_of.end());
              EXPECT_EQ(m.num_nodes(), static_cast<int>(hosts.size()));
              EXPECT_EQ(m.num_nodes(), expected_hosts()) << "the job should span every host of the cluster";
              for (int a = 0; a < ctx.size(); ++a)
                for (int b = 0; b < ctx.size(); ++b)
                  EXPECT_EQ(m.node_of(a) == m.node_of(b), host_of[a] == host_of[b])
                      << "PEs " << a << " and " << b << " on PE " << ctx.rank() << " (" << name << ")";
            }),
            0);
}

// Grids given by their sizes place PEs in rank order, so their rows hold one node each only when
// every node's PEs are consecutive ranks (mpirun's default, --map-by slot). Under --map-by node
// only node_pe's placement fits node-aware routing (the others are refused with a message).
std::vector<transit::testing::grid_case> node_aware_cases_for(const machine& m) {
  auto cases = transit::testing::node_aware_cases();
  bool consecutive = true;
  for (int pe = 0; pe < m.num_pes(); ++pe) consecutive = consecutive && m.node_of(pe) == pe / m.max_pes_per_node();
  if (!consecutive) std::erase_if(cases, [](const auto& c) { return c.name != "node-pe"; });
  return cases;
}

TEST(cluster, exactly_once_grid_router) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              transit::testing::sweep(routing::grid, transit::testing::grid_router_cases(), ctx);
            }),
            0);
}

TEST(cluster, exactly_once_node_aware) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              transit::testing::sweep(routing::node_aware, node_aware_cases_for(ctx.machine()), ctx);
            }),
            0);
}

TEST(cluster, exactly_once_node_aware_advanced) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              transit::testing::sweep(routing::node_aware_advanced, node_aware_cases_for(ctx.machine()), ctx);
            }),
            0);
}

// Messages between hosts, summed over PEs, for the same random streams under one routing: 10 steps
// of 300 items per PE, each ended by finish(), as in the streaming all-to-all's rounds. A step's
// items for one peer fit one buffer, so each step sends about one message per link used.
std::uint64_t inter_host_messages(context& ctx, routing route, const virtual_grid& grid) {
  constexpr std::int64_t per_step = 300;
  constexpr int steps = 10;
  streamer_options o;
  o.route = route;
  o.grid = grid;
  o.buffer_items = 1024;
  std::uint64_t delivered = 0;
  streamer<probe> s(ctx, o, [&](const probe&) { ++delivered; });
  for (int step = 0; step < steps; ++step) {
    for (std::int64_t q = 0; q < per_step; ++q) {
      const int dest = probe_destination(7 + step, ctx.rank(), q, ctx.size());
      s.insert(probe{ctx.rank(), dest, q}, dest);
    }
    s.finish();
  }
  EXPECT_EQ(ctx.allreduce<std::uint64_t>(delivered, reduce_op::sum),
            static_cast<std::uint64_t>(steps * per_step * ctx.size()));
  return ctx.allreduce<std::uint64_t>(s.stats().inter_node_messages, reduce_op::sum);
}

// Node-aware routing crosses between hosts once per item, each PE sending to one PE per other host,
// where the grid router's PEs each talk to several PEs of every other host: so with partly filled
// buffers it sends fewer messages between hosts.
TEST(cluster, node_aware_sends_fewer_inter_host_messages) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              const auto node_pe = virtual_grid::node_pe(ctx.machine());
              const std::uint64_t node_aware = inter_host_messages(ctx, routing::node_aware, node_pe);
              const std::uint64_t direct = inter_host_messages(ctx, routing::grid, virtual_grid::direct(ctx.size()));
              const std::uint64_t grid_2d = inter_host_messages(ctx, routing::grid, virtual_grid::balanced(ctx.size(), 2));
              if (ctx.rank() == 0)
                std::printf("inter-host messages: node-aware %llu, direct %llu, 2-D grid %llu\n",
                            static_cast<unsigned long long>(node_aware), static_cast<unsigned long long>(direct),
                            static_cast<unsigned long long>(grid_2d));
              EXPECT_GT(node_aware, 0u);
              EXPECT_LT(node_aware, direct);
              EXPECT_LT(node_aware, grid_2d);
            }),
            0);
}

}  // namespace
