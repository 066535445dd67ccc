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

// docs/one_sided.md: "Locks are granted first come, first served at the mutex's home PE". PE 0,
// the home of the only mutex, holds it; then it lets the other PEs ask for it one at a time, in
// an order that is not rank order, each only after the previous one's request has reached the
// home (its stats().requests_served: lock and unlock requests applied there; mpi_rma: tickets
// taken in its window). Each holder in turn takes the next position of a log; the log must read
// in the order the requests arrived. The queue is the home's whatever the route, so mfcg (nodes
// of 2: requests cross nodes) in both progress modes, and mpi_rma's ticket lock, suffice.
TEST(global_mutexes, grants_in_arrival_order) {
  const int status = run_spmd([](context& ctx) {
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
        std::uint64_t arrived = 1;  // PE 0's own lock
        for (const int w : arrival) {
          go.put(static_cast<std::size_t>(w), std::vector<std::int64_t>{1});
          go.fence();
          ++arrived;
          std::int64_t sink = 0;
          // A remote get serves this PE meanwhile (polling mode); the count needs nothing else.
          while (locks.stats().requests_served < arrived) log.get(square - 1, std::span<std::int64_t>(&sink, 1));
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
      }
      ctx.barrier();
    }
  }, {"--transit-pes-per-node=2"});
  EXPECT_EQ(status, 0);
}

}  // namespace
