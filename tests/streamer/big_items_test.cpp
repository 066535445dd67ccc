// Items of 8 KiB: aggregated messages far above the MPI piece size (lowered to 4096 bytes in one
// registration) travel in pieces; every item arrives once, every byte intact, on every router.
#include <array>

#include "streamer_checks.hpp"

namespace {

using namespace transit;
using transit::testing::delivery_log;
using transit::testing::probe;
using transit::testing::probe_destination;

struct big_item {
  probe id;
  std::array<std::uint64_t, 1022> body;  // 8 KiB in all
};

std::uint64_t body_word(const probe& p, std::size_t i) {
  return (static_cast<std::uint64_t>(p.source) << 40) ^ (static_cast<std::uint64_t>(p.sequence) << 12) ^ i;
}

TEST(streamer_big_items, eight_kib_items_arrive_intact) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              constexpr std::int64_t per_pe = 60;
              for (const routing route : {routing::grid, routing::node_aware}) {
                streamer_options o;
                o.route = route;
                o.buffer_items = 5;
                delivery_log log(ctx.rank(), ctx.size(), per_pe);
                std::int64_t corrupt = 0;
                streamer<big_item> s(ctx, o, [&](const big_item& x) {
                  log.record(x.id);
                  for (std::size_t i = 0; i < x.body.size(); ++i) corrupt += x.body[i] != body_word(x.id, i) ? 1 : 0;
                });
                big_item x;
                for (std::int64_t q = 0; q < per_pe; ++q) {
                  const int dest = probe_destination(3, ctx.rank(), q, ctx.size());
                  x.id = probe{ctx.rank(), dest, q};
                  for (std::size_t i = 0; i < x.body.size(); ++i) x.body[i] = body_word(x.id, i);
                  s.insert(x, dest);
                }
                s.finish();
                log.check(3, std::string(to_string(route)));
                EXPECT_EQ(corrupt, 0);
              }
            },
                                                 {"--transit-pes-per-node=2"}),
            0);
}

}  // namespace
