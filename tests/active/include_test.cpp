// active_messages::include: a streamer of the program's own whose items the object's barrier()
// waits for. Chains alternate between the two: a call's handler inserts an item into the included
// streamer, whose delivery makes the next call, hop after hop around the PEs. barrier() must
// return only once every chain has ended, on direct and routed grids.
#include <gtest/gtest.h>

#include <cstdint>

#include "test_support.hpp"
#include "transit/transit.hpp"

namespace {

using transit::active_messages;
using transit::context;
using transit::reduce_op;

struct hop {
  std::int32_t left;  // hops still to go
};

// This PE's state, for the captureless handler (a thread per PE on the local backend).
struct chain_state {
  transit::streamer<hop>* items = nullptr;
  std::uint64_t calls = 0, items_delivered = 0;
};
thread_local chain_state state;

void call_hop(active_messages& am, std::int32_t left) {
  ++state.calls;
  if (left > 0) state.items->insert(hop{left - 1}, (am.ctx().rank() + 1) % am.ctx().size());
}

void run_chains(context& ctx, const transit::streamer_options& o, std::int32_t length) {
  state = {};
  active_messages* am_ptr = nullptr;
  transit::streamer<hop> items(ctx, o, [&](const hop& h) {
    ++state.items_delivered;
    if (h.left > 0) am_ptr->async((ctx.rank() + 1) % ctx.size(), call_hop, std::int32_t{h.left - 1});
  });
  active_messages am(ctx, o);
  am.include(items);
  am_ptr = &am;
  state.items = &items;
  for (int round = 0; round < 2; ++round) {  // a second barrier: the group's next step
    const std::uint64_t calls_before = state.calls, items_before = state.items_delivered;
    am.async((ctx.rank() + 1) % ctx.size(), call_hop, length);
    am.barrier();
    // Hop k (k = 0 .. length) is a call when k is even, an item when odd; every PE starts a chain.
    const auto pes = static_cast<std::uint64_t>(ctx.size());
    const auto hops = static_cast<std::uint64_t>(length) + 1;
    EXPECT_EQ(ctx.allreduce(state.calls - calls_before, reduce_op::sum), (hops + 1) / 2 * pes);
    EXPECT_EQ(ctx.allreduce(state.items_delivered - items_before, reduce_op::sum), hops / 2 * pes);
  }
}

TEST(active_include, barrier_waits_for_the_included_streamers_items) {
  EXPECT_EQ(transit::testing::run_spmd([](context& ctx) {
              transit::streamer_options direct;
              direct.grid = transit::virtual_grid::balanced(ctx.size(), 1);
              run_chains(ctx, direct, 41);
              transit::streamer_options routed;
              routed.grid = transit::virtual_grid::balanced(ctx.size(), 2);
              routed.buffer_items = 3;
              run_chains(ctx, routed, 40);
            }),
            0);
}

}  // namespace
