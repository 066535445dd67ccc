// global_mutexes: mutual exclusion under every routed topology and progress mode.
#include <cstdint>
#include <vector>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;
using transit::testing::describe;
using transit::testing::for_each_node_size;
using transit::testing::configurations;
using transit::testing::run_spmd;

// A non-atomic read-modify-write (get, then put) under a mutex loses no update. Three mutexes
// with homes on different PEs, one counter each; the unlock makes the put visible to the next
// holder (it completes this PE's operations first).
TEST(global_mutexes, protected_read_modify_write_loses_no_update) {
  for_each_node_size([](context& ctx) {
    for (const auto& o : configurations(ctx)) {
      constexpr int mutexes = 3;
      constexpr int rounds = 5;
      global_array<std::int64_t> counters(ctx, mutexes, o);
      global_mutexes locks(ctx, mutexes, o);
      for (int round = 0; round < rounds; ++round) {
        for (int k = 0; k < mutexes; ++k) {
          const int m = (k + ctx.rank()) % mutexes;  // PEs start on different mutexes
          locks.lock(m);
          std::int64_t v = 0;
          counters.get(static_cast<std::size_t>(m), std::span<std::int64_t>(&v, 1));
          ++v;
          counters.put(static_cast<std::size_t>(m), std::span<const std::int64_t>(&v, 1));
          locks.unlock(m);
        }
      }
      counters.sync();
      for (const auto c : counters.local()) EXPECT_EQ(c, rounds * ctx.size()) << describe(ctx, o);
      ctx.barrier();
    }
  });
}

// docs/one_sided.md: "Locks are granted first come, first served": a mutex is a ticket lock at
// its home, taken with atomics by the PEs of the home's node and, for lock requests from other
// nodes, by the endpoint that serves them, so both kinds queue in one ticket order. PE 0, the
// home of the only mutex, holds it; then it lets the other PEs ask for it one at a time, in an
// order that is not rank order, each only after the previous one's ticket was taken (its
// stats().requests_served: tickets taken and served on the mutexes homed here, on every engine).
// Each holder in turn takes the next position of a log; the log must read in the order the
// tickets were taken. Nodes of 2 mix both kinds (PE 1 takes its ticket itself, the others' lock
// requests cross nodes), one node has only the first; mfcg in both progress modes and mpi_rma's
// ticket lock suffice (the route does not matter).
void expect_grants_in_arrival_order(context& ctx) {
  const int pes = ctx.size();
  const auto square = static_cast<std::size_t>(pes) * static_cast<std::size_t>(pes);  // PE 0 owns [0, pes)
  std::vector<int> arrival;  // 2, 4, ..., then 1, 3, ...: not rank order
  for (int w = 2; w < pes; w += 2) arrival.push_back(w);
  for (int w = 1; w < pes; w += 2) arrival.push_back(w);
  for (const auto& o : configurations(ctx)) {
    if (o.topology != request_topology::mfcg && o.topology != request_topology::mpi_rma) continue;
    global_array<std::int64_t> go(ctx, square, o);         // go[w]: PE w may ask now
    global_array<std::int64_t> log(ctx, square, o);        // log[k]: the k-th holder after PE 0
    global_array<std::int64_t> next_slot(ctx, square, o);  // next_slot[0]: next position of log
    global_mutexes locks(ctx, 1, o);
    if (ctx.rank() == 0) {
      locks.lock(0);
      std::uint64_t taken = 1;  // PE 0's own ticket (none served yet)
      for (const int w : arrival) {
        go.put(static_cast<std::size_t>(w), std::vector<std::int64_t>{1});
        go.fence();
        ++taken;
        std::int64_t sink = 0;
        // A get of the last PE's element: remote, it serves this PE meanwhile (polling mode).
        while (locks.stats().requests_served < taken) log.get(square - 1, std::span<std::int64_t>(&sink, 1));
      }
      locks.unlock(0);
    } else {
      std::int64_t may = 0;
      while (may == 0) go.get(static_cast<std::size_t>(ctx.rank()), std::span<std::int64_t>(&may, 1));
      locks.lock(0);
      const std::int64_t slot = next_slot.fetch_add(0, 1);
      log.put(static_cast<std::size_t>(slot), std::vector<std::int64_t>{ctx.rank()});
      locks.unlock(0);
    }
    log.sync();
    if (ctx.rank() == 0) {
      std::vector<std::int64_t> granted(arrival.size());
      log.get(0, granted);
      EXPECT_EQ(granted, std::vector<std::int64_t>(arrival.begin(), arrival.end())) << describe(ctx, o);
      // Every lock and unlock was applied to the home's ticket lock, whatever its path (an unlock
      // request may still be on its way: PE 0's next lock waits for it).
      locks.lock(0);
      EXPECT_EQ(locks.stats().requests_served, 2 * static_cast<std::uint64_t>(pes) + 1) << describe(ctx, o);
      locks.unlock(0);
    }
    ctx.barrier();
  }
}

