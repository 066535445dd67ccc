// The C API on contexts lent from transit::run (c_api::lend, as `transit bench histogram --api c`
// does): the C kernels (kernels.c) on every backend and PE count, PE threads in ranks included; and
// delivery in runs: one callback call per run of arrived items, not one per item.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "c_api/handles.hpp"
#include "kernels.h"
#include "test_support.hpp"

namespace {

using transit::testing::run_spmd;

TEST(c_api_lent, kernels_pass) {
  EXPECT_EQ(run_spmd([](transit::context& ctx) {
              transit_context handle = transit::c_api::lend(ctx);
              if (check_all(&handle) != 0) throw std::runtime_error("a C kernel failed (its check is printed above)");
            }),
            0);
}

struct calls {
  std::uint64_t runs = 0, items = 0;
};

int count_run(const void*, std::size_t count, void* user) {
  auto& c = *static_cast<calls*>(user);
  ++c.runs;
  c.items += count;
  return 0;
}

TEST(c_api_lent, delivers_whole_runs) {
  EXPECT_EQ(run_spmd([](transit::context& ctx) {
              transit_context handle = transit::c_api::lend(ctx);
              calls seen;
              transit_streamer* s = nullptr;
              transit::streamer_options o;
              o.buffer_items = 1000;
              ASSERT_EQ(transit::c_api::create_streamer(&handle, 8, count_run, &seen, o, &s), TRANSIT_OK);
              // Every PE sends 20000 items to PE 0.
              const std::vector<int> dests(20000, 0);
              const std::vector<std::uint64_t> items(20000, 1);
              ASSERT_EQ(transit_streamer_insert(s, dests.data(), items.data(), items.size()), TRANSIT_OK)
                  << transit_last_error();
              ASSERT_EQ(transit_streamer_finish(s), TRANSIT_OK) << transit_last_error();
              ASSERT_EQ(transit_streamer_destroy(s), TRANSIT_OK);
              EXPECT_EQ(handle.objects, 0);
              if (ctx.rank() == 0) {
                EXPECT_EQ(seen.items, 20000u * static_cast<std::uint64_t>(ctx.size()));
                // Runs of a message each (up to 1000 items): far fewer calls than items.
                EXPECT_LE(seen.runs * 100, seen.items) << seen.runs << " calls for " << seen.items << " items";
              } else {
                EXPECT_EQ(seen.items, 0u);
              }
            }),
            0);
}

// A callback that inserts: each arrived hop count above 0 goes on, one less, to the next PE.
struct relay {
  transit_streamer* s = nullptr;
  int next = 0;
  std::uint64_t arrived = 0;
  int failed = 0;
};

int pass_on(const void* items, std::size_t count, void* user) {
  auto& r = *static_cast<relay*>(user);
  const auto* hops = static_cast<const std::uint64_t*>(items);
  for (std::size_t i = 0; i < count; ++i) {
    ++r.arrived;
    if (hops[i] == 0) continue;
    const std::uint64_t rest = hops[i] - 1;
    if (transit_streamer_insert(r.s, &r.next, &rest, 1) != TRANSIT_OK) ++r.failed;
  }
  return 0;
}

TEST(c_api_lent, quiesce_delivers_what_callbacks_insert) {
  EXPECT_EQ(run_spmd([](transit::context& ctx) {
              transit_context handle = transit::c_api::lend(ctx);
              relay r;
              r.next = (ctx.rank() + 1) % ctx.size();
              ASSERT_EQ(transit_streamer_create(&handle, 8, pass_on, &r, &r.s), TRANSIT_OK) << transit_last_error();
              // 100 chains of 20 hops from every PE: 21 deliveries each.
              const std::vector<int> dests(100, r.next);
              const std::vector<std::uint64_t> hops(100, 20);
              ASSERT_EQ(transit_streamer_insert(r.s, dests.data(), hops.data(), hops.size()), TRANSIT_OK);
              ASSERT_EQ(transit_streamer_quiesce(r.s), TRANSIT_OK) << transit_last_error();
              ASSERT_EQ(transit_streamer_destroy(r.s), TRANSIT_OK);
              EXPECT_EQ(r.failed, 0);
              const auto total = ctx.allreduce(r.arrived, transit::reduce_op::sum);
              EXPECT_EQ(total, 100u * 21u * static_cast<std::uint64_t>(ctx.size()));
            }),
            0);
}

}  // namespace
