// progress_mode::helper_thread: a PE that computes without calling transit still answers, because
// its node's helper serves it. With PE threads in MPI ranks (docs/hybrid.md) the hybrid runs give
// each rank a node of its own (a helper serves whole ranks), and the helper is the rank's
// communication thread, or with --transit-comm-thread=0 a thread of its own.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;
using transit::testing::describe;

// A node per PE, or with PE threads in the ranks a node per rank.
const std::string& node_per_rank() {
  static const std::string option = [] {
    const char* threads = std::getenv("TRANSIT_THREADS_PER_RANK");
    return std::string("--transit-pes-per-node=") + (threads != nullptr && *threads != '\0' ? threads : "1");
  }();
  return option;
}

std::size_t threads_of_this_process() {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                                                std::filesystem::directory_iterator{}));
}

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
                {node_per_rank().c_str()}),
            0);
}

// With a communication thread, the node's helper is that thread: helper mode adds no thread to
// the process, and a PE busy computing still answers (the test above, in the hybrid runs). Without
// one, the node's first PE starts a helper thread (the control: the count can tell).
TEST(helper_thread, is_the_communication_thread_if_the_rank_has_one) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  if (ctx.backend() != "mpi") GTEST_SKIP() << "one process: the helpers of all nodes start at once";
                  const bool comm_thread = runs_comm_thread(ctx.options());
                  const bool starts_helper = !comm_thread && ctx.machine().local_rank(ctx.rank()) == 0;
                  ctx.barrier();  // every PE thread of the process has started
                  const std::size_t before = threads_of_this_process();
                  one_sided_options o;
                  o.progress = progress_mode::helper_thread;
                  global_array<std::int64_t> a(ctx, static_cast<std::size_t>(ctx.size()), o);
                  const std::size_t during = threads_of_this_process();
                  EXPECT_EQ(a.fetch_add((ctx.rank() + 1) % ctx.size(), 1), 0);
                  a.sync();
                  EXPECT_EQ(a.local()[0], 1);
                  if (comm_thread) {
                    EXPECT_EQ(during, before) << "helper mode started a thread beside the communication thread";
                  } else if (starts_helper) {
                    EXPECT_EQ(during, before + 1) << "the node's first PE starts its helper thread";
                  }
                },
                {node_per_rank().c_str()}),
            0);
}

// Memory per PE: one request buffer per next-hop peer, O(sqrt(nodes)) for mfcg (polling mode: plus
// the node's other PEs only where the node shares no memory).
TEST(request_buffers, grow_with_the_node_grid_not_the_job) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  const machine& m = ctx.machine();
                  for (const auto topology : {request_topology::fcg, request_topology::mfcg, request_topology::cfcg}) {
                    one_sided_options o;
                    o.topology = topology;
                    global_array<int> a(ctx, 1, o);
                    const int node_mates =
                        a.stats().node_memory_shared != 0 ? 0 : m.pes_on_node(m.node_of(ctx.rank())) - 1;
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
                {node_per_rank().c_str()}),
            0);
}

}  // namespace
