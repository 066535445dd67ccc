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

}  // namespace
