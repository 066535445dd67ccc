// global_array under array_layout::cyclic (element i on PE i mod P at offset i / P, bale's SHARED
// arrays): the mapping, and every operation (put, get and their nonblocking forms, accumulate,
// fetch_add, compare_exchange, multi-region transfers under each protocol, local()) under every
// routed topology and both progress modes, on sizes that P divides and sizes it does not.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "one_sided_checks.hpp"

namespace {

using namespace transit;
using transit::testing::configurations;
using transit::testing::describe;
using transit::testing::for_each_node_size;

// Sizes below P, divisible by P and not.
std::vector<std::size_t> sizes(const context& ctx) {
  const auto p = static_cast<std::size_t>(ctx.size());
  return {2, 4 * p, 5 * p + 3};
}

std::int64_t value(std::size_t i) { return static_cast<std::int64_t>(i * 7 + 3); }

TEST(global_array_cyclic, element_i_lives_on_pe_i_mod_p_at_offset_i_over_p) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              const auto p = static_cast<std::size_t>(ctx.size());
              const auto me = static_cast<std::size_t>(ctx.rank());
              for (const std::size_t n : sizes(ctx)) {
                global_array<std::int64_t> a(ctx, n, array_layout::cyclic);
                EXPECT_EQ(a.layout(), array_layout::cyclic);
                EXPECT_EQ(a.local().size(), n / p + (me < n % p ? 1 : 0)) << n;
                EXPECT_EQ(a.local_begin(), me);
                for (std::size_t i = 0; i < n; ++i) {
                  ASSERT_EQ(a.owner(i), static_cast<int>(i % p)) << i;
                  ASSERT_EQ(a.local_offset(i), i / p) << i;
                }
                for (std::size_t k = 0; k < a.local().size(); ++k) ASSERT_EQ(a.global_index(k), k * p + me);
                // local() is where the owner's elements are: written there, read anywhere.
                for (std::size_t k = 0; k < a.local().size(); ++k) a.local()[k] = value(a.global_index(k));
                a.sync();
                std::vector<std::int64_t> all(n, -1);
                a.get(0, all);
                for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(all[i], value(i)) << "element " << i << " of " << n;
                a.sync();
              }
              global_array<std::int64_t> block(ctx, 10);
              EXPECT_EQ(block.layout(), array_layout::block);
              EXPECT_EQ(block.global_index(1), block.local_begin() + 1);
            }),
            0);
}

// Every PE writes a region that runs over every owner; then every PE reads the whole array in
// pieces, blocking and not.
TEST(global_array_cyclic, put_get_round_trips) {
  for_each_node_size([](context& ctx) {
    for (const auto& o : configurations(ctx)) {
      for (const std::size_t n : sizes(ctx)) {
        global_array<std::int64_t> a(ctx, n, array_layout::cyclic, o);
        const std::size_t share = (n + static_cast<std::size_t>(ctx.size()) - 1) / static_cast<std::size_t>(ctx.size());
        const std::size_t first = std::min(n, static_cast<std::size_t>(ctx.rank()) * share);
        const std::size_t count = std::min(share, n - first);
        std::vector<std::int64_t> mine(count);
        for (std::size_t k = 0; k < count; ++k) mine[k] = value(first + k);
        if (ctx.rank() % 2 == 0) {
          a.put(first, mine);
        } else {
          a.put_nb(first, mine).wait();
        }
        a.sync();
        for (std::size_t k = 0; k < a.local().size(); ++k)
          ASSERT_EQ(a.local()[k], value(a.global_index(k))) << describe(ctx, o) << " n " << n << " local " << k;
        std::vector<std::int64_t> all(n, -1);
        for (std::size_t at = 0; at < n; at += 5)
          a.get(at, std::span<std::int64_t>(all).subspan(at, std::min<std::size_t>(5, n - at)));
        for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(all[i], value(i)) << describe(ctx, o) << " element " << i;
        std::vector<std::int64_t> whole(n, -1);
        a.get_nb(0, whole).wait();
        ASSERT_EQ(whole, all) << describe(ctx, o);
        a.sync();
      }
    }
  });
}

