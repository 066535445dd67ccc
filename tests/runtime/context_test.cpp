#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <set>

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

}  // namespace
