#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace {

using transit::reduce_op;

TEST(context, ranks_are_distinct_and_cover_the_job) {
  std::atomic<int> calls{0};
  EXPECT_EQ(transit::testing::run_spmd([&](transit::context& ctx) {
              calls.fetch_add(1);
              EXPECT_GE(ctx.rank(), 0);
              EXPECT_LT(ctx.rank(), ctx.size());
              // Each rank contributes a distinct bit; the sum has every bit exactly once.
              const auto sum = ctx.allreduce<std::int64_t>(std::int64_t{1} << (ctx.rank() % 62), reduce_op::sum);
              if (ctx.size() <= 62) {
                EXPECT_EQ(sum, (std::int64_t{1} << ctx.size()) - 1);
              }
              EXPECT_EQ(ctx.machine().num_pes(), ctx.size());
            }),
            0);
  EXPECT_GE(calls.load(), 1);
}

TEST(context, allreduce_sum_min_max_for_integers_and_doubles) {
  EXPECT_EQ(transit::testing::run_spmd([](transit::context& ctx) {
              const int p = ctx.size(), r = ctx.rank();
              EXPECT_EQ(ctx.allreduce(r, reduce_op::sum), p * (p - 1) / 2);
              EXPECT_EQ(ctx.allreduce(r, reduce_op::min), 0);
              EXPECT_EQ(ctx.allreduce(r, reduce_op::max), p - 1);
              EXPECT_EQ(ctx.allreduce(-r - 1, reduce_op::min), -p);
              EXPECT_EQ(ctx.allreduce<std::uint64_t>(std::uint64_t{1} << 40, reduce_op::sum),
                        static_cast<std::uint64_t>(p) << 40);
              EXPECT_DOUBLE_EQ(ctx.allreduce(0.5 * r, reduce_op::sum), 0.25 * p * (p - 1));
              EXPECT_DOUBLE_EQ(ctx.allreduce(1.0 / (r + 1), reduce_op::min), 1.0 / p);
              EXPECT_DOUBLE_EQ(ctx.allreduce(static_cast<double>(r), reduce_op::max), p - 1.0);
            }),
            0);
}

TEST(context, barrier_orders_phases) {
  std::atomic<int> arrived{0};
  EXPECT_EQ(transit::testing::run_spmd([&](transit::context& ctx) {
              for (int round = 0; round < 20; ++round) {
                // Every PE sees the count of the whole round only after the barrier.
                if (ctx.rank() == 0) arrived.store(0);
                ctx.barrier();
                arrived.fetch_add(1);
                ctx.barrier();
                if (ctx.backend() == "local") {
                  EXPECT_EQ(arrived.load(), ctx.size());
                }
                ctx.barrier();
              }
            }),
            0);
}

TEST(context, emulated_nodes_group_consecutive_pes) {
  EXPECT_EQ(transit::testing::run_spmd(
                [](transit::context& ctx) {
                  const auto& m = ctx.machine();
                  EXPECT_EQ(m.num_nodes(), (ctx.size() + 1) / 2);
                  EXPECT_EQ(m.node_of(ctx.rank()), ctx.rank() / 2);
                  EXPECT_EQ(m.local_rank(ctx.rank()), ctx.rank() % 2);
                  if (ctx.size() % 2 == 1) {
                    EXPECT_EQ(m.pes_on_node(m.num_nodes() - 1), 1);
                  }
                },
                {"--transit-pes-per-node=2"}),
            0);
}

TEST(context, backend_is_named) {
  EXPECT_EQ(transit::testing::run_spmd([](transit::context& ctx) {
              EXPECT_TRUE(ctx.backend() == "local" || ctx.backend() == "mpi");
            }),
            0);
}