TEST(global_array_cyclic, accumulate_fetch_add_and_compare_exchange) {
  for_each_node_size([](context& ctx) {
    for (const auto& o : configurations(ctx)) {
      const auto p = static_cast<std::int64_t>(ctx.size());
      const std::size_t n = 5 * static_cast<std::size_t>(ctx.size()) + 3;
      global_array<std::int64_t> sums(ctx, n, array_layout::cyclic, o);
      global_array<double> lows(ctx, n, array_layout::cyclic, o);
      std::vector<std::int64_t> adds(n);
      std::vector<double> mine(n, -static_cast<double>(ctx.rank()) - 0.5);
      for (std::size_t i = 0; i < n; ++i) adds[i] = static_cast<std::int64_t>(i) + ctx.rank();
      sums.accumulate(0, adds, reduce_op::sum);
      lows.accumulate(1, std::span<const double>(mine).subspan(1), reduce_op::min);
      // Every PE adds 1 to every element of `counts` once: the old values of element i over the
      // PEs are 0..P-1 (sum P(P-1)/2, largest P-1), and the element ends at P.
      global_array<std::int64_t> counts(ctx, n, array_layout::cyclic, o);
      std::vector<std::int64_t> old(n), largest(n);
      std::vector<request> pending;
      for (std::size_t i = 0; i < n; ++i) {
        if (i % 2 == 0) {
          old[i] = counts.fetch_add(i, 1);
        } else {
          pending.push_back(counts.fetch_add_nb(i, 1, &old[i]));
        }
      }
      for (auto& r : pending) r.wait();
      largest = old;
      ctx.allreduce(std::span<std::int64_t>(old), reduce_op::sum);
      ctx.allreduce(std::span<std::int64_t>(largest), reduce_op::max);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(old[i], p * (p - 1) / 2) << describe(ctx, o) << " element " << i;
        ASSERT_EQ(largest[i], p - 1) << describe(ctx, o) << " element " << i;
      }
      counts.sync();
      for (const std::int64_t c : counts.local()) ASSERT_EQ(c, p) << describe(ctx, o);
      sums.sync();
      lows.sync();
      for (std::size_t k = 0; k < sums.local().size(); ++k) {
        const auto i = static_cast<std::int64_t>(sums.global_index(k));
        ASSERT_EQ(sums.local()[k], p * i + p * (p - 1) / 2) << describe(ctx, o) << " element " << i;
        ASSERT_EQ(lows.local()[k], i == 0 ? 0.0 : -static_cast<double>(p - 1) - 0.5) << describe(ctx, o);
      }
      global_array<std::int64_t> counter(ctx, 3, array_layout::cyclic, o);
      for (int r = 0; r < 10; ++r) {
        std::int64_t seen = 0;
        for (;;) {
          const std::int64_t was = counter.compare_exchange(2, seen, seen + 1);
          if (was == seen) break;
          seen = was;
        }
      }
      counter.sync();
      if (ctx.rank() == 2 % ctx.size()) {
        EXPECT_EQ(counter.local()[2 / static_cast<std::size_t>(ctx.size())], 10 * p) << describe(ctx, o);
      }
      counter.sync();
    }
  });
}

TEST(global_array_cyclic, regions_under_every_protocol) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](context& ctx) {
                  for (const auto& o : configurations(ctx)) {
                    for (const auto protocol : {transfer_protocol::automatic, transfer_protocol::blocking,
                                                transfer_protocol::pipelined, transfer_protocol::packed}) {
                      const std::size_t n = 6 * static_cast<std::size_t>(ctx.size()) + 1;
                      global_array<std::int64_t> a(ctx, n, array_layout::cyclic, o);
                      // PE 0 writes the whole array as three regions (the middle one longest),
                      // then every PE reads it back as regions in another order.
                      if (ctx.rank() == 0) {
                        const region parts[] = {{0, 3}, {3, n - 5}, {n - 2, 2}};
                        std::vector<std::int64_t> values(n);
                        for (std::size_t i = 0; i < n; ++i) values[i] = value(i);
                        a.put_regions(parts, values, protocol);
                      }
                      a.sync();
                      const region backwards[] = {{n - 4, 4}, {0, n - 4}};
                      std::vector<std::int64_t> out(n, -1);
                      a.get_regions(backwards, out, protocol);
                      for (std::size_t i = 0; i < 4; ++i)
                        ASSERT_EQ(out[i], value(n - 4 + i)) << describe(ctx, o) << " " << to_string(protocol);
                      for (std::size_t i = 4; i < n; ++i)
                        ASSERT_EQ(out[i], value(i - 4)) << describe(ctx, o) << " " << to_string(protocol);
                      a.sync();
                      // Strided: every third element gets -1, from the last PE.
                      if (ctx.rank() == ctx.size() - 1) {
                        const std::size_t blocks = (n + 2) / 3;
                        a.put_strided(0, 1, 3, blocks, std::vector<std::int64_t>(blocks, -1), protocol);
                      }
                      a.sync();
                      for (std::size_t k = 0; k < a.local().size(); ++k) {
                        const std::size_t i = a.global_index(k);
                        ASSERT_EQ(a.local()[k], i % 3 == 0 ? -1 : value(i)) << describe(ctx, o) << " element " << i;
                      }
                      a.sync();
                    }
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

}  // namespace