TEST(global_mutexes, grants_in_arrival_order) {
  EXPECT_EQ(run_spmd(expect_grants_in_arrival_order, {"--transit-pes-per-node=2"}), 0);
  EXPECT_EQ(run_spmd(expect_grants_in_arrival_order), 0);  // one node per host
}

// docs/one_sided.md, "Inside a node": a mutex homed on the PE's node, where the node shares
// memory, is taken and released with atomics there: no request, no message. Mutexes of other
// nodes (and every mutex where the node shares no memory) still go as requests. Each PE locks and
// unlocks every mutex, two homed on each PE.
void expect_same_node_locks_send_nothing(context& ctx) {
  const machine& m = ctx.machine();
  const int node = m.node_of(ctx.rank());
  const bool one_node = m.num_nodes() == 1;
  for (const auto& o : configurations(ctx)) {
    if (o.topology == request_topology::mpi_rma) continue;
    const int count = 2 * ctx.size();
    global_mutexes locks(ctx, count, o);
    ctx.barrier();
    const one_sided_stats before = locks.stats();
    std::uint64_t in_node = 0;
    std::uint64_t between_nodes = 0;
    for (int k = 0; k < count; ++k) {
      const int mutex = (k + ctx.rank()) % count;  // PEs start on different mutexes
      locks.lock(mutex);
      locks.unlock(mutex);
      (m.node_of(mutex % ctx.size()) == node ? in_node : between_nodes) += 2;
    }
    const one_sided_stats after = locks.stats();
    // transit::testing::helper_runs: the nodes hold whole ranks, so MPI can share their memory.
    const bool shared = transit::testing::helper_runs(ctx) || o.progress == progress_mode::helper_thread;
    EXPECT_EQ(after.node_memory_shared, shared ? 1u : 0u) << describe(ctx, o);
    if (shared) {
      EXPECT_EQ(after.applied_in_node - before.applied_in_node, in_node) << describe(ctx, o);
      EXPECT_EQ(after.requests_sent - before.requests_sent, between_nodes) << describe(ctx, o);
      // With one node nobody sends: no lock request and no reply anywhere.
      if (one_node) {
        EXPECT_EQ(after.messages_sent, before.messages_sent) << describe(ctx, o);
      }
    } else {
      EXPECT_EQ(after.applied_in_node, 0u) << describe(ctx, o);
      EXPECT_EQ(after.requests_sent - before.requests_sent, in_node + between_nodes) << describe(ctx, o);
    }
    ctx.barrier();
  }
}

TEST(global_mutexes, same_node_locks_send_no_message) {
  for_each_node_size(expect_same_node_locks_send_nothing);
  EXPECT_EQ(run_spmd(expect_same_node_locks_send_nothing), 0);  // one node per host
}

}  // namespace
