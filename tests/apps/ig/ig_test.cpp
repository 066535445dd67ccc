// ig's three styles (streamer, sparse_exchange, global_array) gather bale's answer: the checksum
// sum over PE p and request i of (i * P + p + 1) * target[i] equals the one bale computes from its
// own draws and table (bench/bale/reference_apps.c against bale's libraries, `bale-oshrun -n P
// reference_apps L T 20 4 SEED`, the "ig" line, P = 1 to 4), every entry passes bale's check,
// and the program passes its self-check.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "ig/ig.hpp"
#include "test_support.hpp"

namespace {

using namespace transit;
using transit::apps::ig_options;
using transit::testing::run_spmd;

struct case_key {
  std::int64_t requests, table, seed;
  int pes;
  auto operator<=>(const case_key&) const = default;
};

// reference_apps' output: "ig -n L -T T -s SEED on P PEs: checksum C".
const std::map<case_key, std::int64_t> bale_checksums = {
    {{1000, 100, 122222, 1}, -25291942}, {{1000, 100, 122222, 2}, -198763727},
    {{5000, 37, 7, 1}, -236227731},          {{5000, 37, 7, 2}, -1869377683},
    {{5000, 37, 7, 3}, -6274854774},         {{5000, 37, 7, 4}, -14849974296},
};

std::int64_t checksum(context& ctx, std::span<const std::int64_t> target) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < target.size(); ++i)
    sum += (static_cast<std::int64_t>(i) * ctx.size() + ctx.rank() + 1) * target[i];
  return ctx.allreduce(sum, reduce_op::sum);
}

TEST(Ig, EveryStyleGathersBalesAnswer) {
  run_spmd([](context& ctx) {
    for (const auto& [requests, table_per_pe, seed] :
         {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1000, 100, 122222}, {5000, 37, 7}}) {
      ig_options o;
      o.requests_per_pe = requests;
      o.table_per_pe = table_per_pe;
      o.std.seed = seed;
      const auto draws = apps::ig_draw(o, ctx.rank(), ctx.size());
      global_array<std::int64_t> table(ctx, static_cast<std::size_t>(table_per_pe * ctx.size()), array_layout::cyclic);
      apps::ig_fill_table(table);
      ctx.barrier();
      // Where bale's answer is not recorded (hybrid runs: 9 PEs), each style's is checked entry by
      // entry and they must agree.
      const auto bale = bale_checksums.find({requests, table_per_pe, seed, ctx.size()});
      std::vector<std::int64_t> target(draws.places.size());
      std::vector<std::int64_t> sums;
      for (int style = 0; style < 4; ++style) {
        if (style == 0) apps::ig_streamer(ctx, draws, table, target);
        if (style == 1) apps::ig_exchange(ctx, draws, table, target, 1024);
        if (style == 2) apps::ig_exchange(ctx, draws, table, target, 7);  // many uneven rounds
        if (style == 3) apps::ig_global_array(ctx, draws, table, target);
        sums.push_back(checksum(ctx, target));
        EXPECT_EQ(sums.back(), sums.front()) << "style " << style << " -n " << requests;
        if (bale != bale_checksums.end()) {
          EXPECT_EQ(sums.back(), bale->second) << "style " << style << " -n " << requests;
        }
        EXPECT_EQ(apps::ig_check_and_zero(style, ctx.rank(), target, draws), 0) << "style " << style;
        EXPECT_EQ(checksum(ctx, target), 0) << "zeroed";
      }
    }
  });
}

TEST(Ig, CheckCountsWrongEntries) {
  apps::ig_requests r;
  r.index = {0, 5, 9};
  std::vector<std::int64_t> target = {-1, -6, 3};
  EXPECT_EQ(apps::ig_check_and_zero(8, 0, target, r), 1);
  EXPECT_EQ(target, std::vector<std::int64_t>(3, 0));
}

TEST(Ig, ProgramPassesItsSelfCheck) {
  run_spmd([](context& ctx) {
    ig_options o;
    o.requests_total = 3001;  // not a multiple of the PE count: some PEs draw one more
    o.table_per_pe = 50;
    o.std.models_mask = 15;
    o.std.buf_cnt = 16;
    EXPECT_EQ(apps::ig_requests_per_pe(o, ctx.rank(), ctx.size()), (3001 + ctx.size() - ctx.rank() - 1) / ctx.size());
    EXPECT_EQ(apps::ig_main(ctx, o, "ig_test"), 0);
    o.table_per_pe = std::int64_t{1} << 51;  // above bale's limit of 2^51 entries at any PE count
    EXPECT_EQ(apps::ig_main(ctx, o, "ig_test"), 2);
  });
}

TEST(Ig, KernelsRefuseATargetOfAnotherSize) {
  run_spmd([](context& ctx) {
    ig_options o;
    o.requests_per_pe = 10;
    o.table_per_pe = 10;
    const auto draws = apps::ig_draw(o, ctx.rank(), ctx.size());
    global_array<std::int64_t> table(ctx, static_cast<std::size_t>(10 * ctx.size()), array_layout::cyclic);
    std::vector<std::int64_t> target(9);
    EXPECT_THROW(
        {
          global_array<std::int64_t> block(ctx, static_cast<std::size_t>(10 * ctx.size()));
          apps::ig_fill_table(block);
        },
        std::invalid_argument);
    EXPECT_THROW(apps::ig_streamer(ctx, draws, table, target), std::invalid_argument);
    EXPECT_THROW(apps::ig_exchange(ctx, draws, table, target, 4), std::invalid_argument);
    EXPECT_THROW(apps::ig_global_array(ctx, draws, table, target), std::invalid_argument);
  });
}

}  // namespace
