// Link message counts near and past 2^32: the final count once wrapped to 0 (the "not final"
// value of a 32-bit field) after 2^32 messages on a link, and wait() hung. Counts start just below
// 2^32 here, so every link crosses it within the first steps.
#include "streamer_checks.hpp"
#include "streamer_internals.hpp"

namespace {

using namespace transit;
using transit::detail::streamer_test_access;
using transit::testing::delivery_log;
using transit::testing::probe;
using transit::testing::probe_destination;

TEST(streamer_counters, link_counts_cross_two_to_the_32) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              constexpr std::int64_t per_pe = 400;
              for (const int dims : {1, 2}) {
                streamer_options o;
                o.buffer_items = 1;  // one message per item: many per link per step
                o.grid = virtual_grid::balanced(ctx.size(), dims);
                delivery_log log(ctx.rank(), ctx.size(), per_pe);
                streamer<probe> s(ctx, o, [&](const probe& p) { log.record(p); });
                streamer_test_access::start_link_counts_at(s, (std::uint64_t{1} << 32) - 7);
                ctx.barrier();  // every PE has moved its counts before any item moves
                for (int step = 0; step < 3; ++step) {
                  log.reset();
                  const std::uint64_t seed = 5 + step;
                  for (std::int64_t q = 0; q < per_pe; ++q) {
                    const int dest = probe_destination(seed, ctx.rank(), q, ctx.size());
                    s.insert(probe{ctx.rank(), dest, q}, dest);
                  }
                  s.finish();
                  log.check(seed, o.grid->str() + " step " + std::to_string(step));
                }
                for (std::int64_t q = 0; q < per_pe; ++q) s.insert(probe{ctx.rank(), ctx.rank(), q}, ctx.rank());
                s.quiesce();  // the other termination protocol, on the same counters
              }
            }),
            0);
}

// progress() between inserts polls the network once per 512 items inserted (a poll costs tens of
// inserts), and every time when nothing was inserted since the previous call: a PE that waits.
TEST(streamer_counters, progress_polls_the_network_once_per_512_inserts_and_always_when_idle) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              std::int64_t delivered = 0;
              streamer_options o;
              o.buffer_items = 4096;  // no buffer fills: sends poll on their own
              streamer<std::int64_t> s(ctx, o, [&](const std::int64_t&) { ++delivered; });
              const int peer = (ctx.rank() + 1) % ctx.size();
              // Spaced pumps (more PEs than CPUs) may also hold a due poll back; never force one.
              const bool spaced = detail::context_access::mail(ctx).pump_spacing().count() != 0;
              for (int i = 0; i < 100; ++i) s.insert(i, peer);
              s.progress();
              EXPECT_EQ(streamer_test_access::inserted_at_network_poll(s), 0u) << "100 inserts since the last poll";
              if (!spaced) {
                s.progress();
                EXPECT_EQ(streamer_test_access::inserted_at_network_poll(s), 100u) << "a call with no insert before it";
                for (int i = 0; i < 600; ++i) s.insert(i, peer);
                s.progress();
                EXPECT_EQ(streamer_test_access::inserted_at_network_poll(s), 700u) << "600 inserts since the last poll";
              }
              s.finish();
              EXPECT_EQ(ctx.allreduce(delivered, reduce_op::sum), ctx.size() * (spaced ? 100 : 700));
            }),
            0);
}

}  // namespace
