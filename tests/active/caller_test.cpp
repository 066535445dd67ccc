// active_messages::caller(): a handler of an object built with_callers learns the PE that made the
// running call, whether the call came whole (every call class), in chunks, as a large call of its
// own message, by broadcast, or from a handler; over direct and routed grids. Each call carries
// its maker's rank as an argument, which the handler compares with caller().
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "transit/transit.hpp"

namespace {

using transit::active_messages;
using transit::context;
using transit::reduce_op;

struct tally {
  std::uint64_t calls = 0, wrong = 0, relayed = 0;
};
thread_local tally seen;

void check_caller(active_messages& am, std::int32_t maker, std::span<const std::byte> payload) {
  ++seen.calls;
  if (am.caller() != maker) ++seen.wrong;
  static_cast<void>(payload);
}

void relay(active_messages& am, std::int32_t maker, std::int32_t hops) {
  ++seen.calls;
  if (am.caller() != maker) ++seen.wrong;
  const int me = am.ctx().rank();
  if (hops > 0) am.async((me + 1) % am.ctx().size(), relay, std::int32_t{me}, std::int32_t{hops - 1});
  ++seen.relayed;
}

void run_calls(context& ctx, const transit::streamer_options& o) {
  seen = {};
  active_messages am(ctx, o, active_messages::with_callers);
  const int me = ctx.rank(), n = ctx.size();
  // Payloads in every call class, in one chunk and several, and one large call (>= 64 KiB).
  const std::vector<std::size_t> sizes = {0, 1, 7, 40, 100, 240, 600, 3000, 70000};
  std::uint64_t sent = 0;
  for (int p = 0; p < n; ++p) {
    for (const std::size_t bytes : sizes) {
      const std::vector<std::byte> payload(bytes, std::byte{7});
      am.async((me + p) % n, check_caller, std::int32_t{me}, std::span<const std::byte>(payload));
      ++sent;
    }
  }
  am.async_broadcast(check_caller, std::int32_t{me}, std::span<const std::byte>());
  am.async((me + 1) % n, relay, std::int32_t{me}, std::int32_t{2 * n});
  am.barrier();
  const std::uint64_t expected = sent + static_cast<std::uint64_t>(n) + (2 * static_cast<std::uint64_t>(n) + 1);
  EXPECT_EQ(ctx.allreduce(seen.calls, reduce_op::sum), expected * static_cast<std::uint64_t>(n));
  EXPECT_EQ(ctx.allreduce(seen.wrong, reduce_op::sum), 0u);
}

TEST(active_caller, names_the_maker_on_direct_and_routed_grids) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              transit::streamer_options direct;
              direct.grid = transit::virtual_grid::balanced(ctx.size(), 1);
              run_calls(ctx, direct);
              transit::streamer_options routed;  // two and three hops: callers carried
              routed.grid = transit::virtual_grid::balanced(ctx.size(), 2);
              run_calls(ctx, routed);
              routed.grid = transit::virtual_grid::balanced(ctx.size(), 3);
              routed.buffer_items = 7;
              run_calls(ctx, routed);
            }),
            0);
}

void ask_caller(active_messages& am) { static_cast<void>(am.caller()); }

TEST(active_caller, refused_outside_a_handler_and_without_with_callers) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              {
                active_messages am(ctx, {}, active_messages::with_callers);
                EXPECT_THROW(static_cast<void>(am.caller()), std::logic_error);
                am.barrier();
              }
              active_messages plain(ctx);
              try {
                static_cast<void>(plain.caller());
                ADD_FAILURE() << "caller() without with_callers did not throw";
              } catch (const std::logic_error& e) {
                EXPECT_NE(std::string(e.what()).find("with_callers"), std::string::npos) << e.what();
              }
              plain.async(ctx.rank(), ask_caller);
              EXPECT_THROW(plain.barrier(), std::logic_error);
              plain.barrier();
            }),
            0);
}

}  // namespace
