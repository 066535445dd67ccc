// randperm's styles against bale's permutations, recorded from bale's own kernels by
// bench/bale/reference_apps.c (`bale-oshrun -n P reference_apps 1 1 N B SEED`, its "randperm"
// lines; the kernels get bale's randperm seeds, SEED + PE). The checksum is the sum over g of
// (g + 1) * perm[g]. bale's exstack version is deterministic, so rand_perm_exchange must give its
// permutation at every PE count; its AGP version is deterministic on one PE only (rand_perm_
// global_array there); every style at every PE count gives a permutation.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "randperm/randperm.hpp"
#include "test_support.hpp"

namespace {

using namespace transit;
using transit::testing::run_spmd;

struct case_key {
  std::int64_t n, buf_cnt, seed;
  int pes;
  auto operator<=>(const case_key&) const = default;
};

// "randperm exstack -N N -b B -s SEED on P PEs: ... checksum C".
const std::map<case_key, std::int64_t> bale_exstack = {
    {{20, 4, 122222, 1}, 1989},           {{20, 4, 122222, 2}, 2003},
    {{5000, 16, 7, 1}, 31168468370},      {{5000, 16, 7, 2}, 31358986172},
    {{5000, 16, 7, 3}, 31266842178},      {{5000, 16, 7, 4}, 31203588289},
    {{3000, 128, 122222, 1}, 6748601305}, {{3000, 128, 122222, 2}, 6783271666},
    {{3000, 128, 122222, 3}, 6659837123},
};
// "randperm agp -N N ... on 1 PEs: ... checksum C".
const std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> bale_agp_one_pe = {
    {{20, 122222}, 1974},
    {{5000, 7}, 31133995543},
};

std::int64_t checksum(context& ctx, const std::vector<std::int64_t>& local) {
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < local.size(); ++i)
    sum += (static_cast<std::int64_t>(i) * ctx.size() + ctx.rank() + 1) * local[i];
  return ctx.allreduce(sum, reduce_op::sum);
}

/// Collective: the whole permutation, entry g at g, on every PE.
std::vector<std::int64_t> gather(context& ctx, const std::vector<std::int64_t>& local, std::int64_t n) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(n), 0);
  for (std::size_t i = 0; i < local.size(); ++i) all[i * static_cast<std::size_t>(ctx.size()) + static_cast<std::size_t>(ctx.rank())] = local[i];
  ctx.allreduce(std::span<std::int64_t>(all), reduce_op::sum);
  return all;
}

TEST(Randperm, ExchangeGivesBalesExstackPermutation) {
  run_spmd([](context& ctx) {
    for (const auto& [key, bale] : bale_exstack) {
      if (key.pes != ctx.size()) continue;
      const auto perm = apps::rand_perm_exchange(ctx, key.n, key.seed + ctx.rank(), key.buf_cnt);
      EXPECT_EQ(static_cast<std::int64_t>(perm.size()), apps::cyclic_local_count(key.n, ctx.rank(), ctx.size()));
      EXPECT_TRUE(apps::is_perm(ctx, perm, key.n));
      EXPECT_EQ(checksum(ctx, perm), bale) << "-N " << key.n << " -b " << key.buf_cnt;
      if (key.buf_cnt == 128) {
        EXPECT_EQ(apps::rand_perm(ctx, key.n, key.seed + ctx.rank()), perm);
      }
    }
  });
}

