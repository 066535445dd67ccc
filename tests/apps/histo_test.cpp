// histo's three styles (streamer, sparse_exchange, global_array) build bale's histogram: the
// checksum sum over global index g of (g + 1) * count[g]^2 equals the one bale's own draws give
// (bench/bale/reference_draws.c against bale's libgetput, `bale-oshrun -n P reference_draws L T
// SEED`, P = 1 and 2) and, at every PE count, the styles agree with each other and count every
// update once. Also the whole program: self-check passes, -N splits as bale splits it.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <tuple>

#include "histo/histo.hpp"
#include "test_support.hpp"

namespace {

using namespace transit;
using transit::apps::histo_options;
using transit::testing::run_spmd;

struct case_key {
  std::int64_t updates, table, seed;
  int pes;
  auto operator<=>(const case_key&) const = default;
};

// reference_draws' output: "histo -n L -T T -s SEED on P PEs: checksum C".
const std::map<case_key, std::int64_t> bale_checksums = {
    {{1000, 100, 122222, 1}, 543783},
    {{1000, 100, 122222, 2}, 2152105},
    {{5000, 37, 7, 1}, 12881400},
    {{5000, 37, 7, 2}, 50868251},
};

/// Collective: the checksum of the histogram in `counts` (bale's cyclic layout), and its total.
std::pair<std::int64_t, std::int64_t> checksum(context& ctx, global_array<std::int64_t>& counts) {
  std::int64_t sum = 0, total = 0;
  const auto local = counts.local();
  for (std::size_t i = 0; i < local.size(); ++i) {
    const std::int64_t g = static_cast<std::int64_t>(i) * ctx.size() + ctx.rank();
    sum += (g + 1) * local[i] * local[i];
    total += local[i];
  }
  return {ctx.allreduce(sum, reduce_op::sum), ctx.allreduce(total, reduce_op::sum)};
}

TEST(Histo, EveryStyleBuildsBalesHistogram) {
  run_spmd([](context& ctx) {
    for (const auto& [updates, table, seed] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1000, 100, 122222},
                                               {5000, 37, 7}}) {
      histo_options o;
      o.updates_per_pe = updates;
      o.table_per_pe = table;
      o.std.seed = seed;
      const auto draws = apps::histo_draw(o, ctx.rank(), ctx.size());
      const std::size_t size = static_cast<std::size_t>(table * ctx.size());
      std::vector<std::int64_t> sums;
      for (int style = 0; style < 4; ++style) {
        global_array<std::int64_t> counts(ctx, size);
        if (style == 0) apps::histo_streamer(ctx, draws, counts);
        if (style == 1) apps::histo_exchange(ctx, draws, counts, 1024);
        if (style == 2) apps::histo_exchange(ctx, draws, counts, 7);  // many uneven rounds
        if (style == 3) apps::histo_global_array(ctx, draws, counts);
        counts.sync();
        const auto [sum, total] = checksum(ctx, counts);
        EXPECT_EQ(total, updates * ctx.size()) << "style " << style;
        sums.push_back(sum);
      }
      for (std::size_t s = 1; s < sums.size(); ++s) EXPECT_EQ(sums[s], sums[0]) << "style " << s;
      const auto bale = bale_checksums.find({updates, table, seed, ctx.size()});
      if (bale != bale_checksums.end()) {
        EXPECT_EQ(sums[0], bale->second) << "-n " << updates << " -T " << table;
      }
    }
  });
}

TEST(Histo, SplitsTotalUpdatesAsBale) {
  histo_options o;
  o.updates_total = 10;
  EXPECT_EQ(apps::histo_updates_per_pe(o, 0, 3), 4);
  EXPECT_EQ(apps::histo_updates_per_pe(o, 1, 3), 3);
  EXPECT_EQ(apps::histo_updates_per_pe(o, 2, 3), 3);
  o.updates_total = 0;
  o.updates_per_pe = 6;
  EXPECT_EQ(apps::histo_updates_per_pe(o, 2, 3), 6);
}

TEST(Histo, ProgramPassesItsSelfCheck) {
  run_spmd([](context& ctx) {
    histo_options o;
    o.updates_total = 3001;  // not a multiple of the PE count: some PEs draw one more
    o.table_per_pe = 50;
    o.std.models_mask = 15;
    o.std.buf_cnt = 16;
    EXPECT_EQ(apps::histo_main(ctx, o, "histo_test"), 0);
    o.std.models_mask = 0;  // no style: nothing to subtract, still zero
    EXPECT_EQ(apps::histo_main(ctx, o, "histo_test"), 0);
    o.table_per_pe = std::int64_t{1} << 51;  // above bale's limit of 2^51 entries at any PE count
    EXPECT_EQ(apps::histo_main(ctx, o, "histo_test"), 2);
  });
}

}  // namespace
