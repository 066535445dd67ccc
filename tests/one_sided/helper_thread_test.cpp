// progress_mode::helper_thread: a PE that computes without calling transit still answers, because
// its node's helper serves it.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;
using transit::testing::describe;

// Every PE but PE 1 fetch_adds PE 1's element and waits for the old value, while PE 1 spins on
// that element in plain memory, making no transit call, until all of them have landed. Without a
// helper the others would wait forever and PE 1 would hit its deadline.
TEST(helper_thread, answers_for_a_pe_busy_computing) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  if (ctx.size() < 2) return;
                  for (const auto topology : {request_topology::fcg, request_topology::mfcg, request_topology::cfcg}) {
                    one_sided_options o;
                    o.topology = topology;
                    o.progress = progress_mode::helper_thread;
                    global_array<std::int64_t> a(ctx, static_cast<std::size_t>(ctx.size()), o);
                    const std::int64_t others = ctx.size() - 1;
                    if (ctx.rank() == 1) {
                      std::atomic_ref<std::int64_t> mine(a.local()[0]);
                      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
                      double work = 1;
                      while (mine.load() < others && std::chrono::steady_clock::now() < deadline) {
                        for (int i = 0; i < 1000; ++i) work = work * 1.0000001 + 1e-9;  // computing
                        std::this_thread::yield();
                      }
                      EXPECT_EQ(mine.load(), others) << describe(ctx, o) << ": requests unanswered (work " << work << ")";
                    } else {
                      const std::int64_t old = a.fetch_add(1, 1);
                      EXPECT_GE(old, 0);
                      EXPECT_LT(old, others) << describe(ctx, o);
                    }
                    a.sync();
                  }
                },
                {"--transit-pes-per-node=1"}),
            0);
}

// Memory per PE: one request buffer per next-hop peer, O(sqrt(nodes)) for mfcg.
TEST(request_buffers, grow_with_the_node_grid_not_the_job) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  const machine& m = ctx.machine();
                  const int node_mates = m.pes_on_node(m.node_of(ctx.rank())) - 1;
                  for (const auto topology : {request_topology::fcg, request_topology::mfcg, request_topology::cfcg}) {
                    one_sided_options o;
                    o.topology = topology;
                    global_array<int> a(ctx, 1, o);
                    const std::uint64_t links = a.stats().links;
                    if (topology == request_topology::fcg) {
                      EXPECT_EQ(links, static_cast<std::uint64_t>(m.num_nodes() - 1 + node_mates));
                    } else {
                      const auto grid = virtual_grid::balanced(m.num_nodes(), topology == request_topology::mfcg ? 2 : 3);
                      int peers = 0;
                      for (const int d : grid.dims()) peers += d - 1;
                      EXPECT_LE(links, static_cast<std::uint64_t>(peers + node_mates)) << grid.str();
                    }
                    EXPECT_GE(a.stats().request_buffer_bytes, links * o.buffer_bytes);
                  }
                },
                {"--transit-pes-per-node=1"}),
            0);
}

}  // namespace