TEST(Randperm, SmallPermutationsAreBales) {
  run_spmd([](context& ctx) {
    // "perm:" of reference_apps 1 1 20 4 122222 (exstack at 1 and 2 PEs, AGP at 1 PE).
    const std::map<int, std::vector<std::int64_t>> exstack = {
        {1, {3, 12, 15, 4, 18, 10, 13, 2, 9, 5, 6, 19, 14, 11, 0, 16, 8, 1, 7, 17}},
        {2, {6, 13, 19, 16, 4, 5, 3, 1, 9, 10, 14, 18, 0, 11, 17, 8, 2, 12, 7, 15}},
    };
    const std::vector<std::int64_t> agp = {3, 14, 8, 15, 5, 11, 18, 2, 10, 9, 6, 16, 13, 0, 19, 17, 1, 4, 7, 12};
    const auto found = exstack.find(ctx.size());
    if (found != exstack.end()) {
      EXPECT_EQ(gather(ctx, apps::rand_perm_exchange(ctx, 20, 122222 + ctx.rank(), 4), 20), found->second);
    }
    if (ctx.size() == 1) {
      EXPECT_EQ(gather(ctx, apps::rand_perm_global_array(ctx, 20, 122222), 20), agp);
    }
  });
}

TEST(Randperm, EveryStyleGivesAPermutation) {
  run_spmd([](context& ctx) {
    for (const std::int64_t n : {0, 1, 5, 20, 5000, 5001}) {
      const std::int64_t seed = 7 + ctx.rank();
      const auto agp = apps::rand_perm_global_array(ctx, n, seed);
      EXPECT_TRUE(apps::is_perm(ctx, agp, n)) << "global_array, N " << n;
      const auto streamed = apps::rand_perm_streamer(ctx, n, seed);
      EXPECT_TRUE(apps::is_perm(ctx, streamed, n)) << "streamer, N " << n;
      const auto exchanged = apps::rand_perm_exchange(ctx, n, seed, 3);
      EXPECT_TRUE(apps::is_perm(ctx, exchanged, n)) << "sparse_exchange, N " << n;
      const auto bale = bale_agp_one_pe.find({n, 7});
      if (ctx.size() == 1 && bale != bale_agp_one_pe.end()) {
        EXPECT_EQ(checksum(ctx, agp), bale->second) << "N " << n;
      }
    }
  });
}

TEST(Randperm, IsPermRefusesWhatIsNot) {
  run_spmd([](context& ctx) {
    const int pes = ctx.size(), me = ctx.rank();
    const std::int64_t n = 3 * pes;
    std::vector<std::int64_t> identity(3);
    for (std::size_t i = 0; i < 3; ++i) identity[i] = static_cast<std::int64_t>(i) * pes + me;
    EXPECT_TRUE(apps::is_perm(ctx, identity, n));
    auto twice = identity;
    if (me == 0) twice[1] = twice[0];  // one value twice, one missing
    EXPECT_FALSE(apps::is_perm(ctx, twice, n));
    auto outside = identity;
    if (me == pes - 1) outside[2] = n;
    EXPECT_FALSE(apps::is_perm(ctx, outside, n));
    auto shorter = identity;
    if (me == 0) shorter.pop_back();
    EXPECT_FALSE(apps::is_perm(ctx, shorter, n));
  });
}

TEST(Randperm, RefusesSizesBaleCannotDraw) {
  run_spmd([](context& ctx) {
    const std::int64_t too_large = std::int64_t{1} << 50;
    EXPECT_THROW(apps::rand_perm_exchange(ctx, too_large, 1, 16), std::invalid_argument);
    EXPECT_THROW(apps::rand_perm_exchange(ctx, 10, 1, 0), std::invalid_argument);
    EXPECT_THROW(apps::rand_perm_streamer(ctx, -1, 1), std::invalid_argument);
    EXPECT_THROW(apps::rand_perm_global_array(ctx, too_large, 1), std::invalid_argument);
  });
}

TEST(Randperm, ProgramPassesItsSelfCheck) {
  run_spmd([](context& ctx) {
    apps::randperm_options o;
    o.entries_total = 3001;
    o.std.models_mask = 15;
    o.std.buf_cnt = 16;
    EXPECT_EQ(apps::randperm_main(ctx, o, "randperm_test"), 0);
    o.entries_total = std::int64_t{1} << 50;
    EXPECT_EQ(apps::randperm_main(ctx, o, "randperm_test"), 2);
  });
}

}  // namespace
