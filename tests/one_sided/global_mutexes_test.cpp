// global_mutexes: mutual exclusion under every routed topology and progress mode.
#include <cstdint>
#include <vector>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;
using transit::testing::describe;
using transit::testing::for_each_node_size;
using transit::testing::configurations;

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

}  // namespace