TEST(context, allreduce_of_arrays_is_element_wise) {
  EXPECT_EQ(transit::testing::run_spmd([](transit::context& ctx) {
              const int p = ctx.size(), r = ctx.rank();
              std::vector<std::int32_t> small{r, -r, 1};
              ctx.allreduce(std::span<std::int32_t>(small), reduce_op::sum);
              EXPECT_EQ(small, (std::vector<std::int32_t>{p * (p - 1) / 2, -p * (p - 1) / 2, p}));
              std::vector<double> mins(5000);
              for (std::size_t i = 0; i < mins.size(); ++i) mins[i] = static_cast<double>(i) + r;
              ctx.allreduce(std::span<double>(mins), reduce_op::min);
              for (std::size_t i = 0; i < mins.size(); ++i) EXPECT_EQ(mins[i], static_cast<double>(i));
              std::vector<std::uint64_t> empty;
              ctx.allreduce(std::span<std::uint64_t>(empty), reduce_op::max);
            }),
            0);
}

TEST(context, allreduce_of_arrays_refuses_different_counts_on_every_pe) {
  EXPECT_EQ(transit::testing::run_spmd([](transit::context& ctx) {
              if (ctx.size() == 1) return;
              std::vector<std::int64_t> values(static_cast<std::size_t>(ctx.rank() == 0 ? 2 : 3), 1);
              try {
                ctx.allreduce(std::span<std::int64_t>(values), reduce_op::sum);
                ADD_FAILURE() << "different counts were reduced";
              } catch (const std::invalid_argument& e) {
                EXPECT_NE(std::string(e.what()).find("PEs passed from 2 to 3 values"), std::string::npos) << e.what();
              }
              ctx.barrier();  // still usable
            }),
            0);
}

TEST(context, scans_fold_the_values_of_lower_pes) {
  EXPECT_EQ(transit::testing::run_spmd([](transit::context& ctx) {
              const int r = ctx.rank();
              EXPECT_EQ(ctx.exclusive_scan(r + 1), r * (r + 1) / 2);
              EXPECT_EQ(ctx.inclusive_scan(r + 1), (r + 1) * (r + 2) / 2);
              EXPECT_EQ(ctx.exclusive_scan(std::uint64_t{3}), 3u * static_cast<std::uint64_t>(r));
              // Min and max of 10 - r over PEs 0..r: 10 - r and 10; on PE 0 the exclusive scan is op's identity.
              EXPECT_EQ(ctx.inclusive_scan(10 - r, reduce_op::min), 10 - r);
              EXPECT_EQ(ctx.inclusive_scan(10 - r, reduce_op::max), 10);
              // Every PE makes the same collective calls; PE 0 checks op's identity.
              const int min_before = ctx.exclusive_scan(7, reduce_op::min);
              const double max_before = ctx.exclusive_scan(0.5 * r, reduce_op::max);
              if (r == 0) {
                EXPECT_EQ(min_before, std::numeric_limits<int>::max());
                EXPECT_EQ(max_before, std::numeric_limits<double>::lowest());
              } else {
                EXPECT_EQ(min_before, 7);
                EXPECT_EQ(max_before, 0.5 * (r - 1));
              }
            }),
            0);
}

TEST(context, allgather_and_broadcast_carry_any_bytes) {
  struct odd {
    char name[5];
    std::int16_t pe;
  };
  EXPECT_EQ(transit::testing::run_spmd([](transit::context& ctx) {
              const int p = ctx.size(), r = ctx.rank();
              const odd mine{{'p', 'e', static_cast<char>('0' + r % 10), '\0', '\x7f'}, static_cast<std::int16_t>(-r)};
              const std::vector<odd> all = ctx.allgather(mine);
              ASSERT_EQ(static_cast<int>(all.size()), p);
              for (int pe = 0; pe < p; ++pe) {
                EXPECT_EQ(all[static_cast<std::size_t>(pe)].pe, -pe);
                EXPECT_EQ(all[static_cast<std::size_t>(pe)].name[2], static_cast<char>('0' + pe % 10));
                EXPECT_EQ(all[static_cast<std::size_t>(pe)].name[4], '\x7f');
              }
              const int root = p - 1;
              const double got = ctx.broadcast(r == root ? -2.5 : 1e300, root);
              EXPECT_EQ(got, -2.5);
              EXPECT_THROW(static_cast<void>(ctx.broadcast(1, p)), std::out_of_range);
              EXPECT_THROW(static_cast<void>(ctx.broadcast(1, -1)), std::out_of_range);
            }),
            0);
}

}  // namespace
